package generation

import (
	"encoding/json"
	"strings"
	"testing"
)

// The rules beyond the schema read the typed answer: each passes a good answer and names what is wrong in
// a bad one.
func TestChecks(t *testing.T) {
	hooks := func(approaches ...string) string {
		var b strings.Builder
		b.WriteString(`{"hooks":[`)
		for i, a := range approaches {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"approach":"` + a + `","first5Seconds":"a","first30Seconds":"b","whyItWorks":"c"}`)
		}
		b.WriteString("]}")
		return b.String()
	}
	ctas := func(slots ...string) string {
		var parts []string
		for _, s := range slots {
			parts = append(parts, `{"slotPosition":"`+s+`","label":"l","text":"t"}`)
		}
		return `{"ctas":[` + strings.Join(parts, ",") + `]}`
	}
	dims := func(names ...string) string {
		var parts []string
		for _, n := range names {
			parts = append(parts, `{"name":"`+n+`","score":7,"feedback":"f"}`)
		}
		return `{"dimensions":[` + strings.Join(parts, ",") + `]}`
	}
	all := []string{"Niche Clarity", "Brand Identity", "Audience Understanding", "Competitive Edge", "Monetization Readiness"}
	transcript := "0:00 start\n0:50 middle\n1:40 end"
	for _, tt := range []struct {
		name, task, input, answer string
		want                      string // a problem must contain it; "" for none
	}{
		{"hooks: one each", TaskHooks, `{}`, hooks("Story/Pattern Interrupt", "Curiosity", "Bold Claim/Contrarian"), ""},
		{"hooks: one twice", TaskHooks, `{}`, hooks("Curiosity", "Curiosity", "Bold Claim/Contrarian"),
			"hooks: write exactly one per approach: [Curiosity Bold Claim/Contrarian Story/Pattern Interrupt]"},
		{"ctas: one each", TaskCTAs, `{}`, ctas("end", "early", "middle", "extra_2", "extra_1"), ""},
		{"ctas: a slot missing", TaskCTAs, `{}`, ctas("end", "early", "middle", "extra_1", "extra_1"), "ctas: write exactly one per slotPosition"},
		{"niche: all five", TaskNicheScore, `{}`, dims(all...), ""},
		{"niche: one missing", TaskNicheScore, `{}`, dims(all[:4]...), "dimensions: score each of Niche Clarity, Brand Identity, Audience Understanding, Competitive Edge, Monetization Readiness exactly once"},
		{"description: FAQ", TaskDescription, `{}`, `{"description":"d","faqSection":"Q: a? A: b."}`, ""},
		{"description: no FAQ", TaskDescription, `{}`, `{"description":"d","faqSection":"  "}`, "faqSection: write the FAQ section"},
		{"clips: inside the video", TaskClips, `{"clipCount":2}`,
			`{"clips":[{"startTime":"0:00:00","endTime":"0:00:30"},{"startTime":"0:00:50","endTime":"0:01:30"}]}`, ""},
		{"clips: past the end", TaskClips, `{"clipCount":2}`,
			`{"clips":[{"startTime":"0:00:00","endTime":"0:00:30"},{"startTime":"0:01:00","endTime":"0:02:00"}]}`,
			"clips/1: endTime 0:02:00 is past the end of the video (0:01:40)"},
		{"clips: end before start", TaskClips, `{"clipCount":2}`,
			`{"clips":[{"startTime":"0:00:30","endTime":"0:00:10"},{"startTime":"0:00:50","endTime":"0:01:30"}]}`, "clips/0: endTime must come after startTime"},
		{"clips: no times", TaskClips, `{"clipCount":2}`, `{"clips":[{"hook":"h"},{"startTime":"0:00:50","endTime":"0:01:30"}]}`, "clips/0: startTime and endTime are required"},
		{"clips: too few", TaskClips, `{"clipCount":2}`, `{"clips":[{"startTime":"0:00:00","endTime":"0:00:30"}]}`, "clips: write exactly 2 clips, not 1"},
		{"quiz: one correct", TaskCommunityPosts, `{"postType":"quiz"}`,
			`{"posts":[{"postType":"quiz","quizOptions":[{"option":"a","isCorrect":true},{"option":"b","isCorrect":false}]}]}`, ""},
		{"quiz: two correct", TaskCommunityPosts, `{"postType":"quiz"}`,
			`{"posts":[{"postType":"quiz","quizOptions":[{"option":"a","isCorrect":true},{"option":"b","isCorrect":true}]}]}`, "posts/0/quizOptions: a quiz needs 2 to 4 options, exactly one correct"},
		{"poll options on a question", TaskCommunityPosts, `{"postType":"question"}`,
			`{"posts":[{"postType":"question","pollOptions":["a","b"]}]}`, "posts/0/pollOptions: only poll posts have poll options"},
		{"another post type", TaskCommunityPosts, `{"postType":"poll"}`,
			`{"posts":[{"postType":"quiz","pollOptions":["a","b"]}]}`, `posts/0/postType: must be "poll"`},
		{"short script without a visual cue", TaskShortScript, `{}`, `{"script":"` + strings.Repeat("word ", 100) + `"}`, "script: mark visual cues with [VISUAL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &Brief{Task: tt.task, Input: json.RawMessage(tt.input), Transcript: transcript}
			problems := checks[tt.task](b, json.RawMessage(tt.answer))
			switch {
			case tt.want == "" && len(problems) > 0:
				t.Errorf("problems %q in a good answer", problems)
			case tt.want != "" && !strings.Contains(strings.Join(problems, "\n"), tt.want):
				t.Errorf("problems %q, want one saying %q", problems, tt.want)
			}
		})
	}
}

// Issue 36 item 7: an answer whose required free text is all blank is a broken rule, not a success.
func TestNoText(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["concepts"],"properties":{"concepts":{"type":"array","items":{
		"type":"object","required":["text","style","url"],"properties":{"text":{"type":"string"},"style":{"type":"string","enum":["bold",""]},
		"url":{"type":"string","format":"uri"},"note":{"type":"string"}}}}}}`)
	for _, tc := range []struct {
		name, answer string
		broken       bool
	}{
		{"every text blank", `{"concepts":[{"text":"","style":"bold","url":"https://x.example"},{"text":"  ","style":"","url":"https://x.example"}]}`, true},
		{"one text written", `{"concepts":[{"text":"","style":"bold","url":"u"},{"text":"Big red arrow","style":"","url":"u"}]}`, false},
		{"only an optional text", `{"concepts":[{"text":"","style":"bold","url":"u","note":"written"}]}`, true},
		{"no required text at all", `{"concepts":[]}`, false},
	} {
		if got := noText(schema, json.RawMessage(tc.answer)); (len(got) > 0) != tc.broken {
			t.Errorf("%s: %v, want broken %v", tc.name, got, tc.broken)
		}
	}
}
