package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/creatorstrategy/css/shared/apperr"
)

// fakeDirectory is an in-memory Directory counting its calls.
type fakeDirectory struct {
	mu       sync.Mutex
	keys     map[string]KeyRecord // by hash
	accounts map[string]AccountRecord
	calls    int
	fail     error
	// onKeyByHash runs inside KeyByHash (to interleave a revocation with a lookup).
	onKeyByHash func()
}

func (d *fakeDirectory) KeyByHash(_ context.Context, hash string) (KeyRecord, error) {
	d.mu.Lock()
	d.calls++
	k, ok := d.keys[hash]
	fail, hook := d.fail, d.onKeyByHash
	d.mu.Unlock()
	if hook != nil {
		hook()
	}
	if fail != nil {
		return KeyRecord{}, fail
	}
	if !ok {
		return KeyRecord{}, apperr.NotFoundf("key not found")
	}
	return k, nil
}

func (d *fakeDirectory) Account(_ context.Context, id string) (AccountRecord, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.fail != nil {
		return AccountRecord{}, d.fail
	}
	a, ok := d.accounts[id]
	if !ok {
		return AccountRecord{}, apperr.NotFoundf("account not found")
	}
	return a, nil
}

func (d *fakeDirectory) callCount() int { d.mu.Lock(); defer d.mu.Unlock(); return d.calls }

func (d *fakeDirectory) revoke(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.keys, HashKey(key))
}

const (
	testKey     = "sk-css-00112233445566778899aabbccddeeff"
	testChannel = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
)

func newFixture(t *testing.T) (*fakeDirectory, *testClock) {
	t.Helper()
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	dir := &fakeDirectory{
		keys: map[string]KeyRecord{HashKey(testKey): {ID: "key-1", AccountID: "acct-1", ChannelID: testChannel, Hash: HashKey(testKey)}},
		accounts: map[string]AccountRecord{
			"acct-1": {ID: "acct-1", AccessUntil: clock.Now().AddDate(1, 0, 0), ChannelIDs: []string{testChannel}},
		},
	}
	return dir, clock
}

// fakeTokens accepts "a.b.<account>" and expires tokens at a fixed time.
type fakeTokens struct{ exp time.Time }

func (f fakeTokens) Verify(_ context.Context, token string) (Session, error) {
	parts := strings.Split(token, ".")
	switch parts[0] {
	case "expired":
		return Session{}, fmt.Errorf("session token: %w", jwt.ErrTokenExpired)
	case "down":
		return Session{}, fmt.Errorf("session token: %w", errJWKSUnavailable)
	case "ok":
		return Session{AccountID: parts[2], ExpiresAt: f.exp}, nil
	}
	return Session{}, errors.New("bad signature")
}

func wantCode(t *testing.T, err error, code apperr.Code) {
	t.Helper()
	if got := apperr.CodeOf(err); got != code {
		t.Fatalf("error = %v (code %q), want code %s", err, got, code)
	}
}

func TestResolveCachesKeys(t *testing.T) {
	dir, clock := newFixture(t)
	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
	ctx := context.Background()

	id, err := a.Resolve(ctx, "Bearer "+testKey)
	if err != nil {
		t.Fatal(err)
	}
	want := Identity{AccountID: "acct-1", Method: MethodAPIKey, KeyID: "key-1", KeyHash: HashKey(testKey),
		KeyChannelID: testChannel, ChannelIDs: []string{testChannel}, AccessUntil: clock.Now().AddDate(1, 0, 0)}
	if fmt.Sprint(id) != fmt.Sprint(want) {
		t.Fatalf("Resolve = %+v, want %+v", id, want)
	}
	before := dir.callCount()
	for _, h := range []string{"Bearer " + testKey, "bearer " + testKey, "BEARER  " + testKey + " "} {
		if _, err := a.Resolve(ctx, h); err != nil {
			t.Fatalf("Resolve(%q): %v", h, err)
		}
	}
	if n := dir.callCount() - before; n != 0 {
		t.Errorf("cached key made %d directory calls, want 0", n)
	}
}

func TestRevokedKey(t *testing.T) {
	ctx := context.Background()
	t.Run("Forget refuses at once", func(t *testing.T) {
		dir, clock := newFixture(t)
		a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
		if _, err := a.Resolve(ctx, "Bearer "+testKey); err != nil {
			t.Fatal(err)
		}
		dir.revoke(testKey)
		a.Forget(HashKey(testKey))
		_, err := a.Resolve(ctx, "Bearer "+testKey)
		wantCode(t, err, apperr.Unauthorized)
	})
	t.Run("TTL refuses at most TTL later", func(t *testing.T) {
		dir, clock := newFixture(t)
		a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
		if _, err := a.Resolve(ctx, "Bearer "+testKey); err != nil {
			t.Fatal(err)
		}
		dir.revoke(testKey)
		clock.Advance(19 * time.Second)
		if _, err := a.Resolve(ctx, "Bearer "+testKey); err != nil {
			t.Fatalf("within the TTL the cached identity is used: %v", err)
		}
		clock.Advance(time.Second)
		_, err := a.Resolve(ctx, "Bearer "+testKey)
		wantCode(t, err, apperr.Unauthorized)
	})
	t.Run("lookup racing a revocation is not cached", func(t *testing.T) {
		dir, clock := newFixture(t)
		a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
		// The key is read, then revoked and forgotten before the result is cached.
		dir.onKeyByHash = func() {
			dir.revoke(testKey)
			a.Forget(HashKey(testKey))
		}
		if _, err := a.Resolve(ctx, "Bearer "+testKey); err != nil {
			t.Fatal(err)
		}
		dir.onKeyByHash = nil
		_, err := a.Resolve(ctx, "Bearer "+testKey)
		wantCode(t, err, apperr.Unauthorized)
	})
}

func TestResolveRefusals(t *testing.T) {
	dir, clock := newFixture(t)
	dir.accounts["acct-2"] = AccountRecord{ID: "acct-2", AccessUntil: clock.Now().Add(time.Hour)}
	a := NewAuthenticator(dir, fakeTokens{exp: clock.Now().Add(time.Hour)}, 20*time.Second, WithClock(clock.Now))
	unknownKey := "sk-css-ffffffffffffffffffffffffffffffff"
	tests := []struct {
		name    string
		header  string
		message string // a part of the message
	}{
		{"missing", "", "missing credential"},
		{"blank", "   ", "missing credential"},
		{"basic scheme", "Basic dXNlcjpwYXNz", "Bearer scheme"},
		{"key without scheme", testKey, "Bearer scheme"},
		{"empty bearer", "Bearer ", "empty"},
		{"malformed key", "Bearer sk-css-XYZ", "malformed API key"},
		{"unknown key", "Bearer " + unknownKey, "invalid or revoked API key"},
		{"neither", "Bearer opaque-token", "neither an API key"},
		{"bad token", "Bearer bad.x.acct-1", "invalid session token"},
		{"expired token", "Bearer expired.x.acct-1", "session token expired"},
		{"unknown account", "Bearer ok.x.acct-404", "account does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Resolve(context.Background(), tt.header)
			wantCode(t, err, apperr.Unauthorized)
			e, _ := apperr.As(err)
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not say %q", e.Message, tt.message)
			}
			if cred := strings.TrimSpace(strings.TrimPrefix(tt.header, "Bearer ")); len(cred) > 8 && strings.Contains(e.Message, cred) {
				t.Errorf("message %q echoes the credential", e.Message)
			}
		})
	}
	// Refusals that needed the directory are cached too.
	before := dir.callCount()
	_, err := a.Resolve(context.Background(), "Bearer "+unknownKey)
	wantCode(t, err, apperr.Unauthorized)
	if n := dir.callCount() - before; n != 0 {
		t.Errorf("cached refusal made %d directory calls, want 0", n)
	}
}

func TestResolveSession(t *testing.T) {
	dir, clock := newFixture(t)
	exp := clock.Now().Add(5 * time.Second)
	a := NewAuthenticator(dir, fakeTokens{exp: exp}, 20*time.Second, WithClock(clock.Now))
	ctx := context.Background()
	id, err := a.Resolve(ctx, "Bearer ok.x.acct-1")
	if err != nil {
		t.Fatal(err)
	}
	if id.Method != MethodSession || id.AccountID != "acct-1" || id.KeyID != "" || len(id.ChannelIDs) != 1 {
		t.Fatalf("Resolve(session) = %+v", id)
	}
	p, err := a.Authenticate(ctx, "Bearer ok.x.acct-1", testChannel)
	if err != nil || p.ChannelID != testChannel || p.Method != MethodSession {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}
	// The cached identity never outlives the token's exp, even inside the TTL; the verifier then decides.
	before := dir.callCount()
	clock.Advance(5 * time.Second)
	if _, err := a.Resolve(ctx, "Bearer ok.x.acct-1"); err != nil {
		t.Fatal(err)
	}
	if n := dir.callCount() - before; n != 1 {
		t.Errorf("after the token's exp the directory was called %d times, want 1 (cache entry expired)", n)
	}
}

func TestResolveWithoutSessions(t *testing.T) {
	dir, clock := newFixture(t)
	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
	_, err := a.Resolve(context.Background(), "Bearer ok.x.acct-1")
	wantCode(t, err, apperr.Unauthorized)
}

func TestResolveFailuresAreNotCached(t *testing.T) {
	dir, clock := newFixture(t)
	dir.fail = errors.New("table unreachable")
	a := NewAuthenticator(dir, fakeTokens{}, 20*time.Second, WithClock(clock.Now))
	ctx := context.Background()
	_, err := a.Resolve(ctx, "Bearer "+testKey)
	wantCode(t, err, apperr.Internal)
	_, err = a.Resolve(ctx, "Bearer down.x.acct-1")
	wantCode(t, err, apperr.Internal)

	dir.mu.Lock()
	dir.fail = nil
	dir.mu.Unlock()
	if _, err := a.Resolve(ctx, "Bearer "+testKey); err != nil {
		t.Fatalf("after the directory recovered: %v", err)
	}
}

func TestResolveHashMismatch(t *testing.T) {
	dir, clock := newFixture(t)
	// A directory answering with another key's record must not authenticate.
	dir.keys[HashKey(testKey)] = KeyRecord{ID: "key-1", AccountID: "acct-1", ChannelID: testChannel, Hash: HashKey("sk-css-other")}
	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
	_, err := a.Resolve(context.Background(), "Bearer "+testKey)
	wantCode(t, err, apperr.Unauthorized)
}

func TestCacheEvictsOldest(t *testing.T) {
	dir, clock := newFixture(t)
	keys := []string{testKey, "sk-css-00000000000000000000000000000001", "sk-css-00000000000000000000000000000002"}
	for i, k := range keys {
		dir.keys[HashKey(k)] = KeyRecord{ID: fmt.Sprint("key-", i), AccountID: "acct-1", ChannelID: testChannel, Hash: HashKey(k)}
	}
	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now), WithCacheSize(2))
	ctx := context.Background()
	resolve := func(k string) int {
		t.Helper()
		before := dir.callCount()
		if _, err := a.Resolve(ctx, "Bearer "+k); err != nil {
			t.Fatal(err)
		}
		return dir.callCount() - before
	}
	for _, k := range keys {
		resolve(k)
	}
	if n := resolve(keys[2]); n != 0 {
		t.Errorf("newest entry made %d calls, want 0", n)
	}
	if n := resolve(keys[0]); n == 0 {
		t.Error("oldest entry was still cached in a cache of 2 after 3 keys")
	}
}

func TestResolveConcurrent(t *testing.T) {
	dir, clock := newFixture(t)
	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now), WithCacheSize(4))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				key := testKey
				if j%2 == 1 {
					key = fmt.Sprintf("sk-css-%032x", i*100+j)
				}
				_, err := a.Resolve(context.Background(), "Bearer "+key)
				if key == testKey && err != nil {
					t.Error(err)
				}
				if j%10 == 0 {
					a.Forget(HashKey(key))
				}
			}
		}()
	}
	wg.Wait()
}

// TestRefusalsCachedApart: refusals live in a cache of their own, smaller and shorter-lived, so a flood of
// made-up keys never pushes a real identity out; each refusal looked up is counted once.
func TestRefusalsCachedApart(t *testing.T) {
	dir, clock := newFixture(t)
	keys := []string{testKey, "sk-css-00000000000000000000000000000001"}
	dir.keys[HashKey(keys[1])] = KeyRecord{ID: "key-2", AccountID: "acct-1", ChannelID: testChannel, Hash: HashKey(keys[1])}
	counted := 0
	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now), WithCacheSize(2),
		WithRefusalCache(3, DefaultRefusalTTL), WithRefusalMetric(func(context.Context) { counted++ }))
	ctx := context.Background()
	calls := func(key string, wantErr bool) int {
		t.Helper()
		before := dir.callCount()
		_, err := a.Resolve(ctx, "Bearer "+key)
		if (err != nil) != wantErr {
			t.Fatalf("Resolve(%s…) = %v; want an error %t", key[:12], err, wantErr)
		}
		return dir.callCount() - before
	}
	for _, k := range keys {
		calls(k, false)
	}
	var unknown []string
	for i := range 50 {
		k := fmt.Sprintf("sk-css-%032x", 0xdead0000+i)
		unknown = append(unknown, k)
		if n := calls(k, true); n != 1 {
			t.Fatalf("unknown key %d: %d directory calls, want 1", i, n)
		}
	}
	if counted != 50 {
		t.Fatalf("refusal metric counted %d, want 50", counted)
	}
	for _, k := range keys {
		if n := calls(k, false); n != 0 {
			t.Errorf("a real key made %d directory calls after a flood of refusals, want 0 (still cached)", n)
		}
	}
	last, first := unknown[len(unknown)-1], unknown[0]
	if n := calls(last, true); n != 0 || counted != 50 {
		t.Errorf("a refusal repeated: %d calls, metric %d; want 0 and still 50 (cached)", n, counted)
	}
	if n := calls(first, true); n != 1 || counted != 51 {
		t.Errorf("the oldest refusal of a cache of 3: %d calls, metric %d; want 1 and 51 (evicted)", n, counted)
	}
	clock.Advance(DefaultRefusalTTL - time.Second)
	if n := calls(last, true); n != 0 {
		t.Errorf("a second before the refusal TTL: %d calls, want 0", n)
	}
	clock.Advance(time.Second)
	if n := calls(last, true); n != 1 {
		t.Errorf("at the refusal TTL: %d calls, want 1", n)
	}
	if n := calls(keys[0], false); n != 0 {
		t.Errorf("identities outlive refusals: %d calls, want 0", n)
	}
}

// A refusal is never cached longer than an identity would be, and a refusal cache of size 0 caches none.
func TestRefusalCacheBounds(t *testing.T) {
	const unknown = "sk-css-ffffffffffffffffffffffffffffffff"
	tests := []struct {
		name       string
		ttl        time.Duration
		opts       []AuthOption
		cachedFor  time.Duration // a refusal is answered from the cache this long, and not at this time
		neverCache bool
	}{
		{"default", 20 * time.Second, nil, DefaultRefusalTTL, false},
		{"TTL shorter than the refusal TTL", 2 * time.Second, nil, 2 * time.Second, false},
		{"no refusal cache", 20 * time.Second, []AuthOption{WithRefusalCache(0, time.Minute)}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, clock := newFixture(t)
			a := NewAuthenticator(dir, nil, tt.ttl, append([]AuthOption{WithClock(clock.Now)}, tt.opts...)...)
			ctx := context.Background()
			if _, err := a.Resolve(ctx, "Bearer "+unknown); err == nil {
				t.Fatal("unknown key accepted")
			}
			before := dir.callCount()
			_, _ = a.Resolve(ctx, "Bearer "+unknown)
			if got := dir.callCount() - before; (got == 1) != tt.neverCache {
				t.Fatalf("repeated at once: %d calls; want cached %t", got, !tt.neverCache)
			}
			if tt.neverCache {
				return
			}
			clock.Advance(tt.cachedFor - time.Millisecond)
			before = dir.callCount()
			_, _ = a.Resolve(ctx, "Bearer "+unknown)
			if n := dir.callCount() - before; n != 0 {
				t.Errorf("just before %v: %d calls, want 0", tt.cachedFor, n)
			}
			clock.Advance(time.Millisecond)
			_, _ = a.Resolve(ctx, "Bearer "+unknown)
			if n := dir.callCount() - before; n != 1 {
				t.Errorf("at %v: %d calls, want 1", tt.cachedFor, n)
			}
		})
	}
}

// TestResolveCarriedKeyIsOneRead (issue 21): a key whose record carries its account's access end is
// authenticated with one directory call, the account unread; past that end it answers ACCESS_EXPIRED. A
// record without it (written before it was carried) costs the account read as well.
func TestResolveCarriedKeyIsOneRead(t *testing.T) {
	dir, clock := newFixture(t)
	ctx := context.Background()
	until := clock.Now().Add(time.Hour)
	rec := dir.keys[HashKey(testKey)]
	rec.AccessUntil, rec.AccountCarried = until, true
	dir.keys[HashKey(testKey)] = rec
	delete(dir.accounts, "acct-1") // a read of the account would now refuse the key

	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
	p, err := a.Authenticate(ctx, "Bearer "+testKey, "")
	if err != nil || p.ChannelID != testChannel || p.KeyID != "key-1" || p.AccountID != "acct-1" {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}
	if n := dir.callCount(); n != 1 {
		t.Errorf("a carried key made %d directory calls, want 1", n)
	}
	clock.Advance(time.Hour + time.Second)
	_, err = NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now)).Authenticate(ctx, "Bearer "+testKey, "")
	wantCode(t, err, apperr.AccessExpired)

	legacy, _ := newFixture(t)
	if _, err := NewAuthenticator(legacy, nil, 20*time.Second, WithClock(clock.Now)).Resolve(ctx, "Bearer "+testKey); err != nil {
		t.Fatal(err)
	}
	if n := legacy.callCount(); n != 2 {
		t.Errorf("a key without the account carried made %d directory calls, want 2 (key, account)", n)
	}
}

// TestKeyReadByTheCaller (issue 21): UncachedKey names the hash of a well-formed API key whose identity
// and refusal are not cached, and nothing else; AuthenticateRead takes the caller's read of that key
// instead of asking the directory (and caches what it resolves, refusals included), and asks the directory
// when the read is of another key.
func TestKeyReadByTheCaller(t *testing.T) {
	dir, clock := newFixture(t)
	a := NewAuthenticator(dir, fakeTokens{exp: clock.Now().Add(time.Hour)}, 20*time.Second, WithClock(clock.Now))
	ctx := context.Background()
	for _, h := range []string{"", "Basic x", "Bearer sk-css-short", "Bearer ok.x.acct-1", "Bearer " + strings.ToUpper(testKey)} {
		if hash, ok := a.UncachedKey(h); ok {
			t.Errorf("UncachedKey(%q) = %q; want none", h, hash)
		}
	}
	hash, ok := a.UncachedKey("Bearer " + testKey)
	if !ok || hash != HashKey(testKey) {
		t.Fatalf("UncachedKey = %q, %v; want the key's hash", hash, ok)
	}

	rec := dir.keys[hash]
	rec.AccessUntil, rec.AccountCarried = clock.Now().AddDate(1, 0, 0), true
	p, err := a.AuthenticateRead(ctx, "Bearer "+testKey, "", &KeyRead{Hash: hash, Record: rec})
	if err != nil || p.KeyID != "key-1" || p.KeyHash != hash || p.ChannelID != testChannel {
		t.Fatalf("AuthenticateRead = %+v, %v", p, err)
	}
	if n := dir.callCount(); n != 0 {
		t.Fatalf("the directory was asked %d times; the caller's read was enough", n)
	}
	if _, ok := a.UncachedKey("Bearer " + testKey); ok {
		t.Fatal("a resolved key is still reported uncached")
	}

	// A read that found no key refuses it, and the refusal is cached.
	const other = "sk-css-ffeeddccbbaa99887766554433221100"
	oh := HashKey(other)
	_, err = a.AuthenticateRead(ctx, "Bearer "+other, "", &KeyRead{Hash: oh, Err: apperr.NotFoundf("key not found")})
	wantCode(t, err, apperr.Unauthorized)
	if _, ok := a.UncachedKey("Bearer " + other); ok {
		t.Fatal("a refused key is reported uncached while its refusal is cached")
	}

	// A read of another key is ignored: the directory answers.
	a2 := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
	if _, err := a2.AuthenticateRead(ctx, "Bearer "+testKey, "", &KeyRead{Hash: oh, Err: apperr.NotFoundf("key not found")}); err != nil {
		t.Fatalf("a read of another key decided this one: %v", err)
	}
	if n := dir.callCount(); n == 0 {
		t.Fatal("the directory was not asked")
	}
	wantCode(t, KeyRevoked(), apperr.Unauthorized)
}
