package store

import (
	"math"
	"testing"
)

// TestNextCount pins the counter rule at each of its edges: 0 and max are in bounds, one past either is not,
// max <= 0 means no upper bound, and a sum that would overflow int64 either way is out of bounds rather
// than wrapped around.
func TestNextCount(t *testing.T) {
	tests := []struct {
		name              string
		count, delta, max int64
		want              int64
		inBounds          bool
	}{
		{"up to max", 9, 1, 10, 10, true},
		{"one past max", 10, 1, 10, 0, false},
		{"down to zero", 5, -5, 10, 0, true},
		{"one below zero", 5, -6, 10, 0, false},
		{"no bound (0)", 1 << 40, 1, 0, 1<<40 + 1, true},
		{"no bound (negative)", 7, 3, -1, 10, true},
		{"up to MaxInt64", math.MaxInt64 - 1, 1, 0, math.MaxInt64, true},
		{"past MaxInt64", math.MaxInt64, 1, 0, 0, false},
		{"far past MaxInt64", math.MaxInt64 - 1, math.MaxInt64, 0, 0, false},
		{"down to MinInt64", math.MinInt64 + 1, -1, 0, 0, false},
		{"past MinInt64", math.MinInt64, -1, 0, 0, false},
		{"negative count raised to zero", -3, 3, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := NextCount(tt.count, tt.delta, tt.max)
			if ok != tt.inBounds || (ok && got != tt.want) {
				t.Fatalf("NextCount(%d, %d, %d) = %d, %t; want %d, %t", tt.count, tt.delta, tt.max, got, ok, tt.want, tt.inBounds)
			}
		})
	}
}
