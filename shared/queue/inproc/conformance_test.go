package inproc_test

import (
	"context"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/queue/queuetest"
)

// suiteQueue is an inproc queue and its dead-letter queue on a manual clock, as the suite drives them.
type suiteQueue struct {
	*inproc.Queue
	dlq   *inproc.Queue
	clock *inproc.ManualClock
}

func (q suiteQueue) Start(t *testing.T, h queue.Handler, workers int) {
	t.Helper()
	if err := q.Queue.Start(h, workers); err != nil {
		t.Fatal(err)
	}
}

func (q suiteQueue) Now() time.Time          { return q.clock.Now() }
func (q suiteQueue) Advance(d time.Duration) { q.clock.Advance(d) }

func (q suiteQueue) Settle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := q.Queue.Settle(ctx); err != nil {
		t.Fatal(err)
	}
}

func (q suiteQueue) Counts(t *testing.T) queuetest.Counts {
	s, d := q.Stats(), q.dlq.Stats()
	return queuetest.Counts{Visible: s.Visible, InFlight: s.InFlight, Delayed: s.Delayed, Dead: d.Visible + d.InFlight + d.Delayed}
}

func (q suiteQueue) DeadLetters(*testing.T) []queue.Message { return q.dlq.List() }

// openPair opens a queue and its dead-letter queue, closed when the test ends.
func openPair(t *testing.T, cfg inproc.Config, dlqCfg inproc.Config) (*inproc.Queue, *inproc.Queue) {
	t.Helper()
	dlq, err := inproc.Open(dlqCfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DeadLetter = dlq
	q, err := inproc.Open(cfg)
	if err != nil {
		dlq.Close(context.Background())
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Close(ctx); err != nil {
			t.Error(err)
		}
		if err := dlq.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return q, dlq
}

func TestConformance(t *testing.T) {
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		t.Run(name, func(t *testing.T) {
			queuetest.Run(t, queuetest.Adapter{New: func(t *testing.T, cfg queuetest.Config) queuetest.Queue {
				clock := inproc.NewManualClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
				qc := inproc.Config{Name: "jobs", VisibilityTimeout: cfg.VisibilityTimeout, MaxReceiveCount: cfg.MaxReceiveCount, Clock: clock}
				dc := inproc.Config{Name: "jobs-dlq", Retention: inproc.MaxRetention, Clock: clock}
				if durable {
					dir := t.TempDir()
					qc.Dir, dc.Dir = dir+"/jobs", dir+"/jobs-dlq"
				}
				q, dlq := openPair(t, qc, dc)
				return suiteQueue{Queue: q, dlq: dlq, clock: clock}
			}})
		})
	}
}
