package mcp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// The endpoint reads a request as the REST API reads a body (issue 19, items 8-10), before the fast path
// or the SDK sees it: the Origin of a browser must be allowed; then POST, application/json, at most
// MaxBodyBytes, exactly one JSON value (nothing after it), valid UTF-8 without unpaired surrogate escapes,
// no member name twice in one object at any depth (the message, params, arguments), at most maxDepth
// levels deep, a message that is a request, a notification or a response. A batch is refused from
// protocol version 2025-06-18 on (it removed them); an older version (2025-03-26, or no
// MCP-Protocol-Version header, which the SDK reads as 2025-03-26) may batch at most MaxBatch messages,
// each counted as its own request. Every refusal is a JSON-RPC error in application/json, with the HTTP
// status that matches it; so is every refusal of the SDK (jsonErrors).

// MaxBatch bounds the messages of a JSON-RPC batch (protocol versions before 2025-06-18).
const MaxBatch = 20

// JSON-RPC error codes of the endpoint's refusals: the specification's, and implementation-defined
// server errors (-32000 to -32099).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeForbidden      = -32003 // an Origin or Host the endpoint does not serve
	codeLimited        = -32000 // RATE_LIMIT, as a read that runs no operation answers it (resourceError)
)

// rpcError is a refusal the endpoint answers itself: an HTTP status and a JSON-RPC error.
type rpcError struct {
	status  int
	code    int64
	message string
	// partial marks a refusal met before the value's end (what follows it is not looked at).
	partial bool
}

func refuse(status int, code int64, message string) *rpcError {
	return &rpcError{status: status, code: code, message: message}
}

// partial is a refusal met before the value's end.
func partial(status int, code int64, message string) *rpcError {
	return &rpcError{status: status, code: code, message: message, partial: true}
}

// batchesFrom is the first protocol version without JSON-RPC batches.
const batchesFrom = "2025-06-18"

// protocolVersion is the request's MCP-Protocol-Version, the SDK's 2025-03-26 when it has none.
func protocolVersion(r *http.Request) string {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v
	}
	return "2025-03-26"
}

// readMessage reads r's body and checks it is one JSON-RPC message (or a batch an older version may
// send) decoded as strictly as a REST body. It leaves r.Body readable again for the SDK.
func readMessage(r *http.Request) ([]byte, *rpcError) {
	if r.Method != http.MethodPost {
		return nil, refuse(http.StatusMethodNotAllowed, codeInvalidRequest,
			fmt.Sprintf("method %s is not allowed: the endpoint takes POST only", r.Method))
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		return nil, refuse(http.StatusUnsupportedMediaType, codeInvalidRequest, "Content-Type must be application/json")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, refuse(http.StatusBadRequest, codeParseError, "the body could not be read")
	}
	if len(body) > MaxBodyBytes {
		return nil, refuse(http.StatusRequestEntityTooLarge, codeInvalidRequest,
			fmt.Sprintf("the body exceeds %d bytes", MaxBodyBytes))
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !strictJSON(body) {
		// Refused with its reason, unless it is a batch an older protocol version may send.
		if e := checkMessage(body, protocolVersion(r)); e != nil {
			return nil, e
		}
	}
	return body, nil
}

// strictJSON reports whether body is one JSON value, strict as above, at most maxDepth levels deep and an
// object: what every request needs, checked without allocating (about 0.3 µs for a tools/call, BenchmarkStrictJSON); the fast path
// takes only a tools/call from what passes. checkMessage, the full reading, gives a refusal its reason,
// and checks what the SDK gets (a message kind, the batch rules).
func strictJSON(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && contract.WithinDepth(body, maxDepth) && jsontext.Value(body).IsValid()
}

// checkMessage checks body, sent with protocol version version (see above).
func checkMessage(body []byte, version string) *rpcError {
	if len(bytes.TrimLeft(body, " \t\r\n")) == 0 {
		return refuse(http.StatusBadRequest, codeParseError, "parse error: the body is empty")
	}
	if !contract.WithinDepth(body, maxDepth) {
		return refuse(http.StatusBadRequest, codeInvalidRequest, fmt.Sprintf("the message nests deeper than %d levels", maxDepth))
	}
	d := jsontext.NewDecoder(bytes.NewReader(body))
	var e *rpcError
	switch d.PeekKind() {
	case '{':
		e = checkObject(d)
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return decodeError(err)
		}
		n := 0
		for d.PeekKind() != ']' {
			if d.PeekKind() != '{' {
				if err := d.SkipValue(); err != nil {
					return decodeError(err)
				}
				return partial(http.StatusBadRequest, codeInvalidRequest, "a batch holds JSON-RPC messages (objects) only")
			}
			if e := checkObject(d); e != nil {
				return e
			}
			n++
		}
		if _, err := d.ReadToken(); err != nil {
			return decodeError(err)
		}
		switch {
		case version >= batchesFrom:
			e = refuse(http.StatusBadRequest, codeInvalidRequest,
				fmt.Sprintf("JSON-RPC batches are not supported from protocol version %s on (this request: %s)", batchesFrom, version))
		case n == 0:
			e = refuse(http.StatusBadRequest, codeInvalidRequest, "the batch is empty")
		case n > MaxBatch:
			e = refuse(http.StatusBadRequest, codeInvalidRequest, fmt.Sprintf("a batch holds at most %d messages, not %d", MaxBatch, n))
		}
	default:
		if err := d.SkipValue(); err != nil {
			return decodeError(err)
		}
		e = refuse(http.StatusBadRequest, codeInvalidRequest, "the body is not a JSON-RPC message (an object)")
	}
	if e != nil && e.partial {
		return e
	}
	// Whatever else is wrong, text after the value is a parse error first.
	if len(bytes.TrimLeft(body[d.InputOffset():], " \t\r\n")) > 0 {
		return refuse(http.StatusBadRequest, codeParseError,
			fmt.Sprintf("parse error: data after the message at offset %d", d.InputOffset()))
	}
	return e
}

// checkObject reads one message (an object) from d: strict JSON, and a method, a result or an error.
func checkObject(d *jsontext.Decoder) *rpcError {
	if _, err := d.ReadToken(); err != nil {
		return decodeError(err)
	}
	kind := false
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return decodeError(err)
		}
		switch name.String() {
		case "method", "result", "error":
			kind = true
		}
		if err := d.SkipValue(); err != nil {
			return decodeError(err)
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return decodeError(err)
	}
	if !kind {
		return refuse(http.StatusBadRequest, codeInvalidRequest, "the message has no method (nor a result or an error)")
	}
	return nil
}

// decodeError is the refusal of a body jsontext does not read: a member given twice is an invalid
// request, naming the member and where it is; anything else is a parse error.
func decodeError(err error) *rpcError {
	var syntax *jsontext.SyntacticError
	if !errors.As(err, &syntax) {
		return partial(http.StatusBadRequest, codeParseError, "parse error: the message ends early")
	}
	if errors.Is(syntax.Err, jsontext.ErrDuplicateName) {
		at := cmp.Or(string(syntax.JSONPointer.Parent()), "the message")
		return partial(http.StatusBadRequest, codeInvalidRequest,
			fmt.Sprintf("member %q is given more than once in %s", syntax.JSONPointer.LastToken(), at))
	}
	msg := strings.TrimPrefix(syntax.Err.Error(), "jsontext: ")
	return partial(http.StatusBadRequest, codeParseError, fmt.Sprintf("parse error at offset %d: %s", syntax.ByteOffset, msg))
}

// writeRPCError answers a JSON-RPC error, with id when the request's is known (else null).
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string) {
	var idJSON any
	if id.IsValid() {
		idJSON = id.Raw()
	}
	out, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: idJSON, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	if err != nil {
		out = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// requestID returns the id of body when it is a single message with a valid one.
func requestID(body []byte) jsonrpc.ID {
	var m struct {
		ID any `json:"id"`
	}
	if _, err := segjson.Parse(body, &m, segjson.DontMatchCaseInsensitiveStructFields); err != nil || m.ID == nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(m.ID)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// jsonErrors turns the SDK's plain-text refusals (http.Error) into JSON-RPC errors with the same HTTP
// status: after readMessage few are left (an Accept without both types, an unknown protocol version,
// Last-Event-ID on a POST, a message the SDK does not take), but none may reach a client as a sentence.
type jsonErrors struct {
	http.ResponseWriter
	body     []byte // the request's, for the id
	status   int    // the refusal's, once captured
	captured bytes.Buffer
}

func (j *jsonErrors) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(j.Header().Get("Content-Type"), "text/plain") {
		j.status = code
		return
	}
	j.ResponseWriter.WriteHeader(code)
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if j.status != 0 {
		return j.captured.Write(p)
	}
	return j.ResponseWriter.Write(p)
}

// finish writes the captured refusal, if any, as a JSON-RPC error.
func (j *jsonErrors) finish() {
	if j.status == 0 {
		return
	}
	msg := strings.TrimSpace(j.captured.String())
	code := int64(codeInvalidRequest)
	switch {
	case strings.Contains(msg, "not handled"):
		code = codeMethodNotFound
	case strings.Contains(msg, `missing required "params"`):
		code = codeInvalidParams
	case j.status == http.StatusForbidden:
		code = codeForbidden
	case j.status >= 500:
		code = codeInternalError
	}
	var id jsonrpc.ID
	if code == codeMethodNotFound || code == codeInvalidParams {
		id = requestID(j.body)
	}
	writeRPCError(j.ResponseWriter, j.status, id, code, msg)
}
