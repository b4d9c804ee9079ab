package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/ratelimit"
)

// Rate-limit windows (ratelimit.Counter).
//
// An API key's windows live on its lookup item (KEYHASH#<hash>), one named counter per group and window,
// "<group>@<window start, Unix s>" (issue 21): a lease is one UpdateItem on that item that returns the key's
// record too, so a cold request reads its key and leases its calls in one table call (LeaseKey), and a
// lease of a revoked key (its item deleted) fails. A session's windows (an account's) are items of their
// own, PK = "RATE#<subject>", SK = "<group>#<window start, Unix s>": one counter item per subject, group
// and minute, created by its first call and left to expire (TTL) a window after its end.
//
// Either way a new window is a new counter, so no call resets one, and a window's counter outlives its end
// by a window, which leaves room for Lambda instances whose clocks lag a little. A key's item has no TTL,
// so its old counters are removed by the leases themselves: each lease drops its group's counters of the
// staleDrops windows before the previous one (absent ones cost nothing), which keeps a key called at least
// every few minutes at its live counters; and when a lease's answer shows more than maxStaleCounters stale
// counters (a key called rarely, by cold instances), one more write drops them. So after any lease the item
// holds at most maxStaleCounters stale counters besides the current and previous window's of each group
// (4, with the two groups); time may turn those 4 stale before the next lease, which adds one: never more
// than 3 + 4 + 2 = 9 counters, about 250 bytes, which keeps the item (about 250 bytes of record) under
// DynamoDB's 1 KB write unit.

func rateWindowKey(w ratelimit.Window) Key {
	return Key{PK: "RATE#" + w.Subject, SK: w.Group + "#" + strconv.FormatInt(w.Start.Unix(), 10)}
}

func rateWindowExpiry(w ratelimit.Window) int64 { return w.End.Add(w.End.Sub(w.Start)).Unix() }

const (
	// staleDrops is how many windows before the previous one each lease of a key drops its group's counter of.
	staleDrops = 4
	// maxStaleCounters is the most stale counters a key's item keeps after a lease (see above).
	maxStaleCounters = 3
)

// keyWindowCounter names w's counter on a key's lookup item.
func keyWindowCounter(group string, start time.Time) string {
	return group + "@" + strconv.FormatInt(start.Unix(), 10)
}

// staleCounter reports whether a counter of a key's item belongs to a window before w's previous one.
func staleCounter(name string, w ratelimit.Window) bool {
	_, start, ok := strings.Cut(name, "@")
	if !ok {
		return false
	}
	unix, err := strconv.ParseInt(start, 10, 64)
	return err == nil && unix < w.Start.Add(-w.End.Sub(w.Start)).Unix()
}

// LeaseKey leases n calls of w for the API key with this hash unless w would then hold more than limit,
// and returns the key's record, in one conditional write on the key's lookup item (DynamoDB: one UpdateItem
// returning the item, also when the lease is refused). count is the window's count after the lease; when
// refused (ok false) nothing is taken and count is limit. n = 0 takes nothing and only reads the key (and
// the window's count), still as that UpdateItem, so the functions that lease reach key items by UpdateItem
// alone. No live key with this hash: NOT_FOUND.
func (s *Store) LeaseKey(ctx context.Context, hash string, w ratelimit.Window, n, limit int64) (rec auth.KeyRecord, count int64, ok bool, err error) {
	if n < 0 {
		return auth.KeyRecord{}, 0, false, fmt.Errorf("store: a lease of %d calls", n)
	}
	k := keyHashKey(hash)
	name := keyWindowCounter(w.Group, w.Start)
	drop := make([]string, 0, staleDrops)
	for i := range staleDrops {
		drop = append(drop, keyWindowCounter(w.Group, w.Start.Add(-time.Duration(i+2)*w.End.Sub(w.Start))))
	}
	max := limit
	if n == 0 {
		max = 0 // a read: no bound to fail
	}
	it, err := s.t.AddCounter(ctx, k, name, n, max, drop)
	switch {
	case errors.Is(err, ErrNotFound):
		return auth.KeyRecord{}, 0, false, keyNotFound()
	case errors.Is(err, ErrConditionFailed):
		count, ok = limit, false
	case err != nil:
		return auth.KeyRecord{}, 0, false, err
	default:
		count, ok = it.Counters[name], true
	}
	if rec, err = keyRecord(it); err != nil {
		return auth.KeyRecord{}, 0, false, err
	}
	var stale []string
	for c := range it.Counters {
		if staleCounter(c, w) {
			stale = append(stale, c)
		}
	}
	if len(stale) > maxStaleCounters {
		slices.Sort(stale)
		// Adding 0 to the window's counter only drops; its bound cannot fail. A key revoked meanwhile
		// leaves nothing to clean.
		_, err := s.t.AddCounter(ctx, k, name, 0, 0, stale[:min(len(stale), MaxCountersDropped)])
		if err != nil && !errors.Is(err, ErrNotFound) {
			return auth.KeyRecord{}, 0, false, fmt.Errorf("store: drop the stale rate counters of a key: %w", err)
		}
	}
	return rec, count, ok, nil
}

// TakeCalls leases n calls of w unless w would then hold more than limit: one conditional add (DynamoDB:
// one UpdateItem, ADD under a condition). An API key's windows are on its lookup item (LeaseKey): a key
// revoked since its identity was cached answers 401 here.
func (s *Store) TakeCalls(ctx context.Context, w ratelimit.Window, n, limit int64) (int64, bool, error) {
	if n < 1 {
		return 0, false, fmt.Errorf("store: a lease of %d calls", n)
	}
	if hash, ok := ratelimit.KeyHashOf(w.Subject); ok {
		_, count, ok, err := s.LeaseKey(ctx, hash, w, n, limit)
		if apperr.CodeOf(err) == apperr.NotFound {
			return 0, false, auth.KeyRevoked()
		}
		return count, ok, err
	}
	count, err := s.t.Increment(ctx, IncrUntil(rateWindowKey(w), n, limit, rateWindowExpiry(w)))
	if errors.Is(err, ErrConditionFailed) {
		return limit, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return count, true, nil
}

// CallCount returns the calls w holds (0 before its first, and for a key that is gone).
func (s *Store) CallCount(ctx context.Context, w ratelimit.Window) (int64, error) {
	if hash, ok := ratelimit.KeyHashOf(w.Subject); ok {
		it, err := s.t.Get(ctx, keyHashKey(hash))
		if errors.Is(err, ErrNotFound) {
			return 0, nil
		}
		return it.Counters[keyWindowCounter(w.Group, w.Start)], err
	}
	it, err := s.t.Get(ctx, rateWindowKey(w))
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return it.Count, err
}
