package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errTransient = errors.New("transient")
var errFinal = errors.New("final")

// clock is a fake time whose Sleep advances it and records the waits.
type clock struct {
	now   time.Time
	waits []time.Duration
}

func (c *clock) policy(p Policy) Policy {
	p.Now = func() time.Time { return c.now }
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		c.waits = append(c.waits, d)
		c.now = c.now.Add(d)
		return ctx.Err()
	}
	if p.Rand == nil {
		p.Rand = func() float64 { return 0.5 }
	}
	return p
}

// script answers attempts from a list; past its end it repeats the last.
func script(outs ...struct {
	o   Outcome
	err error
}) (func(context.Context) (Outcome, error), *int) {
	n := 0
	return func(context.Context) (Outcome, error) {
		i := min(n, len(outs)-1)
		n++
		return outs[i].o, outs[i].err
	}, &n
}

type step = struct {
	o   Outcome
	err error
}

var (
	ok        = step{}
	transient = step{Outcome{Retry: true}, errTransient}
	final     = step{Outcome{}, errFinal}
)

func TestDo(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    Policy
		steps     []step
		wantErr   error
		attempts  int
		exhausted bool
		waits     []time.Duration
		nextWait  time.Duration
	}{
		{name: "first try", steps: []step{ok}, attempts: 1},
		{name: "non-retryable", steps: []step{final}, wantErr: errFinal, attempts: 1},
		{name: "two transient then ok", steps: []step{transient, transient, ok}, attempts: 3,
			// full jitter at rand 0.5: half of 500 ms, then half of 1 s
			waits: []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}, nextWait: 500 * time.Millisecond},
		{name: "transient then final", steps: []step{transient, final}, wantErr: errFinal, attempts: 2,
			waits: []time.Duration{250 * time.Millisecond}, nextWait: 250 * time.Millisecond},
		{name: "attempts run out", steps: []step{transient}, wantErr: errTransient, attempts: 4, exhausted: true,
			waits: []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}, nextWait: 2 * time.Second},
		{name: "max attempts 1", policy: Policy{MaxAttempts: 1}, steps: []step{transient}, wantErr: errTransient,
			attempts: 1, exhausted: true, nextWait: 250 * time.Millisecond},
		{name: "retry-after above backoff", steps: []step{{Outcome{Retry: true, RetryAfter: 3 * time.Second}, errTransient}, ok},
			attempts: 2, waits: []time.Duration{3 * time.Second}, nextWait: 3 * time.Second},
		{name: "retry-after past the time budget", policy: Policy{MaxElapsed: 10 * time.Second},
			steps:   []step{{Outcome{Retry: true, RetryAfter: 11 * time.Second}, errTransient}},
			wantErr: errTransient, attempts: 1, exhausted: true, nextWait: 11 * time.Second},
		{name: "cap", policy: Policy{MaxAttempts: 10, Rand: func() float64 { return 0.999 }, MaxElapsed: time.Hour},
			steps: []step{transient}, wantErr: errTransient, attempts: 10, exhausted: true,
			waits: []time.Duration{499500 * time.Microsecond, 999 * time.Millisecond, 1998 * time.Millisecond,
				3996 * time.Millisecond, 7992 * time.Millisecond, 7992 * time.Millisecond, 7992 * time.Millisecond,
				7992 * time.Millisecond, 7992 * time.Millisecond}, nextWait: 7992 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
			f, n := script(tc.steps...)
			res, err := c.policy(tc.policy).Do(context.Background(), f)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if res.Attempts != tc.attempts || *n != tc.attempts {
				t.Errorf("attempts %d (called %d), want %d", res.Attempts, *n, tc.attempts)
			}
			if res.Exhausted != tc.exhausted {
				t.Errorf("exhausted %v, want %v", res.Exhausted, tc.exhausted)
			}
			if len(c.waits) != len(tc.waits) {
				t.Fatalf("waits %v, want %v", c.waits, tc.waits)
			}
			for i := range c.waits {
				if c.waits[i] != tc.waits[i] {
					t.Errorf("wait %d: %v, want %v", i, c.waits[i], tc.waits[i])
				}
			}
			if res.NextWait != tc.nextWait {
				t.Errorf("next wait %v, want %v", res.NextWait, tc.nextWait)
			}
		})
	}
}

// The time budget counts the calls too: a slow attempt uses it up.
func TestDoTimeBudget(t *testing.T) {
	c := &clock{now: time.Unix(0, 0)}
	p := c.policy(Policy{MaxAttempts: 10, MaxElapsed: 15 * time.Second})
	calls := 0
	res, err := p.Do(context.Background(), func(context.Context) (Outcome, error) {
		calls++
		c.now = c.now.Add(20 * time.Second) // each call takes 20 s
		return Outcome{Retry: true}, errTransient
	})
	if !errors.Is(err, errTransient) || !res.Exhausted || calls != 1 {
		t.Fatalf("calls %d, res %+v, err %v: the second attempt would start past 15 s", calls, res, err)
	}
}

func TestDoContext(t *testing.T) {
	t.Run("cancelled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p := Policy{Rand: func() float64 { return 0.5 }, Sleep: func(ctx context.Context, _ time.Duration) error {
			cancel()
			return ctx.Err()
		}}
		f, n := script(transient)
		_, err := p.Do(ctx, f)
		if !errors.Is(err, context.Canceled) || *n != 1 {
			t.Fatalf("err %v after %d calls, want context.Canceled after 1", err, *n)
		}
	})
	t.Run("cancelled by the attempt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Policy{}.Do(ctx, func(context.Context) (Outcome, error) {
			cancel()
			return Outcome{Retry: true}, errTransient
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
	t.Run("deadline before the wait ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		slept := false
		p := Policy{Rand: func() float64 { return 0.5 }, Sleep: func(context.Context, time.Duration) error { slept = true; return nil }}
		f, n := script(step{Outcome{Retry: true, RetryAfter: 2 * time.Hour}, errTransient})
		res, err := p.Do(ctx, f)
		if !errors.Is(err, errTransient) || !res.Exhausted || slept || *n != 1 {
			t.Fatalf("err %v, res %+v, slept %v, calls %d", err, res, slept, *n)
		}
	})
	t.Run("real sleep ends with the context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
			t.Fatalf("sleep: %v", err)
		}
	})
}
