package ratelimit

import (
	"context"
	"sync"
)

// Memory is a Counter in process memory, for a deployment that is exactly one instance: the local stack,
// whose embedded table admits one process, so a count in its memory is shared by every caller there is.
// Counting in the table instead would add a write to the embedded store on every request, reads included
// (make bench-load measures what that costs).
// Windows are dropped once a later one starts. Safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	counts  map[memoryKey]int64
	current int64 // the latest window start seen, Unix seconds
}

type memoryKey struct {
	subject, group string
	start          int64
}

// NewMemory returns an empty in-process counter.
func NewMemory() *Memory { return &Memory{counts: map[memoryKey]int64{}} }

// TakeCalls leases n calls of w unless w would then hold more than limit.
func (m *Memory) TakeCalls(_ context.Context, w Window, n, limit int64) (int64, bool, error) {
	k := memoryKey{w.Subject, w.Group, w.Start.Unix()}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.start > m.current {
		for old := range m.counts {
			if old.start < k.start {
				delete(m.counts, old)
			}
		}
		m.current = k.start
	}
	c := m.counts[k]
	if n < 1 || c+n > limit {
		return limit, false, nil
	}
	m.counts[k] = c + n
	return c + n, true, nil
}

// CallCount returns the calls w holds.
func (m *Memory) CallCount(_ context.Context, w Window) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[memoryKey{w.Subject, w.Group, w.Start.Unix()}], nil
}

// windows is how many windows m holds (tests).
func (m *Memory) windows() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.counts)
}
