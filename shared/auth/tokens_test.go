package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/creatorstrategy/css/shared/config"
)

func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHS256Verifier(t *testing.T) {
	const secret = "local-secret"
	v := NewHS256Verifier(secret)
	now := time.Now()
	exp := now.Add(time.Hour).Unix()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"valid", sign(t, jwt.SigningMethodHS256, []byte(secret), "", jwt.MapClaims{"sub": "acct-1", "exp": exp}), true},
		{"expired", sign(t, jwt.SigningMethodHS256, []byte(secret), "", jwt.MapClaims{"sub": "acct-1", "exp": now.Add(-time.Minute).Unix()}), false},
		{"no exp", sign(t, jwt.SigningMethodHS256, []byte(secret), "", jwt.MapClaims{"sub": "acct-1"}), false},
		{"no sub", sign(t, jwt.SigningMethodHS256, []byte(secret), "", jwt.MapClaims{"exp": exp}), false},
		{"wrong secret", sign(t, jwt.SigningMethodHS256, []byte("other"), "", jwt.MapClaims{"sub": "acct-1", "exp": exp}), false},
		{"HS384", sign(t, jwt.SigningMethodHS384, []byte(secret), "", jwt.MapClaims{"sub": "acct-1", "exp": exp}), false},
		{"RS256", sign(t, jwt.SigningMethodRS256, rsaKey, "", jwt.MapClaims{"sub": "acct-1", "exp": exp}), false},
		{"none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", jwt.MapClaims{"sub": "acct-1", "exp": exp}), false},
		{"garbage", "a.b.c", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := v.Verify(context.Background(), tt.token)
			if tt.ok {
				if err != nil || s.AccountID != "acct-1" || s.ExpiresAt.Unix() != exp {
					t.Fatalf("Verify = %+v, %v; want acct-1 expiring at %d", s, err, exp)
				}
			} else if err == nil {
				t.Fatalf("Verify accepted the token: %+v", s)
			}
		})
	}
}

func TestMintHS256RoundTrip(t *testing.T) {
	tok, err := MintHS256("s3cret", "acct-9", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewHS256Verifier("s3cret").Verify(context.Background(), tok)
	if err != nil || s.AccountID != "acct-9" {
		t.Fatalf("Verify(minted) = %+v, %v", s, err)
	}
	if d := time.Until(s.ExpiresAt); d <= 0 || d > time.Hour {
		t.Errorf("minted token expires in %v, want within the hour ahead", d)
	}
	if _, err := MintHS256("s3cret", "", time.Hour); err == nil {
		t.Error("MintHS256 with no account succeeded")
	}
	if _, err := MintHS256("s3cret", "acct-9", 0); err == nil {
		t.Error("MintHS256 with a zero ttl succeeded")
	}
}

func TestLocalSecret(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s1, err := LocalSecret(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s1) != 64 {
		t.Errorf("secret %q: want 64 hex characters", s1)
	}
	fi, err := os.Stat(filepath.Join(dir, "jwt-secret"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("secret file mode %o, want 600", perm)
	}
	s2, err := LocalSecret(dir)
	if err != nil || s2 != s1 {
		t.Fatalf("second LocalSecret = %q, %v; want the same secret %q", s2, err, s1)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data folder: %v, %v; want mode 0700", fi.Mode(), err)
	}
}

// TestLocalSecretRefusals: a secret file that group or others may read, or one too short to be a secret,
// is refused rather than used.
func TestLocalSecretRefusals(t *testing.T) {
	secret32 := strings.Repeat("x", 32)
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string // a part of the error; "" when accepted
	}{
		{"private, 32 bytes", secret32 + "\n", 0o600, ""},
		{"owner read-only", secret32, 0o400, ""},
		{"readable by others", secret32, 0o604, "mode 0604"},
		{"readable by the group", secret32, 0o640, "mode 0640"},
		{"writable by the group", secret32, 0o620, "mode 0620"},
		{"31 bytes", secret32[1:] + "\n", 0o600, "31 bytes"},
		{"empty", " \n", 0o600, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "jwt-secret")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			got, err := LocalSecret(dir)
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("data folder of mode 0755 left at %v, %v; want 0700", fi.Mode(), err)
			}
			if tt.want == "" {
				if err != nil || got != secret32 {
					t.Fatalf("LocalSecret = %q, %v; want the file's secret", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LocalSecret = %q, %v; want an error saying %q", got, err, tt.want)
			}
		})
	}
}

func TestNewTokenVerifier(t *testing.T) {
	dev, err := NewTokenVerifier(config.Config{Mode: config.Development, JWTSecret: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := MintHS256("abc", "acct-1", time.Minute)
	if _, err := dev.Verify(context.Background(), tok); err != nil {
		t.Errorf("development verifier refused a token signed with CSS_JWT_SECRET: %v", err)
	}

	dir := t.TempDir()
	devFile, err := NewTokenVerifier(config.Config{Mode: config.Development, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := LocalSecret(dir)
	tok, _ = MintHS256(secret, "acct-1", time.Minute)
	if _, err := devFile.Verify(context.Background(), tok); err != nil {
		t.Errorf("development verifier refused a token signed with the local secret: %v", err)
	}

	none, err := NewTokenVerifier(config.Config{Mode: config.Production})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Verify(context.Background(), tok); err == nil {
		t.Error("production without CSS_JWKS_URL accepted a session token")
	}
	if _, err := NewTokenVerifier(config.Config{Mode: config.Production, JWKSURL: "https://idp.example/jwks"}); err == nil {
		t.Error("JWKS without issuer and audience was accepted")
	}
}

// jwksServer serves a key set that tests can change, counting fetches.
type jwksServer struct {
	mu      sync.Mutex
	set     jose.JSONWebKeySet
	fetches int
	fail    bool
}

func (s *jwksServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches++
	if s.fail {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	_ = json.NewEncoder(w).Encode(s.set)
}

func (s *jwksServer) setKeys(keys ...jose.JSONWebKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set = jose.JSONWebKeySet{Keys: keys}
}

func (s *jwksServer) fetchCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestJWKSVerifier(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	srv := &jwksServer{}
	srv.setKeys(
		jose.JSONWebKey{Key: &rsaKey.PublicKey, KeyID: "rsa-1", Algorithm: "RS256", Use: "sig"},
		jose.JSONWebKey{Key: &ecKey.PublicKey, KeyID: "ec-1"},
		jose.JSONWebKey{Key: &ec384.PublicKey, KeyID: "ec-384"},
		jose.JSONWebKey{Key: &rsaKey.PublicKey, KeyID: "rsa-enc", Use: "enc"},
	)
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()

	clock := &testClock{t: time.Now()}
	v := NewJWKSVerifier(ts.URL, "https://issuer.example", "css", WithVerifierClock(clock.Now), WithHTTPClient(ts.Client()))
	if n := srv.fetchCount(); n != 0 {
		t.Fatalf("key set fetched %d times at construction, want 0 (lazily)", n)
	}
	exp := clock.Now().Add(time.Hour).Unix()
	good := jwt.MapClaims{"sub": "acct-1", "iss": "https://issuer.example", "aud": "css", "exp": exp}
	with := func(k string, val any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for k, v := range good {
			c[k] = v
		}
		if val == nil {
			delete(c, k)
		} else {
			c[k] = val
		}
		return c
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"RS256", sign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", good), true},
		{"ES256", sign(t, jwt.SigningMethodES256, ecKey, "ec-1", good), true},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", with("iss", "https://evil.example")), false},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", with("aud", "other")), false},
		{"no exp", sign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", with("exp", nil)), false},
		{"expired", sign(t, jwt.SigningMethodRS256, rsaKey, "rsa-1", with("exp", clock.Now().Add(-time.Hour).Unix())), false},
		{"no kid", sign(t, jwt.SigningMethodRS256, rsaKey, "", good), false},
		{"RSA key named as EC", sign(t, jwt.SigningMethodRS256, rsaKey, "ec-1", good), false},
		{"P-384 key", sign(t, jwt.SigningMethodES384, ec384, "ec-384", good), false},
		{"encryption key", sign(t, jwt.SigningMethodRS256, rsaKey, "rsa-enc", good), false},
		// Algorithm confusion: HS256 "signed" with the public key's bytes.
		{"HS256 with public key", sign(t, jwt.SigningMethodHS256, pubDER, "rsa-1", good), false},
		{"none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "rsa-1", good), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := v.Verify(context.Background(), tt.token)
			if tt.ok {
				if err != nil || s.AccountID != "acct-1" {
					t.Fatalf("Verify = %+v, %v; want acct-1", s, err)
				}
			} else if err == nil {
				t.Fatalf("Verify accepted the token: %+v", s)
			}
		})
	}
	if n := srv.fetchCount(); n != 1 {
		t.Errorf("key set fetched %d times, want 1 (cached; unknown kids within the refresh interval)", n)
	}
}

func TestJWKSVerifierRefresh(t *testing.T) {
	oldKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	newKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	srv := &jwksServer{}
	srv.setKeys(jose.JSONWebKey{Key: &oldKey.PublicKey, KeyID: "old"})
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	clock := &testClock{t: time.Now()}
	v := NewJWKSVerifier(ts.URL, "iss", "aud", WithVerifierClock(clock.Now), WithHTTPClient(ts.Client()))
	claims := jwt.MapClaims{"sub": "acct-1", "iss": "iss", "aud": "aud", "exp": clock.Now().Add(24 * time.Hour).Unix()}
	ctx := context.Background()
	verify := func(key *rsa.PrivateKey, kid string) error {
		_, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, key, kid, claims))
		return err
	}

	if err := verify(oldKey, "old"); err != nil {
		t.Fatal(err)
	}
	// The provider rotates: a token with the new kid triggers a refetch...
	srv.setKeys(jose.JSONWebKey{Key: &oldKey.PublicKey, KeyID: "old"}, jose.JSONWebKey{Key: &newKey.PublicKey, KeyID: "new"})
	clock.Advance(jwksMinRefresh)
	if err := verify(newKey, "new"); err != nil {
		t.Fatalf("token with a rotated-in kid: %v", err)
	}
	if n := srv.fetchCount(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
	// ...but unknown kids refetch at most once per interval.
	for range 5 {
		if err := verify(newKey, "unknown"); err == nil {
			t.Fatal("unknown kid accepted")
		}
	}
	if n := srv.fetchCount(); n != 2 {
		t.Errorf("fetches after unknown kids within the interval = %d, want 2", n)
	}
	clock.Advance(jwksMinRefresh)
	_ = verify(newKey, "unknown")
	if n := srv.fetchCount(); n != 3 {
		t.Errorf("fetches after the interval = %d, want 3", n)
	}

	// A stale set is refetched; when the provider is down the cached key keeps working.
	srv.mu.Lock()
	srv.fail = true
	srv.mu.Unlock()
	clock.Advance(jwksMaxAge)
	if err := verify(oldKey, "old"); err != nil {
		t.Errorf("cached key refused while the provider is down: %v", err)
	}
	if n := srv.fetchCount(); n != 4 {
		t.Errorf("fetches after the max age = %d, want 4", n)
	}
}

func TestJWKSVerifierUnavailable(t *testing.T) {
	srv := &jwksServer{fail: true}
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	v := NewJWKSVerifier(ts.URL, "iss", "aud", WithHTTPClient(ts.Client()))
	tok := sign(t, jwt.SigningMethodRS256, key, "k", jwt.MapClaims{"sub": "a", "iss": "iss", "aud": "aud", "exp": time.Now().Add(time.Hour).Unix()})
	_, err := v.Verify(context.Background(), tok)
	if !errors.Is(err, errJWKSUnavailable) {
		t.Errorf("Verify with the provider down = %v, want errJWKSUnavailable", err)
	}
}
