package mcp

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/rest"
)

// Authenticator turns a request's credentials into a principal (rest.BearerAuth: the REST API's own).
type Authenticator = rest.Authenticator

// ErrorWriter answers a refused request in the REST Error shape (*rest.Server).
type ErrorWriter interface {
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

// Path is where the endpoint is mounted (decision 34: {app_url}/mcp).
const Path = "/mcp"

// MaxBodyBytes bounds a JSON-RPC request, as the REST API bounds a body.
const MaxBodyBytes = rest.MaxBodyBytes

// Handler serves srv over streamable HTTP (decision 34): stateless, JSON responses, POST only (GET and
// DELETE answer 405), behind the REST API's authentication. A missing, malformed, unknown or revoked key
// answers 401 with WWW-Authenticate, an expired account 403, in the REST Error shape, before any
// JSON-RPC is read. The channel comes from the key, never from a tool argument. A single tools/call
// takes the fast path (fastpath.go); every other request is the SDK's. Before either, a browser's
// Origin must be allowed (AllowedOrigins; none by default), and the request is read as strictly as a REST
// body, every refusal a JSON-RPC error (strict.go).
func Handler(srv *Server, authn Authenticator, errs ErrorWriter, log *slog.Logger, opts ...Option) http.Handler {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	streamable := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		s, err := srv.SDK()
		if err != nil {
			log.ErrorContext(r.Context(), "mcp server unavailable", "error", err.Error())
			return nil // the SDK answers 400 "no server available"
		}
		return s
	},
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log, MaxRequestBodyBytes: MaxBodyBytes})
	// The SDK hands a request's token info to every handler (RequestExtra.TokenInfo): the principal travels
	// there. Authentication itself happened before; this only carries its result.
	carry := sdkauth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		p, ok := ctx.Value(principalCtx{}).(auth.Principal)
		if !ok {
			return nil, sdkauth.ErrInvalidToken
		}
		return tokenInfo(p), nil
	}, nil)(streamable)
	e := &endpoint{srv: srv, sdk: carry, authn: authn, errs: errs, log: log, fast: true, origins: map[string]bool{}}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Option configures the endpoint.
type Option func(*endpoint)

// AllowedOrigins lets browser pages of these origins (scheme://host[:port], as a browser sends them in
// Origin; config.Config.MCPAllowedOrigins) call the endpoint. A request with any other Origin, "null"
// included, answers 403 before any work (the transport specification's defence against DNS rebinding);
// one without Origin (not from a browser) is not concerned.
func AllowedOrigins(origins []string) Option {
	return func(e *endpoint) {
		for _, o := range origins {
			if o = strings.ToLower(strings.TrimSpace(o)); o != "" && o != "null" {
				e.origins[o] = true
			}
		}
	}
}

// tokenInfo carries an authenticated principal to the tool handlers.
func tokenInfo(p auth.Principal) *sdkauth.TokenInfo {
	return &sdkauth.TokenInfo{UserID: p.KeyID, Expiration: time.Now().Add(time.Hour),
		Extra: map[string]any{principalKey: p}}
}

// TokenVerifier authenticates an OAuth access token (mcpgrant.Verifier).
type TokenVerifier interface {
	Principal(ctx context.Context, token string) (auth.Principal, error)
}

// AccessTokens lets assistants signed in with OAuth call the endpoint (decision 55): a bearer credential
// of an access token's shape (mcpgrant.IsAccessToken) is checked by v, and acts as the key it was granted
// with; any other credential is authenticated as before.
func AccessTokens(v TokenVerifier) Option {
	return func(e *endpoint) { e.authn = tokenAuth{v: v, next: e.authn} }
}

type tokenAuth struct {
	v    TokenVerifier
	next Authenticator
}

func (a tokenAuth) Authenticate(r *http.Request) (auth.Principal, error) {
	if h := r.Header.Values("Authorization"); len(h) == 1 {
		scheme, cred, _ := strings.Cut(strings.TrimSpace(h[0]), " ")
		if cred = strings.TrimSpace(cred); strings.EqualFold(scheme, "Bearer") && mcpgrant.IsAccessToken(cred) {
			return a.v.Principal(r.Context(), cred)
		}
	}
	return a.next.Authenticate(r)
}

// ResourceMetadata names the protected-resource metadata (RFC 9728) in every 401's WWW-Authenticate, so
// an OAuth client learns where to sign in (decision 55: shared/oauth).
func ResourceMetadata(url string) Option {
	return func(e *endpoint) { e.challenge = `Bearer realm="css", resource_metadata="` + url + `"` }
}

// challenged sets WWW-Authenticate on a 401 as it is written.
type challenged struct {
	http.ResponseWriter
	value string
}

func (c challenged) WriteHeader(status int) {
	if status == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", c.value)
	}
	c.ResponseWriter.WriteHeader(status)
}

// KeyLeaser authenticates a request with the rate lease of a group in the same table call (*rest.Server).
type KeyLeaser interface {
	ReadsCredentialWithLease(r *http.Request) bool
	AuthenticateFor(r *http.Request, group contract.RateGroup) (auth.Principal, error)
}

// LeaseWithKeys makes a tool call's authentication read an uncached API key with the tool's rate lease, in
// one table call (ForAPI sets it: keys authenticates as the API does).
func LeaseWithKeys(keys KeyLeaser) Option { return func(e *endpoint) { e.keys = keys } }

type endpoint struct {
	srv   *Server
	sdk   http.Handler
	authn Authenticator
	keys  KeyLeaser // nil: authn alone
	errs  ErrorWriter
	log   *slog.Logger
	fast  bool // take the fast path (off only in the test that compares it with the SDK)
	// origins are the allowed values of Origin, lower case.
	origins map[string]bool
	// challenge replaces a 401's WWW-Authenticate (ResourceMetadata); empty: the REST API's.
	challenge string
}

// originAllowed reports whether r comes from no browser, or from a page of an allowed origin.
func (e *endpoint) originAllowed(r *http.Request) bool {
	for _, o := range r.Header.Values("Origin") {
		if !e.origins[strings.ToLower(strings.TrimSpace(o))] {
			return false
		}
	}
	return true
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if !rest.ValidRequestID(id) {
		id = rest.NewRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	ctx := rest.WithRequestID(r.Context(), id)
	r = r.WithContext(ctx)
	start := time.Now()
	if !e.originAllowed(r) {
		writeRPCError(w, http.StatusForbidden, jsonrpc.ID{}, codeForbidden, "FORBIDDEN: requests from this Origin are not allowed")
		e.log.InfoContext(ctx, "mcp request refused", "request_id", id, "method", r.Method, "code", "FORBIDDEN_ORIGIN")
		return
	}
	var (
		body    []byte
		refused *rpcError
		read    bool // body and refused hold the request's reading
		p       auth.Principal
		err     error
	)
	if e.keys != nil && r.Method == http.MethodPost && e.keys.ReadsCredentialWithLease(r) {
		// A credential this instance has not cached: the tool's rate group is learnt from the body, so the
		// read of the key (or the session's account) and the tool's rate lease are one table call. The body
		// is read first, as it would be after authentication (bounded the same), and a refusal of it waits
		// until the credential is known, so an unauthenticated caller is answered exactly as before.
		read = true
		body, refused = readMessage(r)
		var group contract.RateGroup
		if refused == nil {
			group = e.srv.toolRateGroup(body)
		}
		p, err = e.keys.AuthenticateFor(r, group)
	} else {
		p, err = e.authn.Authenticate(r)
	}
	if err == nil && p.ChannelID == "" {
		err = apperr.Invalid("X-Channel-Id", "is required with a session token")
	}
	if err != nil {
		if e.challenge != "" {
			w = challenged{ResponseWriter: w, value: e.challenge}
		}
		e.errs.WriteError(w, r, err)
		e.log.InfoContext(ctx, "mcp request refused", "request_id", id, "method", r.Method,
			"code", apperr.CodeOf(err))
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	if !read {
		body, refused = readMessage(r)
	}
	if refused != nil {
		if refused.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		writeRPCError(rec, refused.status, jsonrpc.ID{}, refused.code, refused.message)
		e.log.InfoContext(ctx, "mcp request", "request_id", id, "method", r.Method, "status", rec.status,
			"fast", false, "rpc_error", refused.code, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		return
	}
	fast := e.fast && e.srv.serveToolCall(rec, r, body, tokenInfo(p))
	if !fast {
		// What the SDK gets is read in full: a message kind, the batch rules.
		if refused := checkMessage(body, protocolVersion(r)); refused != nil {
			writeRPCError(rec, refused.status, jsonrpc.ID{}, refused.code, refused.message)
			e.log.InfoContext(ctx, "mcp request", "request_id", id, "method", r.Method, "status", rec.status,
				"fast", false, "rpc_error", refused.code, "duration_ms", float64(time.Since(start).Microseconds())/1000)
			return
		}
		if err := e.srv.countNotifications(ctx, p, body); err != nil {
			status, code, msg := http.StatusInternalServerError, int64(codeInternalError), "INTERNAL: internal error"
			if ae, ok := apperr.As(err); ok && ae.Code == apperr.RateLimit {
				status, code, msg = http.StatusTooManyRequests, codeLimited, string(ae.Code)+": "+ae.Message
				w.Header().Set("Retry-After", strconv.Itoa(max(ae.RetryAfter, 1)))
			}
			writeRPCError(rec, status, jsonrpc.ID{}, code, msg)
			e.log.InfoContext(ctx, "mcp request", "request_id", id, "method", r.Method, "status", rec.status,
				"fast", false, "rpc_error", code, "duration_ms", float64(time.Since(start).Microseconds())/1000)
			return
		}
		jw := &jsonErrors{ResponseWriter: rec, body: body}
		e.sdk.ServeHTTP(jw, r.WithContext(context.WithValue(ctx, principalCtx{}, p)))
		jw.finish()
	}
	e.log.InfoContext(ctx, "mcp request", "request_id", id, "method", r.Method, "status", rec.status,
		"fast", fast, "duration_ms", float64(time.Since(start).Microseconds())/1000)
}

type principalCtx struct{}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// ForAPI builds the MCP endpoint over api's operations and services, authenticated by authn.
// Reads that run no operation count in api's rate groups (api.Take).
func ForAPI(api *rest.Server, authn Authenticator, now func() time.Time, log *slog.Logger, opts ...Option) (http.Handler, error) {
	sv := api.Services()
	srv, err := NewServer(Config{Contract: api.Contract(), Operations: api, Limiter: api, Videos: sv.Videos, Series: sv.Series,
		Research: sv.Research, Now: now, Log: log})
	if err != nil {
		return nil, err
	}
	return Handler(srv, authn, api, log, append([]Option{LeaseWithKeys(api)}, opts...)...), nil
}
