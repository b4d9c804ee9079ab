package inproc

import (
	"sync"
	"time"
)

// Clock is the time a queue runs on: the wall clock unless a test gives a ManualClock.
type Clock interface {
	Now() time.Time
	// At calls f in its own goroutine once the clock reads t or later; stop cancels the call if it has not
	// started. An instant, not a duration: a duration counted from a reading taken a moment earlier lands
	// late when a ManualClock moves in that moment, and the workers then sleep past a visible message
	// (TestTimerKeepsItsInstant; TestRedelivery in shared/webhooks found it).
	At(t time.Time, f func()) (stop func() bool)
}

// WallClock is the real time.
type WallClock struct{}

func (WallClock) Now() time.Time { return time.Now() }

func (WallClock) At(t time.Time, f func()) func() bool { return time.AfterFunc(time.Until(t), f).Stop }

// ManualClock is a Clock that moves only when told, so tests of delays, visibility timeouts and retry
// schedules run in microseconds. Safe for concurrent use.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*manualTimer]struct{}
}

type manualTimer struct {
	at time.Time
	f  func()
}

// NewManualClock returns a clock reading start until advanced.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start, timers: map[*manualTimer]struct{}{}}
}

func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *ManualClock) At(at time.Time, f func()) func() bool {
	c.mu.Lock()
	t := &manualTimer{at: at, f: f}
	due := !at.After(c.now)
	if !due {
		c.timers[t] = struct{}{}
	}
	c.mu.Unlock()
	if due {
		go f()
		return func() bool { return false }
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, pending := c.timers[t]
		delete(c.timers, t)
		return pending
	}
}

// Advance moves the clock forward by d at once and calls, each in its own goroutine, every function that
// has come due. It returns without waiting for them: a queue's Settle waits for what they start.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	var due []func()
	for t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t.f)
			delete(c.timers, t)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
}
