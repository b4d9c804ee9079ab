package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/privatedir"
)

// Session is what a verified session token says.
type Session struct {
	AccountID string
	// ExpiresAt is the token's exp: nothing may treat the token as valid after it.
	ExpiresAt time.Time
}

// TokenVerifier checks a session token (decision 3). Any error means the token is not accepted; the
// message says why without quoting the token.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (Session, error)
}

// NewTokenVerifier returns the verifier the configuration asks for: HS256 with CSS_JWT_SECRET (or the local
// stack's generated secret) in development, JWKS with issuer and audience checks in production, each
// allowing cfg.JWTLeeway of clock skew. Nothing is fetched here: the JWKS is read on first use. opts apply
// after the configuration's (a logger; tests give a clock and an HTTP client).
func NewTokenVerifier(cfg config.Config, opts ...VerifierOption) (TokenVerifier, error) {
	opts = append([]VerifierOption{WithLeeway(cfg.JWTLeeway), WithMaxStale(cfg.JWKSMaxStale)}, opts...)
	if cfg.Mode == config.Development {
		secret := cfg.JWTSecret
		if secret == "" {
			var err error
			if secret, err = LocalSecret(cfg.DataDir); err != nil {
				return nil, err
			}
		}
		return NewHS256Verifier(secret, opts...), nil
	}
	if cfg.JWKSURL == "" {
		newSettings(opts).log.Warn("CSS_JWKS_URL is not set: session tokens are refused, only API keys are accepted")
		return noSessions{}, nil
	}
	if cfg.JWTIssuer == "" || cfg.JWTAudience == "" {
		return nil, errors.New("CSS_JWT_ISSUER and CSS_JWT_AUDIENCE are required with CSS_JWKS_URL")
	}
	if err := checkJWKSURL(cfg.JWKSURL); err != nil {
		return nil, fmt.Errorf("CSS_JWKS_URL: %w", err)
	}
	return NewJWKSVerifier(cfg.JWKSURL, cfg.JWTIssuer, cfg.JWTAudience, opts...), nil
}

type noSessions struct{}

func (noSessions) Verify(context.Context, string) (Session, error) {
	return Session{}, errors.New("session tokens are not accepted by this deployment")
}

// DefaultLeeway is the clock skew a verifier allows on exp, nbf and iat unless told otherwise
// (config.DefaultJWTLeeway).
const DefaultLeeway = config.DefaultJWTLeeway

// settings are what the VerifierOptions set.
type settings struct {
	now      func() time.Time
	leeway   time.Duration
	maxStale time.Duration
	client   *http.Client
	roots    *x509.CertPool
	log      *slog.Logger
}

// VerifierOption configures a token verifier.
type VerifierOption func(*settings)

func newSettings(opts []VerifierOption) settings {
	s := settings{
		now: time.Now, leeway: DefaultLeeway, maxStale: config.DefaultJWKSMaxStale,
		log: slog.Default(),
	}
	for _, o := range opts {
		o(&s)
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: jwksFetchTimeout}
		if s.roots != nil {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.TLSClientConfig = &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12}
			s.client.Transport = tr
		}
	}
	return s
}

// WithHTTPClient sets the client used to fetch the key set. Its redirects are held to the verifier's
// rules (https, same host) whatever its own CheckRedirect says.
func WithHTTPClient(c *http.Client) VerifierOption { return func(s *settings) { s.client = c } }

// WithRootCAs makes the default client trust pool instead of the system's roots: for a key set served under
// a CA the deployment knows (Amazon Cognito's chains to Amazon's roots), whose small pool a cold start loads
// in a fraction of the time the system pool takes. Ignored with WithHTTPClient.
func WithRootCAs(pool *x509.CertPool) VerifierOption { return func(s *settings) { s.roots = pool } }

// WithVerifierClock sets the clock used for exp/nbf/iat and for the refresh schedule (tests).
func WithVerifierClock(now func() time.Time) VerifierOption { return func(s *settings) { s.now = now } }

// WithLeeway allows d of clock skew between the token's issuer and this process on exp, nbf and iat.
func WithLeeway(d time.Duration) VerifierOption { return func(s *settings) { s.leeway = d } }

// WithMaxStale bounds how long the last good key set keeps verifying while the JWKS URL fails.
func WithMaxStale(d time.Duration) VerifierOption { return func(s *settings) { s.maxStale = d } }

// WithVerifierLogger sets where the verifier reports a failing key set (default slog.Default()).
func WithVerifierLogger(l *slog.Logger) VerifierOption { return func(s *settings) { s.log = l } }

// sessionClaims checks what both verifiers require of the claims once the signature holds.
func sessionClaims(c *jwt.RegisteredClaims) (Session, error) {
	if c.Subject == "" {
		return Session{}, errors.New("session token has no sub")
	}
	// WithExpirationRequired guarantees ExpiresAt is set.
	return Session{AccountID: c.Subject, ExpiresAt: c.ExpiresAt.Time}, nil
}

// HS256Verifier verifies tokens signed with a shared secret (the local stack).
type HS256Verifier struct {
	secret []byte
	parser *jwt.Parser
}

// NewHS256Verifier returns a verifier for tokens signed with secret (of the clock and leeway options; the
// others do not apply).
func NewHS256Verifier(secret string, opts ...VerifierOption) *HS256Verifier {
	s := newSettings(opts)
	return &HS256Verifier{secret: []byte(secret), parser: newParser(s, []string{"HS256"})}
}

func newParser(s settings, algs []string, opts ...jwt.ParserOption) *jwt.Parser {
	// The algorithm is pinned: "none" and algorithm confusion (HS256 signed with a public key) never verify.
	// The leeway applies to exp, nbf and iat alike; an iat in the future past it is refused.
	base := []jwt.ParserOption{jwt.WithValidMethods(algs), jwt.WithExpirationRequired(), jwt.WithTimeFunc(s.now),
		jwt.WithLeeway(s.leeway), jwt.WithIssuedAt()}
	return jwt.NewParser(append(base, opts...)...)
}

// Verify implements TokenVerifier.
func (v *HS256Verifier) Verify(_ context.Context, token string) (Session, error) {
	var claims jwt.RegisteredClaims
	if _, err := v.parser.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return v.secret, nil }); err != nil {
		return Session{}, fmt.Errorf("session token: %w", err)
	}
	return sessionClaims(&claims)
}

// MintHS256 signs a session token for accountID valid for ttl (the admin command, local testing).
func MintHS256(secret, accountID string, ttl time.Duration) (string, error) {
	if accountID == "" {
		return "", errors.New("mint session token: account id is empty")
	}
	if ttl <= 0 {
		return "", errors.New("mint session token: ttl must be positive")
	}
	now := time.Now()
	claims := jwt.RegisteredClaims{
		Subject:   accountID,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		return "", fmt.Errorf("mint session token: %w", err)
	}
	return s, nil
}

// secretFile is where the local stack keeps its generated HS256 secret, inside the data directory.
const secretFile = "jwt-secret"

// LocalSecret returns the HS256 secret kept in dataDir/jwt-secret, creating it (random, mode 0600, in a
// folder of mode 0700) when missing, so the local stack and the admin command sign and verify with the
// same secret. Anyone who can read it can mint a session token for any account: a file that group or
// others may read, or one shorter than config.MinJWTSecretBytes, is refused.
func LocalSecret(dataDir string) (string, error) {
	if err := privatedir.Make(dataDir); err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	path := filepath.Join(dataDir, secretFile)
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		return readSecret(f, path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read local jwt secret: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret := hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		// Another process made it between our read and create: use theirs.
		return LocalSecret(dataDir)
	}
	if err != nil {
		return "", fmt.Errorf("create local jwt secret: %w", err)
	}
	if _, err := f.WriteString(secret + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("write local jwt secret: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write local jwt secret: %w", err)
	}
	return secret, nil
}

// readSecret reads an existing secret file, checking its mode on the open file (no window between the
// check and the read).
func readSecret(f *os.File, path string) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read local jwt secret: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("local jwt secret %s has mode %04o: group and others must have no access (chmod 600 it)", path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("read local jwt secret: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("local jwt secret %s is empty: delete it to have a new one made", path)
	}
	if len(s) < config.MinJWTSecretBytes {
		return "", fmt.Errorf("local jwt secret %s is %d bytes, at least %d are needed: delete it to have a new one made", path, len(s), config.MinJWTSecretBytes)
	}
	return s, nil
}

const (
	// jwksMinRefresh rate-limits refetching the key set when a token names an unknown kid (or the last
	// fetch failed), so garbage tokens cannot turn into a flood of requests to the identity provider.
	jwksMinRefresh = 30 * time.Second
	// jwksMaxAge is how long a fetched key set is trusted before it is fetched again (keys removed by the
	// provider stop verifying within this time).
	jwksMaxAge = config.MinJWKSMaxStale
	// jwksMaxBody bounds the key set document.
	jwksMaxBody = 1 << 20
	// jwksMaxRedirects bounds the redirects followed to the key set.
	jwksMaxRedirects = 3
	// jwksFetchTimeout bounds a fetch of the key set (the default client's; WithHTTPClient brings its own).
	jwksFetchTimeout = 5 * time.Second
	// minRSABits is the smallest RSA modulus accepted (NIST SP 800-131A: 1024-bit RSA is disallowed).
	minRSABits = 2048
)

// JWKSStaleEvent is the `event` of the error log line written when a session token is refused because the
// key set could not be refreshed for longer than the max stale time; template.yaml's metric filter counts
// these lines and alarms on them.
const JWKSStaleEvent = "jwks_stale"

// JWKSPrefetchFailedEvent is the `event` of the warning written when the fetch a function starts with
// (Prefetch) fails; the first session token then fetches the set itself.
const JWKSPrefetchFailedEvent = "jwks_prefetch_failed"

// JWKSRefreshFailedEvent is the `event` of the warning written when a refresh fails and the cached set is
// still used: the early sign of what JWKSStaleEvent reports once the max stale time has passed.
const JWKSRefreshFailedEvent = "jwks_refresh_failed"

// JWKSVerifier verifies RS256/ES256 tokens against the keys published at an https JWKS URL, with issuer
// and audience checks. The key set is fetched on first use, cached, and refetched when a token names a key
// the cache does not hold (at most once per jwksMinRefresh) or when it is older than jwksMaxAge. While the
// URL fails, the last good set keeps verifying for the max stale time (WithMaxStale), then every session
// token is refused until a fetch succeeds.
type JWKSVerifier struct {
	url      string
	client   *http.Client
	now      func() time.Time
	maxStale time.Duration
	log      *slog.Logger
	parser   *jwt.Parser

	mu        sync.Mutex
	keys      map[string]jwksKey
	fetchedAt time.Time // last successful fetch
	triedAt   time.Time // last attempt, successful or not
	lastErr   error     // why the last attempt failed (nil after a success)
}

// NewJWKSVerifier returns a verifier for tokens from issuer for audience, signed by a key of the set at
// jwksURL. A URL that is not https is never fetched (every token is then refused as unverifiable).
func NewJWKSVerifier(jwksURL, issuer, audience string, opts ...VerifierOption) *JWKSVerifier {
	s := newSettings(opts)
	// A copy of the client, so the redirect rule does not leak into the caller's.
	client := *s.client
	client.CheckRedirect = checkRedirect
	return &JWKSVerifier{
		// A cap under the refresh age would refuse tokens before a refresh was even tried.
		url: jwksURL, client: &client, now: s.now, maxStale: max(s.maxStale, jwksMaxAge), log: s.log,
		parser: newParser(s, []string{"RS256", "ES256"}, jwt.WithIssuer(issuer), jwt.WithAudience(audience)),
	}
}

// checkJWKSURL accepts an absolute https URL with a host.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an https URL with a host", raw)
	}
	return nil
}

// checkRedirect follows a redirect of the key set only to https on the same host (and port): a redirect
// may not downgrade the fetch to clear text or hand the choice of signing keys to another host.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > jwksMaxRedirects {
		return fmt.Errorf("stopped after %d redirects", jwksMaxRedirects)
	}
	if req.URL.Scheme != "https" || req.URL.Host != via[0].URL.Host {
		return fmt.Errorf("redirect to %s://%s refused: only https on %s", req.URL.Scheme, req.URL.Host, via[0].URL.Host)
	}
	return nil
}

// Verify implements TokenVerifier.
func (v *JWKSVerifier) Verify(ctx context.Context, token string) (Session, error) {
	var claims jwt.RegisteredClaims
	_, err := v.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errors.New("token header has no kid")
		}
		return v.key(ctx, kid, t.Method.Alg())
	})
	if err != nil {
		return Session{}, fmt.Errorf("session token: %w", err)
	}
	return sessionClaims(&claims)
}

// Prefetch fetches the key set now unless one is held or was tried. A function whose operations take a
// session token only starts it as the function starts, so a new instance's first request does not wait for
// the identity provider: the TLS handshake and the round trip overlap the rest of the start, which Lambda
// runs at full CPU where a request at 256 MB gets a seventh of a core. A request that needs the set
// meanwhile waits for this fetch instead of making its own. A failure is logged and does not count as an
// attempt, so the first request tries again at once rather than after jwksMinRefresh.
func (v *JWKSVerifier) Prefetch(ctx context.Context) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.triedAt.IsZero() {
		return
	}
	now := v.now()
	keys, err := v.fetch(ctx)
	if err != nil {
		v.log.WarnContext(ctx, "jwks prefetch failed; the first session token fetches it again", "event", JWKSPrefetchFailedEvent,
			"err", err.Error())
		return
	}
	v.keys, v.fetchedAt, v.triedAt, v.lastErr = keys, now, now, nil
}

// key returns the public key named kid, fetching the set when needed, and refuses a key whose type does not
// match the token's algorithm.
func (v *JWKSVerifier) key(ctx context.Context, kid, alg string) (any, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	k, ok := v.keys[kid]
	stale := v.fetchedAt.IsZero() || now.Sub(v.fetchedAt) >= jwksMaxAge
	if (!ok || stale) && (v.triedAt.IsZero() || now.Sub(v.triedAt) >= jwksMinRefresh) {
		v.triedAt = now
		keys, err := v.fetch(ctx)
		v.lastErr = err
		switch {
		case err == nil:
			v.keys, v.fetchedAt = keys, now
			k, ok = keys[kid]
		case ok && now.Sub(v.fetchedAt) < v.maxStale:
			// Keep verifying with the last good set for a while rather than logging every user out.
			v.log.WarnContext(ctx, "jwks refresh failed; using the cached key set", "event", JWKSRefreshFailedEvent, "err", err.Error(),
				"lastFetch", v.fetchedAt, "maxStale", v.maxStale.String())
		case !ok:
			return nil, fmt.Errorf("%w: %w", errJWKSUnavailable, err)
		}
	}
	if !ok {
		if v.fetchedAt.IsZero() {
			return nil, fmt.Errorf("%w: no key set fetched yet", errJWKSUnavailable)
		}
		return nil, fmt.Errorf("no key %q in the key set", kid)
	}
	if age := now.Sub(v.fetchedAt); age >= v.maxStale {
		// Fail closed: keys the provider may have withdrawn long ago are not trusted any longer.
		v.log.ErrorContext(ctx, "jwks not refreshed within the max stale time: session tokens are refused",
			"event", JWKSStaleEvent, "lastFetch", v.fetchedAt, "maxStale", v.maxStale.String(), "err", v.lastErr)
		return nil, fmt.Errorf("%w: last fetched %s ago", errJWKSStale, age.Round(time.Second))
	}
	if k.alg != "" && k.alg != alg {
		return nil, fmt.Errorf("key %q is for %s, not %s", kid, k.alg, alg)
	}
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
		if bits := pub.N.BitLen(); bits < minRSABits {
			return nil, fmt.Errorf("key %q is a %d-bit RSA key, at least %d bits are required", kid, bits, minRSABits)
		}
		if alg == "RS256" {
			return pub, nil
		}
	case *ecdsa.PublicKey:
		if alg == "ES256" && pub.Curve == elliptic.P256() {
			return pub, nil
		}
	}
	return nil, fmt.Errorf("key %q does not fit algorithm %s", kid, alg)
}

// jwksKey is one public key of the set and the algorithm it is published for ("" when the set says none).
type jwksKey struct {
	pub any // *rsa.PublicKey | *ecdsa.PublicKey
	alg string
}

// fetch reads the key set, keeping the RSA and EC public signing keys that have a kid. Keys of other types
// (or ones go-jose cannot parse) are skipped rather than failing the whole set.
func (v *JWKSVerifier) fetch(ctx context.Context) (map[string]jwksKey, error) {
	if err := checkJWKSURL(v.url); err != nil {
		return nil, fmt.Errorf("jwks url: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.url, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch jwks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch jwks: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBody))
	if err != nil {
		return nil, fmt.Errorf("read jwks: %w", err)
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("parse jwks: %w", err)
	}
	keys := make(map[string]jwksKey, len(raw.Keys))
	for _, r := range raw.Keys {
		var jwk jose.JSONWebKey
		if err := json.Unmarshal(r, &jwk); err != nil || jwk.KeyID == "" || (jwk.Use != "" && jwk.Use != "sig") {
			continue
		}
		// Only the public half is ever used, whatever the document carried.
		switch pub := jwk.Public().Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
			keys[jwk.KeyID] = jwksKey{pub: pub, alg: jwk.Algorithm}
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("jwks has no usable RSA or EC signing key")
	}
	return keys, nil
}
