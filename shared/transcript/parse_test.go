package transcript_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/transcript"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []transcript.Cue
	}{
		{"srt", "1\r\n00:00:01,500 --> 00:00:04,000\r\nHello <i>there</i>\r\nfriends\r\n\r\n2\r\n01:02:03,004 --> 01:02:05,000\r\nBeans &amp; rice\r\n",
			[]transcript.Cue{{1500 * time.Millisecond, 4 * time.Second, "Hello there friends"},
				{time.Hour + 2*time.Minute + 3*time.Second + 4*time.Millisecond, time.Hour + 2*time.Minute + 5*time.Second, "Beans & rice"}}},
		{"webvtt with header, note, style, ids and settings", "\ufeffWEBVTT - a title\nKind: captions\n\nNOTE a comment\nthat spans lines\n\nSTYLE\n::cue { color: red }\n\nintro\n00:01.000 --> 00:04.000 align:start position:0%\n<c.colorE5E5E5>one</c><00:00:02.000><c> two</c>\n\n00:05.5 --> 00:06.000\n<v Roger>three\n",
			[]transcript.Cue{{time.Second, 4 * time.Second, "one two"}, {5500 * time.Millisecond, 6 * time.Second, "three"}}},
		{"automatic captions roll lines over", "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nhello there\n\n00:00:03.000 --> 00:00:05.000\nhello there\nhow are you\n\n00:00:05.000 --> 00:00:06.000\nhow are you\n",
			[]transcript.Cue{{time.Second, 3 * time.Second, "hello there"}, {3 * time.Second, 6 * time.Second, "how are you"}}},
		{"cue without text is dropped", "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<b></b>\n\n00:00:03.000 --> 00:00:04.000\nkept\n",
			[]transcript.Cue{{3 * time.Second, 4 * time.Second, "kept"}}},
	} {
		got, ok := transcript.Parse(tc.in)
		if !ok || len(got) != len(tc.want) {
			t.Fatalf("%s: %v %+v", tc.name, ok, got)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: cue %d = %+v, want %+v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

func TestNotTimedText(t *testing.T) {
	for _, in := range []string{"", "0:00 welcome\n4:10 the first lunch", "just words", "WEBVTT\n\n",
		"00:00:05,000 --> 00:00:01,000\nends before it starts", "00:61:00,000 --> 00:62:00,000\nno such minute",
		"1:2:3:4 --> 1:2:3:5\ntoo many parts", "00:00:01,0000 --> 00:00:02,000\nfour decimals"} {
		if cues, ok := transcript.Parse(in); ok {
			t.Errorf("%q parsed as %+v", in, cues)
		}
	}
}

func TestTextAndNormalize(t *testing.T) {
	srt := "1\n00:00:05,000 --> 00:00:06,000\nfirst\n\n2\n01:04:10,900 --> 01:04:12,000\nsecond\n"
	want := "0:00:05 first\n1:04:10 second\n1:04:12 (end of video)\n"
	if got := transcript.Normalize(srt); got != want {
		t.Fatalf("Normalize(srt) = %q, want %q", got, want)
	}
	plain := "0:00 welcome\n4:10 the first lunch"
	if got := transcript.Normalize(plain); got != plain {
		t.Fatalf("plain text changed: %q", got)
	}
}

func TestPick(t *testing.T) {
	manualEN := transcript.Track{ID: "m-en", Language: "en-GB", Kind: transcript.KindStandard}
	manualFR := transcript.Track{ID: "m-fr", Language: "fr", Kind: transcript.KindStandard}
	asrEN := transcript.Track{ID: "a-en", Language: "en", Kind: transcript.KindASR}
	asrDE := transcript.Track{ID: "a-de", Language: "de", Kind: transcript.KindASR}
	draft := transcript.Track{ID: "d-en", Language: "en", Kind: transcript.KindStandard, Draft: true}
	forced := transcript.Track{ID: "f-en", Language: "en", Kind: transcript.KindForced}
	for _, tc := range []struct {
		tracks []transcript.Track
		lang   string
		want   string
	}{
		{[]transcript.Track{asrEN, manualFR, manualEN}, "en", "m-en"},
		{[]transcript.Track{asrEN, manualFR}, "en", "m-fr"}, // any manual track before an automatic one
		{[]transcript.Track{asrDE, asrEN}, "en", "a-en"},
		{[]transcript.Track{asrDE}, "en", "a-de"},
		{[]transcript.Track{asrEN, manualFR}, "", "m-fr"},
		{[]transcript.Track{draft, forced}, "en", ""},
		{nil, "en", ""},
	} {
		got, ok := transcript.Pick(tc.tracks, tc.lang)
		if got.ID != tc.want || ok != (tc.want != "") {
			t.Errorf("Pick(%v, %q) = %q %v, want %q", tc.tracks, tc.lang, got.ID, ok, tc.want)
		}
	}
}

func TestVideoID(t *testing.T) {
	for in, want := range map[string]string{
		"https://www.youtube.com/watch?v=dQw4w9WgXcQ":              "dQw4w9WgXcQ",
		"https://youtube.com/watch?v=dQw4w9WgXcQ&t=42s":            "dQw4w9WgXcQ",
		"https://m.youtube.com/watch?v=dQw4w9WgXcQ":                "dQw4w9WgXcQ",
		"https://youtu.be/dQw4w9WgXcQ?si=abc":                      "dQw4w9WgXcQ",
		"https://www.youtube.com/shorts/dQw4w9WgXcQ":               "dQw4w9WgXcQ",
		"https://www.youtube.com/live/dQw4w9WgXcQ?feature=share":   "dQw4w9WgXcQ",
		"https://www.youtube.com/embed/dQw4w9WgXcQ":                "dQw4w9WgXcQ",
		"https://example.com/watch?v=dQw4w9WgXcQ":                  "",
		"https://www.youtube.com/watch?v=short":                    "",
		"https://www.youtube.com/watch?v=dQw4w9WgXcQ%22%3E":        "",
		"javascript:alert(1)":                                      "",
		"https://youtu.be/dQw4w9W.XcQ":                             "",
		"https://youtu.be/dQw4w9WgXcQQ":                            "",
		"https://youtu.be/_-09azAZ_-9":                             "_-09azAZ_-9",
		"https://www.youtube.com.evil.example/watch?v=dQw4w9WgXcQ": "",
		"https://www.youtube.com/channel/UCaaaaaaaaaaaaaaaaaaaaaa": "",
	} {
		got, ok := transcript.VideoID(in)
		if want == "" && ok || want != "" && got != want {
			t.Errorf("VideoID(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

// FuzzParse: no input panics or loops, every cue has ordered times and clean one-line text, and Text
// keeps one line per cue, then one for the last cue's end when it ends in a later second.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"WEBVTT\n\n00:01.000 --> 00:02.000\n<b>hi</b> &amp;\n",
		"1\n00:00:01,000 --> 00:00:02,000\nhello\n", "00:00 --> 00:01\n", "WEBVTT\nNOTE\n\n--> \n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cues, ok := transcript.Parse(s)
		if ok != (len(cues) > 0) || len(cues) > transcript.MaxCues {
			t.Fatalf("ok %v with %d cues", ok, len(cues))
		}
		for _, c := range cues {
			if c.End < c.Start || c.Start < 0 || c.Text == "" || strings.ContainsAny(c.Text, "\n\r") || strings.TrimSpace(c.Text) != c.Text {
				t.Fatalf("cue %+v", c)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c.Text) {
				t.Fatalf("invalid UTF-8 from valid input: %q", c.Text)
			}
		}
		text := transcript.Text(cues)
		lines := len(cues)
		if n := len(cues); n > 0 && cues[n-1].End/time.Second > cues[n-1].Start/time.Second {
			lines++ // the end of the video
			if !strings.HasSuffix(text, " (end of video)\n") {
				t.Fatalf("Text does not end with the last cue's end: %q", text)
			}
		}
		if got := strings.Count(text, "\n"); got != lines {
			t.Fatalf("Text has %d lines for %d cues", got, len(cues))
		}
	})
}
