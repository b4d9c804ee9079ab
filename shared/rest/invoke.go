package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ratelimit"
)

// Result is an operation's answer to an in-process call.
type Result struct {
	// Status is the HTTP status the operation would have answered (200, 201, 202, 204).
	Status int
	// Body is the response body in the contract's shape; nil for 204.
	Body json.RawMessage
}

// Invoke runs one operation for an authenticated principal without HTTP: the MCP tools call it (a note
// written this way has source mcp), so an
// operation is authorised, rate-limited, validated and served exactly as over REST (decisions 35-36).
// raw carries the parameters and body as a request would (contract.Arguments builds it from a tool's
// arguments). Every error it returns is an *apperr.Error; an unexpected one is logged and answered as
// INTERNAL without its text.
func (s *Server) Invoke(ctx context.Context, p auth.Principal, opID string, raw contract.RawRequest) (res Result, err error) {
	rt := s.byID[opID]
	if rt == nil {
		return Result{}, apperr.NotFoundf("no operation %s in this function", opID)
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.ErrorContext(ctx, "panic", "request_id", RequestID(ctx), "operation", opID,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = Result{}, &apperr.Error{Code: apperr.Internal, Message: "internal error"}
		}
		if err != nil {
			err = s.public(ctx, opID, err)
		}
	}()
	if rt.op.Public {
		p = auth.Principal{}
	} else if err := s.authorize(rt, p); err != nil {
		return Result{}, err
	}
	rate, err := s.limit(ctx, http.Header{}, rt, p)
	if err != nil {
		return Result{}, err
	}
	params, err := rt.op.ValidateParams(raw.Path, raw.Query, raw.Header)
	if err != nil {
		return Result{}, err
	}
	c := &call{op: rt.op, principal: p, params: params, rate: rate, viaMCP: true,
		r: (&http.Request{Method: rt.op.Method, URL: &url.URL{Path: rt.op.Path, RawQuery: raw.Query.Encode()},
			Header: raw.Header}).WithContext(ctx)}
	if rt.op.HasBody {
		if len(raw.Body) > MaxBodyBytes {
			return Result{}, tooLarge()
		}
		if c.body, err = rt.op.ValidateBody(raw.Body); err != nil {
			return Result{}, err
		}
	}
	out, err := rt.serve.serve(ctx, c)
	if err != nil {
		return Result{}, err
	}
	status := rt.op.SuccessStatus
	if rp, ok := out.(reply); ok {
		status, out = rp.status, rp.body
	}
	if status == http.StatusNoContent {
		return Result{Status: status}, nil
	}
	body, err := s.marshal(out)
	if err != nil {
		return Result{}, err
	}
	return Result{Status: status, Body: body}, nil
}

// Take counts one call of p in group, as an operation of that group counts (nothing for "" or without
// a limiter): for the MCP requests that run no operation (a resource read from a service, a prompt).
// Over the limit it returns the RATE_LIMIT *apperr.Error.
func (s *Server) Take(ctx context.Context, p auth.Principal, group contract.RateGroup) error {
	if s.opts.Limiter == nil || group == "" {
		return nil
	}
	if _, err := s.opts.Limiter.Take(ctx, ratelimit.Subject(p.KeyHash, p.AccountID), string(group)); err != nil {
		return s.public(ctx, "rate limit", err)
	}
	return nil
}

// public turns err into the error a caller may see: an *apperr.Error as it is; anything else logged with
// the request id and answered as a bare INTERNAL.
func (s *Server) public(ctx context.Context, opID string, err error) error {
	if _, ok := apperr.As(err); ok {
		return err
	}
	s.log.ErrorContext(ctx, "operation failed", "request_id", RequestID(ctx), "operation", opID, "error", err.Error())
	return &apperr.Error{Code: apperr.Internal, Message: "internal error", Cause: err}
}

// marshal encodes a handler's result as writeJSON would send it (uncompressed).
func (s *Server) marshal(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case rawJSON:
		return json.RawMessage(bytes.Clone(v)), nil
	case list:
		return v.appendTo(make([]byte, 0, v.size())), nil
	default:
		return json.Marshal(v)
	}
}

// WithRequestID returns ctx carrying the request id id (what RequestID reads), for callers of Invoke that
// are not ServeHTTP.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// WriteError renders err in the Error shape, as a REST answer would (401 with WWW-Authenticate, 429 with
// Retry-After), for handlers mounted beside the API (the MCP endpoint's authentication).
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, err)
}

// Services returns the domain services the operations run on.
func (s *Server) Services() Services { return s.opts.Services }

// Contract returns the contract the server serves.
func (s *Server) Contract() *contract.Contract { return s.opts.Contract }
