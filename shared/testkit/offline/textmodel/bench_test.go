package textmodel

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/generation"
)

// BenchmarkGenerate measures one answer per task for the rich channel (profile, notes, research), in
// english: go test -bench Generate -benchmem ./shared/testkit/offline/textmodel
func BenchmarkGenerate(b *testing.B) {
	briefs := map[string]*generation.Brief{}
	for _, c := range cases(&testing.T{}) {
		br := c.brief(b, "english")
		if _, ok := briefs[br.Task]; !ok {
			briefs[br.Task] = br
		}
	}
	// The transcript-reading tasks read a 10-minute transcript.
	for _, task := range []string{generation.TaskDescription, generation.TaskClips, generation.TaskReoptimize} {
		briefs[task].Transcript = plainTranscript(1500)
	}
	ref := *briefs[generation.TaskTitles]
	ref.Task, ref.OriginalTask, ref.Feedback, ref.SpecificItem = generation.TaskRefine, generation.TaskTitles, "shorter", "2"
	ref.Original = run(b, briefs[generation.TaskTitles])
	briefs[generation.TaskRefine] = &ref
	m := New()
	ctx := context.Background()
	for _, task := range append(append([]string{}, generation.Tasks...), generation.TaskRefine) {
		br := briefs[task]
		b.Run(task, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Generate(ctx, ai.Request{Task: task, Brief: br}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
