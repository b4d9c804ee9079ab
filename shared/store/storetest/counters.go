package storetest

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/store"
)

// testAddCounter: AddCounter adds to a named counter of a live data item, drops the counters it names and
// changes nothing else; it returns the item as written, or as stored when the bound refuses it (nothing
// written); it never creates an item. Every read returns the counters; a Put writes them as given.
func testAddCounter(t *testing.T, s suite) {
	exp := future()
	base := func(k store.Key) store.Item {
		return store.Item{Key: k, Data: []byte(`{"key":"record"}`), Version: 3, ExpiresAt: exp}
	}
	t.Run("adds and returns the item", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("KEYHASH#a", "KEY")
		mustWrite(t, tbl, store.Put(base(k), store.IfNotExists))
		got, err := tbl.AddCounter(t.Context(), k, "other@60", 10, 120, nil)
		want := base(k)
		want.Counters = map[string]int64{"other@60": 10}
		if err != nil || !sameItem(got, want) {
			t.Fatalf("AddCounter = %s, %v; want %s", describe(got), err, describe(want))
		}
		got, err = tbl.AddCounter(t.Context(), k, "generation@60", 1, 60, nil)
		want.Counters["generation@60"] = 1
		if err != nil || !sameItem(got, want) {
			t.Fatalf("second counter: %s, %v; want %s", describe(got), err, describe(want))
		}
		got, err = tbl.AddCounter(t.Context(), k, "other@60", 110, 120, nil)
		want.Counters["other@60"] = 120
		if err != nil || !sameItem(got, want) {
			t.Fatalf("up to the bound: %s, %v; want %s", describe(got), err, describe(want))
		}
		wantItem(t, tbl, want)
	})
	t.Run("refused returns the item as stored", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("KEYHASH#b", "KEY")
		mustWrite(t, tbl, store.Put(base(k), store.IfNotExists))
		if _, err := tbl.AddCounter(t.Context(), k, "other@60", 119, 120, nil); err != nil {
			t.Fatal(err)
		}
		want := base(k)
		want.Counters = map[string]int64{"other@60": 119}
		got, err := tbl.AddCounter(t.Context(), k, "other@60", 2, 120, []string{"other@0"})
		if store.FailedOp(err) != 0 || !sameItem(got, want) {
			t.Fatalf("past the bound: %s, %v; want %s and a condition failure", describe(got), err, describe(want))
		}
		// A refused first add to a counter it does not hold: the item, without that counter.
		got, err = tbl.AddCounter(t.Context(), k, "generation@60", 61, 60, nil)
		if store.FailedOp(err) != 0 || !sameItem(got, want) {
			t.Fatalf("a new counter past the bound: %s, %v; want %s and a condition failure", describe(got), err, describe(want))
		}
		// Below 0 is out of bounds too.
		if _, err := tbl.AddCounter(t.Context(), k, "other@60", -120, 0, nil); store.FailedOp(err) != 0 {
			t.Fatalf("below 0: %v; want a condition failure", err)
		}
		wantItem(t, tbl, want)
	})
	t.Run("drops the counters named", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("KEYHASH#c", "KEY")
		it := base(k)
		it.Counters = map[string]int64{"other@0": 600, "other@60": 5, "generation@0": 9}
		mustWrite(t, tbl, store.Put(it, store.Always))
		got, err := tbl.AddCounter(t.Context(), k, "other@120", 1, 600, []string{"other@0", "generation@0", "never@1"})
		want := base(k)
		want.Counters = map[string]int64{"other@60": 5, "other@120": 1}
		if err != nil || !sameItem(got, want) {
			t.Fatalf("AddCounter = %s, %v; want %s", describe(got), err, describe(want))
		}
		wantItem(t, tbl, want)
		// Delta 0 with no upper bound only drops.
		got, err = tbl.AddCounter(t.Context(), k, "other@120", 0, 0, []string{"other@60"})
		want.Counters = map[string]int64{"other@120": 1}
		if err != nil || !sameItem(got, want) {
			t.Fatalf("a drop alone = %s, %v; want %s", describe(got), err, describe(want))
		}
	})
	t.Run("never creates an item", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("KEYHASH#gone", "KEY")
		if _, err := tbl.AddCounter(t.Context(), k, "other@60", 1, 600, nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("absent: %v; want ErrNotFound", err)
		}
		wantAbsent(t, tbl, k)
		old := key("KEYHASH#old", "KEY")
		mustWrite(t, tbl, store.Put(store.Item{Key: old, Data: []byte("x"), ExpiresAt: past()}, store.Always))
		if _, err := tbl.AddCounter(t.Context(), old, "other@60", 1, 600, nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("expired: %v; want ErrNotFound", err)
		}
		wantAbsent(t, tbl, old)
	})
	t.Run("reads and puts carry counters", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k, other := key("P", "A"), key("P", "B")
		it := base(k)
		it.Counters = map[string]int64{"x": 7, "y.z@1": -2}
		mustWrite(t, tbl, store.Put(it, store.Always), store.Put(store.Item{Key: other, Data: []byte("b")}, store.Always))
		wantItem(t, tbl, it)
		many, err := tbl.GetMany(t.Context(), []store.Key{k, other})
		if err != nil || len(many) != 2 || !sameItem(many[0], it) || many[1].Counters != nil {
			t.Fatalf("GetMany = %s, %v", describeItems(many), err)
		}
		page, err := tbl.Query(t.Context(), store.Query{PK: "P"})
		if err != nil || len(page.Items) != 2 || !sameItem(page.Items[0], it) || page.Items[1].Counters != nil {
			t.Fatalf("Query = %s, %v", describeItems(page.Items), err)
		}
		// The caller's map is not the table's.
		got := mustGet(t, tbl, k)
		got.Counters["x"] = 99
		wantItem(t, tbl, it)
		// A put replaces them with its own (none: none).
		mustWrite(t, tbl, store.Put(base(k), store.IfExists))
		wantItem(t, tbl, base(k))
	})
}

// testAddCounterLimits: names outside the port's rules, a counter dropped twice or dropped while added to,
// and counters on an op other than a put are refused as malformed, writing nothing.
func testAddCounterLimits(t *testing.T, s suite) {
	tbl := s.fresh(t)
	k := key("P", "LIMITS")
	mustWrite(t, tbl, store.Put(store.Item{Key: k, Data: []byte("x")}, store.Always))
	long := string(slices.Repeat([]byte("a"), store.MaxCounterName+1))
	many := make([]string, store.MaxCountersDropped+1)
	for i := range many {
		many[i] = "d" + string(rune('a'+i))
	}
	for _, c := range []struct {
		what string
		name string
		drop []string
	}{
		{"an empty name", "", nil},
		{"a name too long", long, nil},
		{"a space in a name", "a b", nil},
		{"a '#' in a name", "a#b", nil},
		{"a bad dropped name", "a", []string{"b c"}},
		{"a counter dropped twice", "a", []string{"b", "b"}},
		{"the counter added to, dropped", "a", []string{"a"}},
		{"too many dropped", "a", many},
	} {
		_, err := tbl.AddCounter(t.Context(), k, c.name, 1, 0, c.drop)
		wantMalformed(t, err, c.what)
	}
	_, err := tbl.AddCounter(t.Context(), key("", "X"), "a", 1, 0, nil)
	wantMalformed(t, err, "AddCounter with an empty PK")
	err = tbl.Write(t.Context(), store.Op{Kind: store.OpIncr, Item: store.Item{Key: key("P", "C"), Counters: map[string]int64{"a": 1}}, Delta: 1})
	wantMalformed(t, err, "an increment carrying counters")
	err = tbl.Write(t.Context(), store.Put(store.Item{Key: key("P", "D"), Counters: map[string]int64{"a b": 1}}, store.Always))
	wantMalformed(t, err, "a put with a bad counter name")
	wantItem(t, tbl, store.Item{Key: k, Data: []byte("x")})
}

// testConcurrentAddCounter races 40 adds of 1 to one counter bounded at 15: exactly 15 succeed, each told a
// different count, and the item's data is untouched.
func testConcurrentAddCounter(t *testing.T, s suite) {
	tbl := s.fresh(t)
	const workers, limit = 40, 15
	k := key("KEYHASH#race", "KEY")
	mustWrite(t, tbl, store.Put(store.Item{Key: k, Data: []byte("record")}, store.Always))
	counts := make([]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			var it store.Item
			it, errs[i] = tbl.AddCounter(t.Context(), k, "other@0", 1, limit, nil)
			counts[i] = it.Counters["other@0"]
			if string(it.Data) != "record" {
				errs[i] = errors.New("the item's data changed: " + describe(it))
			}
		})
	}
	wg.Wait()
	var seen []int64
	for i, err := range errs {
		switch {
		case err == nil:
			seen = append(seen, counts[i])
		case store.FailedOp(err) == 0 && counts[i] == limit:
		default:
			t.Errorf("caller %d: %v (count %d); want a count or a refusal showing the full counter", i, err, counts[i])
		}
	}
	wantEachCountOnce(t, seen, limit)
	got := mustGet(t, tbl, k)
	if !maps.Equal(got.Counters, map[string]int64{"other@0": limit}) {
		t.Fatalf("stored %s", describe(got))
	}
}

// testPutKeepingCounters: a put that keeps counters replaces everything else of the item as a put does
// (zero fields removed), alone or in a transaction, under its condition, and leaves the named counters as
// stored; on an absent item it creates one without counters.
func testPutKeepingCounters(t *testing.T, s suite) {
	exp := future()
	t.Run("alone and in a transaction", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k, other := key("KEYHASH#k", "KEY"), key("ACCT#a", "ACCOUNT")
		mustWrite(t, tbl, store.Put(store.Item{Key: k, Data: []byte("v1"), Version: 1, Count: 4, ExpiresAt: exp}, store.IfNotExists))
		if _, err := tbl.AddCounter(t.Context(), k, "other@60", 7, 0, nil); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, tbl, store.PutKeepingCounters(store.Item{Key: k, Data: []byte("v2"), Version: 2}, store.IfExists))
		wantItem(t, tbl, store.Item{Key: k, Data: []byte("v2"), Version: 2, Counters: map[string]int64{"other@60": 7}})
		mustWrite(t, tbl, store.Put(store.Item{Key: other, Data: []byte("acct")}, store.IfNotExists),
			store.PutKeepingCounters(store.Item{Key: k, Data: []byte("v3"), ExpiresAt: exp}, store.IfExists))
		wantItem(t, tbl, store.Item{Key: k, Data: []byte("v3"), ExpiresAt: exp, Counters: map[string]int64{"other@60": 7}})
		// Its condition holds as a put's: the transaction fails whole.
		stale := store.PutKeepingCounters(store.Item{Key: k, Data: []byte("v4")}, store.IfVersion)
		stale.Version = 5
		err := tbl.Write(t.Context(), store.Put(store.Item{Key: other, Data: []byte("x")}, store.Always), stale)
		wantFailedAt(t, err, 1)
		wantItem(t, tbl, store.Item{Key: k, Data: []byte("v3"), ExpiresAt: exp, Counters: map[string]int64{"other@60": 7}})
	})
	t.Run("absent", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("KEYHASH#new", "KEY")
		err := tbl.Write(t.Context(), store.PutKeepingCounters(store.Item{Key: k, Data: []byte("x")}, store.IfExists))
		wantFailedAt(t, err, 0)
		wantAbsent(t, tbl, k)
		mustWrite(t, tbl, store.PutKeepingCounters(store.Item{Key: k, Data: []byte("x")}, store.IfNotExists))
		wantItem(t, tbl, store.Item{Key: k, Data: []byte("x")})
	})
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("P", "K")
		op := store.PutKeepingCounters(store.Item{Key: k, Counters: map[string]int64{"a": 1}}, store.Always)
		wantMalformed(t, tbl.Write(t.Context(), op), "a put keeping counters with counters of its own")
		op = store.Delete(k, store.Always)
		op.KeepCounters = true
		wantMalformed(t, tbl.Write(t.Context(), op), "a delete keeping counters")
		wantAbsent(t, tbl, k)
	})
}
