package ratelimit

import (
	"testing"
	"time"
)

// TestMemoryDropsPastWindows: the in-process counter keeps only the current minute's windows.
func TestMemoryDropsPastWindows(t *testing.T) {
	m := NewMemory()
	start := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	win := func(subject string, at time.Time) Window {
		return Window{Subject: subject, Group: "other", Start: at, End: at.Add(WindowLength)}
	}
	for _, s := range []string{"a", "b", "c"} {
		if _, ok, _ := m.TakeCalls(t.Context(), win(s, start), 1, 10); !ok {
			t.Fatal("refused under the limit")
		}
	}
	next := start.Add(WindowLength)
	if n, ok, _ := m.TakeCalls(t.Context(), win("a", next), 1, 10); !ok || n != 1 {
		t.Fatalf("a new window counts from 1, got %d", n)
	}
	if got := m.windows(); got != 1 {
		t.Errorf("%d windows held after the minute turned; want 1", got)
	}
}
