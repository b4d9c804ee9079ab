package textmodel

import (
	"reflect"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
)

// refineOf is the brief of a refinement of the answer original wrote: the original's input, its output,
// the feedback and the item it narrows to.
func refineOf(t testing.TB, original *generation.Brief, feedback, item string) *generation.Brief {
	b := *original
	b.Original = run(t, original)
	b.OriginalTask, b.Task = original.Task, generation.TaskRefine
	b.Feedback, b.SpecificItem = feedback, item
	return &b
}

// TestRefineEveryTask: a refinement of every task's answer, whole or narrowed to an item, matches the
// original task's schema and its rules.
func TestRefineEveryTask(t *testing.T) {
	for _, c := range cases(t) {
		for _, r := range []struct{ lang, item string }{{"english", ""}, {"english", "2"}, {"english", "no such item"}, {"german", "1"}, {fallbackLanguage, ""}} {
			b := refineOf(t, c.brief(t, r.lang), "Make it shorter and punchier, and mention \"meal plan\"", r.item)
			raw := run(t, b)
			orig := *b
			orig.Task = b.OriginalTask
			c.check(t, &orig, raw)
		}
	}
}

func TestRefineApplies(t *testing.T) {
	t.Run("one title by index", func(t *testing.T) {
		b := refineOf(t, titlesBrief(t, "english", "how-to"), "make it a question", "title 2")
		before, after := titlesOf(t, b.Original), titlesOf(t, run(t, b))
		if len(before) != len(after) {
			t.Fatalf("%d titles became %d", len(before), len(after))
		}
		for i := range before {
			if changed := before[i] != after[i]; changed != (i == 1) {
				t.Errorf("title %d changed %v: %q → %q", i, changed, before[i], after[i])
			}
		}
		if !strings.HasSuffix(after[1], "?") {
			t.Errorf("the refined title is not a question: %q", after[1])
		}
		for i, s := range after {
			if i != 1 && strings.EqualFold(s, after[1]) {
				t.Error("the refined title repeats another")
			}
		}
	})
	t.Run("one title by its text", func(t *testing.T) {
		b := refineOf(t, titlesBrief(t, "english", "listicle"), "more specific", "")
		before := titlesOf(t, b.Original)
		b.SpecificItem = before[3]
		after := titlesOf(t, run(t, b))
		if after[3] == before[3] || !reflect.DeepEqual(after[:3], before[:3]) || !reflect.DeepEqual(after[4:], before[4:]) {
			t.Errorf("%v → %v", before, after)
		}
	})
	t.Run("whole output", func(t *testing.T) {
		b := refineOf(t, titlesBrief(t, "english", "how-to"), `shorter, and mention "meal plan"`, "")
		before, after := titlesOf(t, b.Original), titlesOf(t, run(t, b))
		if reflect.DeepEqual(before, after) {
			t.Fatal("nothing changed")
		}
		if mean(after) >= mean(before) {
			t.Errorf("shorter titles are %.0f characters on average, were %.0f", mean(after), mean(before))
		}
		if !anyContains(after[:1], "meal plan") {
			t.Errorf("the quoted phrase is not worked in: %v", after)
		}
	})
	t.Run("avoid a word", func(t *testing.T) {
		b := refineOf(t, titlesBrief(t, "english", "question"), `avoid "secret"`, "")
		b.Notes = nil
		if !anyContains(titlesOf(t, b.Original), "secret") {
			t.Fatal("precondition: the original says secret")
		}
		if after := titlesOf(t, run(t, b)); anyContains(after, "secret") {
			t.Errorf("still says secret: %v", after)
		}
	})
	t.Run("script", func(t *testing.T) {
		b := refineOf(t, longBrief(t, "english", "how-to"), "Too long, make it shorter", "")
		before, after := decode[scriptOut](t, b.Original).Script, decode[scriptOut](t, run(t, b)).Script
		if !strings.Contains(after, "[REVISION] Applied feedback: “Too long, make it shorter”") {
			t.Error("the script does not say which feedback it applies")
		}
		if spoken(after) >= spoken(before) || spoken(after) < 1200 {
			t.Errorf("%d spoken words, were %d", spoken(after), spoken(before))
		}
	})
	t.Run("hook by approach", func(t *testing.T) {
		b := refineOf(t, newBrief(t, generation.TaskHooks, "english", contract.HooksRequest{Title: topic}), "make it a question", "Bold Claim/Contrarian")
		before := decode[struct{ Hooks []hookOut }](t, b.Original).Hooks
		after := decode[struct{ Hooks []hookOut }](t, run(t, b)).Hooks
		if before[0] != after[0] || before[2] != after[2] || before[1] == after[1] || after[1].Approach != "Bold Claim/Contrarian" {
			t.Errorf("%+v → %+v", before, after)
		}
	})
	t.Run("clip keeps its times", func(t *testing.T) {
		o := newBrief(t, generation.TaskClips, "english", contract.ClipsRequest{Title: topic})
		o.Transcript = plainTranscript(1500)
		b := refineOf(t, o, "a stronger hook", "3")
		before := decode[struct{ Clips []clipOut }](t, b.Original).Clips
		after := decode[struct{ Clips []clipOut }](t, run(t, b)).Clips
		if after[2].StartTime != before[2].StartTime || after[2].EndTime != before[2].EndTime || !reflect.DeepEqual(after[:2], before[:2]) {
			t.Errorf("%+v → %+v", before[2], after[2])
		}
	})
	t.Run("newsletter bodies change together", func(t *testing.T) {
		b := refineOf(t, newBrief(t, generation.TaskNewsletter, "english", contract.NewsletterRequest{Title: topic, Style: "story"}), "warmer", "bodyText")
		before, after := decode[newsletterOut](t, b.Original), decode[newsletterOut](t, run(t, b))
		if before.Subject != after.Subject || before.BodyText == after.BodyText {
			t.Errorf("subject %q → %q; body changed %v", before.Subject, after.Subject, before.BodyText != after.BodyText)
		}
		checkNewsletter(t, b, mustJSON(t, after))
	})
	t.Run("stored titles result", func(t *testing.T) {
		// The original as the history stores it: graded titles of both video types, more than one call
		// writes; the refinement keeps the video type it is asked for.
		var stored struct {
			Titles    []map[string]any `json:"titles"`
			Generated int              `json:"generated"`
			Filtered  int              `json:"filtered"`
		}
		for i := range 20 {
			vt := []string{"Long", "Short"}[i%2]
			stored.Titles = append(stored.Titles, map[string]any{"title": vt + " title " + string(rune('A'+i)), "grade": "B", "score": 84, "videoType": vt,
				"dimensions": map[string]any{"nicheRelevance": 8}})
		}
		stored.Generated, stored.Filtered = 20, 20
		b := titlesBrief(t, "english", "how-to")
		b.Task, b.OriginalTask, b.Original = generation.TaskRefine, generation.TaskTitles, mustJSON(t, stored)
		b.Feedback, b.SpecificItem, b.VideoType = "more curiosity", "2", "Short"
		after := titlesOf(t, run(t, b))
		if len(after) != 10 || after[0] != "Short title B" || after[1] == "Short title D" || after[2] != "Short title F" {
			t.Errorf("%v", after)
		}
	})
}

func mean(list []string) float64 {
	n := 0
	for _, s := range list {
		n += len([]rune(s))
	}
	return float64(n) / float64(len(list))
}
