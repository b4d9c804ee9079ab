package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/wire"
)

// leftGenerator is a generation whose client leaves while it is submitted: the request's context is
// cancelled (as net/http does when the connection closes), and the submit answers the cancellation.
type leftGenerator struct{ leave context.CancelFunc }

func (g leftGenerator) Submit(ctx context.Context, _ generation.Submission) (generation.Outcome, error) {
	g.leave()
	return generation.Outcome{}, fmt.Errorf("generation: transcript: %w", ctx.Err())
}

func (leftGenerator) Run(context.Context, string, string) (generation.ToolRun, error) {
	return generation.ToolRun{}, nil
}

type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// A request cancelled by its client is logged as that, not as a failure of ours (issue 32 item 10: a
// client that left during a generation's submit was logged as 500 INTERNAL "queue: context canceled").
func TestClientCancelIsNoServerError(t *testing.T) {
	logs := &syncLog{}
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	e := newEnv(t, func(_ *env, c *wire.APIConfig) {
		c.Log = slog.New(slog.NewJSONHandler(logs, nil))
		c.Generation = leftGenerator{leave: leave}
	})
	r := httptest.NewRequest("POST", v1+"/generate/titles", strings.NewReader(`{"title":"planning videos","type":"how-to"}`)).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer "+e.keyA)
	r.Header.Set("Content-Type", "application/json")
	e.h.ServeHTTP(httptest.NewRecorder(), r)

	var request map[string]any
	for line := range strings.Lines(logs.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["level"] == "ERROR" {
			t.Errorf("logged as an error: %s", line)
		}
		if rec["msg"] == "request" {
			request = rec
		}
	}
	if request == nil || request["status"] != float64(499) || request["canceled"] != true {
		t.Fatalf("the request is logged as %v; want status 499 (the client closed the request), canceled", request)
	}
}
