package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
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
// takes the fast path (fastpath.go); every other request is the SDK's.
func Handler(srv *Server, authn Authenticator, errs ErrorWriter, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
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
	return &endpoint{srv: srv, sdk: carry, authn: authn, errs: errs, log: log, fast: true}
}

// tokenInfo carries an authenticated principal to the tool handlers.
func tokenInfo(p auth.Principal) *sdkauth.TokenInfo {
	return &sdkauth.TokenInfo{UserID: p.KeyID, Expiration: time.Now().Add(time.Hour),
		Extra: map[string]any{principalKey: p}}
}

type endpoint struct {
	srv   *Server
	sdk   http.Handler
	authn Authenticator
	errs  ErrorWriter
	log   *slog.Logger
	fast  bool // take the fast path (off only in the test that compares it with the SDK)
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
	p, err := e.authn.Authenticate(r)
	if err == nil && p.ChannelID == "" {
		err = apperr.Invalid("X-Channel-Id", "is required with a session token")
	}
	if err != nil {
		e.errs.WriteError(w, r, err)
		e.log.InfoContext(ctx, "mcp request refused", "request_id", id, "method", r.Method,
			"code", apperr.CodeOf(err))
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	fast := e.fast && e.srv.serveToolCall(rec, r, tokenInfo(p))
	if !fast {
		e.sdk.ServeHTTP(rec, r.WithContext(context.WithValue(ctx, principalCtx{}, p)))
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
func ForAPI(api *rest.Server, authn Authenticator, now func() time.Time, log *slog.Logger) (http.Handler, error) {
	sv := api.Services()
	srv, err := NewServer(Config{Contract: api.Contract(), Operations: api, Videos: sv.Videos, Series: sv.Series,
		Research: sv.Research, Now: now, Log: log})
	if err != nil {
		return nil, err
	}
	return Handler(srv, authn, api, log), nil
}
