package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/store"
)

func TestIdempotencyClaims(t *testing.T) {
	backends(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		until := time.Now().Add(time.Hour)
		if _, _, claimed, err := s.ClaimIdempotencyKey(ctx, "ch1", "k", "fp1", "run1", until); err != nil || !claimed {
			t.Fatalf("first claim: claimed=%v err=%v", claimed, err)
		}
		fp, run, claimed, err := s.ClaimIdempotencyKey(ctx, "ch1", "k", "fp2", "run2", until)
		if err != nil || claimed || fp != "fp1" || run != "run1" {
			t.Fatalf("second claim = %q %q %v %v, want the first's", fp, run, claimed, err)
		}
		// Keys are per channel, and an expired claim is free again.
		if _, _, claimed, _ := s.ClaimIdempotencyKey(ctx, "ch2", "k", "fp3", "run3", until); !claimed {
			t.Error("another channel's key is held")
		}
		past := time.Now().Add(-time.Minute)
		s.ClaimIdempotencyKey(ctx, "ch1", "old", "fp", "r", past)
		if _, _, claimed, _ := s.ClaimIdempotencyKey(ctx, "ch1", "old", "fp4", "run4", until); !claimed {
			t.Error("an expired claim still holds its key")
		}
		// Concurrent claims: exactly one wins, the others read the winner's.
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				_, _, claimed, err := s.ClaimIdempotencyKey(ctx, "ch1", "race", "fp", "r", until)
				if err != nil {
					t.Error(err)
				}
				if claimed {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Errorf("%d concurrent claims won", wins.Load())
		}
	})
}

func TestMonthlyGenerations(t *testing.T) {
	backends(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var added atomic.Int32
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				if _, ok, err := s.AddGeneration(ctx, "acct", "2026-11", 1, 10); err != nil {
					t.Error(err)
				} else if ok {
					added.Add(1)
				}
			})
		}
		wg.Wait()
		if added.Load() != 10 {
			t.Fatalf("%d of 12 generations counted under a quota of 10", added.Load())
		}
		if n, _, _, _ := s.GenerationUsage(ctx, "acct", "2026-11"); n != 10 {
			t.Errorf("count = %d, want 10", n)
		}
		if n, ok, _ := s.AddGeneration(ctx, "acct", "2026-11", -1, 10); !ok || n != 9 {
			t.Errorf("refund = %d %v, want 9 true", n, ok)
		}
		if n, _, _, _ := s.GenerationUsage(ctx, "acct", "2026-12"); n != 0 {
			t.Errorf("a new month starts at %d", n)
		}
		if _, ok, _ := s.AddGeneration(ctx, "acct", "2026-12", -1, 10); ok {
			t.Error("a count went below zero")
		}
	})
}
