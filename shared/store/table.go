package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
)

// Table is the port every storage adapter implements: a DynamoDB-shaped single table of items addressed by
// (PK, SK), sorted by SK inside a partition, with conditional single writes and all-or-nothing transactions.
// The access patterns of the product are written once, in Store, on top of it; the adapters (dynamo, pebble)
// only speak their system. The conformance suite in storetest pins down every rule below.
type Table interface {
	// Get returns the item at key, or ErrNotFound (also for an expired item).
	Get(ctx context.Context, key Key) (Item, error)
	// GetMany returns the items that exist at keys, in the order of keys; missing and expired keys are left
	// out. At most MaxBatchGet keys, no key twice.
	GetMany(ctx context.Context, keys []Key) ([]Item, error)
	// Query returns one page of the items of a partition whose SK starts with q.Prefix, in SK order
	// (descending with q.Desc), skipping expired items. Page.Next is empty on the last page.
	Query(ctx context.Context, q Query) (Page, error)
	// Write applies ops atomically: either every op's condition holds and all are applied, or none is.
	// One op is a single conditional write; several form a transaction (at most MaxTransactOps, no key
	// twice). A failed condition returns a *ConditionFailedError naming the first failing op; a concurrent
	// transaction on the same items returns ErrConflict (nothing applied; the caller may retry).
	Write(ctx context.Context, ops ...Op) error
	// Increment applies one OpIncr alone, like Write, and returns the counter's Count after it. It is for
	// short-lived counters such as rate-limit windows: an adapter may acknowledge it before it is durable,
	// so a crash can forget the latest increments. Limits that must survive a crash go through Write.
	Increment(ctx context.Context, op Op) (int64, error)
	// AddCounter adds delta to the named counter name of the live item at key (a counter it does not hold
	// counts 0), unless the result would leave [0, max] (max <= 0: no upper bound), and removes the counters
	// named in drop (those it does not hold are ignored), in one conditional write (DynamoDB: one UpdateItem
	// returning the item). It changes nothing else of the item. It returns the item as written, its counters
	// included. When the result would leave the bounds nothing is written, and it returns the item as stored
	// with a *ConditionFailedError (index 0); when there is no live item at key, ErrNotFound (nothing is
	// created); when a concurrent transaction is writing the item, ErrConflict (nothing applied; the caller
	// may retry). Like Increment, an adapter may acknowledge it before it is durable. name and drop are
	// checked by CheckCounters.
	AddCounter(ctx context.Context, key Key, name string, delta, max int64, drop []string) (Item, error)
}

const (
	// MaxBatchGet is the most keys one GetMany takes (DynamoDB's BatchGetItem limit).
	MaxBatchGet = 100
	// MaxTransactOps is the most ops one Write takes (DynamoDB allows 100; we stay well below).
	MaxTransactOps = 25
)

// Key addresses one item.
type Key struct {
	PK string
	SK string
}

func (k Key) String() string { return k.PK + "|" + k.SK }

// Item is what the table stores at a key.
type Item struct {
	Key
	// Data is the entity, JSON-encoded. Counter items have none.
	Data []byte
	// Version is the optimistic-lock version of the item as written (see IfVersion).
	Version int64
	// Count is the value of a counter item (see OpIncr).
	Count int64
	// ExpiresAt is a Unix time in seconds after which the item is treated as absent by every read and
	// condition (DynamoDB TTL deletes it later). Zero means never.
	ExpiresAt int64
	// Counters are the item's named counters (see AddCounter), nil when it holds none. Every read returns
	// them; OpPut writes them as given (so a Put without them removes the stored ones).
	Counters map[string]int64
}

// Cond is the condition an op's target item must meet for the write to apply.
type Cond int

const (
	// Always applies the op whatever is stored.
	Always Cond = iota
	// IfExists requires a live (present, unexpired) item at the key.
	IfExists
	// IfNotExists requires no live item at the key.
	IfNotExists
	// IfVersion requires a live item whose Version equals Op.Version.
	IfVersion
)

// OpKind says what an op does.
type OpKind int

const (
	// OpPut writes Op.Item whole (Data, Version, Count, ExpiresAt, Counters), replacing any item at its key.
	OpPut OpKind = iota
	// OpDelete removes the item at Op.Item.Key (no error when absent, unless Cond says so).
	OpDelete
	// OpCheck writes nothing; it only asserts Cond on the item at Op.Item.Key (inside a transaction).
	OpCheck
	// OpIncr adds Op.Delta to the Count of the counter item at Op.Item.Key, creating it at 0 first when
	// absent (or expired). It fails its condition when the result would leave [0, Op.Max] (Op.Max <= 0: no
	// upper bound). A non-zero Op.Item.ExpiresAt becomes the counter's ExpiresAt; zero leaves it as it was.
	// Cond must be Always. Counter items hold only a Count (and an ExpiresAt).
	OpIncr
)

// Op is one write.
type Op struct {
	Kind OpKind
	Item Item
	Cond Cond
	// Version is the stored version required by IfVersion.
	Version int64
	// Delta and Max are for OpIncr.
	Delta int64
	Max   int64
	// KeepCounters, for an OpPut whose Item has no Counters, keeps the stored item's named counters
	// instead of removing them (DynamoDB: an UpdateItem setting the other attributes): a record rewritten
	// by a transaction does not reset the counters that other writers add to (AddCounter).
	KeepCounters bool
}

// CondHolds reports whether op's condition holds for the item at its key: live says a live item is there,
// version is its Version. For the adapter that checks conditions itself (pebble).
func (op Op) CondHolds(live bool, version int64) bool {
	switch op.Cond {
	case IfExists:
		return live
	case IfNotExists:
		return !live
	case IfVersion:
		return live && version == op.Version
	default:
		return true
	}
}

// NextCount returns count+delta and whether it lies in [0, max] (max <= 0: no upper bound), as OpIncr
// requires; an int64 overflow is out of bounds too.
func NextCount(count, delta, max int64) (int64, bool) {
	if delta > 0 && count > math.MaxInt64-delta || delta < 0 && count < math.MinInt64-delta {
		return 0, false
	}
	n := count + delta
	return n, n >= 0 && (max <= 0 || n <= max)
}

// Put is an OpPut of item under cond.
func Put(item Item, cond Cond) Op { return Op{Kind: OpPut, Item: item, Cond: cond} }

// PutKeepingCounters is an OpPut of item under cond that keeps the stored item's named counters.
func PutKeepingCounters(item Item, cond Cond) Op {
	return Op{Kind: OpPut, Item: item, Cond: cond, KeepCounters: true}
}

// PutIfVersion replaces the item only if the stored version is `was`; the written item carries was+1.
func PutIfVersion(item Item, was int64) Op {
	item.Version = was + 1
	return Op{Kind: OpPut, Item: item, Cond: IfVersion, Version: was}
}

// Delete is an OpDelete of key under cond.
func Delete(key Key, cond Cond) Op { return Op{Kind: OpDelete, Item: Item{Key: key}, Cond: cond} }

// Check is an OpCheck of key under cond.
func Check(key Key, cond Cond) Op { return Op{Kind: OpCheck, Item: Item{Key: key}, Cond: cond} }

// Incr adds delta to the counter at key, keeping it within [0, max] (max <= 0: unbounded above).
func Incr(key Key, delta, max int64) Op {
	return Op{Kind: OpIncr, Item: Item{Key: key}, Delta: delta, Max: max}
}

// IncrUntil is Incr of a counter that expires at expiresAt (Unix seconds), e.g. one window of a rate limit.
func IncrUntil(key Key, delta, max, expiresAt int64) Op {
	op := Incr(key, delta, max)
	op.Item.ExpiresAt = expiresAt
	return op
}

// Query selects items of one partition.
type Query struct {
	PK     string
	Prefix string
	Desc   bool
	// Limit caps the items of the page; 0 lets the adapter fill a page (DynamoDB: up to 1 MB).
	Limit int
	// Cursor continues after the page that returned it. A cursor that does not decode, or whose SK does not
	// start with Prefix, answers ErrBadCursor.
	Cursor string
}

// Page is one page of a Query.
type Page struct {
	Items []Item
	Next  string
}

var (
	// ErrNotFound: no live item at the key.
	ErrNotFound = errors.New("store: item not found")
	// ErrConditionFailed is matched (errors.Is) by every *ConditionFailedError.
	ErrConditionFailed = errors.New("store: condition failed")
	// ErrConflict: a concurrent transaction touched the same items; nothing was applied.
	ErrConflict = errors.New("store: transaction conflict")
	// ErrBadCursor: a cursor that no Query of this partition returned.
	ErrBadCursor = errors.New("store: invalid cursor")
)

// ConditionFailedError names the op of a Write whose condition did not hold.
type ConditionFailedError struct {
	// Index is the position of the failing op in the Write call.
	Index int
}

func (e *ConditionFailedError) Error() string {
	return fmt.Sprintf("store: condition of op %d failed", e.Index)
}

func (e *ConditionFailedError) Is(target error) bool { return target == ErrConditionFailed }

// FailedOp returns the index of the op whose condition failed, or -1.
func FailedOp(err error) int {
	var cf *ConditionFailedError
	if errors.As(err, &cf) {
		return cf.Index
	}
	return -1
}

// EncodeCursor turns the last SK of a page into an opaque cursor; DecodeCursor reverses it. Both adapters
// use them so cursors look alike whatever the backend.
func EncodeCursor(lastSK string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(lastSK))
}

// DecodeCursor returns the SK a cursor continues after, or ErrBadCursor.
func DecodeCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 {
		return "", ErrBadCursor
	}
	return string(b), nil
}

// Scanner lists partitions across the whole table, for one-off migrations (infra/admin) only: DynamoDB
// answers it with a Scan, which reads every item, so no request path calls it. Every adapter implements it.
type Scanner interface {
	// PartitionsWith returns, in no set order, the PKs starting with pkPrefix that hold a live item at SK sk.
	PartitionsWith(ctx context.Context, pkPrefix, sk string) ([]string, error)
}
