// Package retry runs a model call again after a transient failure, with jittered exponential backoff
// bounded in attempts and in total time. The network adapters (ai/bedrock, ai/openai, the image
// adapters) share it; each classifies its own errors and turns off its SDK's own retries.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Defaults of Policy.
const (
	DefaultMaxAttempts = 4
	DefaultBase        = 500 * time.Millisecond
	DefaultCap         = 8 * time.Second
	// DefaultMaxElapsed bounds the time from the first attempt to the start of the last: a model call
	// itself may take tens of seconds, so the bound is on the waiting, not on the calls. About 30 s rides
	// out a local server's restart or a provider's short overload; a Retry-After hint longer than what is
	// left ends the retries and is passed on to the caller instead (ai.Error.RetryAfter).
	DefaultMaxElapsed = 30 * time.Second
)

// Policy says how often and how long to retry. The zero value uses the defaults; Sleep, Rand and Now are
// there so tests never wait.
type Policy struct {
	MaxAttempts int           // calls in all, the first included
	Base        time.Duration // the first wait's ceiling; it doubles each time
	Cap         time.Duration // the largest ceiling
	MaxElapsed  time.Duration // no attempt starts later than this after the first

	Sleep func(ctx context.Context, d time.Duration) error // default: a timer, cut short by ctx
	Rand  func() float64                                   // in [0, 1); default math/rand/v2
	Now   func() time.Time                                 // default time.Now
}

// Outcome is what one attempt said.
type Outcome struct {
	// Retry: the failure is transient and another attempt may succeed.
	Retry bool
	// RetryAfter is the provider's own hint (Retry-After); the wait is at least this.
	RetryAfter time.Duration
}

// Result tells how Do ended.
type Result struct {
	Attempts int
	// Exhausted: the last error was retryable but the attempts or the time ran out.
	Exhausted bool
	// NextWait is the wait another attempt would have needed (the provider's hint or the backoff); it
	// is what a caller passes on as Retry-After.
	NextWait time.Duration
}

// Do calls attempt until it returns a nil error or a non-retryable one, the attempts or the time run out,
// or ctx ends (then ctx's error is returned). attempt classifies its own error.
func (p Policy) Do(ctx context.Context, attempt func(ctx context.Context) (Outcome, error)) (Result, error) {
	p = p.withDefaults()
	start := p.Now()
	var res Result
	for {
		res.Attempts++
		out, err := attempt(ctx)
		if err == nil || !out.Retry {
			return res, err
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		wait := p.backoff(res.Attempts)
		if out.RetryAfter > wait {
			wait = out.RetryAfter
		}
		res.NextWait = wait
		if res.Attempts >= p.MaxAttempts || p.Now().Add(wait).Sub(start) > p.MaxElapsed || pastDeadline(ctx, wait) {
			res.Exhausted = true
			return res, err
		}
		if serr := p.Sleep(ctx, wait); serr != nil {
			return res, serr
		}
	}
}

// backoff is "full jitter": a uniform wait below min(Cap, Base·2^(n-1)), which spreads retries of
// callers throttled together better than a fixed or equal-jitter wait.
func (p Policy) backoff(n int) time.Duration {
	ceiling := p.Cap
	if n-1 < 30 {
		if c := p.Base << (n - 1); c > 0 && c < ceiling {
			ceiling = c
		}
	}
	return time.Duration(p.Rand() * float64(ceiling))
}

// pastDeadline: ctx would end before the wait does, so waiting is pointless. A context's deadline is on
// the real clock, whatever Now says.
func pastDeadline(ctx context.Context, wait time.Duration) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < wait
}

func (p Policy) withDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if p.Cap <= 0 {
		p.Cap = DefaultCap
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = DefaultMaxElapsed
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
