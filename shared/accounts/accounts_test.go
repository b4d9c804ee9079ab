package accounts_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	tbl, err := pebble.Open(t.TempDir() + "/db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return store.New(tbl)
}

func clock() time.Time { return now }

func wantCode(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
	return e
}

// setup returns a service with an account owning one channel.
func setup(t *testing.T) (*accounts.Service, *store.Store, accounts.Account, accounts.Channel) {
	t.Helper()
	st := openStore(t)
	svc := accounts.NewService(st, clock)
	ctx := context.Background()
	a, err := svc.CreateAccount(ctx, "", now.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.CreateChannel(ctx, a.ID, "  Main channel ")
	if err != nil {
		t.Fatal(err)
	}
	return svc, st, a, ch
}

func TestCreateAccount(t *testing.T) {
	svc := accounts.NewService(openStore(t), clock)
	ctx := context.Background()
	a, err := svc.CreateAccount(ctx, "acct-from-idp", now.Add(time.Hour))
	if err != nil || a.ID != "acct-from-idp" || !a.CreatedAt.Equal(now) || a.ChannelIDs == nil {
		t.Fatalf("CreateAccount = %+v, %v", a, err)
	}
	_, err = svc.CreateAccount(ctx, "acct-from-idp", now.Add(time.Hour))
	wantCode(t, err, apperr.Conflict)
	_, err = svc.CreateAccount(ctx, "has space", now)
	wantCode(t, err, apperr.Validation)
	_, err = svc.CreateAccount(ctx, "", time.Time{})
	wantCode(t, err, apperr.Validation)

	until := now.Add(-time.Minute)
	a, err = svc.SetAccessUntil(ctx, "acct-from-idp", until)
	if err != nil || !a.AccessUntil.Equal(until) {
		t.Fatalf("SetAccessUntil = %+v, %v", a, err)
	}
	_, err = svc.SetAccessUntil(ctx, "nobody", until)
	wantCode(t, err, apperr.NotFound)
}

func TestCreateChannel(t *testing.T) {
	svc, st, a, ch := setup(t)
	ctx := context.Background()
	if ch.Name != "Main channel" || ch.AccountID != a.ID {
		t.Errorf("channel = %+v", ch)
	}
	_, err := svc.CreateChannel(ctx, a.ID, " ")
	wantCode(t, err, apperr.Validation)
	_, err = svc.CreateChannel(ctx, a.ID, strings.Repeat("é", accounts.MaxNameLen+1))
	wantCode(t, err, apperr.Validation)
	for i := 1; i < accounts.MaxChannelsPerAccount; i++ {
		if _, err := svc.CreateChannel(ctx, a.ID, "more"); err != nil {
			t.Fatal(err)
		}
	}
	_, err = svc.CreateChannel(ctx, a.ID, "one too many")
	e := wantCode(t, err, apperr.Validation)
	if e.Message != "at most 10 channels per account" {
		t.Errorf("message = %q", e.Message)
	}
	if acct, _ := st.Account(ctx, a.ID); len(acct.ChannelIDs) != accounts.MaxChannelsPerAccount {
		t.Errorf("account has %d channels, want %d", len(acct.ChannelIDs), accounts.MaxChannelsPerAccount)
	}
}

func TestCreateKey(t *testing.T) {
	svc, st, a, ch := setup(t)
	ctx := context.Background()
	created, err := svc.CreateKey(ctx, a.ID, ch.ID, " laptop ")
	if err != nil {
		t.Fatal(err)
	}
	if !auth.ValidKeyFormat(created.Key) || created.Prefix != created.Key[:11] || created.Name != "laptop" ||
		created.ChannelID != ch.ID || !created.CreatedAt.Equal(now) {
		t.Fatalf("CreateKey = %+v", created)
	}
	rec, err := st.KeyByHash(ctx, auth.HashKey(created.Key))
	if err != nil || rec.ID != created.ID || rec.ChannelID != ch.ID || rec.AccountID != a.ID {
		t.Fatalf("KeyByHash(created key) = %+v, %v", rec, err)
	}

	other, err := svc.CreateAccount(ctx, "", now.AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, account, channel, keyName string
		code                            apperr.Code
		field                           string
	}{
		{"another account's channel", other.ID, ch.ID, "", apperr.NotFound, ""},
		{"unknown channel", a.ID, st.NewID(), "", apperr.NotFound, ""},
		{"malformed channel", a.ID, "nope", "", apperr.Validation, "channelId"},
		{"upper-case channel", a.ID, strings.ToUpper(ch.ID), "", apperr.Validation, "channelId"},
		{"long name", a.ID, ch.ID, strings.Repeat("x", accounts.MaxNameLen+1), apperr.Validation, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.CreateKey(ctx, tt.account, tt.channel, tt.keyName)
			if e := wantCode(t, err, tt.code); e.Field != tt.field {
				t.Errorf("field = %q, want %q", e.Field, tt.field)
			}
		})
	}
}

func TestKeyLimitIsAtomic(t *testing.T) {
	svc, _, a, ch := setup(t)
	ctx := context.Background()
	const attempts = 20
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok       int
		refusals []error
	)
	for range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.CreateKey(ctx, a.ID, ch.ID, "")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
			} else {
				refusals = append(refusals, err)
			}
		}()
	}
	wg.Wait()
	if ok != accounts.MaxLiveKeysPerAccount {
		t.Fatalf("%d of %d concurrent creations succeeded, want exactly %d", ok, attempts, accounts.MaxLiveKeysPerAccount)
	}
	for _, err := range refusals {
		if e := wantCode(t, err, apperr.Validation); e.Message != "at most 5 live keys per account" {
			t.Errorf("refusal message = %q", e.Message)
		}
	}
	live, err := svc.ListKeys(ctx, a.ID)
	if err != nil || len(live) != accounts.MaxLiveKeysPerAccount {
		t.Fatalf("ListKeys = %d keys, %v; want %d", len(live), err, accounts.MaxLiveKeysPerAccount)
	}
}

func TestRevokeKey(t *testing.T) {
	svc, st, a, ch := setup(t)
	ctx := context.Background()
	k1, err := svc.CreateKey(ctx, a.ID, ch.ID, "one")
	if err != nil {
		t.Fatal(err)
	}
	k2, err := svc.CreateKey(ctx, a.ID, ch.ID, "two")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := svc.CreateAccount(ctx, "", now.AddDate(1, 0, 0))
	wantCode(t, svc.RevokeKey(ctx, other.ID, k1.ID), apperr.NotFound)

	hash, err := svc.RevokeKeyHash(ctx, a.ID, k1.ID)
	if err != nil || hash != auth.HashKey(k1.Key) {
		t.Fatalf("RevokeKeyHash = %q, %v; want the revoked key's hash", hash, err)
	}
	wantCode(t, svc.RevokeKey(ctx, a.ID, k1.ID), apperr.NotFound)
	wantCode(t, svc.RevokeKey(ctx, a.ID, st.NewID()), apperr.NotFound)

	live, err := svc.ListKeys(ctx, a.ID)
	if err != nil || len(live) != 1 || live[0].ID != k2.ID {
		t.Fatalf("ListKeys after revoking = %+v, %v; want only %s", live, err, k2.ID)
	}
	// The revoked key's place is free again: 4 more fit, then the limit holds.
	for range 4 {
		if _, err := svc.CreateKey(ctx, a.ID, ch.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	_, err = svc.CreateKey(ctx, a.ID, ch.ID, "")
	wantCode(t, err, apperr.Validation)
}

func TestEnsureDevKey(t *testing.T) {
	st := openStore(t)
	svc := accounts.NewService(st, clock)
	ctx := context.Background()
	const (
		dev   = "dev-account"
		key1  = "sk-css-00000000000000000000000000000001"
		key2  = "sk-css-00000000000000000000000000000002"
		other = "sk-css-00000000000000000000000000000003"
	)
	k1, err := svc.EnsureDevKey(ctx, dev, key1)
	if err != nil {
		t.Fatal(err)
	}
	again, err := svc.EnsureDevKey(ctx, dev, key1)
	if err != nil || again.ID != k1.ID || again.ChannelID != k1.ChannelID {
		t.Fatalf("second EnsureDevKey = %+v, %v; want the same key %+v", again, err, k1)
	}
	// A restart is a new service over the same store.
	if again, err = accounts.NewService(st, clock).EnsureDevKey(ctx, dev, key1); err != nil || again.ID != k1.ID {
		t.Fatalf("EnsureDevKey after a restart = %+v, %v", again, err)
	}
	k2, err := svc.EnsureDevKey(ctx, dev, key2)
	if err != nil || k2.ChannelID == k1.ChannelID {
		t.Fatalf("second dev key = %+v, %v; want its own channel", k2, err)
	}

	acct, err := st.Account(ctx, dev)
	if err != nil || len(acct.ChannelIDs) != 2 || !acct.AccessUntil.After(now.AddDate(50, 0, 0)) {
		t.Fatalf("dev account = %+v, %v; want 2 channels and open access", acct, err)
	}
	live, _ := svc.ListKeys(ctx, dev)
	if len(live) != 2 {
		t.Errorf("dev account has %d keys, want 2", len(live))
	}
	rec, err := st.KeyByHash(ctx, auth.HashKey(key1))
	if err != nil || rec.ID != k1.ID {
		t.Errorf("the exact dev key does not authenticate: %+v, %v", rec, err)
	}

	_, err = svc.EnsureDevKey(ctx, dev, "sk-css-short")
	wantCode(t, err, apperr.Validation)
	if _, err := svc.EnsureDevKey(ctx, "someone-else", other); err != nil {
		t.Fatal(err)
	}
	_, err = svc.EnsureDevKey(ctx, dev, other)
	wantCode(t, err, apperr.Conflict)
}

// TestRevokedKeyStopsAuthenticating runs the key lifecycle through the authenticator over the real store.
func TestRevokedKeyStopsAuthenticating(t *testing.T) {
	st := openStore(t)
	authn := auth.NewAuthenticator(st, nil, 20*time.Second, auth.WithClock(func() time.Time { return now }))
	svc := accounts.NewService(st, clock)
	ctx := context.Background()
	a, _ := svc.CreateAccount(ctx, "", now.AddDate(1, 0, 0))
	ch, _ := svc.CreateChannel(ctx, a.ID, "main")
	k, err := svc.CreateKey(ctx, a.ID, ch.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := authn.Authenticate(ctx, "Bearer "+k.Key, "")
	want := auth.Principal{AccountID: a.ID, ChannelID: ch.ID, KeyID: k.ID, KeyHash: auth.HashKey(k.Key), Method: auth.MethodAPIKey}
	if err != nil || p != want {
		t.Fatalf("Authenticate = %+v, %v; want %+v", p, err, want)
	}
	hash, err := svc.RevokeKeyHash(ctx, a.ID, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	authn.Forget(hash)
	_, err = authn.Authenticate(ctx, "Bearer "+k.Key, "")
	wantCode(t, err, apperr.Unauthorized)
}

func TestEnsureFirstKey(t *testing.T) {
	st := openStore(t)
	svc := accounts.NewService(st, clock)
	ctx := context.Background()
	first, err := svc.EnsureFirstKey(ctx, "dev-account")
	if err != nil || first == nil || !auth.ValidKeyFormat(first.Key) {
		t.Fatalf("EnsureFirstKey on a new store = %+v, %v; want a created key", first, err)
	}
	rec, err := st.KeyByHash(ctx, auth.HashKey(first.Key))
	if err != nil || rec.ChannelID != first.ChannelID || rec.AccountID != "dev-account" {
		t.Fatalf("first key lookup = %+v, %v", rec, err)
	}
	again, err := svc.EnsureFirstKey(ctx, "dev-account")
	if err != nil || again != nil {
		t.Fatalf("EnsureFirstKey on the next start = %+v, %v; want nothing created", again, err)
	}
	if live, _ := svc.ListKeys(ctx, "dev-account"); len(live) != 1 {
		t.Errorf("dev account has %d keys, want 1", len(live))
	}
}
