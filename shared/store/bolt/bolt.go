// Package bolt is the embedded store.Table adapter of the local stack: one bbolt file holds the whole
// table. Writes go through one committer that runs them in order (group commit): the writes waiting when
// a commit starts share its transaction and its fsync, each still all-or-nothing against the state the
// writes before it left. So conditions and multi-op writes are exact, ErrConflict never happens, and a
// Write returns only once its transaction is on disk, surviving a process kill.
package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/creatorstrategy/css/shared/store"
)

const (
	// lockTimeout bounds the wait for the file lock, so a second process fails clearly instead of blocking.
	lockTimeout = time.Second
	// pageBytes caps a Query page like DynamoDB's 1 MB, so callers of both adapters follow cursors.
	pageBytes = 1 << 20
	// maxItemBytes is DynamoDB's item size limit, enforced here too so the local stack refuses what AWS would.
	maxItemBytes = 400 << 10
	// formatV1 leads every stored value, so a file written by another encoding is refused, not misread.
	formatV1 = 1
	// dataChunk is the most item data a Query copies into one allocation: small enough for the allocator's
	// size classes (large objects cost more to allocate and to collect), large enough for a page of items.
	dataChunk = 16 << 10
	// maxGroup bounds how many waiting writes share one transaction.
	maxGroup = 256
)

var bucketName = []byte("items")

// errInvalid marks a malformed call (bad key, too many ops, a key twice); it is never a condition failure.
var errInvalid = errors.New("bolt: invalid request")

// ErrClosed is returned by a Write after Close.
var ErrClosed = errors.New("bolt: table is closed")

// Table is a store.Table in a bbolt file. Keys are PK 0x00 SK, so a partition is one contiguous, SK-ordered
// key range; values are a small binary encoding of the rest of the item (see encodeValue).
type Table struct {
	db  *bbolt.DB
	now func() time.Time

	mu        sync.RWMutex // guards closed against sends on writes
	closed    bool
	writes    chan *write   // to the committer
	committed chan struct{} // closed when the committer has finished
}

// write is one Write waiting for the committer.
type write struct {
	ops  []store.Op
	keys [][]byte
	done chan error
}

var _ store.Table = (*Table)(nil)

// Option configures a Table.
type Option func(*Table)

// WithClock sets the clock that decides expiry (tests); the default is time.Now.
func WithClock(now func() time.Time) Option { return func(t *Table) { t.now = now } }

// Open opens (creating if needed) the bbolt file at path; parent directories are created.
func Open(path string, opts ...Option) (*Table, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	o := *bbolt.DefaultOptions
	o.Timeout = lockTimeout
	db, err := bbolt.Open(path, 0o600, &o)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: database file is in use by another process: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open %s: create bucket: %w", path, err), db.Close())
	}
	t := &Table{db: db, now: time.Now, writes: make(chan *write, maxGroup), committed: make(chan struct{})}
	for _, opt := range opts {
		opt(t)
	}
	go t.commitLoop()
	return t, nil
}

// Close commits the writes already accepted, then releases the file; later Writes get ErrClosed.
func (t *Table) Close() error {
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		close(t.writes)
	}
	t.mu.Unlock()
	<-t.committed
	return t.db.Close()
}

// Get returns the live item at key, or store.ErrNotFound.
func (t *Table) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if err := ctx.Err(); err != nil {
		return store.Item{}, err
	}
	k, err := encodeKey(key)
	if err != nil {
		return store.Item{}, err
	}
	now := t.now().Unix()
	var it store.Item
	err = t.db.View(func(tx *bbolt.Tx) error {
		var ok bool
		it, ok, err = liveItem(tx.Bucket(bucketName), k, key, now)
		if err == nil && !ok {
			err = store.ErrNotFound
		}
		return err
	})
	return it, err
}

// GetMany returns the live items at keys, in the order of keys.
func (t *Table) GetMany(ctx context.Context, keys []store.Key) ([]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(keys) > store.MaxBatchGet {
		return nil, fmt.Errorf("%w: %d keys, at most %d", errInvalid, len(keys), store.MaxBatchGet)
	}
	encoded, err := encodeDistinct(keys)
	if err != nil {
		return nil, err
	}
	now := t.now().Unix()
	var items []store.Item
	err = t.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketName)
		for i, k := range encoded {
			it, ok, err := liveItem(b, k, keys[i], now)
			if err != nil {
				return err
			}
			if ok {
				items = append(items, it)
			}
		}
		return nil
	})
	return items, err
}

// Query returns one page of the live items of q.PK whose SK starts with q.Prefix. Next is set only when
// another live item follows, so the last page is never empty unless the whole result is.
func (t *Table) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if err := ctx.Err(); err != nil {
		return store.Page{}, err
	}
	if err := checkPart("PK", q.PK); err != nil {
		return store.Page{}, err
	}
	if strings.IndexByte(q.Prefix, 0) >= 0 {
		return store.Page{}, fmt.Errorf("%w: prefix contains a 0x00 byte", errInvalid)
	}
	if q.Limit < 0 {
		return store.Page{}, fmt.Errorf("%w: negative limit %d", errInvalid, q.Limit)
	}
	partition := append([]byte(q.PK), 0)
	lo := append(partition, q.Prefix...)
	hi := successor(lo)
	var after []byte // the cursor's key, exclusive
	if q.Cursor != "" {
		sk, err := store.DecodeCursor(q.Cursor)
		if err != nil || !strings.HasPrefix(sk, q.Prefix) || strings.IndexByte(sk, 0) >= 0 {
			return store.Page{}, store.ErrBadCursor
		}
		after = append(bytes.Clone(partition), sk...)
	}

	now := t.now().Unix()
	var page store.Page
	err := t.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketName).Cursor()
		var k, v []byte
		var step func() ([]byte, []byte)
		var inRange func([]byte) bool
		if q.Desc {
			bound := hi
			if after != nil {
				bound = after
			}
			// Seek finds the first key >= bound; the page starts just before it.
			if k, _ = c.Seek(bound); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
			step, inRange = c.Prev, func(k []byte) bool { return bytes.Compare(k, lo) >= 0 }
		} else {
			if after != nil {
				if k, v = c.Seek(after); bytes.Equal(k, after) {
					k, v = c.Next()
				}
			} else {
				k, v = c.Seek(lo)
			}
			step, inRange = c.Next, func(k []byte) bool { return bytes.Compare(k, hi) < 0 }
		}

		// First find the page's live items (bbolt's slices, valid inside the transaction), then copy them
		// out with one allocation for the items, one for their sort keys and a few for their data.
		type found struct {
			sk   []byte
			head store.Item
			data []byte
		}
		var stack [128]found
		hits := stack[:0]
		size, skBytes, dataBytes := 0, 0, 0
		for ; k != nil && inRange(k); k, v = step() {
			sk := k[len(partition):]
			head, data, err := parseValue(v)
			if err != nil {
				return fmt.Errorf("bolt: item %s %q: %w", q.PK, sk, err)
			}
			if !liveAt(head, now) {
				continue
			}
			n := len(k) + len(v)
			full := q.Limit > 0 && len(hits) == q.Limit || size+n > pageBytes
			if full && len(hits) > 0 {
				page.Next = store.EncodeCursor(string(hits[len(hits)-1].sk))
				break
			}
			hits = append(hits, found{sk: sk, head: head, data: data})
			size += n
			skBytes += len(sk)
			dataBytes += len(data)
		}
		if len(hits) == 0 {
			return nil
		}
		var sks strings.Builder
		sks.Grow(skBytes)
		for _, h := range hits {
			sks.Write(h.sk)
		}
		allSKs := sks.String()
		var data []byte // the current chunk
		page.Items = make([]store.Item, len(hits))
		for i, h := range hits {
			it := h.head
			it.PK, it.SK, allSKs = q.PK, allSKs[:len(h.sk)], allSKs[len(h.sk):]
			if n := len(h.data); n > 0 {
				if cap(data)-len(data) < n {
					data = make([]byte, 0, max(n, min(dataBytes, dataChunk)))
				}
				dataBytes -= n
				start := len(data)
				data = append(data, h.data...)
				it.Data = data[start:len(data):len(data)]
			}
			page.Items[i] = it
		}
		return nil
	})
	return page, err
}

// Write applies ops atomically: every condition is checked against the state before the write (no key
// appears twice, so that is the state each op sees), then all ops are applied. It returns once the write
// is committed and synced, whatever ctx does meanwhile, so its outcome is never in doubt.
func (t *Table) Write(ctx context.Context, ops ...store.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	keys, err := validateOps(ops)
	if err != nil {
		return err
	}
	w := &write{ops: ops, keys: keys, done: make(chan error, 1)}
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return ErrClosed
	}
	t.writes <- w
	t.mu.RUnlock()
	return <-w.done
}

// commitLoop commits writes in arrival order: the first waiting write, with whatever else is waiting by
// then, in one transaction. Under load a commit's fsync is shared by many writes; alone, a write commits
// at once, with no delay spent waiting for company.
func (t *Table) commitLoop() {
	defer close(t.committed)
	group := make([]*write, 0, maxGroup)
	for w := range t.writes {
		group = append(group[:0], w)
	gather:
		for len(group) < maxGroup {
			select {
			case w, ok := <-t.writes:
				if !ok {
					break gather
				}
				group = append(group, w)
			default:
				break gather
			}
		}
		t.commit(group)
	}
}

// commit runs group in one transaction. A write whose condition fails leaves nothing behind and gets its
// ConditionFailedError; the others still commit. If the transaction itself fails, each write is tried on
// its own, so one write's failure is never another's.
func (t *Table) commit(group []*write) {
	results := make([]error, len(group))
	err := t.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketName)
		now := t.now().Unix()
		for i, w := range group {
			var failed *store.ConditionFailedError
			results[i] = apply(b, w, now)
			if results[i] != nil && !errors.As(results[i], &failed) {
				return results[i]
			}
		}
		return nil
	})
	switch {
	case err == nil:
		for i, w := range group {
			w.done <- results[i]
		}
	case len(group) == 1:
		group[0].done <- err
	default:
		for _, w := range group {
			t.commit([]*write{w})
		}
	}
}

// apply checks w's conditions in b, then makes its changes; when a condition fails it changes nothing.
func apply(b *bbolt.Bucket, w *write, now int64) error {
	values := make([][]byte, len(w.ops)) // what each Put or Incr stores
	for i, op := range w.ops {
		cur, ok, err := liveItem(b, w.keys[i], op.Item.Key, now)
		if err != nil {
			return err
		}
		if !condHolds(op, cur, ok) {
			return &store.ConditionFailedError{Index: i}
		}
		switch op.Kind {
		case store.OpPut:
			values[i] = encodeValue(op.Item)
		case store.OpIncr:
			if !ok {
				cur = store.Item{Key: op.Item.Key}
			}
			count, inBounds := incr(cur.Count, op.Delta, op.Max)
			if !inBounds {
				return &store.ConditionFailedError{Index: i}
			}
			cur.Count = count
			values[i] = encodeValue(cur)
		}
	}
	for i, op := range w.ops {
		var err error
		switch op.Kind {
		case store.OpPut, store.OpIncr:
			err = b.Put(w.keys[i], values[i])
		case store.OpDelete:
			err = b.Delete(w.keys[i])
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", op.Item.Key, err)
		}
	}
	return nil
}

// condHolds reports whether op.Cond holds for the item at its key (ok: a live item is there).
func condHolds(op store.Op, cur store.Item, ok bool) bool {
	switch op.Cond {
	case store.IfExists:
		return ok
	case store.IfNotExists:
		return !ok
	case store.IfVersion:
		return ok && cur.Version == op.Version
	default:
		return true
	}
}

// incr returns count+delta and whether it lies in [0, max] (max <= 0: no upper bound). An int64 overflow
// is out of bounds too.
func incr(count, delta, max int64) (int64, bool) {
	if delta > 0 && count > math.MaxInt64-delta || delta < 0 && count < math.MinInt64-delta {
		return 0, false
	}
	n := count + delta
	return n, n >= 0 && (max <= 0 || n <= max)
}

// validateOps rejects malformed writes before any transaction starts and returns the ops' encoded keys.
func validateOps(ops []store.Op) ([][]byte, error) {
	if len(ops) == 0 || len(ops) > store.MaxTransactOps {
		return nil, fmt.Errorf("%w: %d ops, want 1 to %d", errInvalid, len(ops), store.MaxTransactOps)
	}
	keys := make([]store.Key, len(ops))
	for i, op := range ops {
		if op.Kind < store.OpPut || op.Kind > store.OpIncr {
			return nil, fmt.Errorf("%w: op %d has unknown kind %d", errInvalid, i, op.Kind)
		}
		if op.Cond < store.Always || op.Cond > store.IfVersion {
			return nil, fmt.Errorf("%w: op %d has unknown condition %d", errInvalid, i, op.Cond)
		}
		if op.Kind == store.OpIncr && op.Cond != store.Always {
			return nil, fmt.Errorf("%w: op %d: an increment takes no condition", errInvalid, i)
		}
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
	seen := make(map[store.Key]struct{}, len(keys))
	for i, key := range keys {
		k, err := encodeKey(key)
		if err != nil {
			return nil, err
		}
		if _, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w: key %s given twice", errInvalid, key)
		}
		seen[key] = struct{}{}
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

// encodeValue stores an item as formatV1, then Version, Count, ExpiresAt as varints, then Data raw.
func encodeValue(it store.Item) []byte {
	v := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(it.Data))
	v = append(v, formatV1)
	v = binary.AppendVarint(v, it.Version)
	v = binary.AppendVarint(v, it.Count)
	v = binary.AppendVarint(v, it.ExpiresAt)
	return append(v, it.Data...)
}

// parseValue splits a stored value into the item's Version, Count and ExpiresAt, and its data (bbolt's
// bytes: valid inside the transaction only).
func parseValue(v []byte) (store.Item, []byte, error) {
	if len(v) == 0 || v[0] != formatV1 {
		return store.Item{}, nil, errors.New("unknown value format")
	}
	rest := v[1:]
	var fields [3]int64
	for i := range fields {
		x, n := binary.Varint(rest)
		if n <= 0 {
			return store.Item{}, nil, errors.New("corrupt value")
		}
		fields[i], rest = x, rest[n:]
	}
	return store.Item{Version: fields[0], Count: fields[1], ExpiresAt: fields[2]}, rest, nil
}

// liveAt reports whether it has not expired at now (Unix seconds).
func liveAt(it store.Item, now int64) bool { return it.ExpiresAt == 0 || it.ExpiresAt > now }

// liveItem reads the item at k, its data copied out; ok is false when there is none or it has expired.
func liveItem(b *bbolt.Bucket, k []byte, key store.Key, now int64) (store.Item, bool, error) {
	v := b.Get(k)
	if v == nil {
		return store.Item{}, false, nil
	}
	it, data, err := parseValue(v)
	if err != nil {
		return store.Item{}, false, fmt.Errorf("bolt: item %s: %w", key, err)
	}
	if !liveAt(it, now) {
		return store.Item{}, false, nil
	}
	it.Key = key
	if len(data) > 0 {
		it.Data = bytes.Clone(data)
	}
	return it, true, nil
}
