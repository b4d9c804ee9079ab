package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/config"
)

// benchStack is the local stack as make run assembles it (JSON logs included, to a discard writer), over
// a fresh data folder, with one development key.
func benchStack(b testing.TB) http.Handler {
	b.Helper()
	b.Setenv("CSS_DATA_DIR", b.TempDir())
	b.Setenv("CSS_DEV_API_KEYS", devKey)
	b.Setenv("CSS_RATE_OTHER_PER_MIN", "1000000000")
	cfg, err := config.FromEnv(config.Development)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s, err := open(ctx, cfg, config.Logger(io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.bootstrap(ctx, cfg, io.Discard); err != nil {
		b.Fatal(err)
	}
	return s.handler
}

func serve(b *testing.B, h http.Handler, method, path, body string, want int) []byte {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+devKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// BenchmarkListVideos is GET /my-videos of a channel with 100 videos, in process (no network).
func BenchmarkListVideos(b *testing.B) {
	h := benchStack(b)
	for i := range 100 {
		serve(b, h, "POST", "/api/v1/my-videos", fmt.Sprintf(`{"title":"Benchmark video %d","contentType":"Long","formulaType":"tutorial"}`, i), 200)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		serve(b, h, "GET", "/api/v1/my-videos", "", 200)
	}
}

// BenchmarkCreateDeleteNote is POST /notes then DELETE /notes/{id} in process, 8 in flight (what the load
// script drives); the delete keeps the channel under its 500-note limit.
func BenchmarkCreateDeleteNote(b *testing.B) {
	h := benchStack(b)
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var note struct{ ID string }
			body := serve(b, h, "POST", "/api/v1/notes", `{"category":"general","content":"Open with the result, then show how."}`, 201)
			if err := json.Unmarshal(body, &note); err != nil {
				b.Fatal(err)
			}
			serve(b, h, "DELETE", "/api/v1/notes/"+note.ID, "", 204)
		}
	})
}
