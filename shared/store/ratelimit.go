package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/ratelimit"
)

// Rate-limit windows (ratelimit.Counter).
//
// A subject's windows live on the item that authenticates it, one named counter per group and window,
// "<group>@<window start, Unix s>" (issue 21): an API key's on its lookup item (KEYHASH#<hash>), a
// session's on its account's item. A lease is one UpdateItem on that item that returns the item too, so a
// cold request reads its credential's record and leases its calls in one table call (LeaseKey,
// LeaseAccount), and a lease of a revoked key or a gone account (its item deleted) fails. Neither item
// is rewritten without its counters: a key's lookup item is written only when created, and the account's
// rewrites keep them (putAccount).
//
// A new window is a new counter, so no call resets one, and a window's counter outlives its end by a
// window, which leaves room for Lambda instances whose clocks lag a little. These items have no TTL, so
// their old counters are removed by the leases themselves: each lease drops its group's counters of the
// staleDrops windows before the previous one (absent ones cost nothing), which keeps a subject called at
// least every few minutes at its live counters; and when a lease's answer shows more than
// maxStaleCounters stale counters (a subject called rarely, by cold instances), one more write drops
// them. So after any lease the item holds at most maxStaleCounters stale counters besides the current and
// previous window's of each group (4, with the two groups); time may turn those 4 stale before the next
// lease, which adds one: never more than 3 + 4 + 2 = 9 counters, about 250 bytes, which keeps a key's
// item (about 250 bytes of record) under DynamoDB's 1 KB write unit, and adds at most that to an
// account's.

const (
	// staleDrops is how many windows before the previous one each lease drops its group's counter of.
	staleDrops = 4
	// maxStaleCounters is the most stale counters an item keeps after a lease (see above).
	maxStaleCounters = 3
)

// windowCounter names w's counter on its subject's item.
func windowCounter(group string, start time.Time) string {
	return group + "@" + strconv.FormatInt(start.Unix(), 10)
}

// staleCounter reports whether a counter belongs to a window before w's previous one.
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
	it, count, ok, err := s.lease(ctx, keyHashKey(hash), w, n, limit)
	if errors.Is(err, ErrNotFound) {
		return auth.KeyRecord{}, 0, false, keyNotFound()
	}
	if err != nil {
		return auth.KeyRecord{}, 0, false, err
	}
	if rec, err = keyRecord(it); err != nil {
		return auth.KeyRecord{}, 0, false, err
	}
	return rec, count, ok, nil
}

// LeaseAccount is LeaseKey for a session's account: it leases n calls of w on the account's item and
// returns what authentication needs of the account, in one conditional write. No such account: NOT_FOUND.
func (s *Store) LeaseAccount(ctx context.Context, accountID string, w ratelimit.Window, n, limit int64) (rec auth.AccountRecord, count int64, ok bool, err error) {
	it, count, ok, err := s.lease(ctx, accountKey(accountID, skAccount), w, n, limit)
	if errors.Is(err, ErrNotFound) {
		return auth.AccountRecord{}, 0, false, apperr.NotFoundf("account not found")
	}
	if err != nil {
		return auth.AccountRecord{}, 0, false, err
	}
	var a accountRecord
	if err := decode(it, &a); err != nil {
		return auth.AccountRecord{}, 0, false, err
	}
	return authAccount(accounts.Account(a)), count, ok, nil
}

// lease adds n to w's counter on the item at k unless that passes limit (refused: ok false, count limit,
// the item as stored), drops the group's stale counters, and returns the item. No live item: ErrNotFound.
func (s *Store) lease(ctx context.Context, k Key, w ratelimit.Window, n, limit int64) (it Item, count int64, ok bool, err error) {
	if n < 0 {
		return Item{}, 0, false, fmt.Errorf("store: a lease of %d calls", n)
	}
	name := windowCounter(w.Group, w.Start)
	drop := make([]string, 0, staleDrops)
	for i := range staleDrops {
		drop = append(drop, windowCounter(w.Group, w.Start.Add(-time.Duration(i+2)*w.End.Sub(w.Start))))
	}
	max := limit
	if n == 0 {
		max = 0 // a read: no bound to fail
	}
	it, err = s.addCounter(ctx, k, name, n, max, drop)
	switch {
	case errors.Is(err, ErrConditionFailed):
		count, ok = limit, false
	case err != nil:
		return Item{}, 0, false, err
	default:
		count, ok = it.Counters[name], true
	}
	var stale []string
	for c := range it.Counters {
		if staleCounter(c, w) {
			stale = append(stale, c)
		}
	}
	if len(stale) > maxStaleCounters {
		slices.Sort(stale)
		// Adding 0 to the window's counter only drops; its bound cannot fail. An item deleted meanwhile
		// leaves nothing to clean.
		_, err := s.addCounter(ctx, k, name, 0, 0, stale[:min(len(stale), MaxCountersDropped)])
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Item{}, 0, false, fmt.Errorf("store: drop the stale rate counters of %s: %w", k, err)
		}
	}
	return it, count, ok, nil
}

// addCounter is Table.AddCounter, tried again while a concurrent transaction is rewriting the item (a key's
// or an account's change: DynamoDB refuses a single write to an item a transaction holds), as write does.
func (s *Store) addCounter(ctx context.Context, k Key, name string, delta, max int64, drop []string) (Item, error) {
	for attempt := 1; ; attempt++ {
		it, err := s.t.AddCounter(ctx, k, name, delta, max, drop)
		if !errors.Is(err, ErrConflict) || attempt == conflictRetries {
			return it, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return Item{}, cerr
		}
	}
}

// TakeCalls leases n calls of w unless w would then hold more than limit: one conditional add on the
// subject's item (DynamoDB: one UpdateItem, ADD under a condition). A key revoked, or an account gone,
// since its identity was cached answers 401 here.
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
	if account, ok := ratelimit.AccountOf(w.Subject); ok {
		_, count, ok, err := s.LeaseAccount(ctx, account, w, n, limit)
		if apperr.CodeOf(err) == apperr.NotFound {
			return 0, false, auth.AccountGone()
		}
		return count, ok, err
	}
	return 0, false, fmt.Errorf("store: rate-limit subject %q is neither a key nor an account", w.Subject)
}

// CallCount returns the calls w holds (0 before its first, and for a key or an account that is gone).
func (s *Store) CallCount(ctx context.Context, w ratelimit.Window) (int64, error) {
	var k Key
	if hash, ok := ratelimit.KeyHashOf(w.Subject); ok {
		k = keyHashKey(hash)
	} else if account, ok := ratelimit.AccountOf(w.Subject); ok {
		k = accountKey(account, skAccount)
	} else {
		return 0, fmt.Errorf("store: rate-limit subject %q is neither a key nor an account", w.Subject)
	}
	it, err := s.t.Get(ctx, k)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return it.Counters[windowCounter(w.Group, w.Start)], err
}
