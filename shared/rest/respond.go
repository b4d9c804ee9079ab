package rest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/creatorstrategy/css/shared/apperr"
)

// errorBody is the Error schema.
type errorBody struct {
	Error  string `json:"error"`
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
}

// statusOf maps a code to its status (decisions 6 and 8, rest-api.md Errors).
func statusOf(e *apperr.Error) int {
	if e.Status != 0 {
		return e.Status
	}
	switch e.Code {
	case apperr.Validation:
		return http.StatusBadRequest
	case apperr.Unauthorized:
		return http.StatusUnauthorized
	case apperr.AccessExpired:
		return http.StatusForbidden
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.Conflict:
		return http.StatusConflict
	case apperr.RateLimit, apperr.UsageLimit:
		return http.StatusTooManyRequests
	case apperr.NotImplemented:
		return http.StatusNotImplemented
	case apperr.Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// writeError renders err in the Error shape. Errors without a code are unexpected: they are logged with
// the request id and answered as a bare 500, their text kept from the client (shown as `detail` in
// development mode only).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if clientGone(r) && errors.Is(err, context.Canceled) {
		// Nothing failed here, and no one reads an answer: logged as the client's, with nginx's 499.
		s.log.InfoContext(r.Context(), "request canceled by the client", "request_id", RequestID(r.Context()),
			"error", err.Error())
		w.WriteHeader(statusClientClosed)
		return
	}
	e, ok := apperr.As(err)
	if !ok {
		e = &apperr.Error{Code: apperr.Internal, Message: "internal error", Cause: err}
	}
	status := statusOf(e)
	body := errorBody{Error: e.Message, Code: string(e.Code)}
	if s.opts.Dev && e.Cause != nil {
		body.Detail = e.Cause.Error()
	}
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", "request_id", RequestID(r.Context()),
			"code", e.Code, "error", err.Error())
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(max(e.RetryAfter, 1)))
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="css"`)
	}
	s.writeJSON(w, status, body)
}

// statusClientClosed is what the log records of a request its client left before the answer (nginx's
// "client closed request"); the client never sees it.
const statusClientClosed = 499

// clientGone reports whether r's client left: net/http cancels the request's context when its connection
// closes.
func clientGone(r *http.Request) bool { return errors.Is(r.Context().Err(), context.Canceled) }

// writeJSON writes v as the JSON body (no body for 204).
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	if status == http.StatusNoContent || status == http.StatusSeeOther && v == nil {
		w.WriteHeader(status)
		return
	}
	var b []byte
	contentType := "application/json"
	switch v := v.(type) {
	case asset:
		b, contentType = v.data, v.contentType
		if v.gzip {
			w.Header().Set("Content-Encoding", "gzip")
		}
	case rawJSON:
		b = v // JSON already: json.Marshal would only scan and compact it again
	case gzipJSON:
		b = v // compressed JSON: the length and the body are the compressed bytes
		w.Header().Set("Content-Encoding", "gzip")
	case htmlPage:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(v)))
		w.WriteHeader(status)
		_, _ = w.Write(v)
		return

	case list:
		buf := s.bodies.Get().(*[]byte)
		defer s.bodies.Put(buf)
		*buf = v.appendTo((*buf)[:0])
		b = *buf
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			status = http.StatusInternalServerError
			b = []byte(`{"error":"internal error","code":"INTERNAL"}`)
		}
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
