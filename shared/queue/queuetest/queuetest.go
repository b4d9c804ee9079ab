// Package queuetest is the conformance suite of the queue port: the in-process queue and the SQS adapter
// (against ElasticMQ) run it, so the semantics written in queue.go hold the same way locally and in the
// cloud: send and receive with attributes, delays, redelivery after the visibility timeout with the attempt
// counted, RetryAfter, one failure in a batch leaving the others deleted, dead-lettering after the
// configured receives, and nothing lost under concurrent senders and workers.
//
// An adapter on a manual clock (inproc) is driven by Advance and Settle, and every wait is for an event
// that must come; an adapter on the wall clock (an emulator) lets the real time pass, and the suite then
// waits for its counts to converge.
package queuetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
)

// Config is the queue a subtest asks for: always with a dead-letter queue and a redrive policy.
type Config struct {
	VisibilityTimeout time.Duration // whole seconds, at least one
	MaxReceiveCount   int           // at least one
}

// Counts are a queue's messages and its dead-letter queue's.
type Counts struct {
	Visible  int // ready to be received
	InFlight int // received, neither deleted nor visible again yet
	Delayed  int // sent with a delay that has not passed
	Dead     int // in the dead-letter queue
}

// Queue is one queue under test, with its dead-letter queue.
type Queue interface {
	queue.Sender
	// Start runs h with the given concurrency until the test ends.
	Start(t *testing.T, h queue.Handler, workers int)
	// Now reads the queue's clock.
	Now() time.Time
	// Advance lets d pass: a manual clock moves by d; the wall clock is left to run.
	Advance(d time.Duration)
	// Settle returns once the queue has done all it can at the current time (inproc's Settle); an adapter
	// on the wall clock returns at once.
	Settle(t *testing.T)
	// Counts reads the counts of the queue and its dead-letter queue.
	Counts(t *testing.T) Counts
	// DeadLetters returns the messages in the dead-letter queue, leaving them there.
	DeadLetters(t *testing.T) []queue.Message
}

// Adapter is what the suite needs of an adapter.
type Adapter struct {
	// New returns a fresh queue for one subtest (cleaned up with t.Cleanup). Subtests run in parallel.
	New func(t *testing.T, cfg Config) Queue
	// RealTime says the queue runs on the wall clock: Advance does nothing, and counts are awaited
	// rather than read once after Settle.
	RealTime bool
}

// Run runs the whole suite.
func Run(t *testing.T, a Adapter) {
	t.Helper()
	s := suite{Adapter: a, wait: 10 * time.Second}
	if a.RealTime {
		// The emulator counts delays and timeouts on its own clock: a delivery may be observed a little
		// before the test's clock says the time is up, by the latency of the receive that made it.
		s.slack = 250 * time.Millisecond
		s.wait = 60 * time.Second
	}
	tests := []struct {
		name string
		run  func(*testing.T, suite)
	}{
		{"SendReceive", testSendReceive},
		{"InvalidMessages", testInvalidMessages},
		{"LargestMessage", testLargestMessage},
		{"Delay", testDelay},
		{"VisibilityTimeoutRedelivery", testVisibilityTimeout},
		{"RetryAfter", testRetryAfter},
		{"RetryAfterZero", testRetryAfterZero},
		{"PartialBatchFailure", testPartialBatchFailure},
		{"DeadLetter", testDeadLetter},
		{"ConcurrentNothingLost", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, s)
		})
	}
}

type suite struct {
	Adapter
	slack time.Duration // how early a delivery may be seen on the wall clock
	wait  time.Duration // the longest wait for an event that must come
}

// delivery is one call of the handler.
type delivery struct {
	msg queue.Message
	at  time.Time // the queue's clock when the handler ran
}

// recorder records deliveries by body and lets a test wait for them.
type recorder struct {
	mu   sync.Mutex
	cond *sync.Cond
	q    Queue
	seen map[string][]delivery
	// outcome decides the handler's result for a delivery (nil: success).
	outcome func(m queue.Message) error
}

func newRecorder(q Queue, outcome func(m queue.Message) error) *recorder {
	r := &recorder{q: q, seen: map[string][]delivery{}, outcome: outcome}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) handle(_ context.Context, m queue.Message) error {
	at := r.q.Now()
	r.mu.Lock()
	r.seen[string(m.Body)] = append(r.seen[string(m.Body)], delivery{msg: m, at: at})
	r.cond.Broadcast()
	r.mu.Unlock()
	if r.outcome == nil {
		return nil
	}
	return r.outcome(m)
}

// waitFor waits until body has been delivered n times and returns its deliveries.
func (r *recorder) waitFor(t *testing.T, s suite, body string, n int) []delivery {
	t.Helper()
	deadline := time.Now().Add(s.wait)
	timer := time.AfterFunc(s.wait, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer timer.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.seen[body]) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q delivered %d times after %s; want %d", body, len(r.seen[body]), s.wait, n)
		}
		r.cond.Wait()
	}
	return slices.Clone(r.seen[body])
}

func (r *recorder) deliveries(body string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen[body])
}

func (r *recorder) all() map[string][]delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.seen)
}

// waitCounts settles the queue and checks its counts; on the wall clock it waits for them to converge.
func (s suite) waitCounts(t *testing.T, q Queue, want Counts) {
	t.Helper()
	q.Settle(t)
	got := q.Counts(t)
	if s.RealTime {
		deadline := time.Now().Add(s.wait)
		for got != want && time.Now().Before(deadline) {
			// Polling the emulator: its counts change on its own clock, and nothing signals the change.
			time.Sleep(50 * time.Millisecond)
			got = q.Counts(t)
		}
	}
	if got != want {
		t.Fatalf("counts %+v; want %+v", got, want)
	}
}

// noMore checks that body has had exactly n deliveries so far. On a manual clock after Settle this is
// exact; on the wall clock it is what has arrived.
func noMore(t *testing.T, r *recorder, body string, n int) {
	t.Helper()
	if got := len(r.deliveries(body)); got != n {
		t.Fatalf("%q delivered %d times; want %d", body, got, n)
	}
}

// atLeast checks that d has passed between from and to, within the suite's slack.
func (s suite) atLeast(t *testing.T, what string, from, to time.Time, d time.Duration) {
	t.Helper()
	if got := to.Sub(from); got < d-s.slack {
		t.Errorf("%s after %s; want at least %s", what, got, d)
	}
}

func send(t *testing.T, q Queue, msgs ...queue.Outgoing) {
	t.Helper()
	if err := q.Send(t.Context(), msgs...); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

func msg(body string) queue.Outgoing { return queue.Outgoing{Body: []byte(body)} }

var errHandler = errors.New("queuetest: the handler fails this attempt")
