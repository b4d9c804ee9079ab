package webhooks_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// TestTenThousandEventsWithFlakyFirstAttempts: 10,000 events to a receiver that fails a random 30% of
// first attempts (on the injected clock, retries come at +5 minutes): every event succeeds exactly once,
// and each failed first attempt is retried exactly once.
func TestTenThousandEventsWithFlakyFirstAttempts(t *testing.T) {
	const events = 10_000
	h := newHarness(t, harnessOptions{workers: 16})
	rec := webhookstest.StartReceiver(t)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	failedFirst := 0
	rec.Respond(func(r *webhookstest.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if r.Attempt == 1 && rng.Float64() < 0.3 {
			failedFirst++
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	w := h.register(chA, rec, webhooks.VideoCommitted)
	ctx := context.Background()
	emitted := make(map[string]bool, events)
	for range events {
		if err := h.emitter.Emit(ctx, chA, webhooks.VideoCommitted, sampleData(webhooks.VideoCommitted)); err != nil {
			t.Fatal(err)
		}
	}
	h.settle()
	h.advance(5 * time.Minute)
	h.advance(time.Hour)

	reqs := rec.Requests()
	successes := map[string]int{}
	for _, r := range reqs {
		if r.VerifyErr != nil {
			t.Fatalf("a signature does not verify: %v", r.VerifyErr)
		}
		id := r.Header.Get("webhook-id")
		emitted[id] = true
		if r.Status == http.StatusOK {
			successes[id]++
		}
	}
	lost, dup := 0, 0
	for id := range emitted {
		switch successes[id] {
		case 0:
			lost++
		case 1:
		default:
			dup++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d events, %d requests, %d first attempts failed, %d lost, %d duplicate successes", len(emitted), len(reqs), failedFirst, lost, dup)
	if len(emitted) != events || lost != 0 || dup != 0 || len(reqs) != events+failedFirst || failedFirst < 2700 || failedFirst > 3300 {
		t.Fatalf("%d distinct events (want %d), %d lost, %d duplicates, %d requests for %d first failures",
			len(emitted), events, lost, dup, len(reqs), failedFirst)
	}
	_, total, err := h.svc.Deliveries(ctx, chA, w.ID, 1, 0)
	if err != nil || total != events {
		t.Fatalf("the log holds %d deliveries, %v", total, err)
	}
	if n := len(h.dlq.List()); n != 0 {
		t.Errorf("%d dead letters", n)
	}
	if n := h.outboxLen(); n != 0 {
		t.Errorf("%d left in the outbox", n)
	}
}
