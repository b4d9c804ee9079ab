package storetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/creatorstrategy/css/shared/store"
)

// prior is what a key holds before the op under test.
type prior int

const (
	absent prior = iota
	live
	expired
)

// seed writes the prior item at k (Data "old", Version 3) and returns it with whether reads should see it.
func seed(t *testing.T, tbl store.Table, k store.Key, p prior) (store.Item, bool) {
	t.Helper()
	old := store.Item{Key: k, Data: []byte(`{"old":true}`), Version: 3}
	switch p {
	case absent:
		return store.Item{}, false
	case live:
		old.ExpiresAt = future()
	case expired:
		old.ExpiresAt = past()
	}
	mustWrite(t, tbl, store.Put(old, store.Always))
	return old, p == live
}

// wantUnchanged asserts that k still holds what seed wrote (or nothing, when that was not live).
func wantUnchanged(t *testing.T, tbl store.Table, k store.Key, old store.Item, visible bool) {
	t.Helper()
	if visible {
		wantItem(t, tbl, old)
	} else {
		wantAbsent(t, tbl, k)
	}
}

func testGet(t *testing.T, s suite) {
	k := key("P", "ITEM#1")
	cases := []struct {
		name      string
		expiresAt int64
		write     bool
		found     bool
	}{
		{"missing", 0, false, false},
		{"present", 0, true, true},
		{"expires later", future(), true, true},
		{"expired", past(), true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			want := store.Item{Key: k, Data: []byte(`{"a":1}`), Version: 1, ExpiresAt: c.expiresAt}
			if c.write {
				mustWrite(t, tbl, store.Put(want, store.Always))
			}
			// A neighbour in the same partition must not answer for the missing key.
			mustWrite(t, tbl, store.Put(store.Item{Key: key("P", "ITEM#10")}, store.Always))
			if c.found {
				wantItem(t, tbl, want)
			} else {
				wantAbsent(t, tbl, k)
			}
		})
	}
}

func testPutConditions(t *testing.T, s suite) {
	put := func(cond store.Cond) func(store.Item) store.Op {
		return func(it store.Item) store.Op { return store.Put(it, cond) }
	}
	ifVersion := func(was int64) func(store.Item) store.Op {
		return func(it store.Item) store.Op { return store.PutIfVersion(it, was) }
	}
	cases := []struct {
		name  string
		prior prior
		op    func(store.Item) store.Op
		ok    bool
	}{
		{"Always/absent", absent, put(store.Always), true},
		{"Always/live overwrites", live, put(store.Always), true},
		{"Always/expired", expired, put(store.Always), true},
		{"IfNotExists/absent", absent, put(store.IfNotExists), true},
		{"IfNotExists/live", live, put(store.IfNotExists), false},
		{"IfNotExists/expired", expired, put(store.IfNotExists), true},
		{"IfExists/absent", absent, put(store.IfExists), false},
		{"IfExists/live", live, put(store.IfExists), true},
		{"IfExists/expired", expired, put(store.IfExists), false},
		{"IfVersion/match", live, ifVersion(3), true},
		{"IfVersion/mismatch below", live, ifVersion(2), false},
		{"IfVersion/mismatch above", live, ifVersion(4), false},
		{"IfVersion/absent", absent, ifVersion(0), false},
		{"IfVersion/expired", expired, ifVersion(3), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			k := key("P", "ITEM#1")
			old, visible := seed(t, tbl, k, c.prior)
			op := c.op(store.Item{Key: k, Data: []byte(`{"new":true}`), Version: 9})
			err := tbl.Write(t.Context(), op)
			if !c.ok {
				wantFailedAt(t, err, 0)
				wantUnchanged(t, tbl, k, old, visible)
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			wantItem(t, tbl, op.Item)
		})
	}
}

func testPutStoresExactly(t *testing.T, s suite) {
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	cases := []struct {
		name string
		item store.Item
	}{
		{"nil data", store.Item{}},
		{"empty data", store.Item{Data: []byte{}}},
		{"json", store.Item{Data: []byte(`{"title":"x","n":[1,2]}`), Version: 1}},
		{"every byte value", store.Item{Data: allBytes, Version: 2}},
		{"zero bytes and invalid utf-8", store.Item{Data: []byte("\x00\x00\xff\xfe\x00")}},
		{"300 KiB", store.Item{Data: big, Version: 5}},
		{"large numbers", store.Item{Version: 1<<62 + 1, Count: 1<<53 + 1, ExpiresAt: future()}},
		{"counter", store.Item{Count: 42}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			want := c.item
			want.Key = key("P", "ITEM#1")
			mustWrite(t, tbl, store.Put(want, store.Always))

			// Every read path decodes the same item.
			wantItem(t, tbl, want)
			got, err := tbl.GetMany(t.Context(), []store.Key{want.Key})
			if err != nil || !sameItems(got, []store.Item{want}) {
				t.Fatalf("GetMany = %s, %v; want [%s]", describeItems(got), err, describe(want))
			}
			page, err := tbl.Query(t.Context(), store.Query{PK: "P", Prefix: "ITEM#"})
			if err != nil || !sameItems(page.Items, []store.Item{want}) || page.Next != "" {
				t.Fatalf("Query = %s next %q, %v; want [%s]", describeItems(page.Items), page.Next, err, describe(want))
			}
		})
	}
}

func testPutReplacesWholeItem(t *testing.T, s suite) {
	tbl := s.fresh(t)
	k := key("P", "ITEM#1")
	mustWrite(t, tbl, store.Put(store.Item{Key: k, Data: []byte("old"), Version: 5, Count: 7, ExpiresAt: future()}, store.Always))
	// Zero fields of the new item must not inherit the old values.
	replacement := store.Item{Key: k}
	mustWrite(t, tbl, store.Put(replacement, store.IfExists))
	wantItem(t, tbl, replacement)
}

func testDataNotAliased(t *testing.T, s suite) {
	tbl := s.fresh(t)
	k := key("P", "ITEM#1")
	// A neighbour big enough that an embedded store keeps the partition in pages of its own, which a
	// returned slice could point into.
	filler := store.Item{Key: key("P", "FILLER"), Data: bytes.Repeat([]byte("f"), 16<<10)}
	mustWrite(t, tbl, store.Put(filler, store.Always))
	buf := []byte("original")
	mustWrite(t, tbl, store.Put(store.Item{Key: k, Data: buf}, store.Always))
	buf[0] = 'X'

	got := mustGet(t, tbl, k)
	many, err := tbl.GetMany(t.Context(), []store.Key{k})
	if err != nil || len(many) != 1 {
		t.Fatalf("GetMany = %d items, %v", len(many), err)
	}
	page, err := tbl.Query(t.Context(), store.Query{PK: "P", Prefix: "ITEM#"})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("Query = %d items, %v", len(page.Items), err)
	}
	// Later writes must not change what earlier reads returned, and callers may scribble on results.
	mustWrite(t, tbl, store.Put(store.Item{Key: k, Data: []byte("replaced")}, store.Always))
	mustWrite(t, tbl, store.Delete(filler.Key, store.Always))
	mustWrite(t, tbl, store.Put(filler, store.Always))
	for _, d := range [][]byte{got.Data, many[0].Data, page.Items[0].Data} {
		if string(d) != "original" {
			t.Fatalf("a returned Data changed to %q; want %q", d, "original")
		}
		d[0] = 'Y'
	}
	wantItem(t, tbl, store.Item{Key: k, Data: []byte("replaced")})
}

func testDeleteConditions(t *testing.T, s suite) {
	del := func(cond store.Cond, version int64) store.Op {
		op := store.Delete(key("P", "ITEM#1"), cond)
		op.Version = version
		return op
	}
	cases := []struct {
		name  string
		prior prior
		op    store.Op
		ok    bool
	}{
		{"Always/absent", absent, del(store.Always, 0), true},
		{"Always/live", live, del(store.Always, 0), true},
		{"Always/expired", expired, del(store.Always, 0), true},
		{"IfExists/absent", absent, del(store.IfExists, 0), false},
		{"IfExists/live", live, del(store.IfExists, 0), true},
		{"IfExists/expired", expired, del(store.IfExists, 0), false},
		{"IfNotExists/live", live, del(store.IfNotExists, 0), false},
		{"IfNotExists/expired", expired, del(store.IfNotExists, 0), true},
		{"IfVersion/match", live, del(store.IfVersion, 3), true},
		{"IfVersion/mismatch", live, del(store.IfVersion, 4), false},
		{"IfVersion/absent", absent, del(store.IfVersion, 0), false},
		{"IfVersion/expired", expired, del(store.IfVersion, 3), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			k := c.op.Item.Key
			old, visible := seed(t, tbl, k, c.prior)
			err := tbl.Write(t.Context(), c.op)
			if !c.ok {
				wantFailedAt(t, err, 0)
				wantUnchanged(t, tbl, k, old, visible)
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			wantAbsent(t, tbl, k)
		})
	}
}

func testCheck(t *testing.T, s suite) {
	check := func(cond store.Cond, version int64) store.Op {
		op := store.Check(key("P", "ITEM#1"), cond)
		op.Version = version
		return op
	}
	cases := []struct {
		name  string
		prior prior
		check store.Op
		ok    bool
	}{
		{"IfExists/live", live, check(store.IfExists, 0), true},
		{"IfExists/absent", absent, check(store.IfExists, 0), false},
		{"IfExists/expired", expired, check(store.IfExists, 0), false},
		{"IfNotExists/absent", absent, check(store.IfNotExists, 0), true},
		{"IfNotExists/expired", expired, check(store.IfNotExists, 0), true},
		{"IfNotExists/live", live, check(store.IfNotExists, 0), false},
		{"IfVersion/match", live, check(store.IfVersion, 3), true},
		{"IfVersion/mismatch", live, check(store.IfVersion, 2), false},
		{"IfVersion/absent", absent, check(store.IfVersion, 0), false},
	}
	for _, c := range cases {
		for _, checkFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/check first %t", c.name, checkFirst), func(t *testing.T) {
				t.Parallel()
				tbl := s.fresh(t)
				k := c.check.Item.Key
				old, visible := seed(t, tbl, k, c.prior)
				other := store.Item{Key: key("P", "OTHER"), Data: []byte("written")}
				ops, checkAt := []store.Op{c.check, store.Put(other, store.Always)}, 0
				if !checkFirst {
					ops, checkAt = []store.Op{store.Put(other, store.Always), c.check}, 1
				}
				err := tbl.Write(t.Context(), ops...)
				if !c.ok {
					wantFailedAt(t, err, checkAt)
				} else if err != nil {
					t.Fatalf("Write: %v", err)
				}
				// The checked item is never written, whatever the outcome.
				wantUnchanged(t, tbl, k, old, visible)
				if !c.ok {
					wantAbsent(t, tbl, other.Key)
					return
				}
				wantItem(t, tbl, other)
			})
		}
	}
}

func testIncr(t *testing.T, s suite) {
	cases := []struct {
		name       string
		prior      prior
		count      int64 // of the prior counter
		delta, max int64
		ok         bool
		want       int64
	}{
		{"absent creates from 0", absent, 0, 1, 10, true, 1},
		{"absent unbounded", absent, 0, 5, 0, true, 5},
		{"absent below 0", absent, 0, -1, 10, false, 0},
		{"absent beyond max", absent, 0, 11, 10, false, 0},
		{"up to max", live, 9, 1, 10, true, 10},
		{"past max", live, 10, 1, 10, false, 0},
		{"jump past max", live, 3, 8, 10, false, 0},
		{"down to 0", live, 3, -3, 10, true, 0},
		{"below 0", live, 3, -4, 10, false, 0},
		{"max 0 is unbounded", live, 5, 1_000_000, 0, true, 1_000_005},
		{"negative max is unbounded", live, 5, 1_000_000, -1, true, 1_000_005},
		{"expired starts from 0", expired, 9, 5, 10, true, 5},
		{"expired below 0", expired, 9, -1, 10, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			k := key("P", "COUNT#things")
			var old store.Item
			switch c.prior {
			case live:
				old = store.Item{Key: k, Count: c.count}
				mustWrite(t, tbl, store.Put(old, store.Always))
			case expired:
				mustWrite(t, tbl, store.Put(store.Item{Key: k, Count: c.count, ExpiresAt: past()}, store.Always))
			}
			err := tbl.Write(t.Context(), store.Incr(k, c.delta, c.max))
			if !c.ok {
				wantFailedAt(t, err, 0)
				wantUnchanged(t, tbl, k, old, c.prior == live)
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			wantItem(t, tbl, store.Item{Key: k, Count: c.want})
		})
	}

	t.Run("sequence", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		k := key("P", "COUNT#seq")
		for i := range 3 {
			mustWrite(t, tbl, store.Incr(k, 1, 3))
			wantItem(t, tbl, store.Item{Key: k, Count: int64(i + 1)})
		}
		wantFailedAt(t, tbl.Write(t.Context(), store.Incr(k, 1, 3)), 0)
		mustWrite(t, tbl, store.Incr(k, -1, 3))
		wantItem(t, tbl, store.Item{Key: k, Count: 2})
	})
}

// transaction is the four-op write of the all-or-nothing tests over state seeded by seedTransaction:
// a absent, b live at version 1, c a counter at 2, d live at version 4. fail lists the ops given a
// condition that cannot hold.
func transaction(fail ...int) []store.Op {
	failing := map[int]bool{}
	for _, i := range fail {
		failing[i] = true
	}
	a := store.Item{Key: key("P", "A"), Data: []byte("a")}
	ops := []store.Op{
		store.Put(a, store.IfNotExists),
		store.PutIfVersion(store.Item{Key: key("P", "B"), Data: []byte("b2")}, 1),
		store.Incr(key("P", "C"), 1, 5),
		{Kind: store.OpDelete, Item: store.Item{Key: key("P", "D")}, Cond: store.IfVersion, Version: 4},
	}
	if failing[0] {
		ops[0] = store.Put(a, store.IfExists)
	}
	if failing[1] {
		ops[1] = store.PutIfVersion(store.Item{Key: key("P", "B"), Data: []byte("b2")}, 2)
	}
	if failing[2] {
		ops[2] = store.Incr(key("P", "C"), -3, 5)
	}
	if failing[3] {
		ops[3].Version = 5
	}
	return ops
}

func seedTransaction(t *testing.T, tbl store.Table) []store.Item {
	t.Helper()
	items := []store.Item{
		{Key: key("P", "B"), Data: []byte("b"), Version: 1},
		{Key: key("P", "C"), Count: 2},
		{Key: key("P", "D"), Data: []byte("d"), Version: 4},
	}
	putAll(t, tbl, items)
	return items
}

func testWriteAllOrNothing(t *testing.T, s suite) {
	t.Run("all applied", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		seedTransaction(t, tbl)
		mustWrite(t, tbl, transaction()...)
		wantItem(t, tbl, store.Item{Key: key("P", "A"), Data: []byte("a")})
		wantItem(t, tbl, store.Item{Key: key("P", "B"), Data: []byte("b2"), Version: 2})
		wantItem(t, tbl, store.Item{Key: key("P", "C"), Count: 3})
		wantAbsent(t, tbl, key("P", "D"))
	})
	for k := range 4 {
		t.Run(fmt.Sprintf("op %d fails", k), func(t *testing.T) { wantNoneApplied(t, s, []int{k}, k) })
	}
}

func testFirstFailingOp(t *testing.T, s suite) {
	cases := []struct {
		fail []int
		want int
	}{
		{[]int{1, 3}, 1},
		{[]int{2, 3}, 2},
		{[]int{0, 1, 2, 3}, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.fail), func(t *testing.T) { wantNoneApplied(t, s, c.fail, c.want) })
	}
}

// wantNoneApplied writes the transaction with the ops fail failing: the failure names op want, and nothing
// is applied.
func wantNoneApplied(t *testing.T, s suite, fail []int, want int) {
	t.Parallel()
	tbl := s.fresh(t)
	seeded := seedTransaction(t, tbl)
	wantFailedAt(t, tbl.Write(t.Context(), transaction(fail...)...), want)
	wantAbsent(t, tbl, key("P", "A"))
	for _, it := range seeded {
		wantItem(t, tbl, it)
	}
}

func testWriteLimits(t *testing.T, s suite) {
	puts := func(n int) []store.Op {
		ops := make([]store.Op, n)
		for i := range ops {
			ops[i] = store.Put(store.Item{Key: key("P", fmt.Sprintf("ITEM#%03d", i)), Data: []byte("x")}, store.IfNotExists)
		}
		return ops
	}
	t.Run("MaxTransactOps applies", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		ops := puts(store.MaxTransactOps)
		mustWrite(t, tbl, ops...)
		for _, op := range ops {
			wantItem(t, tbl, op.Item)
		}
	})
	malformed := []struct {
		name string
		ops  []store.Op
	}{
		{"more than MaxTransactOps", puts(store.MaxTransactOps + 1)},
		{"same key twice", append(puts(2), store.Put(store.Item{Key: key("P", "ITEM#000")}, store.Always))},
		{"check and put of one key", append(puts(2), store.Check(key("P", "ITEM#001"), store.IfNotExists))},
		{"item over DynamoDB's 400 KB", []store.Op{store.Put(store.Item{Key: key("P", "ITEM#000"), Data: make([]byte, 401<<10)}, store.Always)}},
		{"incr with a condition", append(puts(1), store.Op{Kind: store.OpIncr, Item: store.Item{Key: key("P", "COUNT#x")}, Cond: store.IfExists, Delta: 1})},
	}
	for _, c := range malformed {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			wantMalformed(t, tbl.Write(t.Context(), c.ops...), "Write")
			wantAbsent(t, tbl, key("P", "ITEM#000"))
			wantAbsent(t, tbl, key("P", "COUNT#x"))
		})
	}
}

func testMalformedKeys(t *testing.T, s suite) {
	for _, k := range []store.Key{key("", "SK"), key("P", ""), key("", "")} {
		t.Run(fmt.Sprintf("%q", k.String()), func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			wantMalformed(t, tbl.Write(t.Context(), store.Put(store.Item{Key: k, Data: []byte("x")}, store.Always)), "Put")
			wantMalformed(t, tbl.Write(t.Context(), store.Incr(k, 1, 0)), "Incr")
			_, err := tbl.Get(t.Context(), k)
			wantMalformed(t, err, "Get")
			_, err = tbl.GetMany(t.Context(), []store.Key{key("P", "OK"), k})
			wantMalformed(t, err, "GetMany")
			if k.PK == "" {
				_, err = tbl.Query(t.Context(), store.Query{PK: k.PK})
				wantMalformed(t, err, "Query")
			}
		})
	}
}
