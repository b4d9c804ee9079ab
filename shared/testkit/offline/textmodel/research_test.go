package textmodel

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/research"
)

// researchVideos are a niche's strongest outliers as a pattern brief of kind carries them.
func researchVideos(kind string) []generation.ResearchVideo {
	titles := []string{"7 vegan meal prep mistakes that cost you money", "How to batch cook high protein lunches",
		"Is vegan meal prep worth it?", "Budget meals vs takeout: a month of receipts", "I tried batch cooking for 30 days",
		"High protein tofu bowls in 20 minutes", "My freezer stash system", "10 budget meals under $2"}
	var out []generation.ResearchVideo
	for i, t := range titles {
		v := generation.ResearchVideo{Title: t, Views: int64(900000 - i*100000), Score: 12.5 - float64(i), ContentType: "Long",
			Formula: research.FormulaOf(t)}
		switch kind {
		case "longScripts", "shortScripts":
			v.DurationSeconds, v.ViewsPerDay = 600+60*i, 4000-float64(300*i)
			if kind == "shortScripts" {
				v.DurationSeconds, v.ContentType = 30+5*i, "Short"
			}
			v.Description = "0:00 intro 1:20 shopping list 4:00 cooking"
		case "descriptions":
			v.Description = fmt.Sprintf("Prep a week of lunches. Recipes: https://example.com/%d #vegan #mealprep", i)
			v.Tags = []string{"vegan", "meal prep", "budget"}
		case "thumbnails":
			v.Tags = []string{"vegan", "tofu"}
		case "ideas":
			v.ChannelTitle = []string{"Green Kitchen", "Tofu Tuesday", "Cheap Plants"}[i%3]
		}
		out = append(out, v)
	}
	return out
}

// researchCases are the research tasks' cases of TestEveryTaskAndEnumValue: every pattern kind, and ideas
// with and without a format asked for, with taken titles, and refined.
func researchCases(t *testing.T) []tc {
	var out []tc
	for _, k := range generation.PatternKinds {
		out = append(out, tc{"patterns/" + k.Kind, func(t testing.TB, lang string) *generation.Brief {
			b := newBrief(t, k.Task, lang, nil)
			b.Kind, b.Videos, b.Outliers, b.Patterns, b.Input = k.Kind, researchVideos(k.Kind), nil, "", nil
			return b
		}, checkPattern(k.Kind)})
	}
	for _, ct := range append(enumOf(t, "IdeasRequest", "contentType"), "") {
		for _, count := range []int{0, 1, 10, 20} {
			out = append(out, tc{fmt.Sprintf("ideas/%q/count=%d", ct, count), func(t testing.TB, lang string) *generation.Brief {
				b := newBrief(t, generation.TaskIdeas, lang, contract.IdeasRequest{Count: ptr(count)})
				b.Count, b.ContentType = count, ct
				b.Taken = []string{"5 Budget Vegan Meals for the Whole Week"}
				return b
			}, checkIdeaAnswer})
		}
	}
	return out
}

func checkPattern(kind string) func(t *testing.T, b *generation.Brief, raw []byte) {
	return func(t *testing.T, b *generation.Brief, raw []byte) {
		out := decode[map[string]string](t, raw)
		text := out[kind]
		if len(out) != 1 || text == "" || utf8.RuneCountInString(text) > generation.MaxPatternChars {
			t.Fatalf("%s: %d fields, text of %d characters: %s", kind, len(out), utf8.RuneCountInString(text), raw)
		}
		// The text is about these videos: it counts them and quotes the strongest (or counts keywords).
		if !strings.Contains(text, fmt.Sprint(len(b.Videos))) && !strings.Contains(text, b.Videos[0].Title) {
			t.Errorf("%s does not say how many videos it read: %s", kind, text)
		}
		want := map[string]string{"titles": b.Videos[0].Title, "longScripts": "13:30", "shortScripts": "0:47",
			"descriptions": "100", "thumbnails": "tofu"}[kind]
		if kind == "ideas" && len(b.Profile.Keywords) > 0 {
			want = b.Profile.Keywords[0]
		}
		if want != "" && !strings.Contains(text, want) {
			t.Errorf("%s: %q missing from %s", kind, want, text)
		}
		if b.Language != "english" && !Fallback(b.Language) && strings.Contains(text, "strongest") {
			t.Errorf("%s in %s is written in english: %s", kind, b.Language, text)
		}
	}
}

func checkIdeaAnswer(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[generation.IdeaDrafts](t, raw)
	want := min(b.Count, generation.MaxIdeas)
	if want == 0 {
		want = 10
	}
	if len(out.Ideas) != want {
		t.Errorf("%d ideas, want %d", len(out.Ideas), want)
	}
	seen := map[string]bool{}
	for _, taken := range b.Taken {
		seen[strings.ToLower(taken)] = true
	}
	for _, idea := range out.Ideas {
		key := strings.ToLower(idea.Title)
		if seen[key] {
			t.Errorf("idea %q repeats a taken or earlier title", idea.Title)
		}
		seen[key] = true
		if b.ContentType != "" && idea.ContentType != b.ContentType {
			t.Errorf("idea %q is %s, %s was asked for", idea.Title, idea.ContentType, b.ContentType)
		}
		switch {
		case len(b.Outliers) == 0 && idea.Outlier != nil:
			t.Errorf("idea %q names outlier %d of none", idea.Title, *idea.Outlier)
		case len(b.Outliers) > 0 && (idea.Outlier == nil || *idea.Outlier >= len(b.Outliers)):
			t.Errorf("idea %q names outlier %v of %d", idea.Title, idea.Outlier, len(b.Outliers))
		}
	}
}

// The phrasebooks have a pattern text for every kind the contract's ResearchPatterns has, and a name for
// every formula research tells.
func TestPatternFramesCoverEveryKindAndFormula(t *testing.T) {
	for _, lang := range supported {
		L, _ := phrasebook(lang)
		for _, k := range generation.PatternKinds {
			if len(L.Patterns[k.Kind]) == 0 {
				t.Errorf("%s: no pattern frames for %s", lang, k.Kind)
			}
		}
		for _, title := range []string{"7 tips", "how to cook", "is it worth it?", "rice vs pasta", "I tried it for 30 days", "my tofu review", "I cook", "tofu"} {
			if f := research.FormulaOf(title); L.Formulas[f] == "" {
				t.Errorf("%s: no name for the formula %s", lang, f)
			}
		}
	}
	s, err := contract.JSONSchema("ResearchPatterns")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, k := range generation.PatternKinds {
		kinds = append(kinds, k.Kind)
	}
	for p := range s["properties"].(map[string]any) {
		if p == "sources" { // the videos each kind was written from, not a kind of its own
			continue
		}
		if !slices.Contains(kinds, p) {
			t.Errorf("ResearchPatterns.%s has no pattern kind", p)
		}
	}
}

// Ideas follow their outliers: each is in the formula and format of the outlier it names.
func TestIdeasFollowTheirOutliers(t *testing.T) {
	b := newBrief(t, generation.TaskIdeas, "english", contract.IdeasRequest{})
	b.Count = 6
	b.Outliers = []generation.Outlier{
		{Title: "7 vegan meal prep mistakes", Views: 900000, Score: 12, ContentType: "Long"},
		{Title: "How to prep tofu in 60 seconds", Views: 500000, Score: 9, ContentType: "Short"},
		{Title: "Rice vs quinoa for meal prep", Views: 300000, Score: 6, ContentType: "Long"},
	}
	out := decode[generation.IdeaDrafts](t, run(t, b))
	if len(out.Ideas) != 6 {
		t.Fatalf("%d ideas", len(out.Ideas))
	}
	for i, idea := range out.Ideas {
		o := b.Outliers[*idea.Outlier]
		if *idea.Outlier != i%3 || idea.ContentType != o.ContentType || idea.FormulaType != titleTypeOf[research.FormulaOf(o.Title)] {
			t.Errorf("idea %d %+v does not follow outlier %+v", i, idea, o)
		}
	}
	// The same brief gives the same ideas.
	if again := run(t, b); string(again) != string(run(t, b)) {
		t.Error("two answers to one brief differ")
	}
}
