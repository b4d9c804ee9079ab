// Package oauth is the authorization server that lets assistants sign in to /mcp (decisions 55-56), on
// ory/fosite: authorization code with PKCE S256 only, Client ID Metadata Documents and Dynamic Client
// Registration, a consent page where the user enters one channel's API key once, tokens bound to the
// /mcp resource (RFC 8707), refresh and revocation; and the Protected Resource Metadata (RFC 9728) of
// /mcp. Tokens are the library's HMAC tokens; the table holds only their SHA-256. /mcp itself checks
// access tokens with mcpgrant.Verifier, which does not link this package (the library brings
// html/template, and doubled the mcp function's binary).
package oauth

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Records is the table's side (*store.Store).
type Records interface {
	PutOAuthRecord(ctx context.Context, kind, id string, data []byte, expires time.Time, onlyNew bool) error
	OAuthRecord(ctx context.Context, kind, id string) ([]byte, error)
	DeleteOAuthRecord(ctx context.Context, kind, id string) error
	MCPGrant(ctx context.Context, id string) (mcpgrant.Grant, int64, error)
	SaveMCPGrant(ctx context.Context, g mcpgrant.Grant, was int64, put []store.OAuthItem, drop []string) error
	DeleteMCPGrant(ctx context.Context, g mcpgrant.Grant) error
	GetChannel(ctx context.Context, channelID string) (accounts.Channel, error)
}

// Keys resolves API keys (*auth.Authenticator): the one entered on the consent page, and the one a grant
// acts as when it is refreshed.
type Keys interface {
	Resolve(ctx context.Context, authorization string) (auth.Identity, error)
	ResolveKeyHash(ctx context.Context, hash string) (auth.Identity, error)
}

// Paths served, beside /mcp.
const (
	PathResourceMetadata = "/.well-known/oauth-protected-resource"
	PathServerMetadata   = "/.well-known/oauth-authorization-server"
	PathAuthorize        = "/oauth/authorize"
	PathToken            = "/oauth/token"
	PathRegister         = "/oauth/register"
	PathRevoke           = "/oauth/revoke"
)

// Paths lists every path Handler serves (the routes the template and the local stack give it).
var Paths = []string{PathResourceMetadata, PathResourceMetadata + "/mcp", PathServerMetadata, PathAuthorize,
	PathToken, PathRegister, PathRevoke}

// Lifetimes.
const (
	AccessTokenLifetime  = time.Hour
	RefreshTokenLifetime = 30 * 24 * time.Hour
	CodeLifetime         = 5 * time.Minute
)

// Config configures a Provider.
type Config struct {
	// Issuer is the service's origin as clients reach it (https://…; http://127.0.0.1:… locally): the
	// authorization server's issuer, and with /mcp the protected resource.
	Issuer  string
	Records Records
	Keys    Keys
	// Cipher seals the HMAC secret tokens are signed with, kept in the table so every instance and every
	// cold start shares it.
	Cipher webhooks.Cipher
	// Fetch gets Client ID Metadata Documents; it must refuse private addresses (httppost.HTTPClient).
	Fetch *http.Client
	// AllowHTTPClientIDs takes http:// metadata URLs (loopback tests only; the policy of Fetch still applies).
	AllowHTTPClientIDs bool
	Now                func() time.Time
	Log                *slog.Logger
}

// Provider is the authorization server. The library is set up on an instance's first OAuth request (the
// signing secret is a table read), so the metadata documents cost no table call.
type Provider struct {
	issuer, resource string
	rec              Records
	keys             Keys
	cipher           webhooks.Cipher
	clients          *clients
	now              func() time.Time
	log              *slog.Logger
	newID            func() string

	mu   sync.Mutex
	live *fositeProvider
}

type fositeProvider struct {
	fosite.OAuth2Provider
	cfg *fosite.Config
}

// New returns a Provider.
func New(c Config) *Provider {
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Log = cmp.Or(c.Log, slog.New(slog.DiscardHandler))
	issuer := strings.TrimSuffix(c.Issuer, "/")
	p := &Provider{issuer: issuer, resource: mcpgrant.Resource(issuer), rec: c.Records, keys: c.Keys, cipher: c.Cipher,
		now: c.Now, log: c.Log, newID: func() string { return uuid.NewString() }}
	p.clients = &clients{rec: c.Records, resource: p.resource, fetch: c.Fetch, allowHTTP: c.AllowHTTPClientIDs}
	return p
}

// Resource is the protected resource tokens are bound to: the /mcp URL.
func (p *Provider) Resource() string { return p.resource }

// ResourceMetadataURL is what the 401 of /mcp names in WWW-Authenticate (RFC 9728 section 5.1).
func (p *Provider) ResourceMetadataURL() string { return mcpgrant.ResourceMetadataURL(p.issuer) }

const secretAAD = "oauth-hmac-secret"

// provider sets the library up once its secret is read (or, the first time ever, made and stored).
func (p *Provider) provider(ctx context.Context) (*fositeProvider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != nil {
		return p.live, nil
	}
	secret, err := p.secret(ctx)
	if err != nil {
		return nil, err
	}
	cfg := &fosite.Config{
		AccessTokenLifespan: AccessTokenLifetime, RefreshTokenLifespan: RefreshTokenLifetime,
		AuthorizeCodeLifespan: CodeLifetime, GlobalSecret: secret,
		EnforcePKCE: true, EnablePKCEPlainChallengeMethod: false,
		RefreshTokenScopes: []string{}, // every grant may refresh
		ScopeStrategy:      fosite.ExactScopeStrategy, AudienceMatchingStrategy: fosite.ExactAudienceMatchingStrategy,
		TokenURL: p.issuer + PathToken, RedirectSecureChecker: fosite.IsRedirectURISecureStrict,
		SendDebugMessagesToClients: false,
	}
	st := &storage{rec: p.rec, clients: p.clients}
	strategy := hashed{compose.NewOAuth2HMACStrategy(cfg)}
	f := compose.Compose(cfg, st, strategy,
		compose.OAuth2AuthorizeExplicitFactory, compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory, compose.OAuth2TokenIntrospectionFactory, compose.OAuth2PKCEFactory)
	p.live = &fositeProvider{OAuth2Provider: f, cfg: cfg}
	return p.live, nil
}

// secret reads the sealed HMAC secret, making it when there is none (the first instance to store it wins).
func (p *Provider) secret(ctx context.Context) ([]byte, error) {
	if p.cipher == nil {
		return nil, errors.New("oauth: no cipher to seal the signing secret with")
	}
	for range 2 {
		sealed, err := p.rec.OAuthRecord(ctx, kindSecret, "hmac")
		if err == nil {
			return p.cipher.Open(ctx, sealed, []byte(secretAAD))
		}
		if !notFound(err) {
			return nil, err
		}
		raw, err := randomBytes(32)
		if err != nil {
			return nil, err
		}
		if sealed, err = p.cipher.Seal(ctx, raw, []byte(secretAAD)); err != nil {
			return nil, err
		}
		err = p.rec.PutOAuthRecord(ctx, kindSecret, "hmac", sealed, time.Time{}, true)
		if err == nil {
			return raw, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return nil, err
		}
	}
	return nil, errors.New("oauth: the signing secret could not be read or stored")
}

// hashed keeps tokens and codes by the SHA-256 of the whole of each (auth.HashKey, as API keys are kept),
// not by the library's signature, which is the token's second half: a copy of the table holds nothing a
// client could present, and /mcp checks a token with one hash and one read, without this library or its
// secret (mcpgrant.Verifier). The library still verifies each token's HMAC where it reads one.
type hashed struct{ *oauth2.HMACSHAStrategy }

func (h hashed) AccessTokenSignature(_ context.Context, t string) string  { return auth.HashKey(t) }
func (h hashed) RefreshTokenSignature(_ context.Context, t string) string { return auth.HashKey(t) }
func (h hashed) AuthorizeCodeSignature(_ context.Context, t string) string {
	return auth.HashKey(t)
}

func (h hashed) GenerateAccessToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	t, _, err := h.HMACSHAStrategy.GenerateAccessToken(ctx, r)
	return t, auth.HashKey(t), err
}

func (h hashed) GenerateRefreshToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	t, _, err := h.HMACSHAStrategy.GenerateRefreshToken(ctx, r)
	return t, auth.HashKey(t), err
}

func (h hashed) GenerateAuthorizeCode(ctx context.Context, r fosite.Requester) (string, string, error) {
	t, _, err := h.HMACSHAStrategy.GenerateAuthorizeCode(ctx, r)
	return t, auth.HashKey(t), err
}

// Handler serves the metadata documents and the authorization server's endpoints (Paths).
func (p *Provider) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		switch r.URL.Path {
		case PathResourceMetadata, PathResourceMetadata + "/mcp":
			p.resourceMetadata(w, r)
		case PathServerMetadata:
			p.serverMetadata(w, r)
		case PathRegister:
			p.register(w, r)
		case PathAuthorize:
			p.authorize(w, r)
		case PathToken:
			p.token(w, r)
		case PathRevoke:
			p.revoke(w, r)
		default:
			writeOAuthError(w, http.StatusNotFound, "invalid_request", "no such endpoint")
		}
	})
}

func (p *Provider) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "GET only")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource": p.resource, "authorization_servers": []string{p.issuer}, "scopes_supported": []string{mcpgrant.Scope},
		"bearer_methods_supported": []string{"header"}, "resource_name": "Creator Strategy Service MCP",
	})
}

func (p *Provider) serverMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "GET only")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": p.issuer, "authorization_endpoint": p.issuer + PathAuthorize, "token_endpoint": p.issuer + PathToken,
		"registration_endpoint": p.issuer + PathRegister, "revocation_endpoint": p.issuer + PathRevoke,
		"scopes_supported": []string{mcpgrant.Scope}, "response_types_supported": []string{"code"},
		"response_modes_supported": []string{"query"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":      []string{"none", "client_secret_basic", "client_secret_post"},
		"revocation_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":           []string{"S256"},
		"client_id_metadata_document_supported":      true,
	})
}

// resourceAsAudience reads RFC 8707's resource parameter as the library's audience, which it checks
// against the client's (this resource alone) and grants; a request naming none is for this resource, the
// one this server grants.
func (p *Provider) resourceAsAudience(r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return fosite.ErrInvalidRequest.WithHint("The form cannot be read.")
	}
	aud := r.Form["resource"]
	if len(aud) == 0 && r.URL.Path == PathAuthorize {
		aud = []string{p.resource}
	}
	for _, f := range []url.Values{r.Form, r.PostForm} {
		delete(f, "audience")
		if len(aud) > 0 {
			f["audience"] = aud
		}
	}
	return nil
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, err := p.provider(ctx)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	if r.Method != http.MethodPost {
		f.WriteAccessError(ctx, w, nil, fosite.ErrInvalidRequest.WithHint("POST only."))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxMetadataBytes)
	if err := p.resourceAsAudience(r); err != nil {
		f.WriteAccessError(ctx, w, nil, err)
		return
	}
	ar, err := f.NewAccessRequest(ctx, r, &Session{})
	if err == nil {
		err = p.keyLives(ctx, ar)
	}
	var resp fosite.AccessResponder
	if err == nil {
		resp, err = f.NewAccessResponse(ctx, ar)
	}
	if err != nil {
		p.logRefusal(ctx, "token", err)
		f.WriteAccessError(ctx, w, ar, err)
		return
	}
	f.WriteAccessResponse(ctx, w, ar, resp)
}

// keyLives refuses to refresh a grant whose key is revoked (its tokens would be refused at /mcp anyway),
// and ends the grant.
func (p *Provider) keyLives(ctx context.Context, ar fosite.AccessRequester) error {
	sess, ok := ar.GetSession().(*Session)
	if !ok || !ar.GetGrantTypes().ExactOne("refresh_token") {
		return nil
	}
	_, err := p.keys.ResolveKeyHash(ctx, sess.KeyHash)
	switch {
	case err == nil:
		return nil
	case apperr.CodeOf(err) != apperr.Unauthorized:
		return fosite.ErrServerError.WithWrap(err)
	}
	if err := (&storage{rec: p.rec}).revokeGrant(ctx, ar.GetID()); err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	return fosite.ErrInvalidGrant.WithHint("The API key this grant was made with is revoked.")
}

func (p *Provider) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, err := p.provider(ctx)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxMetadataBytes)
	f.WriteRevocationResponse(ctx, w, f.NewRevocationRequest(ctx, r))
}

func (p *Provider) logRefusal(ctx context.Context, step string, err error) {
	if rfc, ok := errors.AsType[*fosite.RFC6749Error](err); ok {
		level := slog.LevelInfo
		if rfc.CodeField >= http.StatusInternalServerError {
			level = slog.LevelError // a failure of ours: its cause (never a token) is logged
		}
		p.log.Log(ctx, level, "oauth request refused", "step", step, "error", rfc.ErrorField, "hint", rfc.HintField,
			"debug", rfc.DebugField)
		return
	}
	p.log.InfoContext(ctx, "oauth request refused", "step", step, "error", err.Error())
}

// fail answers a failure of ours: 500, its cause logged, never shown.
func (p *Provider) fail(w http.ResponseWriter, r *http.Request, err error) {
	p.log.ErrorContext(r.Context(), "oauth request failed", "path", r.URL.Path, "error", err.Error())
	writeOAuthError(w, http.StatusInternalServerError, "server_error", "internal error")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeOAuthError answers in RFC 6749's error shape, which OAuth clients read.
func writeOAuthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("oauth: random: %w", err)
	}
	return b, nil
}
