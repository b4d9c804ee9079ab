package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/config"
)

// logLines collects JSON log lines, safe for concurrent writes.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// events returns the `event` of each line that has one.
func (l *logLines) events(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if e, ok := rec["event"].(string); ok {
			out = append(out, e+"/"+rec["level"].(string))
		}
	}
	return out
}

func (l *logLines) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

// TestJWKSVerifierMaxStale: while the key-set URL fails, the last good set verifies until it is max-stale
// old, then every token is refused (401 through the authenticator) with an error line an operator's metric
// filter counts; a successful fetch ends it.
func TestJWKSVerifierMaxStale(t *testing.T) {
	key, srv, ts := serveOneKey(t)
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	logs := &logLines{}
	const maxStale = 24 * time.Hour
	v := NewJWKSVerifier(ts.URL, "iss", "aud", WithVerifierClock(clock.Now), WithHTTPClient(ts.Client()),
		WithMaxStale(maxStale), WithVerifierLogger(logs.logger()))
	verify := func() error {
		tok := sign(t, jwt.SigningMethodRS256, key, "k", jwt.MapClaims{"sub": "a", "iss": "iss", "aud": "aud",
			"exp": clock.Now().Add(time.Hour).Unix()})
		_, err := v.Verify(context.Background(), tok)
		return err
	}
	if err := verify(); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	srv.fail = true
	srv.mu.Unlock()

	// A refresh fails 30 s before the max stale time: the cached set still verifies, with a warning.
	clock.Advance(maxStale - jwksMinRefresh)
	if err := verify(); err != nil {
		t.Fatalf("%v before the max stale time: %v", jwksMinRefresh, err)
	}
	if got := logs.events(t); len(got) != 1 || got[0] != JWKSRefreshFailedEvent+"/WARN" {
		t.Fatalf("events before the max stale time: %v; want one %s warning", got, JWKSRefreshFailedEvent)
	}
	// At the max stale time the next refresh fails too: refused, with the error line alone (no "using the
	// cached key set").
	fetches := srv.fetchCount()
	clock.Advance(jwksMinRefresh)
	err := verify()
	if !errors.Is(err, errJWKSStale) || srv.fetchCount() != fetches+1 {
		t.Fatalf("at the max stale time: %v after %d fetches; want errJWKSStale after one", err, srv.fetchCount()-fetches)
	}
	if got := logs.events(t); len(got) != 2 || got[1] != JWKSStaleEvent+"/ERROR" {
		t.Fatalf("events = %v; want the warning, then one %s error line", got, JWKSStaleEvent)
	}
	// Within the refresh interval no fetch is tried, and the set is still refused.
	clock.Advance(time.Second)
	if err := verify(); !errors.Is(err, errJWKSStale) {
		t.Fatalf("between fetches: %v; want errJWKSStale", err)
	}
	if n := srv.fetchCount(); n != fetches+1 {
		t.Fatalf("%d fetches within the refresh interval", n-fetches-1)
	}
	want := []string{JWKSRefreshFailedEvent + "/WARN", JWKSStaleEvent + "/ERROR", JWKSStaleEvent + "/ERROR"}
	if got := logs.events(t); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events = %v, want %v", got, want)
	}

	// The authenticator answers 401, not 500: the refusal is the verifier's decision, not an outage.
	dir, _ := newFixture(t)
	a := NewAuthenticator(dir, v, 20*time.Second, WithClock(clock.Now))
	tok := sign(t, jwt.SigningMethodRS256, key, "k", jwt.MapClaims{"sub": "acct-1", "iss": "iss", "aud": "aud",
		"exp": clock.Now().Add(time.Hour).Unix()})
	_, err = a.Resolve(context.Background(), "Bearer "+tok)
	wantCode(t, err, apperr.Unauthorized)

	srv.mu.Lock()
	srv.fail = false
	srv.mu.Unlock()
	clock.Advance(jwksMinRefresh)
	if err := verify(); err != nil {
		t.Fatalf("after the provider recovered: %v", err)
	}
}

// redirector serves the key set at /jwks of a TLS server, and redirects elsewhere from other paths.
func redirector(t *testing.T, keys jose.JSONWebKeySet) (base string, client *http.Client) {
	t.Helper()
	body, _ := json.Marshal(keys)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	t.Cleanup(plain.Close)
	mux := http.NewServeMux()
	ts := httptest.NewTLSServer(mux)
	t.Cleanup(ts.Close)
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	redirect := func(path, to string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
	}
	// example.com is in the test certificate, and the client below dials it on this server.
	redirect("/other-host", "https://example.com:"+port+"/jwks")
	redirect("/to-http", plain.URL+"/jwks")
	redirect("/same-host", "/jwks")
	redirect("/loop", "/loop")
	for i := range jwksMaxRedirects + 1 {
		to := "/jwks"
		if i > 0 {
			to = fmt.Sprint("/hops/", i-1)
		}
		redirect(fmt.Sprint("/hops/", i), to) // /hops/i is i+1 redirects from the key set
	}
	client = ts.Client()
	tr := client.Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "example.com:") {
			addr = ts.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	client.Transport = tr
	return ts.URL, client
}

// TestJWKSVerifierHTTPSOnly: the key set is fetched over https only, and a redirect is followed only to
// https on the same host.
func TestJWKSVerifierHTTPSOnly(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	base, client := redirector(t, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k"}}})
	plain := &jwksServer{}
	plain.setKeys(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k"})
	plainTS := httptest.NewServer(plain)
	defer plainTS.Close()
	tok := sign(t, jwt.SigningMethodRS256, key, "k", jwt.MapClaims{"sub": "a", "iss": "iss", "aud": "aud",
		"exp": time.Now().Add(time.Hour).Unix()})
	tests := []struct {
		name, url string
		ok        bool
	}{
		{"https", base + "/jwks", true},
		{"redirect on the same host", base + "/same-host", true},
		{"redirect to another host", base + "/other-host", false},
		{"redirect to http", base + "/to-http", false},
		{"redirect loop", base + "/loop", false},
		{"the most redirects", fmt.Sprint(base, "/hops/", jwksMaxRedirects-1), true},
		{"one redirect too many", fmt.Sprint(base, "/hops/", jwksMaxRedirects), false},
		{"http", plainTS.URL + "/jwks", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewJWKSVerifier(tt.url, "iss", "aud", WithHTTPClient(client), WithVerifierLogger(slog.New(slog.DiscardHandler)))
			_, err := v.Verify(context.Background(), tok)
			if tt.ok && err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !tt.ok && !errors.Is(err, errJWKSUnavailable) {
				t.Fatalf("Verify = %v; want the key set unavailable", err)
			}
		})
	}
	if n := plain.fetchCount(); n != 0 {
		t.Errorf("the http key set was fetched %d times", n)
	}
	// The caller's client keeps its own redirect policy.
	if client.CheckRedirect != nil {
		t.Error("NewJWKSVerifier changed the caller's client")
	}
}

// es256Token is a token "signed" with ES256 under kid, with a signature of the right length: a P-384 key
// can sign no such token, so this is the only way a token reaches the curve check.
func es256Token(kid string, claims jwt.MapClaims) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": kid})
	c, _ := json.Marshal(claims)
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + "." + enc.EncodeToString(make([]byte, 64))
}

// TestJWKSKeyChecks: keys the verifier must never use, each refused for its own reason.
func TestJWKSKeyChecks(t *testing.T) {
	good, _ := rsa.GenerateKey(rand.Reader, 2048)
	weak, _ := rsa.GenerateKey(rand.Reader, 2047)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	ec256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := &jwksServer{}
	srv.setKeys(
		jose.JSONWebKey{Key: &ec256.PublicKey, KeyID: "ec-256"},
		jose.JSONWebKey{Key: &good.PublicKey, KeyID: "rsa-2048"},
		jose.JSONWebKey{Key: &weak.PublicKey, KeyID: "rsa-2047"},
		jose.JSONWebKey{Key: &ec384.PublicKey, KeyID: "ec-384"},
		jose.JSONWebKey{Key: &good.PublicKey, KeyID: "rs384-only", Algorithm: "RS384"},
	)
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	v := NewJWKSVerifier(ts.URL, "iss", "aud", WithHTTPClient(ts.Client()))
	claims := jwt.MapClaims{"sub": "a", "iss": "iss", "aud": "aud", "exp": time.Now().Add(time.Hour).Unix()}
	tests := []struct {
		name, token, why string
	}{
		{"2048-bit RSA", sign(t, jwt.SigningMethodRS256, good, "rsa-2048", claims), ""},
		{"2047-bit RSA", sign(t, jwt.SigningMethodRS256, weak, "rsa-2047", claims), "2047-bit RSA key"},
		{"P-384 key for ES256", es256Token("ec-384", claims), `key "ec-384" does not fit algorithm ES256`},
		{"key published for another algorithm", sign(t, jwt.SigningMethodRS256, good, "rs384-only", claims), "is for RS384"},
		{"ES256 token naming an RSA key", es256Token("rsa-2048", claims), `key "rsa-2048" does not fit algorithm ES256`},
		{"RS256 token naming an EC key", sign(t, jwt.SigningMethodRS256, good, "ec-256", claims), `key "ec-256" does not fit algorithm RS256`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tt.token)
			if tt.why == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Verify = %v; want a refusal saying %q", err, tt.why)
			}
		})
	}
}

// TestJWKSKeysNeedAKid: a key without a kid is not a usable key; a set of only such keys is no set, and
// unusable keys ahead of a usable one do not hide it.
func TestJWKSKeysNeedAKid(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tok := sign(t, jwt.SigningMethodRS256, key, "k", jwt.MapClaims{"sub": "a", "iss": "iss", "aud": "aud",
		"exp": time.Now().Add(time.Hour).Unix()})
	for _, tt := range []struct {
		name string
		keys []jose.JSONWebKey
		ok   bool
	}{
		{"only kid-less keys", []jose.JSONWebKey{{Key: &key.PublicKey}}, false},
		{"a kid-less key, then the key", []jose.JSONWebKey{{Key: &key.PublicKey}, {Key: &key.PublicKey, KeyID: "k"}}, true},
		{"an encryption key, then the key", []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "e", Use: "enc"}, {Key: &key.PublicKey, KeyID: "k"}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := &jwksServer{}
			srv.setKeys(tt.keys...)
			ts := httptest.NewTLSServer(srv)
			defer ts.Close()
			v := NewJWKSVerifier(ts.URL, "iss", "aud", WithHTTPClient(ts.Client()))
			_, err := v.Verify(context.Background(), tok)
			if tt.ok && err != nil {
				t.Fatal(err)
			}
			if !tt.ok && !errors.Is(err, errJWKSUnavailable) {
				t.Fatalf("Verify = %v; want the key set unusable", err)
			}
		})
	}
}

// TestJWKSFetchIsBounded: a key-set URL that never answers fails the fetch at the client's timeout, 5 s
// unless the caller brings its own client.
func TestJWKSFetchIsBounded(t *testing.T) {
	if got := NewJWKSVerifier("https://idp.example/jwks", "iss", "aud").client.Timeout; got != 5*time.Second {
		t.Fatalf("default fetch timeout %v, want 5s", got)
	}
	release := make(chan struct{})
	ts := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer ts.Close()
	defer close(release)
	client := ts.Client()
	client.Timeout = 50 * time.Millisecond
	v := NewJWKSVerifier(ts.URL, "iss", "aud", WithHTTPClient(client))
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tok := sign(t, jwt.SigningMethodRS256, key, "k", jwt.MapClaims{"sub": "a", "iss": "iss", "aud": "aud",
		"exp": time.Now().Add(time.Hour).Unix()})
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, errJWKSUnavailable) {
		t.Fatalf("Verify against a key set that never answers = %v; want the key set unavailable", err)
	}
}

// TestLeeway: exp, nbf and iat each allow the configured clock skew, to the second, and no more.
func TestLeeway(t *testing.T) {
	const leeway = 30 * time.Second
	secret := strings.Repeat("k", 32)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return now.Add(d).Unix() }
	hour := time.Hour
	tests := []struct {
		name   string
		claims jwt.MapClaims
		ok     bool
	}{
		{"expired within the leeway", jwt.MapClaims{"exp": at(-leeway + time.Second)}, true},
		{"expired by the leeway", jwt.MapClaims{"exp": at(-leeway)}, false},
		{"not yet valid, within the leeway", jwt.MapClaims{"exp": at(hour), "nbf": at(leeway)}, true},
		{"not yet valid, past the leeway", jwt.MapClaims{"exp": at(hour), "nbf": at(leeway + time.Second)}, false},
		{"issued in the future, within the leeway", jwt.MapClaims{"exp": at(hour), "iat": at(leeway)}, true},
		{"issued in the future, past the leeway", jwt.MapClaims{"exp": at(hour), "iat": at(leeway + time.Second)}, false},
	}
	v := NewHS256Verifier(secret, WithVerifierClock(func() time.Time { return now }), WithLeeway(leeway))
	noLeeway := NewHS256Verifier(secret, WithVerifierClock(func() time.Time { return now }), WithLeeway(0))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.claims["sub"] = "acct-1"
			tok := sign(t, jwt.SigningMethodHS256, []byte(secret), "", tt.claims)
			if _, err := v.Verify(context.Background(), tok); (err == nil) != tt.ok {
				t.Fatalf("Verify = %v; want accepted %t", err, tt.ok)
			}
			// Every case is off the clock by 29 s or more: without leeway, none passes.
			if _, err := noLeeway.Verify(context.Background(), tok); err == nil {
				t.Fatal("accepted without leeway")
			}
		})
	}
	if DefaultLeeway != config.DefaultJWTLeeway {
		t.Fatalf("DefaultLeeway %v, config's %v", DefaultLeeway, config.DefaultJWTLeeway)
	}
}

// TestProductionVerifierIsComplete: the verifier NewTokenVerifier builds from a production configuration
// checks the issuer, the audience, the leeway and the max stale time it was given.
func TestProductionVerifierIsComplete(t *testing.T) {
	key, srv, ts := serveOneKey(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := &testClock{t: now}
	cfg := config.Config{Mode: config.Production, JWKSURL: ts.URL, JWTIssuer: "https://idp.example", JWTAudience: "css",
		JWTLeeway: 10 * time.Second, JWKSMaxStale: 2 * time.Hour}
	v, err := NewTokenVerifier(cfg, WithHTTPClient(ts.Client()), WithVerifierClock(clock.Now),
		WithVerifierLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	good := func() jwt.MapClaims {
		return jwt.MapClaims{"sub": "acct-1", "iss": cfg.JWTIssuer, "aud": cfg.JWTAudience, "exp": now.Add(time.Hour).Unix()}
	}
	with := func(k string, val any) jwt.MapClaims { c := good(); c[k] = val; return c }
	tests := []struct {
		name   string
		claims jwt.MapClaims
		ok     bool
	}{
		{"good", good(), true},
		{"another issuer", with("iss", "https://evil.example"), false},
		{"another audience", with("aud", "other"), false},
		{"expired within the configured leeway", with("exp", now.Add(-9*time.Second).Unix()), true},
		{"expired past the configured leeway", with("exp", now.Add(-10*time.Second).Unix()), false},
	}
	for _, tt := range tests {
		s, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, key, "k", tt.claims))
		if tt.ok != (err == nil) || (tt.ok && s.AccountID != "acct-1") {
			t.Errorf("%s: Verify = %+v, %v; want accepted %t", tt.name, s, err, tt.ok)
		}
	}
	srv.mu.Lock()
	srv.fail = true
	srv.mu.Unlock()
	clock.Advance(2 * time.Hour)
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, key, "k", with("exp", clock.Now().Add(time.Hour).Unix()))); !errors.Is(err, errJWKSStale) {
		t.Errorf("after the configured max stale time: %v; want errJWKSStale", err)
	}

	for name, c := range map[string]config.Config{
		"no issuer":   {Mode: config.Production, JWKSURL: ts.URL, JWTAudience: "css"},
		"no audience": {Mode: config.Production, JWKSURL: ts.URL, JWTIssuer: "https://idp.example"},
		"http URL":    {Mode: config.Production, JWKSURL: "http://idp.example/jwks", JWTIssuer: "i", JWTAudience: "a"},
		"no host":     {Mode: config.Production, JWKSURL: "https:///jwks", JWTIssuer: "i", JWTAudience: "a"},
		"not a URL":   {Mode: config.Production, JWKSURL: "https://idp.example/%zz", JWTIssuer: "i", JWTAudience: "a"},
	} {
		if _, err := NewTokenVerifier(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestJWKSRootCAs: with WithRootCAs the key set is fetched trusting that pool alone: a server whose CA is not
// in it is refused (the key set cannot be fetched, so the token is not accepted), one whose CA is is trusted.
func TestJWKSRootCAs(t *testing.T) {
	key, _, ts := serveOneKey(t)
	tok := sign(t, jwt.SigningMethodRS256, key, "k", jwt.MapClaims{"sub": "a", "iss": "iss", "aud": "aud",
		"exp": time.Now().Add(time.Hour).Unix()})
	quiet := WithVerifierLogger(slog.New(slog.DiscardHandler))

	other := x509.NewCertPool()
	stranger, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &stranger.PublicKey, stranger)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	other.AddCert(ca)
	if _, err := NewJWKSVerifier(ts.URL, "iss", "aud", WithRootCAs(other), quiet).Verify(context.Background(), tok); err == nil {
		t.Fatal("a key set served under a CA outside the pool was trusted")
	}

	own := x509.NewCertPool()
	own.AddCert(ts.Certificate())
	if _, err := NewJWKSVerifier(ts.URL, "iss", "aud", WithRootCAs(own), quiet).Verify(context.Background(), tok); err != nil {
		t.Fatalf("a key set served under the pool's CA: %v", err)
	}
}

// serveOneKey serves a key set of one RSA key, id "k", over TLS until the test ends.
func serveOneKey(t *testing.T) (*rsa.PrivateKey, *jwksServer, *httptest.Server) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	srv := &jwksServer{}
	srv.setKeys(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k"})
	ts := httptest.NewTLSServer(srv)
	t.Cleanup(ts.Close)
	return key, srv, ts
}

// TestJWKSPrefetch: a prefetched set serves the first token without another fetch; a token that arrives
// while the prefetch is in flight waits for it instead of fetching; a failed prefetch is logged and the
// first token fetches at once; a held set is not fetched again.
func TestJWKSPrefetch(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	claims := jwt.MapClaims{"sub": "acct-1", "iss": "iss", "aud": "aud", "exp": time.Now().Add(time.Hour).Unix()}
	tok := sign(t, jwt.SigningMethodRS256, key, "k", claims)
	ctx := context.Background()

	t.Run("then a token", func(t *testing.T) {
		srv := &jwksServer{}
		srv.setKeys(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k"})
		ts := httptest.NewTLSServer(srv)
		defer ts.Close()
		v := NewJWKSVerifier(ts.URL, "iss", "aud", WithHTTPClient(ts.Client()))
		v.Prefetch(ctx)
		if n := srv.fetchCount(); n != 1 {
			t.Fatalf("fetches after Prefetch = %d, want 1", n)
		}
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
		v.Prefetch(ctx)
		if n := srv.fetchCount(); n != 1 {
			t.Errorf("fetches after a token and a second Prefetch = %d, want 1", n)
		}
	})

	t.Run("a token during the fetch", func(t *testing.T) {
		srv := &jwksServer{}
		srv.setKeys(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k"})
		arrived, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { close(arrived); <-release })
			srv.ServeHTTP(w, r)
		}))
		defer ts.Close()
		v := NewJWKSVerifier(ts.URL, "iss", "aud", WithHTTPClient(ts.Client()))
		prefetched := make(chan struct{})
		go func() { v.Prefetch(ctx); close(prefetched) }()
		<-arrived
		verified := make(chan error, 1)
		go func() { _, err := v.Verify(ctx, tok); verified <- err }()
		select {
		case err := <-verified:
			t.Fatalf("Verify returned (%v) while the prefetch was in flight", err)
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		<-prefetched
		if err := <-verified; err != nil {
			t.Fatal(err)
		}
		if n := srv.fetchCount(); n != 1 {
			t.Errorf("fetches = %d, want 1 (the token waited for the prefetch)", n)
		}
	})

	t.Run("failed", func(t *testing.T) {
		srv := &jwksServer{fail: true}
		srv.setKeys(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k"})
		ts := httptest.NewTLSServer(srv)
		defer ts.Close()
		var logs logLines
		clock := &testClock{t: time.Now()}
		v := NewJWKSVerifier(ts.URL, "iss", "aud", WithHTTPClient(ts.Client()), WithVerifierClock(clock.Now),
			WithVerifierLogger(logs.logger()))
		v.Prefetch(ctx)
		if got := logs.events(t); !slices.Equal(got, []string{JWKSPrefetchFailedEvent + "/WARN"}) {
			t.Errorf("log events = %v, want the prefetch's warning", got)
		}
		srv.mu.Lock()
		srv.fail = false
		srv.mu.Unlock()
		// The same instant: a failed prefetch does not hold the first token back for jwksMinRefresh.
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("the first token after a failed prefetch: %v", err)
		}
		if n := srv.fetchCount(); n != 2 {
			t.Errorf("fetches = %d, want 2", n)
		}
	})
}
