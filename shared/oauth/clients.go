package oauth

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"

	"github.com/creatorstrategy/css/shared/mcpgrant"
)

// Client is a registered or self-described client, with the name the consent page shows.
type Client struct {
	fosite.DefaultClient
	Name string
}

// storedClient is a registered client as the table holds it: its secret only as the library's hash.
type storedClient struct {
	ID           string    `json:"id"`
	SecretHash   []byte    `json:"secretHash,omitempty"`
	RedirectURIs []string  `json:"redirectUris"`
	Name         string    `json:"name,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}

// grantTypes are every client's.
var grantTypes = []string{"authorization_code", "refresh_token"}

// clientLifetime is how long a registered client is kept: registration is open to anyone, so what an
// abandoned or abusive registration leaves goes by itself (a client re-registers when its id is refused).
const clientLifetime = 90 * 24 * time.Hour

// maxMetadataBytes bounds a registration and a fetched Client ID Metadata Document.
const maxMetadataBytes = 16 << 10

type clients struct {
	rec      Records
	resource string
	// fetch gets Client ID Metadata Documents: the service's locked-down client (no private address).
	fetch *http.Client
	// allowHTTP takes http:// client ids on loopback (the local stack's tests), as webhooks allow loopback.
	allowHTTP bool
}

func (c *clients) client(id string, redirects []string, name string, secretHash []byte) *Client {
	return &Client{Name: name, DefaultClient: fosite.DefaultClient{ID: id, Secret: secretHash, RedirectURIs: redirects,
		GrantTypes: grantTypes, ResponseTypes: []string{"code"},
		Scopes: []string{mcpgrant.Scope}, Audience: []string{c.resource}, Public: secretHash == nil}}
}

func (c *clients) get(ctx context.Context, id string) (fosite.Client, error) {
	if c.isMetadataURL(id) {
		return c.fromDocument(ctx, id)
	}
	b, err := c.rec.OAuthRecord(ctx, kindClient, id)
	if notFound(err) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var sc storedClient
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, fmt.Errorf("oauth: client record: %w", err)
	}
	return c.client(sc.ID, sc.RedirectURIs, sc.Name, sc.SecretHash), nil
}

func (c *clients) isMetadataURL(id string) bool {
	return strings.HasPrefix(id, "https://") || c.allowHTTP && strings.HasPrefix(id, "http://")
}

// metadata is the part of RFC 7591 client metadata (registration requests, Client ID Metadata
// Documents) the server reads.
type metadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// check refuses metadata this server cannot honour, saying what (an RFC 7591 invalid_client_metadata or
// invalid_redirect_uri description).
func (m *metadata) check() (code, desc string) {
	if len(m.RedirectURIs) == 0 || len(m.RedirectURIs) > 10 {
		return "invalid_redirect_uri", "redirect_uris: 1 to 10 are required"
	}
	for _, r := range m.RedirectURIs {
		u, err := url.Parse(r)
		if err != nil || !u.IsAbs() || u.Fragment != "" || len(r) > 2000 {
			return "invalid_redirect_uri", "redirect_uris: each must be an absolute URL without a fragment"
		}
		switch u.Scheme {
		case "https":
		case "http":
			if !fosite.IsLocalhost(u) {
				return "invalid_redirect_uri", "redirect_uris: http is for loopback only (RFC 8252)"
			}
		default:
			if !strings.Contains(u.Scheme, ".") { // a native app's private-use scheme (RFC 8252 7.1)
				return "invalid_redirect_uri", "redirect_uris: https, http on loopback, or a reverse-domain private-use scheme"
			}
		}
	}
	if slices.ContainsFunc(m.GrantTypes, func(g string) bool { return g != "authorization_code" && g != "refresh_token" }) {
		return "invalid_client_metadata", "grant_types: authorization_code and refresh_token only"
	}
	if slices.ContainsFunc(m.ResponseTypes, func(t string) bool { return t != "code" }) {
		return "invalid_client_metadata", "response_types: code only"
	}
	switch m.TokenEndpointAuthMethod {
	case "", "none", "client_secret_basic", "client_secret_post":
	default:
		return "invalid_client_metadata", "token_endpoint_auth_method: none, client_secret_basic or client_secret_post"
	}
	if len(m.ClientName) > 200 {
		return "invalid_client_metadata", "client_name: at most 200 characters"
	}
	return "", ""
}

// fromDocument reads a Client ID Metadata Document: the client is the URL, which must name itself.
func (c *clients) fromDocument(ctx context.Context, id string) (fosite.Client, error) {
	u, err := url.Parse(id)
	if err != nil || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
		return nil, fosite.ErrInvalidClient.WithHint("A client id URL needs a path, and no fragment or credentials.")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, fosite.ErrInvalidClient.WithHint("The client id URL cannot be fetched.")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.fetch.Do(req)
	if err != nil {
		// The error names an address the caller chose; it is not repeated to it.
		return nil, fosite.ErrInvalidClient.WithHint("The client's metadata document could not be fetched.")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fosite.ErrInvalidClient.WithHintf("The client's metadata document answered %d.", resp.StatusCode)
	}
	var m metadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes)).Decode(&m); err != nil {
		return nil, fosite.ErrInvalidClient.WithHint("The client's metadata document is not a JSON object within 16 KiB.")
	}
	if m.ClientID != id {
		return nil, fosite.ErrInvalidClient.WithHint("The metadata document's client_id is not its own URL.")
	}
	if code, desc := m.check(); code != "" {
		return nil, fosite.ErrInvalidClient.WithHint(desc)
	}
	if m.TokenEndpointAuthMethod != "" && m.TokenEndpointAuthMethod != "none" {
		return nil, fosite.ErrInvalidClient.WithHint("A client named by its metadata document has no secret: token_endpoint_auth_method must be none.")
	}
	return c.client(id, m.RedirectURIs, cmpName(m.ClientName, u.Host), nil), nil
}

func cmpName(name, host string) string {
	if strings.TrimSpace(name) == "" {
		return host
	}
	return name
}

// register is Dynamic Client Registration (RFC 7591): anyone may register; a confidential client's
// secret is shown once and kept as the library's hash.
func (p *Provider) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "POST a JSON object")
		return
	}
	var m metadata
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxMetadataBytes))
	if err := dec.Decode(&m); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body must be one JSON object within 16 KiB")
		return
	}
	if code, desc := m.check(); code != "" {
		writeOAuthError(w, http.StatusBadRequest, code, desc)
		return
	}
	f, err := p.provider(r.Context())
	if err != nil {
		p.fail(w, r, err)
		return
	}
	now := p.now().UTC()
	sc := storedClient{ID: p.newID(), RedirectURIs: m.RedirectURIs, Name: m.ClientName, CreatedAt: now}
	secret := ""
	m.TokenEndpointAuthMethod = cmp.Or(m.TokenEndpointAuthMethod, "client_secret_basic")
	if m.TokenEndpointAuthMethod != "none" {
		raw, err := randomBytes(32)
		if err != nil {
			p.fail(w, r, err)
			return
		}
		secret = hex.EncodeToString(raw)
		if sc.SecretHash, err = f.cfg.GetSecretsHasher(r.Context()).Hash(r.Context(), []byte(secret)); err != nil {
			p.fail(w, r, err)
			return
		}
	}
	b, err := json.Marshal(sc)
	if err == nil {
		err = p.rec.PutOAuthRecord(r.Context(), kindClient, sc.ID, b, now.Add(clientLifetime), true)
	}
	if err != nil {
		p.fail(w, r, err)
		return
	}
	out := map[string]any{"client_id": sc.ID, "client_id_issued_at": now.Unix(), "redirect_uris": sc.RedirectURIs,
		"token_endpoint_auth_method": m.TokenEndpointAuthMethod, "grant_types": grantTypes,
		"response_types": []string{"code"}, "scope": mcpgrant.Scope}
	if m.ClientName != "" {
		out["client_name"] = m.ClientName
	}
	if secret != "" {
		out["client_secret"], out["client_secret_expires_at"] = secret, now.Add(clientLifetime).Unix()
	}
	writeJSON(w, http.StatusCreated, out)
}
