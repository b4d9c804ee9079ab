// Package memtable is an in-memory store.Table: a sorted slice of items per partition behind one lock. It
// passes the same conformance suite as the dynamo and pebble adapters, so unit tests of services and the
// store's access patterns run on it in microseconds, with no files, no emulator and no cgo. It keeps
// nothing across a process: it is for tests and benchmarks, never for data.
package memtable

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/creatorstrategy/css/shared/store"
)

const (
	// pageBytes cuts a Query page without Limit like DynamoDB's 1 MB, so callers follow cursors here too.
	pageBytes = 1 << 20
	// maxItemBytes is DynamoDB's item size limit.
	maxItemBytes = 400 << 10
)

// errInvalid marks a malformed call; it is never a condition failure.
var errInvalid = store.ErrInvalidCall

// Table is an in-memory store.Table. The zero value is not usable; call New.
type Table struct {
	now func() time.Time

	mu    sync.RWMutex
	parts map[string][]store.Item // per PK, sorted by SK (byte order); Data never shared with callers
}

var _ store.Table = (*Table)(nil)

// Option configures a Table.
type Option func(*Table)

// WithClock sets the clock that decides expiry (default time.Now).
func WithClock(now func() time.Time) Option { return func(t *Table) { t.now = now } }

// New returns an empty table.
func New(opts ...Option) *Table {
	t := &Table{now: time.Now, parts: map[string][]store.Item{}}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Get returns the live item at key, or store.ErrNotFound.
func (t *Table) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if err := store.CheckKey(key); err != nil {
		return store.Item{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.Item{}, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	it, ok := t.live(key, t.now().Unix())
	if !ok {
		return store.Item{}, store.ErrNotFound
	}
	return clone(it), nil
}

// GetMany returns the live items at keys, in the order of keys.
func (t *Table) GetMany(ctx context.Context, keys []store.Key) ([]store.Item, error) {
	if len(keys) > store.MaxBatchGet {
		return nil, fmt.Errorf("%w: %d keys, at most %d", errInvalid, len(keys), store.MaxBatchGet)
	}
	if err := store.CheckKeys(keys); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	now := t.now().Unix()
	var out []store.Item
	for _, k := range keys {
		if it, ok := t.live(k, now); ok {
			out = append(out, clone(it))
		}
	}
	return out, nil
}

// Query returns one page of the live items of q.PK whose SK starts with q.Prefix.
func (t *Table) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if q.PK == "" {
		return store.Page{}, fmt.Errorf("%w: empty PK", errInvalid)
	}
	if q.Limit < 0 {
		return store.Page{}, fmt.Errorf("%w: negative limit %d", errInvalid, q.Limit)
	}
	after := ""
	if q.Cursor != "" {
		sk, err := store.DecodeCursor(q.Cursor)
		if err != nil || !strings.HasPrefix(sk, q.Prefix) {
			return store.Page{}, store.ErrBadCursor
		}
		after = sk
	}
	if err := ctx.Err(); err != nil {
		return store.Page{}, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	part := t.parts[q.PK]
	// The prefix's items are the run [lo, hi) of the sorted partition.
	lo, _ := slices.BinarySearchFunc(part, q.Prefix, cmpSK)
	hi := lo
	for hi < len(part) && strings.HasPrefix(part[hi].SK, q.Prefix) {
		hi++
	}
	run := part[lo:hi]
	// Where the page starts: after the cursor's SK (before it, descending), whether or not it still exists.
	i, step, end := 0, 1, len(run)
	if q.Cursor != "" {
		at, found := slices.BinarySearchFunc(run, after, cmpSK)
		i = at
		if found {
			i++
		}
		if q.Desc {
			end = at
		}
	}
	if q.Desc {
		i, step = end-1, -1
	}
	now := t.now().Unix()
	var page store.Page
	if n := len(run); q.Limit > 0 && q.Limit < n {
		page.Items = make([]store.Item, 0, q.Limit)
	} else {
		page.Items = make([]store.Item, 0, n)
	}
	size := 0
	for ; i >= 0 && i < len(run) && (step > 0 || i < end); i += step {
		it := run[i]
		if !liveAt(it, now) {
			continue
		}
		n := len(it.PK) + len(it.SK) + len(it.Data)
		if full := q.Limit > 0 && len(page.Items) == q.Limit || size+n > pageBytes; full && len(page.Items) > 0 {
			page.Next = store.EncodeCursor(page.Items[len(page.Items)-1].SK)
			return page, nil
		}
		size += n
		page.Items = append(page.Items, clone(it))
	}
	if len(page.Items) == 0 {
		page.Items = nil
	}
	return page, nil
}

// Write applies ops atomically under the table's lock: every condition is checked, then every op applied.
func (t *Table) Write(ctx context.Context, ops ...store.Op) error {
	_, err := t.write(ctx, ops)
	return err
}

// Increment applies one increment alone and returns the Count it leaves.
func (t *Table) Increment(ctx context.Context, op store.Op) (int64, error) {
	if op.Kind != store.OpIncr {
		return 0, fmt.Errorf("%w: Increment takes an increment, not op kind %d", errInvalid, op.Kind)
	}
	next, err := t.write(ctx, []store.Op{op})
	if err != nil {
		return 0, err
	}
	return next[0].Count, nil
}

// AddCounter adds delta to the named counter of the live item at key and drops the counters in drop.
func (t *Table) AddCounter(ctx context.Context, key store.Key, name string, delta, max int64, drop []string) (store.Item, error) {
	if err := store.CheckCounters(key, name, drop); err != nil {
		return store.Item{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.Item{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	cur, ok := t.live(key, t.now().Unix())
	if !ok {
		return store.Item{}, store.ErrNotFound
	}
	n, inBounds := store.NextCount(cur.Counters[name], delta, max)
	if !inBounds {
		return clone(cur), &store.ConditionFailedError{Index: 0}
	}
	next := clone(cur)
	if next.Counters == nil {
		next.Counters = map[string]int64{}
	}
	next.Counters[name] = n
	for _, d := range drop {
		delete(next.Counters, d)
	}
	t.set(next)
	return clone(next), nil
}

// write applies ops and returns what each Put or Incr stored.
func (t *Table) write(ctx context.Context, ops []store.Op) ([]store.Item, error) {
	if err := validateOps(ops); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now().Unix()
	next := make([]store.Item, len(ops)) // what each Put or Incr stores
	for i, op := range ops {
		cur, ok := t.live(op.Item.Key, now)
		if !op.CondHolds(ok, cur.Version) {
			return nil, &store.ConditionFailedError{Index: i}
		}
		switch op.Kind {
		case store.OpPut:
			next[i] = clone(op.Item)
			if len(next[i].Data) == 0 {
				next[i].Data = nil
			}
			if op.KeepCounters && ok && len(cur.Counters) > 0 {
				next[i].Counters = maps.Clone(cur.Counters)
			}
		case store.OpIncr:
			var count int64
			if ok {
				count = cur.Count
			}
			n, inBounds := store.NextCount(count, op.Delta, op.Max)
			if !inBounds {
				return nil, &store.ConditionFailedError{Index: i}
			}
			next[i] = store.Item{Key: op.Item.Key, Count: n}
			if ok {
				next[i].Version, next[i].ExpiresAt = cur.Version, cur.ExpiresAt
			}
			if op.Item.ExpiresAt != 0 {
				next[i].ExpiresAt = op.Item.ExpiresAt
			}
		}
	}
	for i, op := range ops {
		switch op.Kind {
		case store.OpPut, store.OpIncr:
			t.set(next[i])
		case store.OpDelete:
			t.remove(op.Item.Key)
		}
	}
	return next, nil
}

// live returns the stored item at key when it is there and unexpired (the table's own copy).
func (t *Table) live(key store.Key, now int64) (store.Item, bool) {
	part := t.parts[key.PK]
	i, found := slices.BinarySearchFunc(part, key.SK, cmpSK)
	if !found || !liveAt(part[i], now) {
		return store.Item{}, false
	}
	return part[i], true
}

func (t *Table) set(it store.Item) {
	part := t.parts[it.PK]
	i, found := slices.BinarySearchFunc(part, it.SK, cmpSK)
	if found {
		part[i] = it
		return
	}
	t.parts[it.PK] = slices.Insert(part, i, it)
}

func (t *Table) remove(key store.Key) {
	part := t.parts[key.PK]
	if i, found := slices.BinarySearchFunc(part, key.SK, cmpSK); found {
		t.parts[key.PK] = slices.Delete(part, i, i+1)
	}
}

// cmpSK orders items by SK bytes, the order DynamoDB gives UTF-8 strings.
func cmpSK(it store.Item, sk string) int { return strings.Compare(it.SK, sk) }

func liveAt(it store.Item, now int64) bool { return it.ExpiresAt == 0 || it.ExpiresAt > now }

func clone(it store.Item) store.Item {
	it.Data = bytes.Clone(it.Data)
	if len(it.Counters) == 0 {
		it.Counters = nil
	} else {
		it.Counters = maps.Clone(it.Counters)
	}
	return it
}

func validateOps(ops []store.Op) error {
	if err := store.CheckOps(ops); err != nil {
		return err
	}
	for i, op := range ops {
		if size := len(op.Item.PK) + len(op.Item.SK) + len(op.Item.Data); op.Kind == store.OpPut && size > maxItemBytes {
			return fmt.Errorf("%w: op %d: item of %d bytes, at most %d", errInvalid, i, size, maxItemBytes)
		}
	}
	return nil
}

var _ store.Scanner = (*Table)(nil)

// PartitionsWith returns the PKs starting with pkPrefix that hold a live item at SK sk.
func (t *Table) PartitionsWith(ctx context.Context, pkPrefix, sk string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := t.now().Unix()
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	for pk := range t.parts {
		if _, ok := t.live(store.Key{PK: pk, SK: sk}, now); ok && strings.HasPrefix(pk, pkPrefix) {
			out = append(out, pk)
		}
	}
	return out, nil
}
