package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/creatorstrategy/css/shared/config"
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
// stack's generated secret) in development, JWKS with issuer and audience checks in production. Nothing is
// fetched here: the JWKS is read on first use.
func NewTokenVerifier(cfg config.Config) (TokenVerifier, error) {
	if cfg.Mode == config.Development {
		secret := cfg.JWTSecret
		if secret == "" {
			var err error
			if secret, err = LocalSecret(cfg.DataDir); err != nil {
				return nil, err
			}
		}
		return NewHS256Verifier(secret), nil
	}
	if cfg.JWKSURL == "" {
		slog.Warn("CSS_JWKS_URL is not set: session tokens are refused, only API keys are accepted")
		return noSessions{}, nil
	}
	if cfg.JWTIssuer == "" || cfg.JWTAudience == "" {
		return nil, errors.New("CSS_JWT_ISSUER and CSS_JWT_AUDIENCE are required with CSS_JWKS_URL")
	}
	return NewJWKSVerifier(cfg.JWKSURL, cfg.JWTIssuer, cfg.JWTAudience), nil
}

type noSessions struct{}

func (noSessions) Verify(context.Context, string) (Session, error) {
	return Session{}, errors.New("session tokens are not accepted by this deployment")
}

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

// NewHS256Verifier returns a verifier for tokens signed with secret.
func NewHS256Verifier(secret string) *HS256Verifier {
	return &HS256Verifier{secret: []byte(secret), parser: newParser(time.Now, []string{"HS256"})}
}

func newParser(now func() time.Time, algs []string, opts ...jwt.ParserOption) *jwt.Parser {
	// The algorithm is pinned: "none" and algorithm confusion (HS256 signed with a public key) never verify.
	base := []jwt.ParserOption{jwt.WithValidMethods(algs), jwt.WithExpirationRequired(), jwt.WithTimeFunc(now)}
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

// LocalSecret returns the HS256 secret kept in dataDir/jwt-secret, creating it (random, mode 0600) when
// missing, so the local stack and the admin command sign and verify with the same secret.
func LocalSecret(dataDir string) (string, error) {
	path := filepath.Join(dataDir, secretFile)
	if b, err := os.ReadFile(path); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("local jwt secret %s is empty: delete it to have a new one made", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read local jwt secret: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
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

const (
	// jwksMinRefresh rate-limits refetching the key set when a token names an unknown kid (or the last
	// fetch failed), so garbage tokens cannot turn into a flood of requests to the identity provider.
	jwksMinRefresh = 30 * time.Second
	// jwksMaxAge is how long a fetched key set is trusted before it is fetched again (keys removed by the
	// provider stop verifying within this time).
	jwksMaxAge = time.Hour
	// jwksMaxBody bounds the key set document.
	jwksMaxBody = 1 << 20
)

// JWKSVerifier verifies RS256/ES256 tokens against the keys published at a JWKS URL, with issuer and
// audience checks. The key set is fetched on first use, cached, and refetched when a token names a key
// the cache does not hold (at most once per jwksMinRefresh) or when it is older than jwksMaxAge.
type JWKSVerifier struct {
	url    string
	client *http.Client
	now    func() time.Time
	parser *jwt.Parser

	mu        sync.Mutex
	keys      map[string]jwksKey
	fetchedAt time.Time // last successful fetch
	triedAt   time.Time // last attempt, successful or not
}

// JWKSOption configures a JWKSVerifier.
type JWKSOption func(*JWKSVerifier)

// WithHTTPClient sets the client used to fetch the key set.
func WithHTTPClient(c *http.Client) JWKSOption { return func(v *JWKSVerifier) { v.client = c } }

// WithVerifierClock sets the clock used for exp/nbf and for the refresh schedule (tests).
func WithVerifierClock(now func() time.Time) JWKSOption { return func(v *JWKSVerifier) { v.now = now } }

// NewJWKSVerifier returns a verifier for tokens from issuer for audience, signed by a key of the set at url.
func NewJWKSVerifier(url, issuer, audience string, opts ...JWKSOption) *JWKSVerifier {
	v := &JWKSVerifier{url: url, client: &http.Client{Timeout: 5 * time.Second}, now: time.Now}
	for _, o := range opts {
		o(v)
	}
	v.parser = newParser(v.now, []string{"RS256", "ES256"}, jwt.WithIssuer(issuer), jwt.WithAudience(audience))
	return v
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
		switch {
		case err == nil:
			v.keys, v.fetchedAt = keys, now
			k, ok = keys[kid]
		case ok:
			// The provider is unreachable but the key was good an hour ago: keep verifying with it rather
			// than logging every user out.
			slog.WarnContext(ctx, "jwks refresh failed; using the cached key set", "err", err)
		default:
			return nil, fmt.Errorf("%w: %w", errJWKSUnavailable, err)
		}
	}
	if !ok {
		if v.fetchedAt.IsZero() {
			return nil, fmt.Errorf("%w: no key set fetched yet", errJWKSUnavailable)
		}
		return nil, fmt.Errorf("no key %q in the key set", kid)
	}
	if k.alg != "" && k.alg != alg {
		return nil, fmt.Errorf("key %q is for %s, not %s", kid, k.alg, alg)
	}
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
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
