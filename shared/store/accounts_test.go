package store_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
)

// backends runs test against a store on each adapter: the embedded Pebble database and DynamoDB Local.
func backends(t *testing.T, test func(t *testing.T, s *store.Store)) {
	t.Run("pebble", func(t *testing.T) {
		tbl, err := pebble.Open(t.TempDir() + "/db")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tbl.Close() })
		test(t, store.New(tbl))
	})
	t.Run("dynamodb", func(t *testing.T) {
		ctx := context.Background()
		client, err := dynamo.NewClient(emulatortest.DynamoDB(t), "")
		if err != nil {
			t.Fatal(err)
		}
		name := "css-accounts-" + rand.Text()
		if err := dynamo.CreateTable(ctx, client, name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name}); err != nil {
				t.Errorf("delete table %s: %v", name, err)
			}
		})
		test(t, store.New(dynamo.New(client, name)))
	})
}

func wantCode(t *testing.T, err error, code apperr.Code) {
	t.Helper()
	if got := apperr.CodeOf(err); got != code {
		t.Fatalf("error = %v (code %q), want %s", err, got, code)
	}
}

var day = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

func newAccount(t *testing.T, s *store.Store) accounts.Account {
	t.Helper()
	a := accounts.Account{ID: s.NewID(), AccessUntil: day.AddDate(1, 0, 0), ChannelIDs: []string{}, CreatedAt: day}
	if err := s.CreateAccount(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

func newChannel(t *testing.T, s *store.Store, accountID string) accounts.Channel {
	t.Helper()
	ch := accounts.Channel{ID: s.NewID(), AccountID: accountID, Name: "main", CreatedAt: day}
	if err := s.CreateChannel(context.Background(), ch, accounts.MaxChannelsPerAccount); err != nil {
		t.Fatal(err)
	}
	return ch
}

func newKey(s *store.Store, accountID, channelID string) (accounts.APIKey, string) {
	k := accounts.APIKey{ID: s.NewID(), AccountID: accountID, ChannelID: channelID, Name: "k", Prefix: "sk-css-0000", CreatedAt: day}
	return k, auth.HashKey(auth.NewKey())
}

func TestAccounts(t *testing.T) { backends(t, testAccounts) }

func testAccounts(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	wantCode(t, s.CreateAccount(ctx, a), apperr.Conflict)

	got, err := s.Account(ctx, a.ID)
	if err != nil || got.ID != a.ID || !got.AccessUntil.Equal(a.AccessUntil) || len(got.ChannelIDs) != 0 {
		t.Fatalf("Account = %+v, %v", got, err)
	}
	_, err = s.Account(ctx, "missing")
	wantCode(t, err, apperr.NotFound)

	until := day.AddDate(0, 0, 3)
	updated, err := s.SetAccessUntil(ctx, a.ID, until)
	if err != nil || !updated.AccessUntil.Equal(until) {
		t.Fatalf("SetAccessUntil = %+v, %v", updated, err)
	}
	if got, _ := s.Account(ctx, a.ID); !got.AccessUntil.Equal(until) {
		t.Errorf("stored accessUntil = %v, want %v", got.AccessUntil, until)
	}
	_, err = s.SetAccessUntil(ctx, "missing", until)
	wantCode(t, err, apperr.NotFound)
}

func TestChannels(t *testing.T) { backends(t, testChannels) }

func testChannels(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	ch := newChannel(t, s, a.ID)
	got, err := s.GetChannel(ctx, ch.ID)
	if err != nil || got != ch {
		t.Fatalf("GetChannel = %+v, %v; want %+v", got, err, ch)
	}
	_, err = s.GetChannel(ctx, s.NewID())
	wantCode(t, err, apperr.NotFound)
	wantCode(t, s.CreateChannel(ctx, accounts.Channel{ID: s.NewID(), AccountID: "missing", Name: "x"}, 10), apperr.NotFound)
	wantCode(t, s.CreateChannel(ctx, ch, 10), apperr.Conflict)
	if acct, _ := s.Account(ctx, a.ID); len(acct.ChannelIDs) != 1 || acct.ChannelIDs[0] != ch.ID {
		t.Errorf("channel ids = %v, want [%s] (a refused channel must not be listed)", acct.ChannelIDs, ch.ID)
	}
}

func TestChannelLimitConcurrent(t *testing.T) { backends(t, testChannelLimitConcurrent) }

func testChannelLimitConcurrent(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	const max = 3
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created []string
	)
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch := accounts.Channel{ID: s.NewID(), AccountID: a.ID, Name: "c", CreatedAt: day}
			err := s.CreateChannel(ctx, ch, max)
			switch apperr.CodeOf(err) {
			case "":
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				created = append(created, ch.ID)
				mu.Unlock()
			case apperr.Validation, apperr.Conflict:
			default:
				t.Errorf("CreateChannel: %v", err)
			}
		}()
	}
	wg.Wait()
	acct, err := s.Account(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != max || len(acct.ChannelIDs) != max {
		t.Fatalf("created %d channels, account lists %d; want %d and %d", len(created), len(acct.ChannelIDs), max, max)
	}
	for _, id := range created {
		if !strings.Contains(strings.Join(acct.ChannelIDs, ","), id) {
			t.Errorf("created channel %s is not in the account's list %v", id, acct.ChannelIDs)
		}
	}
	err = s.CreateChannel(ctx, accounts.Channel{ID: s.NewID(), AccountID: a.ID, Name: "c"}, max)
	wantCode(t, err, apperr.Validation)
}

func TestKeys(t *testing.T) { backends(t, testKeys) }

func testKeys(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	ch := newChannel(t, s, a.ID)

	k, hash := newKey(s, a.ID, ch.ID)
	if err := s.CreateKey(ctx, k, hash, 5); err != nil {
		t.Fatal(err)
	}
	rec, err := s.KeyByHash(ctx, hash)
	want := auth.KeyRecord{ID: k.ID, AccountID: a.ID, ChannelID: ch.ID, Hash: hash, AccessUntil: a.AccessUntil, AccountCarried: true}
	if err != nil || rec != want {
		t.Fatalf("KeyByHash = %+v, %v; want %+v", rec, err, want)
	}
	if got, err := s.GetKey(ctx, a.ID, k.ID); err != nil || fmt.Sprint(got) != fmt.Sprint(k) {
		t.Fatalf("GetKey = %+v, %v; want %+v", got, err, k)
	}
	_, err = s.KeyByHash(ctx, auth.HashKey(auth.NewKey()))
	wantCode(t, err, apperr.NotFound)
	_, err = s.GetKey(ctx, a.ID, s.NewID())
	wantCode(t, err, apperr.NotFound)

	// The same hash twice, an unknown account.
	dup, _ := newKey(s, a.ID, ch.ID)
	wantCode(t, s.CreateKey(ctx, dup, hash, 5), apperr.Conflict)
	orphan, orphanHash := newKey(s, "missing", ch.ID)
	wantCode(t, s.CreateKey(ctx, orphan, orphanHash, 5), apperr.NotFound)

	// Up to the limit, then refused.
	for range 4 {
		k, h := newKey(s, a.ID, ch.ID)
		if err := s.CreateKey(ctx, k, h, 5); err != nil {
			t.Fatal(err)
		}
	}
	extra, extraHash := newKey(s, a.ID, ch.ID)
	err = s.CreateKey(ctx, extra, extraHash, 5)
	wantCode(t, err, apperr.Validation)
	if e, _ := apperr.As(err); e.Message != "at most 5 live keys per account" {
		t.Errorf("message = %q", e.Message)
	}
	if _, err := s.KeyByHash(ctx, extraHash); apperr.CodeOf(err) != apperr.NotFound {
		t.Error("a refused key left its hash lookup behind")
	}

	// Revoking frees a place, removes the lookup at once, and keeps the record.
	gotHash, err := s.RevokeKey(ctx, a.ID, k.ID, day.Add(time.Hour))
	if err != nil || gotHash != hash {
		t.Fatalf("RevokeKey = %q, %v; want the key's hash", gotHash, err)
	}
	_, err = s.KeyByHash(ctx, hash)
	wantCode(t, err, apperr.NotFound)
	revoked, err := s.GetKey(ctx, a.ID, k.ID)
	if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(day.Add(time.Hour)) {
		t.Fatalf("revoked key = %+v, %v", revoked, err)
	}
	_, err = s.RevokeKey(ctx, a.ID, k.ID, day)
	wantCode(t, err, apperr.NotFound)
	_, err = s.RevokeKey(ctx, a.ID, s.NewID(), day)
	wantCode(t, err, apperr.NotFound)
	_, err = s.RevokeKey(ctx, "other-account", extra.ID, day)
	wantCode(t, err, apperr.NotFound)
	if err := s.CreateKey(ctx, extra, extraHash, 5); err != nil {
		t.Fatalf("after a revocation a key fits again: %v", err)
	}

	all, err := s.ListKeys(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 || all[0].ID != k.ID || all[0].RevokedAt == nil {
		t.Fatalf("ListKeys = %d keys (first %+v); want 6, oldest (revoked) first", len(all), all[0])
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID >= all[i].ID {
			t.Errorf("ListKeys not oldest first: %s before %s", all[i-1].ID, all[i].ID)
		}
	}
	// The hash is stored, never serialised with the key.
	b, _ := json.Marshal(all)
	if strings.Contains(string(b), hash) || strings.Contains(string(b), `"hash"`) {
		t.Errorf("listed keys carry the hash: %s", b)
	}
}

func TestKeyLimitConcurrent(t *testing.T) { backends(t, testKeyLimitConcurrent) }

// testKeyLimitConcurrent: the live-key counter moves in the key's own transaction, so however creations
// interleave exactly max of them succeed.
func testKeyLimitConcurrent(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	ch := newChannel(t, s, a.ID)
	const attempts, max = 20, 5
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[apperr.Code]int{}
	)
	for range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, h := newKey(s, a.ID, ch.ID)
			err := s.CreateKey(ctx, k, h, max)
			if err != nil && apperr.CodeOf(err) == "" {
				t.Errorf("CreateKey: %v", err)
			}
			mu.Lock()
			codes[apperr.CodeOf(err)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[""] != max || codes[apperr.Validation] != attempts-max {
		t.Fatalf("outcomes %v; want %d created and %d refused", codes, max, attempts-max)
	}
	keys, err := s.ListKeys(ctx, a.ID)
	if err != nil || len(keys) != max {
		t.Fatalf("ListKeys = %d keys, %v; want %d", len(keys), err, max)
	}
}

// TestKeyLookupCarriesAccess (issue 21): a key's lookup item carries its account's access end from its
// creation, and every access change rewrites the live keys' lookups in the same transaction, so
// authenticating a key is one read. Revoked keys are left alone.
func TestKeyLookupCarriesAccess(t *testing.T) { backends(t, testKeyLookupCarriesAccess) }

func testKeyLookupCarriesAccess(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	ch := newChannel(t, s, a.ID)
	var hashes []string
	for range 3 {
		k, h := newKey(s, a.ID, ch.ID)
		if err := s.CreateKey(ctx, k, h, 5); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
		if k.ID != "" && len(hashes) == 1 {
			if _, err := s.RevokeKey(ctx, a.ID, k.ID, day); err != nil {
				t.Fatal(err)
			}
		}
	}
	carries := func(hash string, until time.Time) {
		t.Helper()
		rec, err := s.KeyByHash(ctx, hash)
		if err != nil || !rec.AccountCarried || !rec.AccessUntil.Equal(until) {
			t.Fatalf("KeyByHash = %+v, %v; want the access end %v carried", rec, err, until)
		}
	}
	for _, h := range hashes[1:] {
		carries(h, a.AccessUntil)
	}
	past := day.Add(-time.Hour)
	if _, err := s.SetAccessUntil(ctx, a.ID, past); err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes[1:] {
		carries(h, past)
	}
	if _, err := s.KeyByHash(ctx, hashes[0]); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("a revoked key's lookup came back: %v", err)
	}
	// A channel added later changes no key: a key acts for its own channel only.
	newChannel(t, s, a.ID)
	carries(hashes[1], past)
}

// TestAccessChangesRaceKeyCreation: access changes and key creations of one account at once; afterwards
// every live key's lookup carries the account's final access end (a lookup written from a stale read of
// the account would carry an earlier one).
func TestAccessChangesRaceKeyCreation(t *testing.T) { backends(t, testAccessChangesRaceKeyCreation) }

func testAccessChangesRaceKeyCreation(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newAccount(t, s)
	ch := newChannel(t, s, a.ID)
	var wg sync.WaitGroup
	hashes := make([]string, 5)
	for i := range 5 {
		wg.Go(func() {
			k, h := newKey(s, a.ID, ch.ID)
			if err := s.CreateKey(ctx, k, h, 5); err != nil && apperr.CodeOf(err) != apperr.Conflict {
				t.Error(err)
				return
			}
			hashes[i] = h
		})
		wg.Go(func() {
			if _, err := s.SetAccessUntil(ctx, a.ID, day.AddDate(0, 0, i+1)); err != nil && apperr.CodeOf(err) != apperr.Conflict {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	final, err := s.Account(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes {
		rec, err := s.KeyByHash(ctx, h)
		if apperr.CodeOf(err) == apperr.NotFound {
			continue // its creation lost to the concurrent changes (CONFLICT); nothing was stored
		}
		if err != nil || !rec.AccessUntil.Equal(final.AccessUntil) {
			t.Errorf("KeyByHash = %+v, %v; the account's access ends %v", rec, err, final.AccessUntil)
		}
	}
}

// TestKeyLookupWrittenBeforeAccessWasCarried: a lookup item of the earlier shape (no access end) still
// authenticates, with the account read as before; the account's next access change fills it in.
func TestKeyLookupWrittenBeforeAccessWasCarried(t *testing.T) {
	backends(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s)
		ch := newChannel(t, s, a.ID)
		k, _ := newKey(s, a.ID, ch.ID)
		key := auth.NewKey()
		hash := auth.HashKey(key)
		if err := s.CreateKey(ctx, k, hash, 5); err != nil {
			t.Fatal(err)
		}
		old, _ := json.Marshal(map[string]string{"keyId": k.ID, "accountId": a.ID, "channelId": ch.ID, "hash": hash})
		if err := s.Table().Write(ctx, store.Put(store.Item{Key: store.Key{PK: "KEYHASH#" + hash, SK: "KEY"}, Data: old}, store.Always)); err != nil {
			t.Fatal(err)
		}
		if rec, err := s.KeyByHash(ctx, hash); err != nil || rec.AccountCarried || rec.ID != k.ID {
			t.Fatalf("KeyByHash of an old lookup = %+v, %v", rec, err)
		}
		authn := auth.NewAuthenticator(s, nil, time.Minute, auth.WithClock(func() time.Time { return day }))
		p, err := authn.Authenticate(ctx, "Bearer "+key, "")
		if err != nil || p.ChannelID != ch.ID || p.AccountID != a.ID || p.KeyID != k.ID {
			t.Fatalf("an old lookup: %+v, %v", p, err)
		}
		if _, err := s.SetAccessUntil(ctx, a.ID, day.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if rec, err := s.KeyByHash(ctx, hash); err != nil || !rec.AccountCarried || !rec.AccessUntil.Equal(day.Add(-time.Second)) {
			t.Fatalf("after an access change: %+v, %v", rec, err)
		}
		_, err = auth.NewAuthenticator(s, nil, time.Minute, auth.WithClock(func() time.Time { return day })).Authenticate(ctx, "Bearer "+key, "")
		wantCode(t, err, apperr.AccessExpired)
	})
}
