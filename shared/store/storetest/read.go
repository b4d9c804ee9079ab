package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/store"
)

// item builds a distinguishable live item: its Data names its key, so a read that returns the wrong
// item's payload is caught.
func item(pk, sk string) store.Item {
	return store.Item{Key: key(pk, sk), Data: []byte(pk + "|" + sk), Version: int64(len(sk))}
}

func testGetMany(t *testing.T, s suite) {
	t.Run("order, missing and expired", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		var items []store.Item
		for i := range 10 {
			items = append(items, item("P", fmt.Sprintf("K#%d", i)))
		}
		gone := item("P", "K#gone")
		gone.ExpiresAt = past()
		putAll(t, tbl, append(slices.Clone(items), gone))

		got, err := tbl.GetMany(t.Context(), []store.Key{
			items[7].Key, items[2].Key, key("P", "K#missing"), items[9].Key, gone.Key, items[0].Key, key("Q", "K#1"),
		})
		want := []store.Item{items[7], items[2], items[9], items[0]}
		if err != nil || !sameItems(got, want) {
			t.Fatalf("GetMany = %s, %v; want %s", describeItems(got), err, describeItems(want))
		}
	})
	t.Run("MaxBatchGet keys across partitions", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		var keys []store.Key
		var stored, want []store.Item
		for i := range store.MaxBatchGet {
			it := item([]string{"A", "B"}[i%2], fmt.Sprintf("K#%03d", i))
			keys = append(keys, it.Key)
			switch {
			case i%3 == 0: // never written
			case i%7 == 0:
				it.ExpiresAt = past()
				stored = append(stored, it)
			default:
				stored = append(stored, it)
				want = append(want, it)
			}
		}
		putAll(t, tbl, stored)
		slices.Reverse(keys)
		slices.Reverse(want)
		got, err := tbl.GetMany(t.Context(), keys)
		if err != nil || !sameItems(got, want) {
			t.Fatalf("GetMany = %s, %v; want %s", describeItems(got), err, describeItems(want))
		}
	})
	t.Run("no keys", func(t *testing.T) {
		t.Parallel()
		tbl := s.fresh(t)
		got, err := tbl.GetMany(t.Context(), nil)
		if err != nil || len(got) != 0 {
			t.Fatalf("GetMany(nil) = %s, %v; want nothing", describeItems(got), err)
		}
	})
}

func testGetManyLimits(t *testing.T, s suite) {
	keys := func(n int) []store.Key {
		ks := make([]store.Key, n)
		for i := range ks {
			ks[i] = key("P", fmt.Sprintf("K#%03d", i))
		}
		return ks
	}
	cases := []struct {
		name string
		keys []store.Key
	}{
		{"more than MaxBatchGet", keys(store.MaxBatchGet + 1)},
		{"same key twice", append(keys(3), key("P", "K#001"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			mustWrite(t, tbl, store.Put(item("P", "K#001"), store.Always))
			_, err := tbl.GetMany(t.Context(), c.keys)
			wantMalformed(t, err, "GetMany")
		})
	}
}

func testQueryPrefixAndOrder(t *testing.T, s suite) {
	tbl := s.fresh(t)
	partitions := map[string][]string{
		"P":   {"A", "A#1", "A#10", "A#2", "A#中", "A#～", "A#🎉", "AB#1", "B#1", "a#1"},
		"P#2": {"A#1", "A#3"},
		"PP":  {"A#1"},
		"O":   {"A#9"},
		"Pa":  {"A#0"},
	}
	var all []store.Item
	for pk, sks := range partitions {
		for _, sk := range sks {
			all = append(all, item(pk, sk))
		}
	}
	putAll(t, tbl, all)

	cases := []struct {
		pk, prefix string
		desc       bool
		want       []string // SKs, in order
	}{
		{"P", "A#", false, []string{"A#1", "A#10", "A#2", "A#中", "A#～", "A#🎉"}},
		{"P", "A#", true, []string{"A#🎉", "A#～", "A#中", "A#2", "A#10", "A#1"}},
		{"P", "A", false, []string{"A", "A#1", "A#10", "A#2", "A#中", "A#～", "A#🎉", "AB#1"}},
		{"P", "", false, []string{"A", "A#1", "A#10", "A#2", "A#中", "A#～", "A#🎉", "AB#1", "B#1", "a#1"}},
		{"P", "", true, []string{"a#1", "B#1", "AB#1", "A#🎉", "A#～", "A#中", "A#2", "A#10", "A#1", "A"}},
		{"P", "A#1", false, []string{"A#1", "A#10"}},
		{"P", "A#1", true, []string{"A#10", "A#1"}},
		{"P", "B", true, []string{"B#1"}},
		{"P", "a#1", false, []string{"a#1"}},
		{"P", "C", false, nil},
		{"P", "C", true, nil},
		{"P#2", "A#", false, []string{"A#1", "A#3"}},
		{"PP", "", true, []string{"A#1"}},
		{"O", "", false, []string{"A#9"}},
		{"Q", "", false, nil},
		{"Q", "", true, nil},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %q desc %t", c.pk, c.prefix, c.desc), func(t *testing.T) {
			t.Parallel()
			var want []store.Item
			for _, sk := range c.want {
				want = append(want, item(c.pk, sk))
			}
			page, err := tbl.Query(t.Context(), store.Query{PK: c.pk, Prefix: c.prefix, Desc: c.desc})
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			if !sameItems(page.Items, want) || page.Next != "" {
				t.Fatalf("Query = %s next %q; want %s and no next", describeItems(page.Items), page.Next, describeItems(want))
			}
		})
	}
}

func testQueryPaging(t *testing.T, s suite) {
	tbl := s.fresh(t)
	var inside []store.Item
	for i := range 45 {
		inside = append(inside, item("P", fmt.Sprintf("I#%03d", i)))
	}
	// Neighbours on both sides of the prefix, and the same SKs in neighbouring partitions.
	putAll(t, tbl, append(slices.Clone(inside),
		item("P", "H#999"), item("P", "I"), item("P", "J#000"), item("O", "I#001"), item("PP", "I#001")))

	for _, limit := range []int{1, 7, 44, 45, 100} {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("limit %d desc %t", limit, desc), func(t *testing.T) {
				t.Parallel()
				want := slices.Clone(inside)
				if desc {
					slices.Reverse(want)
				}
				q := store.Query{PK: "P", Prefix: "I#", Desc: desc, Limit: limit}
				got, pages := queryAll(t, tbl, q, len(inside)/limit+2)
				if !sameItems(got, want) {
					t.Fatalf("pages gave %s; want %s", describeItems(got), describeItems(want))
				}
				if limit > len(inside) && pages != 1 {
					t.Fatalf("%d pages; a Limit above the item count fits one page", pages)
				}
			})
		}
	}
}

func testQuerySizeCap(t *testing.T, s suite) {
	tbl := s.fresh(t)
	// 12 items of 100 KiB: the partition holds more than 1 MB, so a page without Limit must be cut.
	var big []store.Item
	for i := range 12 {
		it := item("P", fmt.Sprintf("BIG#%02d", i))
		it.Data = bytes.Repeat([]byte{byte('a' + i)}, 100<<10)
		big = append(big, it)
	}
	for _, it := range big {
		mustWrite(t, tbl, store.Put(it, store.Always))
	}
	mustWrite(t, tbl, store.Put(item("P", "C#1"), store.Always))

	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprintf("desc %t", desc), func(t *testing.T) {
			t.Parallel()
			want := slices.Clone(big)
			if desc {
				slices.Reverse(want)
			}
			got, pages := queryAll(t, tbl, store.Query{PK: "P", Prefix: "BIG#", Desc: desc}, len(big)+1)
			if !sameItems(got, want) {
				t.Fatalf("pages gave %s; want %s", describeItems(got), describeItems(want))
			}
			if pages < 2 {
				t.Fatalf("1.2 MB came back in one page; a page without Limit holds at most about 1 MB")
			}
		})
	}
}

func testQueryExpired(t *testing.T, s suite) {
	tbl := s.fresh(t)
	var stored, live []store.Item
	for i := range 20 {
		it := item("P", fmt.Sprintf("I#%02d", i))
		if i%3 == 0 || i == 19 {
			it.ExpiresAt = past()
		} else {
			it.ExpiresAt = future()
			live = append(live, it)
		}
		stored = append(stored, it)
	}
	for i := range 5 {
		it := item("GONE", fmt.Sprintf("I#%02d", i))
		it.ExpiresAt = past()
		stored = append(stored, it)
	}
	putAll(t, tbl, stored)

	cases := []struct {
		pk    string
		limit int
		desc  bool
		want  []store.Item
	}{
		{"P", 0, false, live},
		{"P", 0, true, live},
		{"P", 1, false, live},
		{"P", 2, true, live},
		{"P", 5, false, live},
		{"GONE", 0, false, nil},
		{"GONE", 1, true, nil},
		{"GONE", 2, false, nil},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s limit %d desc %t", c.pk, c.limit, c.desc), func(t *testing.T) {
			t.Parallel()
			want := slices.Clone(c.want)
			if c.desc {
				slices.Reverse(want)
			}
			got, _ := queryAll(t, tbl, store.Query{PK: c.pk, Prefix: "I#", Desc: c.desc, Limit: c.limit}, 25)
			if !sameItems(got, want) {
				t.Fatalf("pages gave %s; want %s", describeItems(got), describeItems(want))
			}
		})
	}
}

func testQueryCursors(t *testing.T, s suite) {
	seed := func(t *testing.T, tbl store.Table) {
		t.Helper()
		var items []store.Item
		for i := range 10 {
			items = append(items, item("P", fmt.Sprintf("I#%d", i)))
		}
		putAll(t, tbl, append(items, item("P", "B#1"), item("P", "J#1")))
	}
	sks := func(items []store.Item) string {
		var out []string
		for _, it := range items {
			out = append(out, it.SK)
		}
		return strings.Join(out, ",")
	}

	bad := []struct {
		name   string
		cursor string
		desc   bool
	}{
		{"not base64", "%%%", false},
		{"padding", "SSMx==", false},
		{"outside prefix", store.EncodeCursor("B#1"), false},
		{"outside prefix desc", store.EncodeCursor("J#1"), true},
		{"prefix itself is short", store.EncodeCursor("I"), false},
	}
	for _, c := range bad {
		t.Run("bad/"+c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			seed(t, tbl)
			page, err := tbl.Query(t.Context(), store.Query{PK: "P", Prefix: "I#", Desc: c.desc, Cursor: c.cursor})
			if !errors.Is(err, store.ErrBadCursor) {
				t.Fatalf("Query = %s, %v; want ErrBadCursor", describeItems(page.Items), err)
			}
		})
	}

	// A cursor continues strictly after its SK, also when that SK is gone or never existed (DynamoDB's
	// ExclusiveStartKey does not need the item).
	resume := []struct {
		name   string
		desc   bool
		cursor string
		want   string
	}{
		{"after existing", false, store.EncodeCursor("I#3"), "I#4,I#5,I#6,I#7,I#8,I#9"},
		{"before existing desc", true, store.EncodeCursor("I#3"), "I#2,I#1,I#0"},
		{"between items", false, store.EncodeCursor("I#25"), "I#3,I#4,I#5,I#6,I#7,I#8,I#9"},
		{"between items desc", true, store.EncodeCursor("I#25"), "I#2,I#1,I#0"},
		{"after the last", false, store.EncodeCursor("I#9"), ""},
		{"before the first desc", true, store.EncodeCursor("I#0"), ""},
	}
	for _, c := range resume {
		t.Run("resume/"+c.name, func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			seed(t, tbl)
			got, _ := queryAll(t, tbl, store.Query{PK: "P", Prefix: "I#", Desc: c.desc, Cursor: c.cursor}, 3)
			if sks(got) != c.want {
				t.Fatalf("Query from cursor = %s; want %s", sks(got), c.want)
			}
		})
	}

	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprintf("items deleted between pages desc %t", desc), func(t *testing.T) {
			t.Parallel()
			tbl := s.fresh(t)
			seed(t, tbl)
			q := store.Query{PK: "P", Prefix: "I#", Desc: desc, Limit: 3}
			first, err := tbl.Query(t.Context(), q)
			if err != nil || len(first.Items) == 0 || first.Next == "" {
				t.Fatalf("first page = %s next %q, %v; want items and a cursor", sks(first.Items), first.Next, err)
			}
			// Delete the page's last item and the one after it.
			lastSK := first.Items[len(first.Items)-1].SK
			n := int(lastSK[len(lastSK)-1] - '0')
			after := n + 1
			if desc {
				after = n - 1
			}
			mustWrite(t, tbl, store.Delete(key("P", lastSK), store.IfExists), store.Delete(key("P", fmt.Sprintf("I#%d", after)), store.IfExists))

			q.Cursor = first.Next
			rest, _ := queryAll(t, tbl, q, 10)
			var want []string
			for i := range 10 {
				if (!desc && i > after) || (desc && i < after) {
					want = append(want, fmt.Sprintf("I#%d", i))
				}
			}
			if desc {
				slices.Reverse(want)
			}
			if sks(rest) != strings.Join(want, ",") {
				t.Fatalf("after the deletes the pages gave %s; want %s", sks(rest), strings.Join(want, ","))
			}
		})
	}
}

func testUnusualKeys(t *testing.T, s suite) {
	tbl := s.fresh(t)
	keys := []store.Key{
		key("CH#ü/ñ", "VIDEO#a/b#c"),
		key("CH#ü/ñ", "VIDEO#a/b"),
		key("CH#ü/ñ", "VIDEO#a/bc"),
		key("a/b", "c#d"),
		key("a/b#", "c#d"),
		key("漢字#🎉", "日本/語"),
		key("sp ace", "tab\tand\nnewline"),
		key("%00%2F", `..\`),
		key("#", "#"),
		key("/", "/"),
		key("P|Q", "|"),
	}
	var items []store.Item
	for _, k := range keys {
		items = append(items, item(k.PK, k.SK))
	}
	putAll(t, tbl, items)

	for _, it := range items {
		wantItem(t, tbl, it)
	}
	got, err := tbl.GetMany(t.Context(), keys)
	if err != nil || !sameItems(got, items) {
		t.Fatalf("GetMany = %s, %v; want %s", describeItems(got), err, describeItems(items))
	}
	for _, it := range items {
		page, err := tbl.Query(t.Context(), store.Query{PK: it.PK, Prefix: it.SK})
		if err != nil {
			t.Fatalf("Query(%s): %v", it.Key, err)
		}
		// Only CH#ü/ñ has an SK that prefixes another.
		want := []store.Item{it}
		if it.Key == key("CH#ü/ñ", "VIDEO#a/b") {
			want = slices.Clone(items[:3])
			slices.SortFunc(want, func(a, b store.Item) int { return strings.Compare(a.SK, b.SK) })
		}
		if !sameItems(page.Items, want) {
			t.Fatalf("Query(%s) = %s; want %s", it.Key, describeItems(page.Items), describeItems(want))
		}
	}
	page, err := tbl.Query(t.Context(), store.Query{PK: "CH#ü/ñ", Prefix: "VIDEO#a/b#"})
	if err != nil || !sameItems(page.Items, items[:1]) {
		t.Fatalf("Query(prefix VIDEO#a/b#) = %s, %v; want %s", describeItems(page.Items), err, describeItems(items[:1]))
	}
}

// testCanceledContext: every call honours its context, and a canceled write applies nothing.
func testCanceledContext(t *testing.T, s suite) {
	tbl := s.fresh(t)
	stored := item("P", "I#1")
	mustWrite(t, tbl, store.Put(stored, store.Always))
	canceled, cancel := context.WithCancel(t.Context())
	cancel()

	if _, err := tbl.Get(canceled, stored.Key); err == nil {
		t.Error("Get with a canceled context: no error")
	}
	if _, err := tbl.GetMany(canceled, []store.Key{stored.Key}); err == nil {
		t.Error("GetMany with a canceled context: no error")
	}
	if _, err := tbl.Query(canceled, store.Query{PK: "P"}); err == nil {
		t.Error("Query with a canceled context: no error")
	}
	fresh := item("P", "I#2")
	if err := tbl.Write(canceled, store.Put(fresh, store.Always)); err == nil {
		t.Error("Write with a canceled context: no error")
	}
	wantAbsent(t, tbl, fresh.Key)
}
