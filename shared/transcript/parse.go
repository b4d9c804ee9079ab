// Package transcript is where a generation's transcript comes from (decision 41): text the caller sends
// (plain, SRT or WebVTT, cue times kept), or the captions of one of the channel's own videos, fetched with
// the owner's OAuth through the connection (captions.list, captions.download tfmt=vtt; a manual track in
// the channel's language before an automatic one), cached per video and track. Nothing else: no
// unofficial endpoint, no scraping, no media download.
package transcript

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cue is one timed piece of a transcript.
type Cue struct {
	Start, End time.Duration
	Text       string
}

// MaxCues bounds what a parse keeps (a 12-hour stream with a cue every 2 s has 21,600).
const MaxCues = 50000

// Parse reads SRT or WebVTT into cues; ok is false when s is neither (plain text, or a timed format too
// broken to use). Markup (<i>, <c.color>, <00:00:01.000> karaoke stamps) is dropped, entities decoded, and
// consecutive cues repeating the previous one's text (automatic captions roll lines over) merged.
func Parse(s string) (cues []Cue, ok bool) {
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	vtt := strings.HasPrefix(s, "WEBVTT")
	var cur *Cue
	var text []string
	flush := func() {
		if cur != nil {
			t := clean(strings.Join(text, " "))
			if n := len(cues); n > 0 && strings.HasPrefix(t, cues[n-1].Text+" ") {
				t = t[len(cues[n-1].Text)+1:] // a rolled-over line: keep only what is new
			}
			if t != "" {
				cur.Text = t
				if n := len(cues); n > 0 && (cues[n-1].Text == t || strings.HasSuffix(cues[n-1].Text, " "+t)) {
					cues[n-1].End = max(cues[n-1].End, cur.End)
				} else if len(cues) < MaxCues {
					cues = append(cues, *cur)
				}
			}
		}
		cur, text = nil, nil
	}
	skipping := false // inside a WebVTT NOTE, STYLE or REGION block
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			flush()
			skipping = false
			continue
		}
		if skipping {
			continue
		}
		if cur == nil && vtt && (trimmed == "NOTE" || strings.HasPrefix(trimmed, "NOTE ") ||
			strings.HasPrefix(trimmed, "STYLE") || strings.HasPrefix(trimmed, "REGION") || strings.HasPrefix(trimmed, "WEBVTT")) {
			skipping = true
			continue
		}
		if start, end, isTiming := timing(trimmed); isTiming {
			flush()
			cur = &Cue{Start: start, End: end}
			continue
		}
		if cur == nil {
			continue // a cue number or identifier before its timing line
		}
		text = append(text, trimmed)
	}
	flush()
	return cues, len(cues) > 0
}

// timing reads "00:01:02,500 --> 00:01:04,000" (SRT) or "01:02.500 --> 01:04.000 align:start" (WebVTT).
func timing(line string) (start, end time.Duration, ok bool) {
	a, b, found := strings.Cut(line, "-->")
	if !found {
		return 0, 0, false
	}
	fields := strings.Fields(b)
	if len(fields) == 0 {
		return 0, 0, false
	}
	start, ok1 := stamp(strings.TrimSpace(a))
	end, ok2 := stamp(fields[0])
	if !ok1 || !ok2 || end < start {
		return 0, 0, false
	}
	return start, end, true
}

// stamp reads [hh:]mm:ss[.,]mmm.
func stamp(s string) (time.Duration, bool) {
	s = strings.Replace(s, ",", ".", 1)
	main, frac, _ := strings.Cut(s, ".")
	parts := strings.Split(main, ":")
	if len(parts) < 2 || len(parts) > 3 || len(frac) > 3 {
		return 0, false
	}
	var total int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || p == "" || len(p) > 6 || (i > 0 && n > 59) {
			return 0, false
		}
		total = total*60 + n
	}
	ms := int64(0)
	if frac != "" {
		n, err := strconv.ParseInt(frac, 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		for i := len(frac); i < 3; i++ {
			n *= 10
		}
		ms = n
	}
	return time.Duration(total)*time.Second + time.Duration(ms)*time.Millisecond, true
}

var entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&nbsp;", " ", "&quot;", `"`, "&#39;", "'", "&lrm;", "", "&rlm;", "")

// clean drops markup tags and decodes the entities WebVTT allows.
func clean(s string) string {
	var b strings.Builder
	inTag := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
		case r == '>' && inTag:
			inTag = false
		case !inTag:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(entities.Replace(b.String())), " ")
}

// Text renders cues as the transcript prompts read: one line per cue, its start time first (H:MM:SS, the
// stamps the clip tool cuts at), then a line stamped with the last cue's end, "(end of video)": the video
// runs to there, not to the last cue's start (issue 32: a clip ending inside the last cue was refused).
func Text(cues []Cue) string {
	var b strings.Builder
	line := func(at time.Duration, text string) {
		secs := int(at / time.Second)
		fmt.Fprintf(&b, "%d:%02d:%02d %s\n", secs/3600, secs/60%60, secs%60, text)
	}
	for _, c := range cues {
		line(c.Start, c.Text)
	}
	if n := len(cues); n > 0 && cues[n-1].End/time.Second > cues[n-1].Start/time.Second {
		line(cues[n-1].End, endOfVideo)
	}
	return b.String()
}

// endOfVideo is the text of the line Text ends a transcript with.
const endOfVideo = "(end of video)"

// Normalize returns a sent transcript as prompts read it: SRT and WebVTT become timed lines (Text); any
// other text is kept as it is.
func Normalize(s string) string {
	if cues, ok := Parse(s); ok {
		return Text(cues)
	}
	return s
}
