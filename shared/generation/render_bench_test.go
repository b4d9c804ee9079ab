package generation_test

import (
	"encoding/json"
	"testing"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/profile"
)

// BenchmarkRender renders the prompts of a full brief (profile, notes, series, patterns, outliers, recent
// outputs, request) for titles, a long script and a pattern task: what every generation and every budget
// check pays per prompt.
func BenchmarkRender(b *testing.B) {
	in, _ := json.Marshal(map[string]any{"title": "vegan lunches under $3", "type": "listicle", "context": "batch cooking on Sundays"})
	br := &generation.Brief{Language: "english",
		Profile: profile.NicheProfile{FocusedNiche: "vegan meal prep", BroadNiche: "cooking", Slogan: "eat well for less",
			TargetAudience: "students", Keywords: []string{"vegan", "meal prep", "budget"}, ContentLanguage: "english"},
		Notes:    []generation.BriefNote{{Category: "style", Content: "no jump cuts"}, {Category: "feedback", Content: "shorter intros"}},
		Series:   &generation.BriefSeries{Name: "Sunday prep", ScriptFormula: "hook, shopping list, cook, cost"},
		Patterns: "Numbers in titles outperform; prices in the first three words.",
		Outliers: []generation.Outlier{{Title: "5 vegan lunches for $10", Views: 120000, Score: 8.5, ContentType: "Long"},
			{Title: "I ate on $1 a day", Views: 900000, Score: 14, ContentType: "Short"}},
		Recent: []string{"10 cheap vegan lunches", "vegan meal prep for beginners"},
		Input:  in, VideoType: "Long", Count: 5,
		Videos: []generation.ResearchVideo{{Title: "5 vegan lunches for $10", ChannelTitle: "Plants", Views: 120000, Score: 8.5,
			DurationSeconds: 745, Tags: []string{"vegan"}}},
	}
	for _, task := range []string{generation.TaskTitles, generation.TaskLongScript, generation.TaskPatternTitles} {
		c := *br
		c.Task = task
		b.Run(task, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := generation.Render(&c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
