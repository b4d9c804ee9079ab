package store_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/ratelimit"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

func TestKeyLeases(t *testing.T) { backends(t, testKeyLeases) }

// liveKey stores an account, its channel and a live key, and returns them with the key's hash.
func liveKey(t *testing.T, s *store.Store) (accounts.Account, accounts.Channel, accounts.APIKey, string) {
	t.Helper()
	a := newAccount(t, s)
	ch := newChannel(t, s, a.ID)
	k, hash := newKey(s, a.ID, ch.ID)
	if err := s.CreateKey(context.Background(), k, hash, 5); err != nil {
		t.Fatal(err)
	}
	return a, ch, k, hash
}

// testKeyLeases (issue 21): a key's rate windows are counters on its lookup item. A lease returns the key's
// record, also when refused (so 429 and 401 are told apart); a lease of 0 only reads; an access change
// rewrites the record and keeps the counts; a revoked key's lease finds nothing (401 through TakeCalls).
func testKeyLeases(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a, ch, k, hash := liveKey(t, s)
	start := time.Now().UTC().Truncate(time.Minute)
	w := ratelimit.Window{Subject: ratelimit.Subject(hash, a.ID), Group: "other", Start: start, End: start.Add(time.Minute)}
	lease := func(n, limit, wantCount int64, wantOK bool) {
		t.Helper()
		rec, count, ok, err := s.LeaseKey(ctx, hash, w, n, limit)
		if err != nil || count != wantCount || ok != wantOK || rec.ID != k.ID || rec.ChannelID != ch.ID || !rec.AccountCarried {
			t.Fatalf("LeaseKey(%d of %d) = %+v, %d, %v, %v; want count %d, ok %v, the key's record", n, limit, rec, count, ok, err, wantCount, wantOK)
		}
	}
	lease(1, 10, 1, true)
	lease(8, 10, 9, true)
	lease(2, 10, 10, false) // refused, the record still comes back
	lease(0, 0, 9, true)    // a read
	if n, err := s.CallCount(ctx, w); err != nil || n != 9 {
		t.Fatalf("CallCount = %d, %v; want 9", n, err)
	}
	if _, err := s.SetAccessUntil(ctx, a.ID, day.AddDate(2, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CallCount(ctx, w); err != nil || n != 9 {
		t.Fatalf("after an access change CallCount = %d, %v; want 9 (the count kept)", n, err)
	}
	if rec, _, _, err := s.LeaseKey(ctx, hash, w, 1, 10); err != nil || !rec.AccessUntil.Equal(day.AddDate(2, 0, 0)) {
		t.Fatalf("after an access change the lease returned %+v, %v; want the new access end", rec, err)
	}
	if _, err := s.RevokeKey(ctx, a.ID, k.ID, day); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.LeaseKey(ctx, hash, w, 1, 10); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("LeaseKey of a revoked key: %v; want NOT_FOUND", err)
	}
	if _, _, err := s.TakeCalls(ctx, w, 1, 10); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("TakeCalls of a revoked key: %v; want UNAUTHORIZED", err)
	}
}

// TestKeyCountersStayBounded: a key's item keeps its stale counters bounded (the leases' own logic, the
// same on every adapter; AddCounter's conformance is storetest's). A key called every minute in both
// groups holds only the current and previous window's counter of each (each lease drops its group's older
// ones); one
// called every 7 minutes never holds more than 3 stale counters after a lease, nor more than 9 in all.
func TestKeyCountersStayBounded(t *testing.T) {
	for _, c := range []struct {
		name             string
		every            time.Duration
		maxAll, maxStale int
	}{
		// Between its two groups' leases of a window, the other group's counter of two windows back.
		{"every minute", time.Minute, 4, 1},
		{"every 7 minutes", 7 * time.Minute, 9, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			tbl := memstore.New(t)
			s := store.New(tbl)
			a, _, _, hash := liveKey(t, s)
			start := time.Now().UTC().Truncate(time.Minute)
			most := 0
			for i := range 20 {
				at := start.Add(time.Duration(i) * c.every)
				for _, group := range []string{"other", "generation"} {
					w := ratelimit.Window{Subject: ratelimit.Subject(hash, a.ID), Group: group, Start: at, End: at.Add(time.Minute)}
					if _, _, ok, err := s.LeaseKey(ctx, hash, w, 1, 60); err != nil || !ok {
						t.Fatalf("lease %d: %v, %v", i, ok, err)
					}
					it, err := tbl.Get(ctx, store.Key{PK: "KEYHASH#" + hash, SK: "KEY"})
					if err != nil {
						t.Fatal(err)
					}
					stale := 0
					for name := range it.Counters {
						_, unix, _ := strings.Cut(name, "@")
						if n, err := strconv.ParseInt(unix, 10, 64); err != nil || n < at.Add(-time.Minute).Unix() {
							stale++
						}
					}
					most = max(most, len(it.Counters))
					if len(it.Counters) > c.maxAll || stale > c.maxStale {
						t.Fatalf("after lease %d (%s) the item holds %d counters, %d stale: %v; at most %d, %d stale",
							i, group, len(it.Counters), stale, it.Counters, c.maxAll, c.maxStale)
					}
				}
			}
			t.Logf("at most %d counters on the key's item", most)
		})
	}
}

func TestAccountLeases(t *testing.T) { backends(t, testAccountLeases) }

// testAccountLeases (issue 21): a session's rate windows are counters on its account's item, leased the way
// a key's are. A lease returns what authentication needs of the account, also when refused; a lease of 0
// only reads; every rewrite of the account (a channel, a key, an access change: each under the account's
// version) keeps the counts, and a lease leaves the version alone, so neither disturbs the other; a lease
// of an account that does not exist finds nothing (401 through TakeCalls) and creates nothing.
func testAccountLeases(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	start := time.Now().UTC().Truncate(time.Minute)
	w := ratelimit.Window{Subject: ratelimit.Subject("", a.ID), Group: "other", Start: start, End: start.Add(time.Minute)}
	lease := func(n, limit, wantCount int64, wantOK bool, wantChannels int) {
		t.Helper()
		rec, count, ok, err := s.LeaseAccount(ctx, a.ID, w, n, limit)
		if err != nil || count != wantCount || ok != wantOK || rec.ID != a.ID || len(rec.ChannelIDs) != wantChannels ||
			!rec.AccessUntil.Equal(a.AccessUntil) {
			t.Fatalf("LeaseAccount(%d of %d) = %+v, %d, %v, %v; want count %d, ok %v, the account with %d channels",
				n, limit, rec, count, ok, err, wantCount, wantOK, wantChannels)
		}
	}
	lease(1, 10, 1, true, 0)
	lease(8, 10, 9, true, 0)
	lease(2, 10, 10, false, 0) // refused, the record still comes back
	lease(0, 0, 9, true, 0)    // a read
	ch := newChannel(t, s, a.ID)
	k, hash := newKey(s, a.ID, ch.ID)
	if err := s.CreateKey(ctx, k, hash, 5); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CallCount(ctx, w); err != nil || n != 9 {
		t.Fatalf("after a channel and a key CallCount = %d, %v; want 9 (the count kept)", n, err)
	}
	acctKey := store.Key{PK: "ACCT#" + a.ID, SK: "ACCOUNT"}
	before, err := s.Table().Get(ctx, acctKey)
	if err != nil {
		t.Fatal(err)
	}
	lease(1, 10, 10, true, 1)
	if after, err := s.Table().Get(ctx, acctKey); err != nil || after.Version != before.Version {
		t.Fatalf("a lease changed the account's version: %d → %d, %v", before.Version, after.Version, err)
	}
	a.AccessUntil = day.AddDate(2, 0, 0)
	if _, err := s.SetAccessUntil(ctx, a.ID, a.AccessUntil); err != nil {
		t.Fatalf("an access change after leases (the account's version must be the one it read): %v", err)
	}
	if n, err := s.CallCount(ctx, w); err != nil || n != 10 {
		t.Fatalf("after an access change CallCount = %d, %v; want 10", n, err)
	}
	lease(0, 0, 10, true, 1)
	if _, err := s.Account(ctx, a.ID); err != nil {
		t.Fatal(err)
	}

	gone := ratelimit.Window{Subject: ratelimit.Subject("", "acct-none"), Group: "other", Start: start, End: start.Add(time.Minute)}
	if _, _, _, err := s.LeaseAccount(ctx, "acct-none", gone, 1, 10); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("LeaseAccount of no account: %v; want NOT_FOUND", err)
	}
	if _, _, err := s.TakeCalls(ctx, gone, 1, 10); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("TakeCalls of no account: %v; want UNAUTHORIZED", err)
	}
	if _, err := s.Account(ctx, "acct-none"); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("a lease created the account: %v", err)
	}
	if _, _, err := s.TakeCalls(ctx, ratelimit.Window{Subject: "team:x", Group: "other", Start: start, End: start.Add(time.Minute)}, 1, 10); err == nil {
		t.Fatal("TakeCalls counted a subject that is neither a key nor an account")
	}
}

// conflictingTable refuses the first conflicts AddCounters with ErrConflict, as DynamoDB refuses a single
// write to an item a transaction is rewriting.
type conflictingTable struct {
	store.Table
	conflicts, calls int
}

func (c *conflictingTable) AddCounter(ctx context.Context, k store.Key, name string, delta, max int64, drop []string) (store.Item, error) {
	c.calls++
	if c.calls <= c.conflicts {
		return store.Item{}, store.ErrConflict
	}
	return c.Table.AddCounter(ctx, k, name, delta, max, drop)
}

// TestLeaseTriesAgainAfterAConflict: a lease that meets a transaction on its item (an account or key
// change) is tried again, a few times, rather than failing the request.
func TestLeaseTriesAgainAfterAConflict(t *testing.T) {
	ctx := context.Background()
	tbl := &conflictingTable{Table: memstore.New(t)}
	s := store.New(tbl)
	a := newAccount(t, s)
	start := time.Now().UTC().Truncate(time.Minute)
	w := ratelimit.Window{Subject: ratelimit.Subject("", a.ID), Group: "other", Start: start, End: start.Add(time.Minute)}
	tbl.conflicts, tbl.calls = 2, 0
	if _, count, ok, err := s.LeaseAccount(ctx, a.ID, w, 1, 10); err != nil || !ok || count != 1 {
		t.Fatalf("a lease after 2 conflicts: %d, %v, %v", count, ok, err)
	}
	if tbl.calls != 3 {
		t.Errorf("%d AddCounter calls; want 3", tbl.calls)
	}
	tbl.conflicts, tbl.calls = 1000, 0
	if _, _, _, err := s.LeaseAccount(ctx, a.ID, w, 1, 10); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a lease that always meets a transaction: %v; want ErrConflict", err)
	}
	if tbl.calls < 2 || tbl.calls > 10 {
		t.Errorf("%d AddCounter calls before giving up; want a few", tbl.calls)
	}
}
