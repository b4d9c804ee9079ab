package inproc

import (
	"sync"
	"time"
)

// Clock is the time a queue runs on: the wall clock unless a test gives a ManualClock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; stop cancels the call if it has not started.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// WallClock is the real time.
type WallClock struct{}

func (WallClock) Now() time.Time { return time.Now() }

func (WallClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

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

func (c *ManualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	t := &manualTimer{at: c.now.Add(d), f: f}
	due := d <= 0
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
