package storetest

import (
	"slices"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/store"
)

// testIncrExpiry: an increment with an ExpiresAt gives the counter that expiry, whether it creates the
// counter, carries on a live one or restarts an expired one; without one the expiry is left as it was.
func testIncrExpiry(t *testing.T, s suite) {
	soon := future()
	later := soon + 3600
	cases := []struct {
		name    string
		prior   prior
		expires int64 // of the increment
		want    store.Item
	}{
		{"absent", absent, later, store.Item{Count: 1, ExpiresAt: later}},
		{"live takes the new expiry", live, later, store.Item{Count: 5, ExpiresAt: later}},
		{"live keeps its expiry without one", live, 0, store.Item{Count: 5, ExpiresAt: soon}},
		{"expired restarts with the new expiry", expired, later, store.Item{Count: 1, ExpiresAt: later}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			k := key("P", "COUNT#window")
			switch c.prior {
			case live:
				mustWrite(t, tbl, store.Put(store.Item{Key: k, Count: 4, ExpiresAt: soon}, store.Always))
			case expired:
				mustWrite(t, tbl, store.Put(store.Item{Key: k, Count: 9, ExpiresAt: past()}, store.Always))
			}
			mustWrite(t, tbl, store.IncrUntil(k, 1, 10, c.expires))
			c.want.Key = k
			wantItem(t, tbl, c.want)
		})
	}
}

// testIncrement: Increment returns the count it left, fails like Write beyond Max (changing nothing),
// restarts an expired counter, and refuses anything but an increment.
func testIncrement(t *testing.T, s suite) {
	t.Run("counts", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("P", "COUNT#calls")
		exp := future()
		for want := int64(1); want <= 3; want++ {
			got, err := tbl.Increment(t.Context(), store.IncrUntil(k, 1, 3, exp))
			if err != nil || got != want {
				t.Fatalf("Increment = %d, %v; want %d", got, err, want)
			}
		}
		_, err := tbl.Increment(t.Context(), store.IncrUntil(k, 1, 3, exp))
		wantFailedAt(t, err, 0)
		wantItem(t, tbl, store.Item{Key: k, Count: 3, ExpiresAt: exp})
		if got, err := tbl.Increment(t.Context(), store.Incr(k, -2, 3)); err != nil || got != 1 {
			t.Fatalf("Increment(-2) = %d, %v; want 1", got, err)
		}
		if got, err := tbl.Increment(t.Context(), store.Incr(k, 7, 0)); err != nil || got != 8 {
			t.Fatalf("unbounded Increment(7) = %d, %v; want 8", got, err)
		}
	})
	t.Run("expired restarts", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("P", "COUNT#old")
		mustWrite(t, tbl, store.Put(store.Item{Key: k, Count: 50, ExpiresAt: past()}, store.Always))
		exp := future()
		if got, err := tbl.Increment(t.Context(), store.IncrUntil(k, 2, 10, exp)); err != nil || got != 2 {
			t.Fatalf("Increment on an expired counter = %d, %v; want 2", got, err)
		}
		wantItem(t, tbl, store.Item{Key: k, Count: 2, ExpiresAt: exp})
	})
	t.Run("only increments", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("P", "X")
		_, err := tbl.Increment(t.Context(), store.Put(store.Item{Key: k, Data: []byte("x")}, store.Always))
		wantMalformed(t, err, "Increment of a put")
		wantAbsent(t, tbl, k)
		_, err = tbl.Increment(t.Context(), store.Incr(key("", "X"), 1, 0))
		wantMalformed(t, err, "Increment with an empty PK")
	})
}

// testConcurrentIncrement races 40 Increments of one counter bounded at 15: exactly 15 succeed, and they
// see the counts 1..15 once each (no two callers are told the same count).
func testConcurrentIncrement(t *testing.T, s suite) {
	tbl := s.fresh(t)
	const workers, limit = 40, 15
	k := key("P", "COUNT#race")
	exp := future()
	counts := make([]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			counts[i], errs[i] = tbl.Increment(t.Context(), store.IncrUntil(k, 1, limit, exp))
		})
	}
	wg.Wait()
	var seen []int64
	for i, err := range errs {
		switch {
		case err == nil:
			seen = append(seen, counts[i])
		case store.FailedOp(err) == 0:
		default:
			t.Errorf("caller %d: %v; want a count or a condition failure", i, err)
		}
	}
	wantEachCountOnce(t, seen, limit)
	wantItem(t, tbl, store.Item{Key: k, Count: limit, ExpiresAt: exp})
}

// wantEachCountOnce fails t unless the counts racers were granted are exactly 1..limit, each once: every grant
// saw a count no other grant saw, and none went past the limit.
func wantEachCountOnce(t *testing.T, seen []int64, limit int) {
	t.Helper()
	slices.Sort(seen)
	want := make([]int64, limit)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("counts returned = %v; want exactly 1..%d", seen, limit)
	}
}
