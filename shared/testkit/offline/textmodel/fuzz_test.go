package textmodel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/offline/textmodel"
)

// FuzzTools: every tool, on a valid request body made of the fuzzer's input (and a channel whose profile,
// note and language are too), runs through the generation pipeline on the offline model, as writer and as
// grader. Every answer passes every check the first time (the schema at run time, the tool's rules,
// grading: no repair turn is ever asked), the tool answers a body valid against its response schema, and
// so does a refinement of it. A refusal of the input itself (a 4xx such as a transcript too short for a
// clip) is the only other outcome; GENERATION_FAILED or any 5xx on a valid request fails the test.
//
// The seeds (below and testdata/fuzz/FuzzTools) run as a normal test; to search further:
// go test -run '^$' -fuzz FuzzTools -fuzztime 5m ./shared/testkit/offline/textmodel
func FuzzTools(f *testing.F) {
	tools := generation.AllTools()
	for i := range tools { // each tool once with a plain input, every optional member present
		f.Add(uint8(i), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, byte(i)}, "5 vegan lunches under 3 dollars", timedTranscript, uint8(i))
	}
	// Issue 32 item 13: a reaction Short's script came back with 4 spoken words (500 GENERATION_FAILED): a
	// "[" of the channel's profile or notes, echoed, made the rest of the script a cue.
	short := uint8(slices.IndexFunc(tools, func(t *generation.Tool) bool { return t.Name == generation.ToolShortScripts }))
	f.Add(short, []byte{0, 0, 6}, "5 Your Niche Tips Nobody Tells You [", "", uint8(0)) // no context, no series, "reaction"
	f.Fuzz(func(t *testing.T, toolIndex uint8, choices []byte, text, transcript string, lang uint8) {
		tool := tools[int(toolIndex)%len(tools)]
		gen, ok := contract.GenerationOf(tool.Operation)
		if !ok {
			t.Fatalf("%s: not in the contract's registry", tool.Operation)
		}
		e := newEnv(t, text, lang)
		src := &source{b: choices}
		body := e.body(t, gen, src, text, transcript)
		if body == nil {
			return // the contract refuses the body whatever the model: not this test's subject
		}
		out, err := e.gen.Submit(context.Background(), generation.Submission{Operation: tool.Operation, ChannelID: "ch1", AccountID: "a", Body: body})
		e.answered(t, tool, gen.Result, out, err, body)
		if err != nil {
			return
		}
		feedback := strings.TrimSpace(text)
		if feedback == "" || len(feedback) > 2000 {
			feedback = "shorter, please"
		}
		refined, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "refine", ChannelID: "ch1", AccountID: "a",
			Body: &contract.RefineRequest{GenerationID: out.RunID, Feedback: feedback}})
		e.answered(t, tool, "RefineResult", refined, err, feedback)
	})
}

const timedTranscript = "0:00 welcome to the kitchen, today we cook beans and rice on a budget\n" +
	"1:10 first the beans: soak them overnight, it halves the cooking time\n" +
	"3:25 now the rice, rinse it twice, this is the trick most students skip\n" +
	"6:40 protein check: beans and rice together give you every amino acid\n" +
	"9:55 the taste test, and what it all cost\n11:30 thanks for watching"

// answers checks answers as the workers do; one for all runs, so each schema compiles once.
var answers = schemacheck.New()

// env is a generator on the offline model over a memory store holding one channel.
type env struct {
	gen    *generation.Generator
	model  *watched
	series string
}

func newEnv(t *testing.T, text string, lang uint8) *env {
	ctx := context.Background()
	st := store.New(memstore.New(t))
	langs := enumOf(t, "NicheProfile", "contentLanguage")
	kws := strings.Fields(text)[:min(2, len(strings.Fields(text)))] // a profile has 4 keywords, none twice
	for _, k := range []string{"meal prep", "vegan", "budget", "protein"} {
		if len(kws) < 4 && !slices.Contains(kws, k) {
			kws = append(kws, k)
		}
	}
	p := contract.NicheProfile{
		FocusedNiche:    contract.Ptr(text),
		Keywords:        kws,
		TargetAudience:  contract.Ptr(text),
		ContentLanguage: contract.Ptr(contract.NicheProfileContentLanguage(langs[int(lang)%len(langs)])),
	}
	if raw, _ := json.Marshal(p); !valid("NicheProfile", raw) { // the fuzzer's text is no valid profile
		p.FocusedNiche, p.TargetAudience, p.Keywords = contract.Ptr("vegan meal prep"), contract.Ptr("students"), []string{"vegan", "meal prep", "budget", "protein"}
	}
	if _, err := profile.NewService(st).Put(ctx, "ch1", p); err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(contract.NoteCreate{Category: "style", Content: text}); valid("NoteCreate", raw) {
		if _, err := notes.NewService(st, time.Now).Create(ctx, "ch1", contract.NoteCreate{Category: "style", Content: text}, notes.FromApp); err != nil {
			t.Fatal(err)
		}
	}
	se, err := planning.NewSeriesService(st, time.Now).Create(ctx, "ch1", contract.SeriesCreate{Name: "Budget Bites", ScriptFormula: "hook\ncost\ncook\ntaste"})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{model: &watched{Model: textmodel.New()}, series: se.ID}
	q := &inline{}
	e.gen = generation.New(generation.Config{
		Runs: st, Data: st, Idempotency: st, Quota: st, Backlog: st, Queue: q,
		Models:  generation.Models{Writer: e.model, Grader: e.model, Images: tinyPNG{}},
		Answers: answers, Images: memImages{},
		MonthlyQuota: 1_000_000, Wait: time.Minute, Now: time.Now,
		NewID: func() string { return uuid.Must(uuid.NewV7()).String() },
	})
	q.handle = e.gen.Handle
	return e
}

// answered checks one submission's outcome.
func (e *env) answered(t *testing.T, tool *generation.Tool, result string, out generation.Outcome, err error, body any) {
	t.Helper()
	for _, r := range e.model.repairs() {
		t.Errorf("%s %+v: the offline model's answer was sent back: %s", tool.Name, body, r)
	}
	if err != nil {
		if c := apperr.CodeOf(err); c != apperr.Validation && c != apperr.NotFound {
			t.Fatalf("%s %+v: %v", tool.Name, body, err)
		}
		return
	}
	if !out.Done {
		t.Fatalf("%s %+v: not done", tool.Name, body)
	}
	if _, err := contract.ValidateJSON(result, out.Output); err != nil {
		t.Fatalf("%s %+v: %v\n%s", tool.Name, body, err, out.Output)
	}
}

// body is a request body of the generation built from the fuzzer's choices, as the API decodes it, or nil
// when the contract refuses it.
func (e *env) body(t *testing.T, gen *contract.Generation, src *source, text, transcript string) contract.GenerationBody {
	s, err := contract.JSONSchema(gen.Body)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(e.value(s, "", src, text, transcript))
	v, err := contract.ValidateJSON(gen.Body, raw)
	if err != nil {
		return nil
	}
	raw, _ = json.Marshal(v)
	typed := gen.NewBody()
	if err := json.Unmarshal(raw, typed); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return typed
}

// value is a value of schema s: optional members present or not, enum values, numbers in bounds, strings
// from the fuzzer's text cut to the schema's lengths.
func (e *env) value(s map[string]any, name string, src *source, text, transcript string) any {
	if enum, _ := s["enum"].([]any); len(enum) > 0 {
		return enum[src.intn(len(enum))]
	}
	switch s["type"] {
	case "object":
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if slices.Contains(required, any(k)) || src.intn(2) == 1 {
				out[k] = e.value(props[k].(map[string]any), k, src, text, transcript)
			}
		}
		return out
	case "integer":
		lo, hi := int(s["minimum"].(float64)), int(s["maximum"].(float64))
		return lo + src.intn(hi-lo+1)
	case "boolean":
		return src.intn(2) == 1
	case "string":
		switch {
		case name == "seriesId":
			return e.series
		case s["format"] == "uri":
			return "https://www.youtube.com/watch?v=abc123"
		case name == "transcript":
			text = transcript
		}
		if n, ok := s["maxLength"].(float64); ok && len([]rune(text)) > int(n) {
			text = string([]rune(text)[:int(n)])
		}
		if n, ok := s["minLength"].(float64); ok && len([]rune(text)) < int(n) {
			text += strings.Repeat("x", int(n))
		}
		return text
	}
	return nil
}

// source hands out the fuzzer's choices; past its end every choice is the first.
type source struct {
	b []byte
	i int
}

func (s *source) intn(n int) int {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return int(s.b[s.i-1]) % n
}

func valid(component string, raw []byte) bool {
	_, err := contract.ValidateJSON(component, raw)
	return err == nil
}

// watched is the offline model, noting every repair turn the pipeline asks of it.
type watched struct {
	ai.Model
	mu    sync.Mutex
	asked []string
}

func (w *watched) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	if n := len(req.Messages); n > 1 {
		w.mu.Lock()
		w.asked = append(w.asked, req.Task+": "+req.Messages[n-1].Text)
		w.mu.Unlock()
	}
	return w.Model.Generate(ctx, req)
}

func (w *watched) repairs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.asked
	w.asked = nil
	return r
}

// inline runs each job at once, in the caller's goroutine, so a generation is one synchronous call.
type inline struct {
	handle func(context.Context, queue.Message) error
}

func (q *inline) Send(ctx context.Context, msgs ...queue.Outgoing) error {
	for _, m := range msgs {
		if err := q.handle(ctx, queue.Message{ID: "m", Body: m.Body, Attempt: 1}); err != nil {
			return err
		}
	}
	return nil
}

// tinyPNG stands in for the image model: drawing pictures is imagemodel's own test.
type tinyPNG struct{}

func (tinyPNG) Image(context.Context, ai.ImageRequest) (ai.Image, error) {
	var b bytes.Buffer
	png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1)))
	return ai.Image{Data: b.Bytes(), ContentType: "image/png", Model: "tiny"}, nil
}

type memImages struct{}

func (memImages) Put(_ context.Context, key string, _ ai.Image) (string, error) {
	return "https://images.example/" + key, nil
}

// enumOf reads the enum of a component's property from the contract.
func enumOf(t testing.TB, component, prop string) []string {
	t.Helper()
	s, err := contract.JSONSchema(component)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s["properties"].(map[string]any)[prop].(map[string]any)
	var out []string
	for _, v := range p["enum"].([]any) {
		out = append(out, v.(string))
	}
	if len(out) == 0 {
		t.Fatalf("%s.%s has no enum", component, prop)
	}
	return out
}
