package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/oauth"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	srv      *httptest.Server
	p        *oauth.Provider
	v        mcpgrant.Verifier
	st       *store.Store
	authn    *auth.Authenticator
	accts    *accounts.Service
	clock    *clock
	keyA     accounts.CreatedKey
	keyB     accounts.CreatedKey
	channelA string
}

// newFixture serves a provider for its own httptest address over a memory table, with two channels of
// one account, each with a key. issuer overrides the provider's issuer (another resource).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := &clock{t: time.Now()} // the library checks its own expiries on the real clock
	st := store.New(memstore.New(t, pebble.WithClock(c.now)), store.WithClock(c.now))
	accts := accounts.NewService(st, c.now)
	ctx := context.Background()
	if _, err := accts.CreateAccount(ctx, "acct", c.now().Add(365*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, accts: accts, clock: c}
	for i, name := range []string{"Channel A", "Channel B"} {
		ch, err := accts.CreateChannel(ctx, "acct", name)
		if err != nil {
			t.Fatal(err)
		}
		k, err := accts.CreateKey(ctx, "acct", ch.ID, "k")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			f.keyA, f.channelA = k, ch.ID
		} else {
			f.keyB = k
		}
	}
	f.authn = auth.NewAuthenticator(st, nil, 20*time.Second, auth.WithClock(c.now))
	cipher, err := webhooks.NewAESGCM(make([]byte, webhooks.KeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.p = oauth.New(oauth.Config{Issuer: f.srv.URL, Records: st, Keys: f.authn, Cipher: cipher, Now: c.now,
		Fetch: http.DefaultClient, AllowHTTPClientIDs: true, Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	mux.Handle("/", f.p.Handler())
	f.v = mcpgrant.Verifier{Records: st, Keys: f.authn, Resource: f.p.Resource(), Now: c.now}
	return f
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func postForm(t *testing.T, u string, form url.Values) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := noRedirect.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return resp, v
}

// register registers a public client by DCR and returns its id.
func (f *fixture) register(t *testing.T) string {
	t.Helper()
	resp, err := http.Post(f.srv.URL+oauth.PathRegister, "application/json",
		strings.NewReader(`{"redirect_uris":["http://127.0.0.1:9/cb"],"client_name":"Test client","token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	return v.ClientID
}

// signIn runs the browserless flow (consent with key, code with PKCE) and returns the token response.
func (f *fixture) signIn(t *testing.T, clientID, key, resource string) map[string]any {
	t.Helper()
	code, verifier := f.authorize(t, clientID, key, resource)
	resp, tok := f.exchange(t, clientID, code, verifier, resource)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token: %d %v", resp.StatusCode, tok)
	}
	return tok
}

// authorize consents with key, with PKCE, and returns the code and its verifier.
func (f *fixture) authorize(t *testing.T, clientID, key, resource string) (code, verifier string) {
	t.Helper()
	verifier = strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"state": {"state-123456"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}, "resource": {resource}, "scope": {"mcp"}}
	form := url.Values{}
	for k, v := range q {
		form[k] = v
	}
	form.Set("css_api_key", key)
	form.Set("css_step", "allow")
	resp, _ := postForm(t, f.srv.URL+oauth.PathAuthorize, form)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("code"), verifier
}

// exchange trades a code for tokens.
func (f *fixture) exchange(t *testing.T, clientID, code, verifier, resource string) (*http.Response, map[string]any) {
	t.Helper()
	return postForm(t, f.srv.URL+oauth.PathToken, url.Values{"grant_type": {"authorization_code"},
		"code": {code}, "redirect_uri": {"http://127.0.0.1:9/cb"}, "client_id": {clientID},
		"code_verifier": {verifier}, "resource": {resource}})
}

func code(err error) apperr.Code { return apperr.CodeOf(err) }

func TestSignInActsAsTheKey(t *testing.T) {
	f := newFixture(t)
	tok := f.signIn(t, f.register(t), f.keyA.Key, f.p.Resource())
	at, _ := tok["access_token"].(string)
	p, err := f.v.Principal(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	if p.ChannelID != f.channelA || p.KeyID != f.keyA.ID || p.KeyHash != auth.HashKey(f.keyA.Key) {
		t.Fatalf("principal %+v, want channel A as key A", p)
	}
	grants, err := f.st.MCPGrants(context.Background(), f.channelA)
	if err != nil || len(grants) != 1 || grants[0].ClientName != "Test client" || len(grants[0].Tokens) != 3 {
		t.Fatalf("grants %+v, %v", grants, err)
	}
	// The table keeps the SHA-256 of each token, never the token nor its HMAC half.
	_, sig, _ := strings.Cut(at, ".")
	if !slices.Contains(grants[0].Tokens, "at#"+auth.HashKey(at)) || slices.ContainsFunc(grants[0].Tokens, func(k string) bool {
		return strings.Contains(k, sig)
	}) {
		t.Fatalf("the grant's token keys %v: want at#<sha256 of the token>", grants[0].Tokens)
	}
	// Refresh rotates: the new access token works, the old one and the used refresh token do not.
	resp, tok2 := postForm(t, f.srv.URL+oauth.PathToken, url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {tok["refresh_token"].(string)}, "client_id": {grants[0].ClientID}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("refresh: %d %v", resp.StatusCode, tok2)
	}
	if _, err := f.v.Principal(context.Background(), tok2["access_token"].(string)); err != nil {
		t.Fatalf("refreshed token: %v", err)
	}
	if _, err := f.v.Principal(context.Background(), at); code(err) != apperr.Unauthorized {
		t.Fatalf("old access token after refresh: %v", err)
	}
	resp, _ = postForm(t, f.srv.URL+oauth.PathToken, url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {tok["refresh_token"].(string)}, "client_id": {grants[0].ClientID}})
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("used refresh token: %d, want 400", resp.StatusCode)
	}
}

func TestTokenRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("expired", func(t *testing.T) {
		f := newFixture(t)
		at := f.signIn(t, f.register(t), f.keyA.Key, f.p.Resource())["access_token"].(string)
		f.clock.add(oauth.AccessTokenLifetime + time.Minute)
		if _, err := f.v.Principal(ctx, at); code(err) != apperr.Unauthorized || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("got %v, want 401 expired", err)
		}
	})
	// RFC 6749 4.1.2: a code used twice is refused, and what its first use issued is revoked.
	t.Run("code used twice", func(t *testing.T) {
		f := newFixture(t)
		client := f.register(t)
		authCode, verifier := f.authorize(t, client, f.keyA.Key, f.p.Resource())
		resp, tok := f.exchange(t, client, authCode, verifier, f.p.Resource())
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("first exchange: %d %v", resp.StatusCode, tok)
		}
		resp, body := f.exchange(t, client, authCode, verifier, f.p.Resource())
		if resp.StatusCode != http.StatusBadRequest || body["error"] != "invalid_grant" {
			t.Fatalf("second exchange: %d %v, want 400 invalid_grant", resp.StatusCode, body)
		}
		if _, err := f.v.Principal(ctx, tok["access_token"].(string)); code(err) != apperr.Unauthorized {
			t.Fatalf("the first exchange's access token: %v, want 401", err)
		}
		if g, _ := f.st.MCPGrants(ctx, f.channelA); len(g) != 0 {
			t.Fatalf("grants left: %+v", g)
		}
	})
	t.Run("revoked by the client", func(t *testing.T) {
		f := newFixture(t)
		client := f.register(t)
		tok := f.signIn(t, client, f.keyA.Key, f.p.Resource())
		resp, _ := postForm(t, f.srv.URL+oauth.PathRevoke, url.Values{"token": {tok["refresh_token"].(string)}, "client_id": {client}})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("revoke: %d", resp.StatusCode)
		}
		if _, err := f.v.Principal(ctx, tok["access_token"].(string)); code(err) != apperr.Unauthorized {
			t.Fatalf("got %v, want 401", err)
		}
		if g, _ := f.st.MCPGrants(ctx, f.channelA); len(g) != 0 {
			t.Fatalf("grants left: %+v", g)
		}
	})
	t.Run("key revoked", func(t *testing.T) {
		f := newFixture(t)
		tok := f.signIn(t, f.register(t), f.keyA.Key, f.p.Resource())
		at := tok["access_token"].(string)
		hash, err := f.accts.RevokeKeyHash(ctx, "acct", f.keyA.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.authn.Forget(hash)
		if _, err := f.v.Principal(ctx, at); code(err) != apperr.Unauthorized {
			t.Fatalf("got %v, want 401", err)
		}
		// Its refresh token is refused too, and the grant goes.
		grants, _ := f.st.MCPGrants(ctx, f.channelA)
		resp, body := postForm(t, f.srv.URL+oauth.PathToken, url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {tok["refresh_token"].(string)}, "client_id": {grants[0].ClientID}})
		if resp.StatusCode != http.StatusBadRequest || body["error"] != "invalid_grant" {
			t.Fatalf("refresh after the key's revocation: %d %v", resp.StatusCode, body)
		}
		if g, _ := f.st.MCPGrants(ctx, f.channelA); len(g) != 0 {
			t.Fatalf("grants left: %+v", g)
		}
	})
	t.Run("wrong audience", func(t *testing.T) {
		f := newFixture(t)
		// A resource this server does not serve is refused at the authorization endpoint...
		form := url.Values{"response_type": {"code"}, "client_id": {f.register(t)}, "redirect_uri": {"http://127.0.0.1:9/cb"},
			"state": {"state-123456"}, "code_challenge": {strings.Repeat("c", 43)}, "code_challenge_method": {"S256"},
			"resource": {"https://elsewhere.example/mcp"}}
		resp, _ := postForm(t, f.srv.URL+oauth.PathAuthorize, form)
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound ||
			!strings.Contains(loc, "error=invalid_request") {
			t.Fatalf("authorize for another resource: %d %q", resp.StatusCode, loc)
		}
		// ...and a token another deployment's server issued (same table and secret, another resource) is
		// refused here.
		other := oauth.New(oauth.Config{Issuer: "https://other.example", Records: f.st, Keys: f.authn,
			Cipher: mustCipher(t), Now: f.clock.now})
		otherSrv := httptest.NewServer(other.Handler())
		defer otherSrv.Close()
		g := &fixture{srv: otherSrv, p: other, st: f.st}
		at := g.signIn(t, g.register(t), f.keyA.Key, other.Resource())["access_token"].(string)
		otherV := mcpgrant.Verifier{Records: f.st, Keys: f.authn, Resource: other.Resource(), Now: f.clock.now}
		if _, err := otherV.Principal(ctx, at); err != nil {
			t.Fatalf("the other server's own token: %v", err)
		}
		if _, err := f.v.Principal(ctx, at); code(err) != apperr.Unauthorized || !strings.Contains(err.Error(), "resource") {
			t.Fatalf("got %v, want 401 not issued for this resource", err)
		}
	})
	t.Run("wrong key on the consent page", func(t *testing.T) {
		f := newFixture(t)
		form := url.Values{"response_type": {"code"}, "client_id": {f.register(t)}, "redirect_uri": {"http://127.0.0.1:9/cb"},
			"state": {"state-123456"}, "code_challenge": {strings.Repeat("c", 43)}, "code_challenge_method": {"S256"},
			"css_api_key": {"sk-css-00000000000000000000000000000000"}, "css_step": {"allow"}}
		resp, _ := postForm(t, f.srv.URL+oauth.PathAuthorize, form)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Location") != "" {
			t.Fatalf("unknown key: %d %q, want 401 and no code", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("no PKCE", func(t *testing.T) {
		f := newFixture(t)
		form := url.Values{"response_type": {"code"}, "client_id": {f.register(t)}, "redirect_uri": {"http://127.0.0.1:9/cb"},
			"state": {"state-123456"}, "css_api_key": {f.keyA.Key}, "css_step": {"allow"}}
		resp, _ := postForm(t, f.srv.URL+oauth.PathAuthorize, form)
		if !strings.Contains(resp.Header.Get("Location"), "error=invalid_request") {
			t.Fatalf("without PKCE: %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}

func mustCipher(t *testing.T) webhooks.Cipher {
	t.Helper()
	c, err := webhooks.NewAESGCM(make([]byte, webhooks.KeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// A client named by its Client ID Metadata Document signs in with no registration; the document is fetched
// through the given client, so one refusing private addresses never reaches a loopback document.
func TestClientMetadataDocument(t *testing.T) {
	var fetched atomic.Int32
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "http://" + r.Host + r.URL.Path,
			"client_name": "Doc client", "redirect_uris": []string{"http://127.0.0.1:9/cb"}, "token_endpoint_auth_method": "none"})
	}))
	defer docs.Close()
	clientID := docs.URL + "/client.json"

	t.Run("fetched and used", func(t *testing.T) {
		f := newFixture(t)
		at := f.signIn(t, clientID, f.keyA.Key, f.p.Resource())["access_token"].(string)
		if p, err := f.v.Principal(context.Background(), at); err != nil || p.ChannelID != f.channelA {
			t.Fatalf("principal %+v, %v", p, err)
		}
		grants, err := f.st.MCPGrants(context.Background(), f.channelA)
		if err != nil || len(grants) != 1 || grants[0].ClientID != clientID || grants[0].ClientName != "Doc client" {
			t.Fatalf("grants %+v, %v", grants, err)
		}
	})
	t.Run("private address refused", func(t *testing.T) {
		f := newFixture(t)
		locked := oauth.New(oauth.Config{Issuer: f.srv.URL, Records: f.st, Keys: f.authn, Cipher: mustCipher(t), Now: f.clock.now,
			Fetch:              httppost.HTTPClient(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: false}}),
			AllowHTTPClientIDs: true})
		srv := httptest.NewServer(locked.Handler())
		defer srv.Close()
		before := fetched.Load()
		q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/cb"},
			"state": {"state-123456"}, "code_challenge": {strings.Repeat("c", 43)}, "code_challenge_method": {"S256"}}
		resp, err := noRedirect.Get(srv.URL + oauth.PathAuthorize + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Fatalf("a loopback metadata document under the cloud's policy: %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		if fetched.Load() != before {
			t.Fatal("the document was fetched from a loopback address")
		}
	})
}
