package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/contract"
)

// The fast path answers the one request an assistant sends most, a single stateless tools/call, without
// the SDK's per-request session: the SDK builds a session and a JSON-RPC connection for every stateless
// request and encodes the result three times over, which made a read tool cost about 6x its REST
// operation (a bare ping through the SDK alone costs 2.8x a REST read). The fast path calls the very
// handler registered with the SDK, decodes with the SDK's JSON library and settings and writes its result
// types, so a tool answers the same JSON either way (TestFastPathAnswersAsTheSDK,
// FuzzToolCallDecodesAsTheSDK). It takes only what it
// can prove the SDK would accept; everything else (initialize, lists, resources, prompts, batches,
// notifications, unknown tools, other protocol versions, odd headers, bad JSON) goes to the SDK untouched.

// fastVersions are the MCP-Protocol-Version values whose tools/call the fast path answers (none is
// the SDK's 2025-03-26). Later versions change the request model (SEP-2575) and go to the SDK.
var fastVersions = map[string]bool{"": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// serveToolCall answers r, whose body readMessage read and checked, if it is a plain tools/call of a
// known tool and reports true; otherwise it reports false (r's body is still readable).
func (s *Server) serveToolCall(w http.ResponseWriter, r *http.Request, body []byte, info *sdkauth.TokenInfo) bool {
	if r.Method != http.MethodPost || !fastVersions[r.Header.Get("Mcp-Protocol-Version")] ||
		len(r.Header.Values("Last-Event-Id")) > 0 || !isJSON(r.Header.Get("Content-Type")) ||
		!acceptsBoth(r.Header.Values("Accept")) || !hostAllowed(r) {
		return false
	}
	id, params, handler := s.toolCall(body)
	if handler == nil {
		return false
	}
	res, err := handler(context.WithoutCancel(r.Context()), &sdk.CallToolRequest{Params: params,
		Extra: &sdk.RequestExtra{TokenInfo: info, Header: r.Header}})
	if err == nil && res == nil {
		err = errNoResult
	}
	buf := s.buffers.Get().(*[]byte)
	defer s.putBuffer(buf)
	var out []byte
	if err == nil {
		if res.Content == nil {
			res.Content = []sdk.Content{} // never "null", as the SDK
		}
		out, err = appendResponse((*buf)[:0], id, res)
	}
	if err != nil {
		// Handlers answer failures as tool errors; an error here is a bug, answered as the SDK would.
		out, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id,
			Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}})
	} else {
		*buf = out
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	// With its length known the answer leaves in one write, not in 4 KB chunks.
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
	return true
}

// putBuffer keeps buf for the next response unless one answer made it large.
func (s *Server) putBuffer(buf *[]byte) {
	if cap(*buf) <= 1<<20 {
		s.buffers.Put(buf)
	}
}

var errNoResult = errors.New("mcp: a tool handler returned no result")

// toolCall decodes body as the SDK's jsonrpc.DecodeMessage and params decoding do (segmentio's parser,
// member names matched exactly, at most 1,000 levels deep, nothing after the message) and returns the
// request id, its params and the tool's handler, or a nil handler when the fast path must not answer it.
// It parses in place: the SDK's decoder allocates a buffer of its own per message, 100 KB for a 100-byte
// call.
func (s *Server) toolCall(body []byte) (jsonrpc.ID, *sdk.CallToolParamsRaw, sdk.ToolHandler) {
	if !contract.WithinDepth(body, maxDepth) {
		return jsonrpc.ID{}, nil, nil
	}
	var wire struct {
		Version string                 `json:"jsonrpc"`
		ID      any                    `json:"id"`
		Method  string                 `json:"method"`
		Params  *sdk.CallToolParamsRaw `json:"params"`
	}
	if rest, err := segjson.Parse(body, &wire, segjson.DontMatchCaseInsensitiveStructFields); err != nil || len(rest) > 0 {
		return jsonrpc.ID{}, nil, nil
	}
	id, err := jsonrpc.MakeID(wire.ID)
	params := wire.Params
	if err != nil || !id.IsValid() || wire.Version != "2.0" || wire.Method != "tools/call" ||
		params == nil || params.InputResponses != nil || params.RequestState != "" {
		return jsonrpc.ID{}, nil, nil
	}
	handler := s.tools[params.Name]
	if handler == nil {
		return jsonrpc.ID{}, nil, nil
	}
	return id, params, handler
}

// toolRateGroup returns the rate group a body will be counted in: a tools/call's tool's operation's (""
// for a composite tool, whose operations count), the group of reads for an unknown tool, any other
// message or a batch (countReads, countNotifications). A hint for the authentication's lease: a wrong one
// costs a table call, never a wrong count (the Take of the call counts it).
func (s *Server) toolRateGroup(body []byte) contract.RateGroup {
	if gjson.GetBytes(body, "method").Str != "tools/call" {
		return contract.RateOther
	}
	name := gjson.GetBytes(body, "params.name").Str
	if s.tools[name] == nil {
		return contract.RateOther // an unknown tool's call is counted as a read
	}
	return s.groups[name]
}

// maxDepth is the SDK's bound on a message's nesting.
const maxDepth = 1000

// appendResponse appends the JSON-RPC response carrying res, as the SDK's jsonrpc.EncodeMessage of
// CallToolResult.MarshalJSON would write it. The results the tool handlers build (text content,
// structuredContent already JSON, isError) are written directly, strings escaped as encoding/json does:
// the SDK compacts the structured content and the text again through three more encoders. Any other
// result is MarshalJSON's.
func appendResponse(b []byte, id jsonrpc.ID, res *sdk.CallToolResult) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b, err := segjson.Append(b, id.Raw(), segjson.EscapeHTML)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"result":`...)
	if !plainResult(res) {
		out, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(b, out...)
		return append(b, '}'), nil
	}
	b = append(b, `{"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, c.(*sdk.TextContent).Text)
		b = append(b, '}')
	}
	b = append(b, ']')
	if res.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, res.StructuredContent.(json.RawMessage)...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, `}}`...), nil
}

// appendString appends s as a JSON string. Valid UTF-8 is copied but for the quote, the backslash and
// control characters, which is all JSON asks and, on text that is mostly JSON itself, three times as fast
// as a general encoder; anything else is segmentio's, escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		return segjson.AppendEscape(b, s, segjson.EscapeHTML)
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hex = "0123456789abcdef"

// plainResult reports whether res is made of what appendResponse writes itself.
func plainResult(res *sdk.CallToolResult) bool {
	if res.Meta != nil || res.InputRequests != nil || res.RequestState != "" {
		return false
	}
	// Structured content given as JSON is what a handler encoded itself (a REST body, json.Marshal): it is
	// written as it is, not checked again.
	if _, ok := res.StructuredContent.(json.RawMessage); res.StructuredContent != nil && !ok {
		return false
	}
	for _, c := range res.Content {
		if text, ok := c.(*sdk.TextContent); !ok || text.Meta != nil || text.Annotations != nil {
			return false
		}
	}
	return true
}

// isJSON reports whether a Content-Type is application/json (parameters allowed), as the SDK requires.
func isJSON(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/json"
}

// acceptsBoth reports whether Accept names application/json and text/event-stream exactly: a subset of
// what the SDK accepts (it also takes wildcards, which go to it).
func acceptsBoth(values []string) bool {
	var json, stream bool
	for _, v := range values {
		for _, token := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(token, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				json = true
			case "text/event-stream":
				stream = true
			}
		}
	}
	return json && stream
}

// hostAllowed is the SDK's DNS-rebinding guard: a request reaching a loopback address must name a
// loopback host. A request it would refuse goes to it.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return true
	}
	return isLoopback(r.Host)
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
