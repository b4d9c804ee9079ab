// Package pebble is the embedded store.Table adapter of the local stack: one Pebble database (a folder
// holding a write-ahead log and sorted tables) holds the whole table.
//
// Writes are serialized only for as long as it takes to check their conditions against the latest state
// and hand their batch to Pebble; they then wait for the log's fsync outside that lock, so writes arriving
// together share one fsync (Pebble groups the syncs of concurrent batches). A Write returns only once its
// batch is synced, so an acknowledged write survives a process kill or a power cut; a batch is atomic in
// the log, so a multi-op write is never half applied after a crash. Conditions and transactions are exact
// and ErrConflict never happens.
package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/creatorstrategy/css/shared/privatedir"
	"github.com/creatorstrategy/css/shared/store"
)

const (
	// pageBytes caps a Query page like DynamoDB's 1 MB, so callers of both adapters follow cursors.
	pageBytes = 1 << 20
	// maxItemBytes is DynamoDB's item size limit, enforced here too so the local stack refuses what AWS would.
	maxItemBytes = 400 << 10
	// formatV1 leads every stored value without named counters, formatV2 one with them, so a value written
	// by another encoding is refused, not misread.
	formatV1 = 1
	formatV2 = 2
)

// errInvalid marks a malformed call (bad key, too many ops, a key twice); it is never a condition failure.
var errInvalid = store.ErrInvalidCall

// ErrInUse is returned by Open when the database is already open.
var ErrInUse = errors.New("pebble: database is in use by another process")

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("pebble: table is closed")

// Table is a store.Table in a Pebble database. Keys are PK 0x00 SK, so a partition is one contiguous,
// SK-ordered key range; values are a small binary encoding of the rest of the item (see encodeValue).
type Table struct {
	db   *pebbledb.DB
	lock *pebbledb.Lock
	now  func() time.Time
	log  *slog.Logger

	// life is held shared by every call and exclusively by Close, so Close waits for calls in flight
	// (including writes waiting for their fsync) and no call reaches a closed database.
	life   sync.RWMutex
	closed bool

	// writeMu orders writes: a write checks its conditions and applies its batch under it.
	writeMu sync.Mutex
}

var _ store.Table = (*Table)(nil)

// Option configures a Table.
type Option func(*Table)

// WithClock sets the clock that decides expiry (tests); the default is time.Now.
func WithClock(now func() time.Time) Option { return func(t *Table) { t.now = now } }

// WithLogger receives Pebble's own messages: its routine ones at debug level, its errors at error level.
// The default discards them.
func WithLogger(l *slog.Logger) Option { return func(t *Table) { t.log = l } }

// DirIn is the folder of the local stack's table inside its data folder (CSS_DATA_DIR).
func DirIn(dataDir string) string { return filepath.Join(dataDir, "table") }

// Open opens (creating if needed) the database in the folder dir; parent folders are created. A database
// open elsewhere (another process, or another Table in this one) is refused with ErrInUse.
func Open(dir string, opts ...Option) (*Table, error) {
	// The folder holds every tenant's data and the key hashes: its owner's alone.
	if err := privatedir.Make(dir); err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return open(dir, vfs.Default, opts)
}

// OpenMemory opens a database that lives in memory only (tests: no files, nothing kept after Close).
func OpenMemory(opts ...Option) (*Table, error) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("table", 0o700); err != nil {
		return nil, err
	}
	return open("table", mem, opts)
}

func open(dir string, files vfs.FS, opts []Option) (*Table, error) {
	t := &Table{now: time.Now, log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(t)
	}
	lock, err := pebbledb.LockDirectory(dir, files)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) { // the lock file could not even be created
			return nil, fmt.Errorf("open %s: %w", dir, err)
		}
		return nil, fmt.Errorf("open %s: %w (%w)", dir, ErrInUse, err)
	}
	o := &pebbledb.Options{
		FS:                 files,
		FormatMajorVersion: pebbledb.FormatNewest,
		Logger:             logger{t.log},
		Lock:               lock,
	}
	// Every conditional write reads its keys first, and most of them do not exist (new ids): a Bloom filter
	// per table answers those without reading the table's blocks.
	o.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	db, err := pebbledb.Open(dir, o)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open %s: %w", dir, err), lock.Close())
	}
	t.db, t.lock = db, lock
	return t, nil
}

// Close waits for the calls in flight (every accepted write is synced), then closes the database; later
// calls get ErrClosed.
func (t *Table) Close() error {
	t.life.Lock()
	defer t.life.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	return errors.Join(t.db.Close(), t.lock.Close())
}

// enter starts a call, or reports ErrClosed; the caller must call t.life.RUnlock when it is done.
func (t *Table) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.life.RLock()
	if t.closed {
		t.life.RUnlock()
		return ErrClosed
	}
	return nil
}

// Get returns the live item at key, or store.ErrNotFound.
func (t *Table) Get(ctx context.Context, key store.Key) (store.Item, error) {
	k, err := encodeKey(key)
	if err != nil {
		return store.Item{}, err
	}
	if err := t.enter(ctx); err != nil {
		return store.Item{}, err
	}
	defer t.life.RUnlock()
	it, ok, err := t.liveItem(k, key, t.now().Unix())
	if err == nil && !ok {
		err = store.ErrNotFound
	}
	return it, err
}

// GetMany returns the live items at keys, in the order of keys. Like DynamoDB's BatchGetItem, it reads
// each key on its own, not one snapshot of all of them.
func (t *Table) GetMany(ctx context.Context, keys []store.Key) ([]store.Item, error) {
	if len(keys) > store.MaxBatchGet {
		return nil, fmt.Errorf("%w: %d keys, at most %d", errInvalid, len(keys), store.MaxBatchGet)
	}
	encoded, err := encodeDistinct(keys)
	if err != nil {
		return nil, err
	}
	if err := t.enter(ctx); err != nil {
		return nil, err
	}
	defer t.life.RUnlock()
	now := t.now().Unix()
	var items []store.Item
	for i, k := range encoded {
		it, ok, err := t.liveItem(k, keys[i], now)
		if err != nil {
			return nil, err
		}
		if ok {
			items = append(items, it)
		}
	}
	return items, nil
}

// Query returns one page of the live items of q.PK whose SK starts with q.Prefix. Next is set only when
// another live item follows, so the last page is never empty unless the whole result is.
func (t *Table) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if err := checkPart("PK", q.PK); err != nil {
		return store.Page{}, err
	}
	if strings.IndexByte(q.Prefix, 0) >= 0 {
		return store.Page{}, fmt.Errorf("%w: prefix contains a 0x00 byte", errInvalid)
	}
	if q.Limit < 0 {
		return store.Page{}, fmt.Errorf("%w: negative limit %d", errInvalid, q.Limit)
	}
	partition := make([]byte, 0, len(q.PK)+1+len(q.Prefix))
	partition = append(append(partition, q.PK...), 0)
	lo := append(partition, q.Prefix...)
	var after []byte // the cursor's key, exclusive
	if q.Cursor != "" {
		sk, err := store.DecodeCursor(q.Cursor)
		if err != nil || !strings.HasPrefix(sk, q.Prefix) || strings.IndexByte(sk, 0) >= 0 {
			return store.Page{}, store.ErrBadCursor
		}
		after = append(partition[:len(partition):len(partition)], sk...)
	}
	if err := t.enter(ctx); err != nil {
		return store.Page{}, err
	}
	defer t.life.RUnlock()

	// A descending page ends just before the cursor; so does its iterator.
	upper := successor(lo)
	if q.Desc && after != nil {
		upper = after
	}
	iter, err := t.db.NewIter(&pebbledb.IterOptions{LowerBound: lo, UpperBound: upper})
	if err != nil {
		return store.Page{}, fmt.Errorf("pebble: query %s: %w", q.PK, err)
	}
	// On the stack, as most pages fit.
	var found [128]hit
	var skBuf [4 << 10]byte
	r := pageRead{limit: q.Limit, skFrom: len(partition), now: t.now().Unix(), hits: found[:0], sks: skBuf[:0]}
	var next string // the page's cursor, when it is full
	var done bool
	switch {
	case q.Desc && q.Limit == 0:
		// Pebble steps backwards at about twice the cost of forwards, so a descending page without a limit is
		// read forwards and reversed when the whole rest of the range fits in it, as it mostly does.
		if r, next, done, err = r.read(iter, iter.First(), iter.Next); done || err != nil {
			slices.Reverse(r.hits)
			break
		}
		r, next, _, err = r.reset().read(iter, iter.Last(), iter.Prev)
	case q.Desc:
		r, next, _, err = r.read(iter, iter.Last(), iter.Prev)
	case after != nil:
		valid := iter.SeekGE(after)
		if valid && bytes.Equal(iter.Key(), after) {
			valid = iter.Next()
		}
		r, next, _, err = r.read(iter, valid, iter.Next)
	default:
		r, next, _, err = r.read(iter, iter.First(), iter.Next)
	}
	if err := errors.Join(err, iter.Error(), iter.Close()); err != nil {
		return store.Page{}, fmt.Errorf("pebble: query %s: %w", q.PK, err)
	}
	return r.page(q.PK, next), nil
}

// pageRead copies a page of live items out of an iterator, whose slices change as it moves: item data into
// chunks that double in size (a few allocations a page, where one per item costs more), sort keys into one
// buffer sliced at the end; the page's items are made in one allocation from a stack buffer of what was
// found. Its methods take and return it by value: stored through a pointer,
// its slices would count as escaping, and the stack buffer would move to the heap.
type pageRead struct {
	limit  int
	skFrom int // where the sort key starts in a table key
	now    int64

	hits   []hit
	sks    []byte
	chunks [][]byte // where item data is copied
	size   int
}

// hit is one item of the page, holding no pointer (so storing one needs no write barrier).
type hit struct {
	head               header
	skStart, skEnd     int // in pageRead.sks
	chunk              int // in pageRead.chunks
	dataStart, dataEnd int // in that chunk
}

// read adds the live items from the iterator's position on, moving with step, until the page is full (done
// is false; next is the page's cursor when a live item is left over) or the iterator is exhausted (done).
func (r pageRead) read(iter *pebbledb.Iterator, valid bool, step func() bool) (_ pageRead, next string, done bool, _ error) {
	for ; valid; valid = step() {
		k, v := iter.Key(), iter.Value()
		head, body, err := parseValue(v)
		if err != nil {
			return r, "", false, fmt.Errorf("item %q: %w", k, err)
		}
		if !head.liveAt(r.now) {
			continue
		}
		n := len(k) + len(v)
		if full := r.limit > 0 && len(r.hits) == r.limit || r.size+n > pageBytes; full && len(r.hits) > 0 {
			last := r.hits[len(r.hits)-1]
			return r, store.EncodeCursor(string(r.sks[last.skStart:last.skEnd])), false, nil
		}
		r.size += n
		h := hit{head: head, skStart: len(r.sks)}
		r.sks = append(r.sks, k[r.skFrom:]...)
		h.skEnd = len(r.sks)
		if n := len(body); n > 0 {
			last := len(r.chunks) - 1
			if last < 0 || cap(r.chunks[last])-len(r.chunks[last]) < n {
				// Each chunk twice the last (from 16 items' worth), so a page takes a few allocations.
				size := 16 * n
				if last >= 0 {
					size = max(size, 2*cap(r.chunks[last]))
				}
				r.chunks = append(r.chunks, make([]byte, 0, size))
				last++
			}
			h.chunk, h.dataStart = last, len(r.chunks[last])
			r.chunks[last] = append(r.chunks[last], body...)
			h.dataEnd = len(r.chunks[last])
		}
		r.hits = append(r.hits, h)
	}
	return r, "", true, nil
}

// reset forgets what was read, keeping the buffers.
func (r pageRead) reset() pageRead {
	r.hits, r.sks, r.size = r.hits[:0], r.sks[:0], 0
	return r
}

// page makes the page of what was read, in the order of hits.
func (r pageRead) page(pk, next string) store.Page {
	page := store.Page{Next: next}
	if len(r.hits) == 0 {
		return page
	}
	sks := string(r.sks)
	page.Items = make([]store.Item, len(r.hits))
	for i, h := range r.hits {
		var data []byte
		if h.dataEnd > h.dataStart {
			data = r.chunks[h.chunk][h.dataStart:h.dataEnd:h.dataEnd]
		}
		page.Items[i] = h.head.item(store.Key{PK: pk, SK: sks[h.skStart:h.skEnd]}, data)
	}
	return page
}

// Write applies ops atomically: every condition is checked against the latest state (no key appears twice,
// so that is the state each op sees), then all ops are applied in one batch. It returns once the batch is
// synced, whatever ctx does meanwhile, so its outcome is never in doubt.
func (t *Table) Write(ctx context.Context, ops ...store.Op) error {
	keys, err := validateOps(ops)
	if err != nil {
		return err
	}
	if err := t.enter(ctx); err != nil {
		return err
	}
	defer t.life.RUnlock()

	b := t.db.NewBatch()
	defer b.Close()
	t.writeMu.Lock()
	err = t.fill(b, ops, keys, nil)
	if err == nil {
		// Applied (visible to the next write's conditions) but not yet synced; the sync is awaited below,
		// outside the lock, so the next writes join this one's fsync.
		err = t.db.ApplyNoSyncWait(b, pebbledb.Sync)
	}
	t.writeMu.Unlock()
	if err != nil {
		return err
	}
	if err := b.SyncWait(); err != nil {
		return fmt.Errorf("pebble: sync: %w", err)
	}
	return nil
}

// Increment applies one increment like Write, without waiting for the log's fsync: the batch is in the log
// and visible to every later call when it returns, and the next synced write (or Pebble's own flushes) makes
// it durable. A rate window that forgets its last increments in a crash admits a few calls more; waiting
// for an fsync on every request would cost the local stack about half its read throughput.
func (t *Table) Increment(ctx context.Context, op store.Op) (int64, error) {
	if op.Kind != store.OpIncr {
		return 0, fmt.Errorf("%w: Increment takes an increment, not op kind %d", errInvalid, op.Kind)
	}
	ops := []store.Op{op}
	keys, err := validateOps(ops)
	if err != nil {
		return 0, err
	}
	if err := t.enter(ctx); err != nil {
		return 0, err
	}
	defer t.life.RUnlock()

	b := t.db.NewBatch()
	defer b.Close()
	counts := make([]int64, 1)
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if err := t.fill(b, ops, keys, counts); err != nil {
		return 0, err
	}
	if err := t.db.Apply(b, pebbledb.NoSync); err != nil {
		return 0, fmt.Errorf("pebble: write %s: %w", op.Item.Key, err)
	}
	return counts[0], nil
}

// fill checks every op's condition, then puts the changes of all ops into b; when a condition fails it
// puts nothing. counts, when not nil, receives the Count each increment leaves.
func (t *Table) fill(b *pebbledb.Batch, ops []store.Op, keys [][]byte, counts []int64) error {
	now := t.now().Unix()
	values := make([][]byte, len(ops)) // what each Put or Incr stores
	for i, op := range ops {
		cur, _, ok, err := t.read(keys[i], op.Item.Key, now, false)
		if err != nil {
			return err
		}
		if !op.CondHolds(ok, cur.version) {
			return &store.ConditionFailedError{Index: i}
		}
		switch op.Kind {
		case store.OpPut:
			it := op.Item
			if op.KeepCounters && ok && cur.countersLen > 0 {
				stored, _, err := t.liveItem(keys[i], op.Item.Key, now)
				if err != nil {
					return err
				}
				it.Counters = stored.Counters
			}
			values[i] = encodeValue(it)
		case store.OpIncr:
			if !ok {
				cur = header{}
			}
			count, inBounds := store.NextCount(cur.count, op.Delta, op.Max)
			if !inBounds {
				return &store.ConditionFailedError{Index: i}
			}
			cur.count = count
			if op.Item.ExpiresAt != 0 {
				cur.expiresAt = op.Item.ExpiresAt
			}
			if counts != nil {
				counts[i] = count
			}
			values[i] = encodeValue(cur.item(op.Item.Key, nil))
		}
	}
	for i, op := range ops {
		var err error
		switch op.Kind {
		case store.OpPut, store.OpIncr:
			err = b.Set(keys[i], values[i], nil)
		case store.OpDelete:
			err = b.Delete(keys[i], nil)
		}
		if err != nil {
			return fmt.Errorf("pebble: write %s: %w", op.Item.Key, err)
		}
	}
	return nil
}

// AddCounter adds delta to the named counter of the live item at key and drops the counters in drop, like
// Increment: applied under the write lock, acknowledged without waiting for the log's fsync.
func (t *Table) AddCounter(ctx context.Context, key store.Key, name string, delta, max int64, drop []string) (store.Item, error) {
	if err := store.CheckCounters(key, name, drop); err != nil {
		return store.Item{}, err
	}
	k, err := encodeKey(key)
	if err != nil {
		return store.Item{}, err
	}
	if err := t.enter(ctx); err != nil {
		return store.Item{}, err
	}
	defer t.life.RUnlock()
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	cur, ok, err := t.liveItem(k, key, t.now().Unix())
	if err != nil {
		return store.Item{}, err
	}
	if !ok {
		return store.Item{}, store.ErrNotFound
	}
	n, inBounds := store.NextCount(cur.Counters[name], delta, max)
	if !inBounds {
		return cur, &store.ConditionFailedError{Index: 0}
	}
	if cur.Counters == nil {
		cur.Counters = map[string]int64{}
	}
	cur.Counters[name] = n
	for _, d := range drop {
		delete(cur.Counters, d)
	}
	if err := t.db.Set(k, encodeValue(cur), pebbledb.NoSync); err != nil {
		return store.Item{}, fmt.Errorf("pebble: write %s: %w", key, err)
	}
	return cur, nil
}

// liveItem reads the item at k, its data copied out; ok is false when there is none or it has expired.
func (t *Table) liveItem(k []byte, key store.Key, now int64) (store.Item, bool, error) {
	head, data, ok, err := t.read(k, key, now, true)
	if !ok || err != nil {
		return store.Item{}, false, err
	}
	return head.item(key, data), true, nil
}

// read reads the value at k: its header, and with withData a copy of its data; ok is false when there is
// no item or it has expired.
func (t *Table) read(k []byte, key store.Key, now int64, withData bool) (head header, data []byte, ok bool, err error) {
	v, closer, err := t.db.Get(k)
	if errors.Is(err, pebbledb.ErrNotFound) {
		return header{}, nil, false, nil
	}
	if err != nil {
		return header{}, nil, false, fmt.Errorf("pebble: get %s: %w", key, err)
	}
	defer closer.Close()
	head, data, err = parseValue(v)
	if err != nil {
		return header{}, nil, false, fmt.Errorf("pebble: item %s: %w", key, err)
	}
	if !head.liveAt(now) {
		return header{}, nil, false, nil
	}
	if !withData || len(data) == 0 {
		return head, nil, true, nil
	}
	return head, bytes.Clone(data), true, nil
}

// validateOps rejects malformed writes before anything is read and returns the ops' encoded keys.
func validateOps(ops []store.Op) ([][]byte, error) {
	if err := store.CheckOps(ops); err != nil {
		return nil, err
	}
	keys := make([]store.Key, len(ops))
	for i, op := range ops {
		if size := len(op.Item.PK) + len(op.Item.SK) + len(op.Item.Data); op.Kind == store.OpPut && size > maxItemBytes {
			return nil, fmt.Errorf("%w: op %d: item of %d bytes, at most %d", errInvalid, i, size, maxItemBytes)
		}
		keys[i] = op.Item.Key
	}
	return encodeDistinct(keys)
}

// encodeDistinct encodes keys, rejecting invalid ones and any key given twice.
func encodeDistinct(keys []store.Key) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for i, key := range keys {
		k, err := encodeKey(key)
		if err != nil {
			return nil, err
		}
		for _, prev := range keys[:i] {
			if prev == key {
				return nil, fmt.Errorf("%w: key %s given twice", errInvalid, key)
			}
		}
		out[i] = k
	}
	return out, nil
}

func checkPart(name, s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty %s", errInvalid, name)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s contains a 0x00 byte", errInvalid, name)
	}
	return nil
}

func encodeKey(key store.Key) ([]byte, error) {
	if err := checkPart("PK", key.PK); err != nil {
		return nil, err
	}
	if err := checkPart("SK", key.SK); err != nil {
		return nil, err
	}
	k := make([]byte, 0, len(key.PK)+1+len(key.SK))
	k = append(k, key.PK...)
	k = append(k, 0)
	return append(k, key.SK...), nil
}

// successor returns the smallest key greater than every key starting with prefix.
func successor(prefix []byte) []byte {
	s := bytes.Clone(prefix)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil // unreachable for our keys: they hold a 0x00 separator
}

// encodeValue stores an item as formatV1, then Version, Count, ExpiresAt as varints, then Data raw. An item
// with named counters is formatV2: the same, with the counters between ExpiresAt and Data, as a uvarint of
// the section's length, then each counter as a uvarint length, the name and a varint value.
func encodeValue(it store.Item) []byte {
	v := make([]byte, 0, 1+4*binary.MaxVarintLen64+len(it.Data))
	v = append(v, formatV1)
	v = binary.AppendVarint(v, it.Version)
	v = binary.AppendVarint(v, it.Count)
	v = binary.AppendVarint(v, it.ExpiresAt)
	if len(it.Counters) > 0 {
		v[0] = formatV2
		var section []byte
		for _, name := range slices.Sorted(maps.Keys(it.Counters)) {
			section = binary.AppendUvarint(section, uint64(len(name)))
			section = append(section, name...)
			section = binary.AppendVarint(section, it.Counters[name])
		}
		v = binary.AppendUvarint(v, uint64(len(section)))
		v = append(v, section...)
	}
	return append(v, it.Data...)
}

// header is what a stored value holds besides the item's data and counters; countersLen is the length of
// the counters section that leads the value's body (formatV2).
type header struct {
	version, count, expiresAt int64
	countersLen               int
}

// liveAt reports whether the item has not expired at now (Unix seconds).
func (h header) liveAt(now int64) bool { return h.expiresAt == 0 || h.expiresAt > now }

// item is the item at key with this header and body (its counters section, then its data; nil: neither).
// The section was checked by parseValue.
func (h header) item(key store.Key, body []byte) store.Item {
	it := store.Item{Key: key, Version: h.version, Count: h.count, ExpiresAt: h.expiresAt}
	if len(body) < h.countersLen {
		return it
	}
	it.Counters, _ = parseCounters(body[:h.countersLen])
	if data := body[h.countersLen:]; len(data) > 0 {
		it.Data = data
	}
	return it
}

// parseCounters decodes a counters section (see encodeValue).
func parseCounters(section []byte) (map[string]int64, error) {
	if len(section) == 0 {
		return nil, nil
	}
	out := map[string]int64{}
	for len(section) > 0 {
		l, n := binary.Uvarint(section)
		if n <= 0 || uint64(len(section)-n) < l {
			return nil, errors.New("corrupt counters")
		}
		name := string(section[n : n+int(l)])
		section = section[n+int(l):]
		x, m := binary.Varint(section)
		if m <= 0 {
			return nil, errors.New("corrupt counters")
		}
		out[name], section = x, section[m:]
	}
	return out, nil
}

// parseValue splits a stored value into its header and the item's data (Pebble's bytes: valid until the
// read that returned them moves on).
func parseValue(v []byte) (header, []byte, error) {
	if len(v) == 0 || v[0] != formatV1 && v[0] != formatV2 {
		return header{}, nil, errors.New("unknown value format")
	}
	rest := v[1:]
	var fields [3]int64
	for i := range fields {
		x, n := binary.Varint(rest)
		if n <= 0 {
			return header{}, nil, errors.New("corrupt value")
		}
		fields[i], rest = x, rest[n:]
	}
	h := header{version: fields[0], count: fields[1], expiresAt: fields[2]}
	if v[0] == formatV2 {
		l, n := binary.Uvarint(rest)
		if n <= 0 || uint64(len(rest)-n) < l {
			return header{}, nil, errors.New("corrupt value")
		}
		rest = rest[n:]
		if _, err := parseCounters(rest[:l]); err != nil {
			return header{}, nil, err
		}
		h.countersLen = int(l)
	}
	return h, rest, nil
}

// logger passes Pebble's messages to slog. Fatalf is for damage Pebble cannot go on with (a corrupt or
// unwritable database): it is logged, and the process exits as Pebble requires.
type logger struct{ l *slog.Logger }

func (g logger) Infof(format string, args ...any) {
	g.l.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (g logger) Errorf(format string, args ...any) {
	g.l.Error("pebble: " + fmt.Sprintf(format, args...))
}

func (g logger) Fatalf(format string, args ...any) {
	msg := "pebble: " + fmt.Sprintf(format, args...)
	g.l.Error(msg)
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}

var _ store.Scanner = (*Table)(nil)

// PartitionsWith returns the PKs starting with pkPrefix that hold a live item at SK sk, walking every key
// under the prefix (a migration's scan, not a request's read).
func (t *Table) PartitionsWith(ctx context.Context, pkPrefix, sk string) ([]string, error) {
	if strings.IndexByte(pkPrefix, 0) >= 0 || strings.IndexByte(sk, 0) >= 0 {
		return nil, fmt.Errorf("%w: a 0x00 byte in a partition prefix or sort key", errInvalid)
	}
	if err := t.enter(ctx); err != nil {
		return nil, err
	}
	defer t.life.RUnlock()
	lo := []byte(pkPrefix)
	iter, err := t.db.NewIter(&pebbledb.IterOptions{LowerBound: lo, UpperBound: successor(lo)})
	if err != nil {
		return nil, fmt.Errorf("pebble: scan %q: %w", pkPrefix, err)
	}
	now := t.now().Unix()
	var out []string
	for valid := iter.First(); valid; valid = iter.Next() {
		pk, itemSK, ok := bytes.Cut(iter.Key(), []byte{0})
		if !ok || string(itemSK) != sk {
			continue
		}
		head, _, err := parseValue(iter.Value())
		if err != nil {
			return nil, errors.Join(fmt.Errorf("pebble: item %s|%s: %w", pk, itemSK, err), iter.Close())
		}
		if head.liveAt(now) {
			out = append(out, string(pk))
		}
	}
	if err := errors.Join(iter.Error(), iter.Close()); err != nil {
		return nil, fmt.Errorf("pebble: scan %q: %w", pkPrefix, err)
	}
	return out, nil
}
