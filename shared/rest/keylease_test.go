package rest_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/wire"
)

// TestKeyReadWithItsLease (issue 21): an API key this instance has not cached is read by the UpdateItem
// that leases its calls, so the key's refusals keep their order and shape at one table call or none: a
// malformed key makes none, an unknown key one that writes nothing; an instance holding a lease reads an
// expired identity's key by the same UpdateItem taking nothing; a revoked key whose identity is still
// cached is refused (401) at its instance's next lease; past its access end a key answers 403 even with
// its window used up.
func TestKeyReadWithItsLease(t *testing.T) {
	var now atomic.Pointer[time.Time]
	start := time.Date(2026, 11, 18, 12, 0, 5, 0, time.UTC)
	now.Store(&start)
	clock := func() time.Time { return *now.Load() }
	advance := func(d time.Duration) { t := clock().Add(d); now.Store(&t) }
	m := newMeteredKey(t, clock, start.Add(10*time.Minute))
	pb, tbl, acc, key, ctx := m.pb, m.tbl, m.acc, m.key, context.Background()
	instance := func(perMinute int) http.Handler {
		api, _ := m.api(t, perMinute)
		return api
	}
	type answer struct {
		status    int
		code      string
		remaining string
		calls     string
	}
	get := func(h http.Handler, cred string) answer {
		t.Helper()
		tbl.reset()
		r := httptest.NewRequest("GET", "/api/v1/notes", nil)
		r.Header.Set("Authorization", "Bearer "+cred)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		_, kinds := tbl.snapshot()
		code := ""
		if w.Code >= 400 {
			code = strings.SplitN(strings.SplitN(w.Body.String(), `"code":"`, 2)[1], `"`, 2)[0]
			if w.Code == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		}
		// The capacity estimates are not this test's business.
		_, kinds, _ = strings.Cut(kinds, "WRU")
		return answer{w.Code, code, w.Header().Get("X-RateLimit-Remaining"), strings.TrimPrefix(kinds, ", ")}
	}
	want := func(what string, got, want answer) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %+v; want %+v", what, got, want)
		}
	}

	h := instance(0)
	want("malformed key", get(h, "sk-css-NOTHEX"), answer{401, "UNAUTHORIZED", "", ""})
	want("unknown key", get(h, "sk-css-00000000000000000000000000000000"), answer{401, "UNAUTHORIZED", "", "AddCounter 1"})
	if _, err := pb.Get(ctx, store.Key{PK: "KEYHASH#" + auth.HashKey("sk-css-00000000000000000000000000000000"), SK: "KEY"}); err == nil {
		t.Error("the lease of an unknown key created its item")
	}
	want("cold", get(h, key.Key), answer{200, "", "599", "Query 1, AddCounter 1"})
	want("second (a new lease, sized to the rate)", get(h, key.Key), answer{200, "", "598", "Query 1, AddCounter 1"})
	want("warm", get(h, key.Key), answer{200, "", "597", "Query 1"})
	advance(21 * time.Second) // the identity expires from the cache; the lease has calls left
	want("identity expired, lease held", get(h, key.Key), answer{200, "", "596", "Query 1, AddCounter 1"})

	// A revoked key whose identity an instance still holds: refused at that instance's next lease.
	h2 := instance(0)
	want("another instance, cold", get(h2, key.Key), answer{200, "", "548", "Query 1, AddCounter 1"}) // the first holds 49 unspent of its block of 50
	if err := acc.RevokeKey(ctx, "acct-1", key.ID); err != nil {
		t.Fatal(err)
	}
	want("revoked, identity cached", get(h2, key.Key), answer{401, "UNAUTHORIZED", "", "AddCounter 1"})

	// Past its access end, with its window used up: 403 first.
	k2, err := acc.CreateKey(ctx, "acct-1", m.chID, "two")
	if err != nil {
		t.Fatal(err)
	}
	h3 := instance(1)
	want("limit 1: the call", get(h3, k2.Key), answer{200, "", "0", "Query 1, AddCounter 1"})
	want("limit 1: over", get(h3, k2.Key), answer{429, "RATE_LIMIT", "0", "AddCounter 1"})
	advance(10 * time.Minute)
	h4 := instance(1)
	want("access ended", get(h4, k2.Key), answer{403, "ACCESS_EXPIRED", "", "AddCounter 1"})
}

// TestMCPKeyReadWithItsLease: the MCP endpoint reads the body of an uncached key's request before
// authenticating it, to lease the tool's group with the key's read; an unauthenticated caller is answered
// as before (401 before any refusal of its body: a body refused names no tool, so the key is read alone),
// and an authenticated one gets its body's refusal after that read.
func TestMCPKeyReadWithItsLease(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 11, 18, 12, 0, 5, 0, time.UTC) }
	m := newMeteredKey(t, clock, clock().AddDate(1, 0, 0))
	tbl, key := m.tbl, m.key
	instance := func() http.Handler {
		api, authn := m.api(t, 0)
		h, err := mcp.ForAPI(api, authn, clock, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_my_videos","arguments":{}}}`
	for _, c := range []struct {
		name, cred, contentType, body string
		status                        int
		calls                         string
	}{
		{"unknown key, bad content type", "sk-css-00000000000000000000000000000000", "text/plain", call, 401, "Get 1"},
		{"unknown key, too large", "sk-css-00000000000000000000000000000000", "application/json", strings.Repeat(" ", mcp.MaxBodyBytes+1), 401, "Get 1"},
		{"unknown key, tool call", "sk-css-00000000000000000000000000000000", "application/json", call, 401, "AddCounter 1"},
		{"malformed key", "sk-css-x", "application/json", call, 401, ""},
		{"key, bad content type", key.Key, "text/plain", call, 415, "Get 1"},
		{"key, tool call", key.Key, "application/json", call, 200, "Query 1, AddCounter 1"},
	} {
		tbl.reset()
		r := httptest.NewRequest("POST", mcp.Path, strings.NewReader(c.body))
		r.Header.Set("Authorization", "Bearer "+c.cred)
		r.Header.Set("Content-Type", c.contentType)
		r.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		instance().ServeHTTP(w, r)
		_, kinds := tbl.snapshot()
		_, kinds, _ = strings.Cut(kinds, "WRU")
		if kinds = strings.TrimPrefix(kinds, ", "); w.Code != c.status || kinds != c.calls {
			t.Errorf("%s: %d with table calls %q; want %d with %q (%s)", c.name, w.Code, kinds, c.status, c.calls, w.Body.String())
		}
	}
}

// TestKeyTableCallsByRate: one key calling GET /notes on one instance at a steady 1, 10 and 100 calls/s for
// three minutes under the default 600 a minute, with the credential cache's 20 s: the table calls made
// before the operation's own (its key's lease, and its key's read when the cached identity expires while
// a lease has calls left: one UpdateItem taking 0 calls), per 1,000 calls. Pins them at most what the
// leases alone cost (TestLeaseTableCallsByRate: 150, 27, 3) plus a little; no GetItem. (Before the key's
// read joined its lease: the same leases plus a GetItem per cache expiry, 200, 32 and 2.8 calls.)
func TestKeyTableCallsByRate(t *testing.T) {
	for _, c := range []struct {
		perSecond int
		maxPer1k  int // key-item calls per 1,000 calls, at most
	}{{1, 175}, {10, 32}, {100, 5}} {
		var now atomic.Pointer[time.Time]
		start := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
		now.Store(&start)
		clock := func() time.Time { return *now.Load() }
		m := newMeteredKey(t, clock, start.AddDate(1, 0, 0))
		tbl, key := m.tbl, m.key
		api, _ := m.api(t, 0)
		tbl.reset()
		calls, served := 3*60*c.perSecond, 0
		gap := time.Second / time.Duration(c.perSecond)
		for range calls {
			r := httptest.NewRequest("GET", "/api/v1/notes", nil)
			r.Header.Set("Authorization", "Bearer "+key.Key)
			w := httptest.NewRecorder()
			api.ServeHTTP(w, r)
			switch w.Code {
			case 200:
				served++
			case 429:
			default:
				t.Fatalf("%d %s", w.Code, w.Body.String())
			}
			next := clock().Add(gap)
			now.Store(&next)
		}
		tbl.mu.Lock()
		keyCalls, gets := tbl.byKind["AddCounter"], tbl.byKind["Get"]
		tbl.mu.Unlock()
		per1k := keyCalls * 1000 / calls
		t.Logf("%3d calls/s: %d calls, %d served; key item: %d UpdateItems (%d per 1,000 calls), %d GetItems", c.perSecond, calls, served, keyCalls, per1k, gets)
		if per1k > c.maxPer1k || gets != 0 {
			t.Errorf("%d calls/s: %d key-item calls per 1,000 calls, %d GetItems; want at most %d, no GetItem", c.perSecond, per1k, gets, c.maxPer1k)
		}
	}
}

// meteredKey is a Pebble table on clock behind a meter, and the store over it, holding one account (open
// until accessUntil) with one channel and one API key.
type meteredKey struct {
	pb    *pebble.Table
	tbl   *meteredTable
	st    *store.Store
	acc   *accounts.Service
	chID  string
	key   accounts.CreatedKey
	clock func() time.Time
}

func newMeteredKey(t *testing.T, clock func() time.Time, accessUntil time.Time) meteredKey {
	t.Helper()
	pb, err := pebble.Open(filepath.Join(t.TempDir(), "table"), pebble.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pb.Close() })
	m := meteredKey{pb: pb, tbl: &meteredTable{Table: pb, byKind: map[string]int{}}, clock: clock}
	m.st = store.New(m.tbl, store.WithClock(clock))
	m.acc = accounts.NewService(m.st, clock)
	ctx := context.Background()
	if _, err := m.acc.CreateAccount(ctx, "acct-1", accessUntil); err != nil {
		t.Fatal(err)
	}
	ch, err := m.acc.CreateChannel(ctx, "acct-1", "main")
	if err != nil {
		t.Fatal(err)
	}
	m.chID = ch.ID
	if m.key, err = m.acc.CreateKey(ctx, "acct-1", ch.ID, "test"); err != nil {
		t.Fatal(err)
	}
	return m
}

// api is one instance of the API over m's store (its own credential cache and leases), with perMinute
// other calls a minute (0: the default), and its authenticator.
func (m meteredKey) api(t *testing.T, perMinute int) (*rest.Server, rest.Authenticator) {
	t.Helper()
	authn := rest.BearerAuth(auth.NewAuthenticator(m.st, nil, 20*time.Second, auth.WithClock(m.clock)))
	api, err := wire.NewAPI(wire.APIConfig{
		Config: config.Config{Mode: config.Development, Version: "test", RequestsPerMinute: perMinute}, Store: m.st,
		Log: slog.New(slog.DiscardHandler), Now: m.clock, Auth: authn,
	})
	if err != nil {
		t.Fatal(err)
	}
	return api, authn
}
