package textmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/profile"
)

// supported are the languages with a phrasebook; fallbackLanguage is one of the contract's without.
var supported = []string{"english", "spanish", "french", "german", "portuguese"}

const fallbackLanguage = "japanese"

// compiled are the answer schemas of every task, compiled once.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	for _, task := range generation.Tasks {
		raw, err := generation.Schema(task)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(task+".json", doc); err != nil {
			return nil, err
		}
		if out[task], err = c.Compile(task + ".json"); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// validate checks an answer against the task's schema.
func validate(t testing.TB, task string, answer []byte) {
	t.Helper()
	schemas, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(answer)))
	if err != nil {
		t.Fatalf("%s: answer is not JSON: %v", task, err)
	}
	if err := schemas[task].Validate(v); err != nil {
		t.Fatalf("%s: answer does not match the schema: %v\n%s", task, err, answer)
	}
}

// enumOf reads the enum of a request body's property from the contract, so the tests follow the contract.
func enumOf(t testing.TB, component, prop string) []string {
	t.Helper()
	s, err := contract.JSONSchema(component)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s["properties"].(map[string]any)[prop].(map[string]any)
	enum, _ := p["enum"].([]any)
	if len(enum) == 0 {
		t.Fatalf("%s.%s has no enum", component, prop)
	}
	out := make([]string, len(enum))
	for i, e := range enum {
		out[i] = e.(string)
	}
	return out
}

// answerEnum reads an enum of an answer schema (a property path of objects and "*" for array items).
func answerEnum(t testing.TB, task string, path ...string) []string {
	t.Helper()
	raw, err := generation.Schema(task)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		if p == "*" {
			s = s["items"].(map[string]any)
		} else {
			s = s["properties"].(map[string]any)[p].(map[string]any)
		}
	}
	var out []string
	for _, e := range s["enum"].([]any) {
		out = append(out, e.(string))
	}
	return out
}

func richProfile(lang string) profile.NicheProfile {
	return profile.NicheProfile{
		BroadNiche:       "cooking",
		FocusedNiche:     "vegan meal prep for busy professionals",
		Slogan:           "Eat plants, save time",
		NicheStatement:   "The only channel that makes vegan meal prep fit a 50-hour work week, with real budgets and real protein.",
		Mission:          "Make plant-based eating easy for people with no time to cook.",
		Purpose:          "Help busy people eat better without spending their weekends in the kitchen.",
		Passion:          "Cooking simple food that keeps for a week and still tastes great.",
		Keywords:         []string{"vegan meal prep", "high protein", "budget meals", "batch cooking"},
		InsiderTerms:     []string{"macros", "prep day", "freezer stash"},
		TargetAudience:   "busy professionals aged 25 to 40 who want to eat healthy without cooking every day",
		ChannelGoals:     "Reach 100k subscribers and launch a paid meal plan within a year of steady uploads.",
		PainPoints:       "no time to cook, eating takeout too often, getting enough protein without meat",
		ProfitModel:      "a paid weekly meal plan and a cookbook for busy people",
		TopCompetitors:   []string{"Pick Up Limes", "Rainbow Plant Life", "Avant-Garde Vegan"},
		Conferences:      []string{"VegFest", "Plant Based World Expo"},
		IndustrySpeakers: []string{"Dr. Michael Greger", "Brenda Davis"},
		Podcasters:       []string{"Rich Roll", "The Exam Room"},
		Sponsors:         []string{"Oatly", "Huel"},
		ContentLanguage:  lang,
	}
}

func richNotes() []generation.BriefNote {
	return []generation.BriefNote{
		{Category: "style", Content: `Casual and upbeat, short sentences, always end with "Stay saucy"`},
		{Category: "preference", Content: `Never use the word "hack" in titles`},
		{Category: "insight", Content: "Viewers love freezer-friendly recipes and rewatch the shopping list part."},
		{Category: "feedback", Content: "Intros were too long last month, get to the food faster."},
		{Category: "decision", Content: "Every video shows the cost per portion."},
	}
}

func series() *generation.BriefSeries {
	return &generation.BriefSeries{
		Name:          "Prep Sunday",
		Description:   "A weekly prep session for the five workdays.",
		ScriptFormula: "Hook with the week's menu\nShopping list and costs\nCook the three base recipes\nStorage and reheating\nTaste test\nCall to action",
	}
}

// plainTranscript is about n words of speech with no timestamps.
func plainTranscript(n int) string {
	base := strings.Fields("Welcome back to the kitchen. Today we prep five lunches for the week with chickpeas, rice and tofu. " +
		"First the chickpeas go into the oven with paprika. Then we cook the rice and season the tofu with soy sauce and garlic. " +
		"Protein matters, so every box gets at least thirty grams. Store everything in glass containers and freeze two portions.")
	var sb strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(base[i%len(base)])
	}
	return sb.String()
}

// timedTranscript has a timestamped line every step seconds up to last seconds.
func timedTranscript(last, step int) string {
	var sb strings.Builder
	lines := []string{"Welcome back to the kitchen", "Chickpeas go into the oven with paprika", "Rice time, one cup per two portions",
		"Season the tofu with soy sauce and garlic", "Let's talk protein per box", "Glass containers keep it fresh", "Freeze two portions for Friday"}
	for i, s := 0, 0; s <= last; i, s = i+1, s+step {
		fmt.Fprintf(&sb, "[%d:%02d:%02d] %s\n", s/3600, s/60%60, s%60, lines[i%len(lines)])
	}
	return sb.String()
}

// srtTranscript is an SRT file with a cue every 4 seconds.
func srtTranscript(cues int) string {
	var sb strings.Builder
	for i := 0; i < cues; i++ {
		s := i * 4
		fmt.Fprintf(&sb, "%d\n00:%02d:%02d,000 --> 00:%02d:%02d,500\nStep %d of the prep, and we keep going\n\n", i+1, s/60, s%60, (s+3)/60, (s+3)%60, i+1)
	}
	return sb.String()
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newBrief is a brief of the rich channel (research, notes) in lang for task with input.
func newBrief(t testing.TB, task, lang string, input any) *generation.Brief {
	return &generation.Brief{
		Task:     task,
		Language: lang,
		Profile:  richProfile(lang),
		Notes:    richNotes(),
		Patterns: "Titles with numbers and budget words do best. Thumbnails with food close-ups and a price tag win.",
		Outliers: []generation.Outlier{
			{Title: "5 budget vegan meals for the whole week", URL: "https://www.youtube.com/watch?v=a", Views: 900000, Score: 12.5},
			{Title: "Budget protein prep in one hour", Views: 300000, Score: 6.1},
			{Title: "I ate vegan on a budget for a month", Views: 120000, Score: 3.2},
		},
		Input: mustJSON(t, input),
	}
}

// emptyBrief is a brief of a channel that has written nothing.
func emptyBrief(t testing.TB, task string, input any) *generation.Brief {
	return &generation.Brief{Task: task, Language: "english", Profile: profile.NicheProfile{ContentLanguage: "english"}, Input: mustJSON(t, input)}
}

// run generates an answer, checks it against the task's schema, and returns it.
func run(t testing.TB, b *generation.Brief) json.RawMessage {
	t.Helper()
	res, err := New().Generate(context.Background(), ai.Request{Role: ai.Generation, Task: b.Task, Brief: b})
	if err != nil {
		t.Fatalf("%s: %v", b.Task, err)
	}
	if res.Model != "offline" {
		t.Errorf("model %q, want offline", res.Model)
	}
	if res.InputTokens <= 0 || res.OutputTokens <= 0 {
		t.Errorf("tokens in %d out %d", res.InputTokens, res.OutputTokens)
	}
	task := b.Task
	if task == generation.TaskRefine {
		task = b.OriginalTask
	}
	validate(t, task, res.JSON)
	return res.JSON
}

func decode[T any](t testing.TB, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	return v
}

func ptr[T any](v T) *T { return &v }
