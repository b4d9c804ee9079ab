// Package rest is the HTTP edge of the service: it serves the REST contract over net/http. Routes, request
// validation and the Error shape come from the OpenAPI document (package contract); the handlers call the
// domain services, which shared/wire's NewAPI assembles over one store (README.md: the request
// pipeline). The same handler runs in the local stack (every function mounted) and in each Lambda (its own function's operations); both
// authenticate in process (BearerAuth).
package rest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ratelimit"
)

// MaxBodyBytes is the largest request body accepted (decision 8).
const MaxBodyBytes = 1 << 20

// Authenticator turns a request's credentials into a principal (BearerAuth, for the local stack and every
// Lambda).
type Authenticator interface {
	Authenticate(r *http.Request) (auth.Principal, error)
}

// keyReader is an Authenticator that lets the caller read an uncached credential's record itself
// (BearerAuth): the server then reads an API key, or a session's account, and leases its rate calls in one
// table call (AuthenticateFor).
type keyReader interface {
	UncachedKey(r *http.Request) (hash string, ok bool)
	AuthenticateRead(r *http.Request, read *auth.KeyRead) (auth.Principal, error)
	SessionToken(r *http.Request) bool
	AuthenticateSession(r *http.Request, readAccount auth.AccountReader) (auth.Principal, error)
}

// KeyLeaser reads the item that authenticates a caller and leases calls of one of its rate windows in one
// table call (*store.Store: a key's windows live on its lookup item, a session's on its account's).
type KeyLeaser interface {
	LeaseKey(ctx context.Context, hash string, w ratelimit.Window, n, limit int64) (rec auth.KeyRecord, count int64, ok bool, err error)
	LeaseAccount(ctx context.Context, accountID string, w ratelimit.Window, n, limit int64) (rec auth.AccountRecord, count int64, ok bool, err error)
}

// Options configures the handler.
type Options struct {
	Contract *contract.Contract
	Auth     Authenticator
	Services Services
	Log      *slog.Logger
	// Dev adds `detail` to error bodies (development mode only, decision 10).
	Dev bool
	// Functions limits the handler to the operations of these functions (a Lambda serves its own);
	// empty means all (the local stack, the mcp function).
	Functions []contract.Function
	// RequestID returns the id the platform gave the request ("" when none).
	RequestID func(r *http.Request) string
	// Limiter enforces the per-credential rate limits of each operation's rate group (nil: none).
	Limiter *ratelimit.Limiter
	// KeyLeases, when the Limiter counts in the table, reads an uncached API key, or a session's account,
	// together with its rate lease (nil: the record is read, then leased, as two calls).
	KeyLeases KeyLeaser
	// ConnectedURL is where the YouTube callback sends the owner once connected (CSS_YOUTUBE_CONNECTED_URL;
	// "": a page of its own).
	ConnectedURL string
	// PublicURL is the API's origin (CSS_PUBLIC_URL). On plain http (the local stack on loopback) the YouTube
	// start step's cookie is sent without Secure and the __Host- prefix (decision 50).
	PublicURL string
}

// call is one validated request on its way to a handler.
type call struct {
	r         *http.Request
	op        *contract.Operation
	principal auth.Principal
	params    contract.Params
	body      any
	// rate is where the credential stands in the operation's rate group, this call counted.
	rate ratelimit.Status
	// viaMCP marks a call of an MCP tool (Invoke): a note it writes has source mcp.
	viaMCP bool
}

// handler serves one operation. It returns the body of the operation's success status, or a reply when
// it needs another status or headers.
type handler struct {
	// input is the operation whose generated input type the handler takes.
	input string
	serve func(ctx context.Context, c *call) (any, error)
}

// typed makes the handler of the operation whose input type is I: the call's validated parameters and body
// are bound into an I (no second decode) and handed to serve.
func typed[I any, P interface {
	*I
	contract.Request
}](serve func(ctx context.Context, c *call, in *I) (any, error)) handler {
	return handler{
		input: P(new(I)).OperationID(),
		serve: func(ctx context.Context, c *call) (any, error) {
			in := P(new(I))
			if err := c.op.Bind(c.params, c.body, in); err != nil {
				return nil, err
			}
			return serve(ctx, c, (*I)(in))
		},
	}
}

// reply is a response other than the operation's usual success.
type reply struct {
	status int
	header http.Header
	body   any
}

// noContent is the result of handlers that answer 204.
var noContent = reply{status: http.StatusNoContent}

type route struct {
	op      *contract.Operation
	serve   handler
	params  []string // names of the path parameters
	channel bool     // needs a channel-scoped principal
	session bool     // needs a session token
}

// Server serves the contract's operations over HTTP (ServeHTTP) and in process (Invoke).
type Server struct {
	opts Options
	// mux routes HTTP requests to the routes' path patterns. Built at the first HTTP request: the MCP
	// function runs every operation in process (Invoke) and never routes a path, and registering every
	// pattern (each checked against the others) is a tenth of a millisecond of its cold start.
	mux    func() *http.ServeMux
	log    *slog.Logger
	routes map[string]map[string]*route // path pattern -> method -> route
	byID   map[string]*route            // operation id -> route (Invoke)
	// bodies holds the buffers list bodies are assembled in; Write has sent or copied the bytes by the
	// time it returns, so a buffer is free again after each response.
	bodies sync.Pool
}

// New returns the API server.
func New(opts Options) (*Server, error) {
	if opts.Contract == nil || opts.Auth == nil {
		return nil, errors.New("rest: a contract and an authenticator are required")
	}
	s := &Server{opts: opts, log: cmp.Or(opts.Log, slog.New(slog.DiscardHandler)), routes: map[string]map[string]*route{},
		byID:   map[string]*route{},
		bodies: sync.Pool{New: func() any { return new([]byte) }}}
	handlers := s.handlers()
	for _, op := range opts.Contract.Operations {
		if len(opts.Functions) > 0 && !slices.Contains(opts.Functions, contract.Function(op.Function)) {
			continue
		}
		h, ok := handlers[op.ID]
		if !ok {
			return nil, fmt.Errorf("rest: %s has no handler", op.ID)
		}
		if h.input != op.ID {
			return nil, fmt.Errorf("rest: the handler of %s takes the input of %s", op.ID, h.input)
		}
		rt := &route{
			op: op, serve: h, params: pathParams(op.Path),
			session: op.Credential == contract.CredentialSession,
			channel: op.Credential == contract.CredentialChannel,
		}
		if s.routes[op.Path] == nil {
			s.routes[op.Path] = map[string]*route{}
		}
		s.routes[op.Path][op.Method] = rt
		s.byID[op.ID] = rt
	}
	s.mux = sync.OnceValue(s.newMux)
	return s, nil
}

// newMux registers every route's path pattern, and "/" for the paths of no operation.
func (s *Server) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	for path := range s.routes {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { s.dispatch(w, r, path) })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.dispatch(w, r, "") })
	return mux
}

// pathParams lists the names of path's {parameters}.
func pathParams(path string) []string {
	var names []string
	for rest := path; ; {
		_, after, ok := strings.Cut(rest, "{")
		if !ok {
			return names
		}
		name, tail, ok := strings.Cut(after, "}")
		if !ok {
			return names
		}
		names = append(names, name)
		rest = tail
	}
}

type ctxKey int

const requestIDKey ctxKey = iota

// RequestID returns the id of the request ctx belongs to.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// ValidRequestID reports whether a client's X-Request-Id is safe to adopt: 1 to 64 of [A-Za-z0-9._-].
// (A loop, not a regexp: the regexp's {1,64} costs a noticeable part of a cold start to compile.)
func ValidRequestID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := ""
	if s.opts.RequestID != nil {
		id = s.opts.RequestID(r)
	}
	if id == "" {
		if h := r.Header.Get("X-Request-Id"); ValidRequestID(h) {
			id = h
		} else {
			id = NewRequestID()
		}
	}
	w.Header().Set("X-Request-Id", id)
	ctx := context.WithValue(r.Context(), requestIDKey, id)
	r = r.WithContext(ctx)
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "panic", "request_id", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !rec.wrote {
				s.writeError(rec, r, &apperr.Error{Code: apperr.Internal, Message: "internal error"})
			}
		}
		attrs := []any{"request_id", id, "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration_ms", float64(time.Since(start).Microseconds()) / 1000}
		if clientGone(r) {
			attrs = append(attrs, "canceled", true) // the client left before its answer
		}
		s.log.InfoContext(ctx, "request", attrs...)
	}()
	if !cleanPath(r.URL.Path) {
		// The mux would redirect to the cleaned path with an HTML body: a path with dot segments or "//"
		// names no operation, and is answered as any such path (401, or 404 in the Error shape).
		s.dispatch(rec, r, "")
		return
	}
	s.mux().ServeHTTP(rec, r)
}

// cleanPath reports whether p is in the form http.ServeMux routes without a redirect: rooted, no "." or
// ".." segment, no empty segment but a trailing slash.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean == p
}

// NewRequestID returns a fresh request id.
func NewRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// dispatch authenticates, then routes: like API Gateway, an unauthenticated request learns nothing about
// which paths exist.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, path string) {
	byMethod := s.routes[path]
	rt := byMethod[r.Method]
	if rt == nil && r.Method == http.MethodHead {
		rt = byMethod[http.MethodGet]
	}
	public := rt != nil && rt.op.Public
	var principal auth.Principal
	if !public {
		var keyGroup, sessionGroup contract.RateGroup
		if rt != nil {
			sessionGroup = rt.op.RateGroup
			if !rt.session {
				keyGroup = sessionGroup
			}
		}
		p, err := s.authenticateFor(r, keyGroup, sessionGroup)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		principal = p
	}
	if byMethod == nil {
		s.writeError(w, r, &apperr.Error{Code: apperr.NotFound, Message: fmt.Sprintf("no such path: %s", clip(r.URL.Path))})
		return
	}
	if rt == nil {
		allowed := slices.Sorted(maps.Keys(byMethod))
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeError(w, r, &apperr.Error{Code: apperr.Validation, Status: http.StatusMethodNotAllowed,
			Message: fmt.Sprintf("method %s is not allowed on %s; allowed: %s", clip(r.Method), path, strings.Join(allowed, ", "))})
		return
	}
	if err := s.authorize(rt, principal); err != nil {
		s.writeError(w, r, err)
		return
	}
	rate, err := s.limit(r.Context(), w.Header(), rt, principal)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.validate(r, rt, principal)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c.rate = rate
	out, err := rt.serve.serve(r.Context(), c)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if rp, ok := out.(reply); ok {
		maps.Copy(w.Header(), rp.header)
		s.writeJSON(w, rp.status, rp.body)
		return
	}
	s.writeJSON(w, rt.op.SuccessStatus, out)
}

// AuthenticateFor authenticates r for a call in rate group group ("": none). When the credential's
// identity is not cached on this instance and the group is limited by a table-backed limiter, the item
// that authenticates it (an API key's lookup item, a verified session token's account) is read with a lease
// of the group's calls, in one table call: the caller's Take of the group then spends from that lease
// without another (issue 21). Otherwise it is the Authenticator's own. Its answers are the Authenticator's
// either way (401 for an unknown key or a gone account; the lease changes nothing for one).
func (s *Server) AuthenticateFor(r *http.Request, group contract.RateGroup) (auth.Principal, error) {
	return s.authenticateFor(r, group, group)
}

// authenticateFor is AuthenticateFor with the group an uncached API key is leased in (keyGroup) apart from
// a session's (sessionGroup): a session-only route leases no call of a key it is about to refuse.
func (s *Server) authenticateFor(r *http.Request, keyGroup, sessionGroup contract.RateGroup) (auth.Principal, error) {
	kr, ok := s.opts.Auth.(keyReader)
	if !ok || s.opts.Limiter == nil || s.opts.KeyLeases == nil {
		return s.opts.Auth.Authenticate(r)
	}
	if hash, ok := kr.UncachedKey(r); ok && s.limited(keyGroup) {
		return s.authenticateKey(r, kr, hash, string(keyGroup))
	}
	if s.limited(sessionGroup) && kr.SessionToken(r) {
		// A cached identity is answered from the cache; an uncached one reads its account with the lease.
		return kr.AuthenticateSession(r, func(ctx context.Context, accountID string) (auth.AccountRecord, error) {
			return s.leaseAccount(ctx, accountID, string(sessionGroup))
		})
	}
	return s.opts.Auth.Authenticate(r)
}

func (s *Server) limited(group contract.RateGroup) bool {
	return group != "" && s.opts.Limiter.Limit(string(group)) != 0
}

// authenticateKey reads the API key with this hash with a lease of group's calls.
func (s *Server) authenticateKey(r *http.Request, kr keyReader, hash, group string) (auth.Principal, error) {
	var read *auth.KeyRead
	leaseErr := s.opts.Limiter.Lease(r.Context(), ratelimit.Subject(hash, ""), group,
		func(ctx context.Context, w ratelimit.Window, n, limit int64) (int64, bool, error) {
			rec, count, ok, err := s.opts.KeyLeases.LeaseKey(ctx, hash, w, n, limit)
			if apperr.CodeOf(err) == apperr.NotFound {
				read = &auth.KeyRead{Hash: hash, Err: err}
				return 0, false, auth.KeyRevoked()
			}
			if err == nil {
				read = &auth.KeyRead{Hash: hash, Record: rec}
			}
			return count, ok, err
		})
	if read == nil && leaseErr == nil {
		// This instance holds a lease already (or knows the window used up): the key is read by the same
		// UpdateItem taking no call, so key items are reached one way (a lease's write) whatever the case.
		w := s.opts.Limiter.CurrentWindow(ratelimit.Subject(hash, ""), group)
		var rec auth.KeyRecord
		rec, _, _, leaseErr = s.opts.KeyLeases.LeaseKey(r.Context(), hash, w, 0, 0)
		switch {
		case leaseErr == nil:
			read = &auth.KeyRead{Hash: hash, Record: rec}
		case apperr.CodeOf(leaseErr) == apperr.NotFound:
			read = &auth.KeyRead{Hash: hash, Err: leaseErr}
		}
	}
	if read == nil {
		// The table failed the call: a failure of ours, as a failed key read is (nothing is cached).
		return auth.Principal{}, &apperr.Error{Code: apperr.Internal, Message: "credential lookup failed", Cause: leaseErr}
	}
	return kr.AuthenticateRead(r, read)
}

// leaseAccount reads a verified session's account with a lease of group's calls (auth.AccountReader): as
// authenticateKey does for a key, the account's item answers the read and the lease in one UpdateItem, or,
// when this instance holds a lease already, in the same UpdateItem taking none. A gone account answers the
// directory's NOT_FOUND (401 to the caller); a failed call, the table's error (500).
func (s *Server) leaseAccount(ctx context.Context, accountID, group string) (auth.AccountRecord, error) {
	subject := ratelimit.Subject("", accountID)
	var (
		rec     auth.AccountRecord
		read    bool
		readErr error
	)
	leaseErr := s.opts.Limiter.Lease(ctx, subject, group,
		func(ctx context.Context, w ratelimit.Window, n, limit int64) (int64, bool, error) {
			r, count, ok, err := s.opts.KeyLeases.LeaseAccount(ctx, accountID, w, n, limit)
			if apperr.CodeOf(err) == apperr.NotFound {
				readErr = err
				return 0, false, auth.AccountGone()
			}
			if err == nil {
				rec, read = r, true
			}
			return count, ok, err
		})
	switch {
	case readErr != nil:
		return auth.AccountRecord{}, readErr
	case leaseErr != nil:
		return auth.AccountRecord{}, leaseErr
	case read:
		return rec, nil
	}
	rec, _, _, err := s.opts.KeyLeases.LeaseAccount(ctx, accountID, s.opts.Limiter.CurrentWindow(subject, group), 0, 0)
	return rec, err
}

// ReadsCredentialWithLease reports whether AuthenticateFor, given a limited group, may read r's credential
// together with a rate lease, leases counted in the table: an API key whose identity this instance has not
// cached, or a session token (cached or not: telling would hash it once more). (The MCP endpoint then
// reads the request's body before authenticating, to learn the tool's group.)
func (s *Server) ReadsCredentialWithLease(r *http.Request) bool {
	kr, ok := s.opts.Auth.(keyReader)
	if !ok || s.opts.Limiter == nil || s.opts.KeyLeases == nil {
		return false
	}
	_, key := kr.UncachedKey(r)
	return key || kr.SessionToken(r)
}

// authorize checks the principal may call the route: key management takes session tokens only
// (decision 4); everything else acts on one channel.
func (s *Server) authorize(rt *route, p auth.Principal) error {
	switch {
	case rt.session && p.Method != auth.MethodSession:
		return apperr.New(apperr.Unauthorized, "key management needs a session token, not an API key")
	case rt.channel && p.ChannelID == "":
		return apperr.Invalid("X-Channel-Id", "is required with a session token")
	}
	return nil
}

// Rate-limit headers of every answer of a limited operation once the credential is known: the limit of
// the operation's group per minute, what is left of it in the current window, and the seconds until the
// window resets (the X-RateLimit trio; the seconds rather than a time, like Retry-After, so a client's clock
// does not matter).
const (
	headerRateLimit     = "X-RateLimit-Limit"
	headerRateRemaining = "X-RateLimit-Remaining"
	headerRateReset     = "X-RateLimit-Reset"
)

// limit counts the call against the principal's budget in the operation's rate group and sets the
// rate-limit headers; over the limit it returns the 429.
func (s *Server) limit(ctx context.Context, h http.Header, rt *route, p auth.Principal) (ratelimit.Status, error) {
	if s.opts.Limiter == nil || rt.op.RateGroup == "" {
		return ratelimit.Status{}, nil
	}
	st, err := s.opts.Limiter.Take(ctx, ratelimit.Subject(p.KeyHash, p.AccountID), string(rt.op.RateGroup))
	if st.Limit > 0 {
		h.Set(headerRateLimit, strconv.FormatInt(st.Limit, 10))
		h.Set(headerRateRemaining, strconv.FormatInt(st.Remaining, 10))
		h.Set(headerRateReset, strconv.Itoa(st.ResetAfter))
	}
	return st, err
}

// validate checks parameters and body against the operation's contract.
func (s *Server) validate(r *http.Request, rt *route, p auth.Principal) (*call, error) {
	path := make(map[string]string, len(rt.params))
	for _, name := range rt.params {
		path[name] = r.PathValue(name)
	}
	params, err := rt.op.ValidateParams(path, r.URL.Query(), r.Header)
	if err != nil {
		return nil, err
	}
	c := &call{r: r, op: rt.op, principal: p, params: params}
	if !rt.op.HasBody {
		return c, nil
	}
	raw, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if len(raw) > 0 {
		if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
			return nil, err
		}
		if err := checkContentEncoding(r.Header.Values("Content-Encoding")); err != nil {
			return nil, err
		}
	}
	if c.body, err = rt.op.ValidateBody(raw); err != nil {
		return nil, err
	}
	return c, nil
}

// readBody reads at most MaxBodyBytes; more is a 413.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, tooLarge()
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, apperr.Invalid("body", "could not be read")
	}
	if len(raw) > MaxBodyBytes {
		return nil, tooLarge()
	}
	return raw, nil
}

func tooLarge() error {
	return &apperr.Error{Code: apperr.Validation, Status: http.StatusRequestEntityTooLarge,
		Message: fmt.Sprintf("body: must be at most %d bytes", MaxBodyBytes), Field: "body"}
}

// checkContentType accepts application/json (decision 8), parameters allowed, in UTF-8, the only encoding
// RFC 8259 allows between systems: a body declared in another charset would be read as something its
// sender did not mean. Another type, a +json one too, is 415, as MCP answers it.
func checkContentType(v string) error {
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || mt != "application/json" {
		return &apperr.Error{Code: apperr.Validation, Status: http.StatusUnsupportedMediaType,
			Message: "Content-Type: must be application/json", Field: "Content-Type"}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return apperr.Invalid("Content-Type", "charset must be utf-8")
	}
	return nil
}

// checkContentEncoding refuses a body compressed or otherwise encoded: the service decodes none, and
// validating the encoded bytes as JSON would give a misleading error.
func checkContentEncoding(values []string) error {
	for _, v := range values {
		for _, coding := range strings.Split(v, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return apperr.Invalid("Content-Encoding", "%q is not accepted: send the body unencoded", clip(c))
			}
		}
	}
	return nil
}

// clip keeps client input short when it is echoed in a message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	return r.ResponseWriter.Write(b)
}
