package textmodel

import (
	"context"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/generation"
)

// FuzzGenerate: whatever the brief holds (any input body, transcript, language, notes, research,
// refinement), every task answers without panicking and its answer matches the task's schema.
// go test -fuzz FuzzGenerate ./shared/testkit/offline/textmodel
func FuzzGenerate(f *testing.F) {
	f.Add(`{"title":"x","type":"listicle","clipCount":3}`, "0:00 hi\n0:20 there\n1:05 bye", "english", `avoid "x"`, "Hook → CTA", "2", `{"titles":[{"title":"a"}]}`)
	f.Add(`{"title":"","type":"nope","peopleMode":"ghost","style":"?","postType":"poll","episodeType":"solo"}`, strings.Repeat("word ", 3000), "japanese", "", "", "", "")
	f.Add(`[1,2,3]`, "1\n00:00:01,000 --> 00:00:02,000\nhi\n\n2\n00:00:00,500 --> 00:00:01,000\nback", "", "shorter \"{kw}\" {topic", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn", "0", `{"hooks":"no"}`)
	f.Add(`{"clipCount":-4,"transcript":"99:99 a\n0:01 b"}`, "", "Deutsch", "mehr Fragen", "", "title 99999999999999999999", `null`)
	f.Fuzz(func(t *testing.T, input, transcript, lang, feedback, formula, item, original string) {
		for _, task := range append(append([]string{}, generation.Tasks...), generation.TaskRefine) {
			b := newBrief(t, task, lang, nil)
			b.Input = []byte(input)
			b.Transcript = transcript
			b.Notes = append(b.Notes, generation.BriefNote{Category: "style", Content: feedback}, generation.BriefNote{Category: "preference", Content: feedback})
			b.Series = &generation.BriefSeries{Name: item, ScriptFormula: formula}
			b.Recent = []string{feedback, original}
			b.Items = []string{feedback, item}
			b.GradedTool = generation.TaskLongScript
			b.Profile.Keywords = append(b.Profile.Keywords, item)
			validTask := generation.TaskTitles
			if task == generation.TaskRefine {
				b.OriginalTask, b.Original, b.Feedback, b.SpecificItem = generation.TaskTitles, []byte(original), feedback, item
				validTask = b.OriginalTask
			} else {
				validTask = task
			}
			res, err := New().Generate(context.Background(), ai.Request{Task: task, Brief: b})
			if err != nil {
				t.Fatalf("%s: %v", task, err)
			}
			validate(t, validTask, res.JSON)
		}
	})
}
