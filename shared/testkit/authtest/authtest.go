// Package authtest plays the account system for tests and benchmarks: an identity provider on loopback
// that publishes a JWKS of one RSA key over https and signs session tokens with it (decision 3), so a
// production-mode function verifies them exactly as it will in the cloud.
package authtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// Issuer and Audience are what the provider's tokens say and what Env configures the service to expect.
const (
	Issuer   = "https://accounts.example.test"
	Audience = "css"
	keyID    = "authtest-1"
)

// Provider is a running identity provider.
type Provider struct {
	// URL is the JWKS address (CSS_JWKS_URL), https on 127.0.0.1.
	URL string
	// CAFile holds the certificate the provider serves, in PEM: the service trusts it through SSL_CERT_FILE
	// (Go reads it on Linux), which Env sets. The certificate is net/http/httptest's, the same in every
	// provider and every process, so a process that loads its roots once trusts every provider it starts.
	CAFile  string
	signer  *rsa.PrivateKey
	srv     *httptest.Server
	dir     string
	fetches *atomic.Int64
}

// Start serves a new key's JWKS on a loopback port until Close.
func Start() (*Provider, error) {
	signer, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &signer.PublicKey, KeyID: keyID, Algorithm: "RS256", Use: "sig"},
	}})
	if err != nil {
		return nil, err
	}
	fetches := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	srv.Config.ReadHeaderTimeout = 5 * time.Second
	srv.StartTLS()
	dir, err := os.MkdirTemp("", "authtest-")
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("identity provider: %w", err)
	}
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		srv.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("identity provider: %w", err)
	}
	return &Provider{URL: srv.URL + "/.well-known/jwks.json", CAFile: ca, signer: signer, srv: srv, dir: dir, fetches: fetches}, nil
}

// Fetches is how many times the key set has been served.
func (p *Provider) Fetches() int { return int(p.fetches.Load()) }

// Env is the service's configuration for trusting this provider's session tokens.
func (p *Provider) Env() []string {
	return []string{"CSS_JWKS_URL=" + p.URL, "CSS_JWT_ISSUER=" + Issuer, "CSS_JWT_AUDIENCE=" + Audience,
		"SSL_CERT_FILE=" + p.CAFile}
}

// Token is a session token for account, valid for ttl.
func (p *Provider) Token(account string, ttl time.Duration) (string, error) {
	return sign(p.signer, account, ttl)
}

// Forged is a session token for account that looks like the provider's (same issuer, audience and key
// id) but is signed by a key it never published.
func Forged(account string) (string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	return sign(k, account, time.Hour)
}

func sign(k *rsa.PrivateKey, account string, ttl time.Duration) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
		Subject: account, Issuer: Issuer, Audience: jwt.ClaimStrings{Audience},
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(ttl)),
	})
	tok.Header["kid"] = keyID
	return tok.SignedString(k)
}

// Close stops the provider.
func (p *Provider) Close() error {
	p.srv.Close()
	return os.RemoveAll(p.dir)
}
