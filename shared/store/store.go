package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/apperr"
)

// Store holds every access pattern of the product, each named after what it does, written once on top of
// a Table. Domain packages declare the small interfaces they need; *Store satisfies them.
//
// # Table design (one table, PK/SK strings, no GSIs)
//
// Channel partition, PK = "CH#<channelId>":
//
//	SK "CHANNEL"                 channel metadata (account, name)
//	SK "PROFILE"                 niche profile (full replace)
//	SK "RESEARCH"                research patterns
//	SK "VIDEO#<uuidv7>"          committed video, with its status history
//	SK "IDEA#<uuidv7>"           backlog idea
//	SK "SCHEDULE"                weekly template: every slot in one versioned item
//	SK "WEEK#<yyyy-mm-dd>"       per-week assignments of videos to publish slots (versioned)
//	SK "SERIES#<uuidv7>"         content series; its videoCount moves, by what shared/videos decides, in
//	                             the transaction that writes the video
//	SK "NOTE#<uuidv7>"           creator note
//	SK "RUN#<uuidv7>"            tool run, whole (generation history; uuidv7 sorts by creation time)
//	SK "RUNX#<uuidv7>"           its summary for search; "RUNA#<uuidv7>", "RUNT#<tool>#<uuidv7>": its
//	                             index entries (runs.go)
//	SK "COUNT#<what>"            counters that enforce per-channel limits atomically (series, notes, ...)
//	                             and count runs (runs, runs#<tool>)
//
// Account partition, PK = "ACCT#<accountId>":
//
//	SK "ACCOUNT"                 account (accessUntil, channel ids)
//	SK "KEY#<keyId>"             API key metadata (prefix, hash, channel, revokedAt)
//	SK "COUNT#keys"              live keys (at most 5, decision 2)
//
// Key lookup, PK = "KEYHASH#<sha256 hex>", SK = "KEY": the key's account and channel, so authentication is
// one GetItem without a GSI.
//
// # Stored format (versioned apart from the API shape)
//
// An item's Data is one format byte followed by the record's JSON; Data that starts with anything else
// (in practice '{') is format 1, written before formats were numbered: the JSON of the API type of the
// time. Each entity has a record struct per stored format (records.go), and its readers convert every
// format they know to the domain value; the json tags of domain and API types never decide what is stored.
//   - A change to an entity's stored shape gets a new format number and record struct; readers keep
//     decoding every older format (with defaults for what it lacks), so no stored item is rewritten for a
//     change of shape. An item moves to the current format when it is next written.
//   - A format is read before it is written: one build learns to read a new format, a later one writes it,
//     so during a rolling deploy no reader meets a format it does not know. An unknown format is an error,
//     never a guess.
//   - Where a list serves stored JSON as it is (videos, for GET /my-videos), the current format's JSON is
//     the API shape byte for byte and only older formats go through the conversion; when the API shape of
//     such an entity changes, its stored format changes with it.
//
// Why no GSI: every read is scoped to a channel or account the caller already knows, and the one
// cross-partition lookup (API key -> principal) is served by the KEYHASH item written in the same
// transaction as the key.
type Store struct {
	t     Table
	now   func() time.Time
	newID func() string
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithIDs sets the id generator (tests).
func WithIDs(newID func() string) Option { return func(s *Store) { s.newID = newID } }

// New returns a Store over t.
func New(t Table, opts ...Option) *Store {
	s := &Store{t: t, now: time.Now, newID: newUUIDv7}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Table returns the table the store runs on (health checks).
func (s *Store) Table() Table { return s.t }

// NewID returns a new time-ordered UUID (v7), so SKs built from ids sort by creation time.
func (s *Store) NewID() string { return s.newID() }

// Now is the store's clock, in UTC, truncated to milliseconds (what JSON round-trips keep).
func (s *Store) Now() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

func newUUIDv7() string {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 only fails when the system's random source fails; nothing sensible can go on.
		panic(fmt.Sprintf("uuid: %v", err))
	}
	return id.String()
}

// Partition and sort-key builders: the one place the key layout is spelled.
func channelPK(channelID string) string { return "CH#" + channelID }
func accountPK(accountID string) string { return "ACCT#" + accountID }

const (
	skChannel  = "CHANNEL"
	skProfile  = "PROFILE"
	skResearch = "RESEARCH"
	skSchedule = "SCHEDULE"
	skAccount  = "ACCOUNT"

	prefixVideo  = "VIDEO#"
	prefixIdea   = "IDEA#"
	prefixWeek   = "WEEK#"
	prefixSeries = "SERIES#"
	prefixNote   = "NOTE#"
	prefixRun    = "RUN#"
	prefixKey    = "KEY#"
	prefixCount  = "COUNT#"
)

func channelKey(channelID, sk string) Key       { return Key{PK: channelPK(channelID), SK: sk} }
func accountKey(accountID, sk string) Key       { return Key{PK: accountPK(accountID), SK: sk} }
func counterKey(pk, what string) Key            { return Key{PK: pk, SK: prefixCount + what} }
func channelCounter(channelID, what string) Key { return counterKey(channelPK(channelID), what) }

const (
	// format1 is JSON without a format byte.
	format1 = 1
	// format2 is the first numbered format: the record structs of records.go.
	format2 = 2
	// maxFormat is the newest format this build reads.
	maxFormat = format2
)

// encode builds an item holding v, a record struct, in format 2.
func encode(key Key, v any) (Item, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Item{}, fmt.Errorf("encode %s: %w", key, err)
	}
	data := make([]byte, 1+len(b))
	data[0] = format2
	copy(data[1:], b)
	return Item{Key: key, Data: data}, nil
}

// formatOf returns the stored format of data and its JSON.
func formatOf(data []byte) (int, []byte) {
	if len(data) > 0 && data[0] >= format2 && data[0] < ' ' {
		return int(data[0]), data[1:]
	}
	return format1, data
}

// decode reads an item's record into dst, for the formats whose JSON dst's type reads (today 1 and 2: the
// same fields).
func decode(it Item, dst any) error {
	format, body := formatOf(it.Data)
	if format > maxFormat {
		return fmt.Errorf("decode %s: stored format %d is newer than this build reads (%d)", it.Key, format, maxFormat)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("decode %s: %w", it.Key, err)
	}
	return nil
}

// getJSON reads the item at key into dst and returns its version.
func (s *Store) getJSON(ctx context.Context, key Key, dst any) (int64, error) {
	it, err := s.t.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	return it.Version, decode(it, dst)
}

// orNotFound returns err, or for ErrNotFound a NOT_FOUND apperr saying format's message.
func orNotFound(err error, format string, args ...any) error {
	if errors.Is(err, ErrNotFound) {
		return apperr.NotFoundf(format, args...)
	}
	return err
}

// getAll reads the live items at keys, MaxBatchGet keys a call, in the order of keys.
func (s *Store) getAll(ctx context.Context, keys []Key) ([]Item, error) {
	var all []Item
	for start := 0; start < len(keys); start += MaxBatchGet {
		items, err := s.t.GetMany(ctx, keys[start:min(start+MaxBatchGet, len(keys))])
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
	}
	return all, nil
}

// queryAll follows cursors to read every live item of a partition under prefix.
func (s *Store) queryAll(ctx context.Context, pk, prefix string, desc bool) ([]Item, error) {
	var all []Item
	q := Query{PK: pk, Prefix: prefix, Desc: desc}
	for {
		page, err := s.t.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("query %s %s: %w", pk, prefix, err)
		}
		if all == nil && page.Next == "" {
			return page.Items, nil // one page, the usual case: no copy
		}
		all = append(all, page.Items...)
		if page.Next == "" {
			return all, nil
		}
		q.Cursor = page.Next
	}
}

// countItems counts the live items of a partition under prefix, one page of the table at a time, keeping
// none of them.
func (s *Store) countItems(ctx context.Context, pk, prefix string) (int, error) {
	n := 0
	q := Query{PK: pk, Prefix: prefix}
	for {
		page, err := s.t.Query(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("count %s %s: %w", pk, prefix, err)
		}
		n += len(page.Items)
		if page.Next == "" {
			return n, nil
		}
		q.Cursor = page.Next
	}
}

// queryEach reads every live item of a partition under prefix as a record R, each converted to T.
func queryEach[R, T any](ctx context.Context, s *Store, pk, prefix string, desc bool, to func(R) T) ([]T, error) {
	items, err := s.queryAll(ctx, pk, prefix, desc)
	if err != nil {
		return nil, err
	}
	return decodeEach(items, to)
}

// decodeEach decodes items as records R and converts each to T.
func decodeEach[R, T any](items []Item, to func(R) T) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		var r R
		if err := decode(it, &r); err != nil {
			return nil, err
		}
		out = append(out, to(r))
	}
	return out, nil
}

// decodeAll decodes items into a slice of T.
func decodeAll[T any](items []Item) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		var v T
		if err := decode(it, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// deleteEach deletes the item at key(x) for each x of xs, MaxTransactOps deletes a write.
func deleteEach[T any](ctx context.Context, s *Store, xs []T, key func(T) Key) error {
	for start := 0; start < len(xs); start += MaxTransactOps {
		var ops []Op
		for _, x := range xs[start:min(start+MaxTransactOps, len(xs))] {
			ops = append(ops, Delete(key(x), Always))
		}
		if err := s.write(ctx, ops...); err != nil {
			return err
		}
	}
	return nil
}

func itemKey(it Item) Key { return it.Key }

// conflictRetries bounds how often a write that lost a race to a concurrent transaction is tried again.
const conflictRetries = 4

// write applies ops, trying again when a concurrent transaction on the same items got in first (DynamoDB's
// TransactionConflict). Condition failures are returned at once for the caller to interpret; a write that
// keeps losing the race is a CONFLICT for the client to retry (decision 6), not a server error.
func (s *Store) write(ctx context.Context, ops ...Op) error {
	for attempt := 0; attempt < conflictRetries; attempt++ {
		err := s.t.Write(ctx, ops...)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
	}
	return &apperr.Error{Code: apperr.Conflict, Message: "the record is being changed concurrently; try again", Cause: ErrConflict}
}

// Ping reads one item, to tell whether the table answers (health checks). A missing item is an answer.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.t.Get(ctx, Key{PK: "HEALTH", SK: "HEALTH"})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
