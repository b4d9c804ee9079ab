// Package storetest is the conformance suite of the store.Table port: every adapter (pebble, dynamo) runs it,
// so the rules written in store/table.go hold the same way whatever the backend. It also runs the access
// patterns of store.Store that lean hardest on them (webhooks and the outbox, webhooks.go) on each adapter.
//
// Where table.go leaves a detail open, the suite pins DynamoDB's behaviour:
//   - nil and empty Data are the same value (DynamoDB cannot tell an absent binary attribute from an empty
//     one once it has been written through the SDK); bytes are otherwise kept exactly.
//   - SKs sort by their UTF-8 bytes (so "～" U+FF5E sorts before "🎉" U+1F389, unlike UTF-16 order).
//   - a Query page may hold fewer than Limit items (DynamoDB applies Limit before filtering out expired
//     items) and the last page may be empty; Next is empty only when nothing is left.
//   - a page with Limit 0 is cut at about 1 MB of item data, so callers must follow cursors.
//   - a cursor whose SK no longer exists (deleted since) still continues right after that SK.
//   - IfVersion on an absent item fails, whatever the version asked for (absent is not "version 0").
//   - Incr on an expired counter starts a fresh counter (Count = Delta, ExpiresAt the op's, else none).
//   - AddCounter on an absent or expired item is ErrNotFound and creates nothing; a refused one returns the
//     item as stored, counters included (DynamoDB's ALL_OLD on the condition's failure).
//   - malformed calls (empty key part, too many ops or keys, a key twice, an item over 400 KB) return an
//     error that is not a condition failure, and apply nothing.
//
// The suite reads the wall clock only to write ExpiresAt an hour in the past or a day in the future, so it
// never waits for time to pass.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/store"
)

// Run runs the whole suite. newTable returns a fresh, empty table for one subtest (cleanup via t.Cleanup).
// Subtests run in parallel, so newTable must be safe to call from several goroutines. Against a networked
// table they mostly wait on I/O: a -parallel above GOMAXPROCS shortens the run.
func Run(t *testing.T, newTable func(t *testing.T) store.Table) {
	t.Helper()
	s := suite{newTable: newTable}
	groups := []struct {
		name string
		run  func(*testing.T, suite)
	}{
		{"Get", testGet},
		{"PutConditions", testPutConditions},
		{"PutStoresExactly", testPutStoresExactly},
		{"PutReplacesWholeItem", testPutReplacesWholeItem},
		{"DataNotAliased", testDataNotAliased},
		{"DeleteConditions", testDeleteConditions},
		{"CheckInTransaction", testCheck},
		{"Incr", testIncr},
		{"IncrExpiry", testIncrExpiry},
		{"Increment", testIncrement},
		{"WriteAllOrNothing", testWriteAllOrNothing},
		{"WriteFirstFailingOpReported", testFirstFailingOp},
		{"WriteLimits", testWriteLimits},
		{"MalformedKeys", testMalformedKeys},
		{"GetMany", testGetMany},
		{"GetManyLimits", testGetManyLimits},
		{"QueryPrefixAndOrder", testQueryPrefixAndOrder},
		{"QueryPaging", testQueryPaging},
		{"QuerySizeCap", testQuerySizeCap},
		{"QueryExpired", testQueryExpired},
		{"QueryCursors", testQueryCursors},
		{"UnusualKeys", testUnusualKeys},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentBoundedCounter", testConcurrentBoundedCounter},
		{"ConcurrentOptimisticLock", testConcurrentOptimisticLock},
		{"ConcurrentIncrement", testConcurrentIncrement},
		{"AddCounter", testAddCounter},
		{"AddCounterLimits", testAddCounterLimits},
		{"ConcurrentAddCounter", testConcurrentAddCounter},
		{"PutKeepingCounters", testPutKeepingCounters},
		{"WebhookRegistrations", testWebhookRegistrations},
		{"WebhookURLClaims", testWebhookURLClaims},
		{"WebhookFanOut", testWebhookFanOut},
		{"WebhookManualDelivery", testWebhookManualDelivery},
		{"Outbox", testOutbox},
		{"OutboxWithTheWrite", testOutboxWithTheWrite},
		{"OwnSync", testOwnSync},
		{"OwnWatch", testOwnWatch},
		{"PartitionsWith", testPartitionsWith},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, s)
		})
	}
}

type suite struct {
	newTable func(t *testing.T) store.Table
}

// fresh returns an empty table of t's own.
func (s suite) fresh(t *testing.T) store.Table {
	t.Helper()
	return s.newTable(t)
}

// past and future are expiry times well clear of the present, so neither clock skew nor a slow run can
// move an item across its expiry during a test.
func past() int64   { return time.Now().Add(-time.Hour).Unix() }
func future() int64 { return time.Now().Add(24 * time.Hour).Unix() }

func key(pk, sk string) store.Key { return store.Key{PK: pk, SK: sk} }

func mustWrite(t *testing.T, tbl store.Table, ops ...store.Op) {
	t.Helper()
	if err := tbl.Write(t.Context(), ops...); err != nil {
		t.Fatalf("Write(%s): %v", describeOps(ops), err)
	}
}

// putAll writes items with unconditional puts, as few transactions as the op limit allows.
func putAll(t *testing.T, tbl store.Table, items []store.Item) {
	t.Helper()
	for len(items) > 0 {
		n := min(len(items), store.MaxTransactOps)
		ops := make([]store.Op, n)
		for i, it := range items[:n] {
			ops[i] = store.Put(it, store.Always)
		}
		mustWrite(t, tbl, ops...)
		items = items[n:]
	}
}

func mustGet(t *testing.T, tbl store.Table, k store.Key) store.Item {
	t.Helper()
	it, err := tbl.Get(t.Context(), k)
	if err != nil {
		t.Fatalf("Get(%s): %v", k, err)
	}
	return it
}

func wantAbsent(t *testing.T, tbl store.Table, k store.Key) {
	t.Helper()
	it, err := tbl.Get(t.Context(), k)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(%s) = %s, %v; want ErrNotFound", k, describe(it), err)
	}
}

// wantItem asserts that the live item at want.Key is exactly want.
func wantItem(t *testing.T, tbl store.Table, want store.Item) {
	t.Helper()
	if got := mustGet(t, tbl, want.Key); !sameItem(got, want) {
		t.Fatalf("Get(%s) = %s; want %s", want.Key, describe(got), describe(want))
	}
}

// wantFailedAt asserts that err is a condition failure naming op index.
func wantFailedAt(t *testing.T, err error, index int) {
	t.Helper()
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Write error = %v; want a condition failure of op %d", err, index)
	}
	if got := store.FailedOp(err); got != index {
		t.Fatalf("FailedOp = %d; want %d (error %v)", got, index, err)
	}
}

// wantMalformed asserts that err rejects a malformed call: an error, but not a condition failure.
func wantMalformed(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error; want one", what)
	}
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: error %v; want a validation error, not a condition failure or not-found", what, err)
	}
}

// sameItem compares every field; nil and empty Data are equal (see the package comment).
func sameItem(a, b store.Item) bool {
	return a.Key == b.Key && bytes.Equal(a.Data, b.Data) && a.Version == b.Version && a.Count == b.Count &&
		a.ExpiresAt == b.ExpiresAt && maps.Equal(a.Counters, b.Counters)
}

func sameItems(a, b []store.Item) bool { return slices.EqualFunc(a, b, sameItem) }

func describe(it store.Item) string {
	data := string(it.Data)
	if len(data) > 40 {
		data = fmt.Sprintf("%s...(%d bytes)", data[:40], len(it.Data))
	}
	return fmt.Sprintf("{%s data=%q v=%d n=%d exp=%d counters=%v}", it.Key, data, it.Version, it.Count, it.ExpiresAt, it.Counters)
}

func describeItems(items []store.Item) string {
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Key.String()
	}
	return "[" + strings.Join(keys, " ") + "]"
}

func describeOps(ops []store.Op) string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = fmt.Sprintf("kind %d cond %d on %s", op.Kind, op.Cond, op.Item.Key)
	}
	return strings.Join(out, ", ")
}

// queryAll follows cursors from q to the end and returns every item and the number of pages. It fails
// the test when a page breaks Limit or the pages do not end.
func queryAll(t *testing.T, tbl store.Table, q store.Query, maxPages int) ([]store.Item, int) {
	t.Helper()
	var all []store.Item
	for pages := 1; ; pages++ {
		if pages > maxPages {
			t.Fatalf("Query(%+v): still not done after %d pages", q, maxPages)
		}
		page, err := tbl.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("Query(%+v) page %d: %v", q, pages, err)
		}
		if q.Limit > 0 && len(page.Items) > q.Limit {
			t.Fatalf("Query(%+v) page %d: %d items; Limit is %d", q, pages, len(page.Items), q.Limit)
		}
		all = append(all, page.Items...)
		if page.Next == "" {
			return all, pages
		}
		q.Cursor = page.Next
	}
}
