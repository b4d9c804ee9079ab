package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/wire"
)

// titleModel writes titles and grades them; gate, when set, holds every answer until it is closed.
type titleModel struct {
	mu   sync.Mutex
	gate chan struct{}
}

func (m *titleModel) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	m.mu.Lock()
	gate := m.gate
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ai.Result{}, ctx.Err()
		}
	}
	switch req.Task {
	case generation.TaskTitles:
		return ai.Result{JSON: json.RawMessage(`{"titles":[{"title":"How I plan a month of videos in one afternoon"},{"title":"The planning system behind 100 uploads"},{"title":"Stop planning videos the hard way"}]}`), Model: "test-writer"}, nil
	case generation.TaskGradeTitles:
		b := req.Brief
		var parts []string
		for i := range b.Items {
			parts = append(parts, fmt.Sprintf(`{"index":%d,"nicheRelevance":9,"researchAlignment":8,"hookStrength":9,"brandVoice":8,"feedback":"clear"}`, i))
		}
		return ai.Result{JSON: json.RawMessage(`{"grades":[` + strings.Join(parts, ",") + `]}`), Model: "test-grader"}, nil
	}
	return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("task %s not scripted", req.Task)}
}

func withGeneration(model ai.Model, wait time.Duration) func(e *env, c *wire.APIConfig) {
	return func(e *env, c *wire.APIConfig) {
		q, err := inproc.Open(inproc.Config{Name: "generation"})
		if err != nil {
			e.t.Fatal(err)
		}
		res, err := research.NewService(e.store, nil, research.DefaultConfig(research.SourceOffline), e.store.Now)
		if err != nil {
			e.t.Fatal(err)
		}
		g := generation.New(generation.Config{
			Runs: e.store, Data: e.store, Idempotency: e.store, Quota: e.store, Backlog: e.store, Queue: q,
			Outliers: generation.ResearchOutliers{Research: res},
			Models:   generation.Models{Writer: model, Grader: model}, Answers: schemacheck.New(), MonthlyQuota: 100,
			Wait: wait, Now: time.Now, NewID: e.store.NewID,
		})
		if err := q.Start(g.Handle, 2); err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(func() { q.Close(context.Background()) })
		c.Generation = g
	}
}

func TestGenerationOverHTTP(t *testing.T) {
	model := &titleModel{}
	e := newEnv(t, withGeneration(model, 5*time.Second))
	body := map[string]any{"title": "planning videos", "type": "how-to", "videoType": "Long"}

	r := e.do(req{method: "POST", path: v1 + "/generate/titles", cred: e.keyA, body: body}).must(t, 200)
	if len(r.list("titles")) != 3 || r.num("generated") != 3 {
		t.Fatalf("titles: %s", r.raw)
	}
	// The 200 names its run, which reads back as that output and can be refined.
	runID := r.header.Get("X-Generation-Id")
	if got := e.do(req{method: "GET", path: v1 + "/generations/" + runID, cred: e.keyA}).must(t, 200); runID == "" ||
		got.str("status") != "success" || !strings.Contains(string(got.raw), r.list("titles")[0].(map[string]any)["title"].(string)) {
		t.Errorf("X-Generation-Id %q reads %s", runID, got.raw)
	}

	// Prefer: respond-async answers 202 at once, with where to look; the run is the channel's only.
	model.mu.Lock()
	model.gate = make(chan struct{})
	model.mu.Unlock()
	r = e.do(req{method: "POST", path: v1 + "/generate/titles", cred: e.keyA, body: body, header: map[string]string{"Prefer": "respond-async"}}).must(t, 202)
	id := r.str("generationId")
	if r.str("status") != "pending" || r.header.Get("Location") != "/api/v1/generations/"+id {
		t.Fatalf("202: %s, Location %q", r.raw, r.header.Get("Location"))
	}
	if got := e.do(req{method: "GET", path: v1 + "/generations/" + id, cred: e.keyA}).must(t, 200); got.str("status") != "pending" {
		t.Errorf("pending run reads %s", got.raw)
	}
	e.do(req{method: "GET", path: v1 + "/generations/" + id, cred: e.keyB}).must(t, 404, "NOT_FOUND")
	close(model.gate)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := e.do(req{method: "GET", path: v1 + "/generations/" + id, cred: e.keyA}).must(t, 200)
		if got.str("status") == "success" {
			if got.str("model") != "test-writer" {
				t.Errorf("model = %q", got.str("model"))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run still %s", got.str("status"))
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The same Idempotency-Key with another body is a conflict.
	key := map[string]string{"Idempotency-Key": "abc-123"}
	first := e.do(req{method: "POST", path: v1 + "/generate/titles", cred: e.keyA, body: body, header: key}).must(t, 200)
	again := e.do(req{method: "POST", path: v1 + "/generate/titles", cred: e.keyA, body: body, header: key}).must(t, 200)
	if string(first.raw) != string(again.raw) {
		t.Error("the same Idempotency-Key answered differently")
	}
	other := map[string]any{"title": "another topic", "type": "how-to", "videoType": "Long"}
	e.do(req{method: "POST", path: v1 + "/generate/titles", cred: e.keyA, body: other, header: key}).must(t, 409, "CONFLICT")

	// A tool that needs a transcript says so before any job runs.
	e.do(req{method: "POST", path: v1 + "/generate/clips", cred: e.keyA, body: map[string]any{"title": "x"}}).must(t, 400, "VALIDATION_ERROR")
	if r := e.do(req{method: "POST", path: v1 + "/generate/clips", cred: e.keyA, body: map[string]any{"title": "x", "videoUrl": "https://example.com/v"}}); !strings.Contains(r.str("error"), "transcript") {
		t.Errorf("clips without a transcript: %s", r.raw)
	}

	// Refine: another channel's generation is not found.
	e.do(req{method: "POST", path: v1 + "/refine", cred: e.keyB, body: map[string]any{"generationId": id, "feedback": "shorter"}}).must(t, 404, "NOT_FOUND")
}

func TestLegacyGenerate(t *testing.T) {
	e := newEnv(t, withGeneration(&titleModel{}, 5*time.Second))
	r := e.do(req{method: "POST", path: "/api/generate", cred: e.keyA, body: map[string]any{
		"tool": "titles", "videoTitle": "planning videos", "titleType": "how-to", "videoType": "Short"}}).must(t, 200)
	if len(r.list("titles")) == 0 {
		t.Fatalf("legacy titles: %s", r.raw)
	}
	// Validated as the versioned body: the error names the versioned field.
	r = e.do(req{method: "POST", path: "/api/generate", cred: e.keyA, body: map[string]any{
		"tool": "titles", "videoTitle": "planning videos", "titleType": "not-a-type"}}).must(t, 400, "VALIDATION_ERROR")
	if !strings.HasPrefix(r.str("error"), "type") {
		t.Errorf("legacy error = %q, want it to name type", r.str("error"))
	}
	e.do(req{method: "POST", path: "/api/generate", cred: e.keyA, body: map[string]any{"tool": "titles", "titleType": "how-to"}}).must(t, 400, "VALIDATION_ERROR")
}

// ideasModel writes the ideas asked for: first a taken title in capitals (when there is one and room for
// it), then fresh titles numbered by how many were taken, each from the next outlier listed.
type ideasModel struct{ titleModel }

func (m *ideasModel) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	if req.Task != generation.TaskIdeas {
		return m.titleModel.Generate(ctx, req)
	}
	b := req.Brief
	ct := b.ContentType
	if ct == "" {
		ct = "Long"
	}
	var items []string
	if len(b.Taken) > 0 && b.Count < generation.MaxIdeas {
		items = append(items, fmt.Sprintf(`{"title":%q,"contentType":%q,"formulaType":"story"}`, strings.ToUpper(b.Taken[0]), ct))
	}
	for i := range b.Count {
		outlier := ""
		if len(b.Outliers) > 0 {
			outlier = fmt.Sprintf(`,"outlier":%d`, i%len(b.Outliers))
		}
		items = append(items, fmt.Sprintf(`{"title":"Idea %d after %d taken","contentType":%q,"formulaType":"listicle"%s}`, i+1, len(b.Taken), ct, outlier))
	}
	return ai.Result{JSON: json.RawMessage(`{"ideas":[` + strings.Join(items, ",") + `]}`), InputTokens: 10, OutputTokens: 10, Model: "test-writer"}, nil
}

func TestGenerateIdeasOverHTTP(t *testing.T) {
	e := newEnv(t, withGeneration(&ideasModel{}, 5*time.Second))
	gen := func(cred string, body any, header map[string]string) resp {
		return e.do(req{method: "POST", path: v1 + "/generate/ideas", cred: cred, body: body, header: header})
	}
	backlog := func(cred string) []any {
		return e.do(req{method: "GET", path: v1 + "/video-ideas?limit=100", cred: cred}).must(t, 200).list("ideas")
	}
	history := func(cred string) float64 {
		return e.do(req{method: "GET", path: v1 + "/history?tool=ideas", cred: cred}).must(t, 200).num("total")
	}

	// Bad bodies answer 400 naming the field, and run nothing.
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"count": 0}, "count"}, {map[string]any{"count": 21}, "count"}, {map[string]any{"count": -1}, "count"},
		{map[string]any{"count": 2.5}, "count"}, {map[string]any{"count": "3"}, "count"},
		{map[string]any{"contentType": "Podcast"}, "contentType"}, {map[string]any{"contentType": "Both"}, "contentType"},
		{map[string]any{"contentType": "short"}, "contentType"}, {map[string]any{"context": repeat("x", 5001)}, "context"},
		{"[]", "body"},
	} {
		r := gen(e.keyA, c.body, nil).must(t, 400, "VALIDATION_ERROR")
		if !strings.HasPrefix(r.str("error"), c.field) {
			t.Errorf("%v: error %q does not name %s", c.body, r.str("error"), c.field)
		}
	}
	if history(e.keyA) != 0 || len(backlog(e.keyA)) != 0 {
		t.Fatal("a refused request ran")
	}

	// The bounds: 20 and 1; no count is 10. A title the backlog holds, in other case, is never added twice.
	r := gen(e.keyA, map[string]any{"count": 20}, nil).must(t, 200)
	if n := len(r.list("ideas")); n != 20 {
		t.Fatalf("count 20: %d ideas", n)
	}
	if n := len(gen(e.keyA, map[string]any{"count": 1, "contentType": "Short"}, nil).must(t, 200).list("ideas")); n != 1 {
		t.Fatalf("count 1: %d ideas", n)
	}
	r = gen(e.keyA, map[string]any{"context": "exam season"}, nil).must(t, 200)
	if n := len(r.list("ideas")); n != 10 {
		t.Fatalf("default count: %d ideas", n)
	}
	all := backlog(e.keyA)
	seen := map[string]bool{}
	shorts := 0
	for _, i := range all {
		i := i.(map[string]any)
		key := strings.ToLower(i["title"].(string))
		if seen[key] {
			t.Errorf("title %q twice in the backlog", i["title"])
		}
		seen[key] = true
		if i["contentType"] == "Short" {
			shorts++
		}
	}
	if len(all) != 31 || shorts != 1 || history(e.keyA) != 3 {
		t.Fatalf("backlog of %d (%d Shorts), %v runs", len(all), shorts, history(e.keyA))
	}

	// Another channel sees none of it, and cannot read the run; a session names its channel.
	run := gen(e.keyA, map[string]any{"count": 1}, map[string]string{"Prefer": "respond-async", "Idempotency-Key": "ideas-1"}).must(t, 202).str("generationId")
	if len(backlog(e.keyB)) != 0 || history(e.keyB) != 0 {
		t.Error("channel B sees channel A's ideas")
	}
	e.do(req{method: "GET", path: v1 + "/generations/" + run, cred: e.keyB}).must(t, 404, "NOT_FOUND")
	tok := e.session(e.accountA)
	gen(tok, map[string]any{"count": 2}, map[string]string{"X-Channel-Id": e.channelB}).must(t, 404, "NOT_FOUND")
	gen(tok, map[string]any{"count": 2}, map[string]string{"X-Channel-Id": e.channelA2}).must(t, 200)
	if n := len(e.do(req{method: "GET", path: v1 + "/video-ideas", cred: tok, header: map[string]string{"X-Channel-Id": e.channelA2}}).must(t, 200).list("ideas")); n != 2 {
		t.Errorf("channel A2's backlog: %d", n)
	}
	waitFor(t, func() bool {
		return e.do(req{method: "GET", path: v1 + "/generations/" + run, cred: e.keyA}).must(t, 200).str("status") == "success"
	})

	// A full backlog (200) answers 400 and runs nothing; the same Idempotency-Key still answers its run.
	for i := len(backlog(e.keyA)); i < videos.MaxBacklog; i++ {
		if err := e.store.PutIdea(context.Background(), e.channelA, videos.Idea{ID: e.store.NewID(), Title: fmt.Sprint("filler ", i),
			ContentType: "Long", FormulaType: "story", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	runs := history(e.keyA)
	r = gen(e.keyA, map[string]any{"count": 1}, nil).must(t, 400, "VALIDATION_ERROR")
	if !strings.Contains(r.str("error"), "200") || history(e.keyA) != runs {
		t.Fatalf("full backlog: %s, %v runs", r.raw, history(e.keyA))
	}
	again := gen(e.keyA, map[string]any{"count": 1}, map[string]string{"Idempotency-Key": "ideas-1"}).must(t, 200)
	if len(again.list("ideas")) != 1 {
		t.Errorf("the key's first answer: %s", again.raw)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
