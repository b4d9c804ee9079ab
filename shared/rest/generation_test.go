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
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/rest"
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
		b := req.Brief.(*generation.Brief)
		var parts []string
		for i := range b.Items {
			parts = append(parts, fmt.Sprintf(`{"index":%d,"nicheRelevance":9,"researchAlignment":8,"hookStrength":9,"brandVoice":8,"feedback":"clear"}`, i))
		}
		return ai.Result{JSON: json.RawMessage(`{"grades":[` + strings.Join(parts, ",") + `]}`), Model: "test-grader"}, nil
	}
	return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("task %s not scripted", req.Task)}
}

func withGeneration(model ai.Model, wait time.Duration) func(e *env, c *rest.Config) {
	return func(e *env, c *rest.Config) {
		q, err := inproc.Open(inproc.Config{Name: "generation"})
		if err != nil {
			e.t.Fatal(err)
		}
		g := generation.New(generation.Config{
			Runs: e.store, Data: e.store, Idempotency: e.store, Quota: e.store, Queue: q,
			Models: generation.Models{Writer: model, Grader: model}, MonthlyQuota: 100,
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
