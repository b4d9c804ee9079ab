package bridge

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
)

// maxRefusalBody bounds how much of a 401/403 body is read for its message.
const maxRefusalBody = 4 << 10

// maxRefusalMessage bounds the server's message quoted on standard error.
const maxRefusalMessage = 300

func newHTTPClient(cfg Config, version *protocolVersion) *http.Client {
	timeout := cfg.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return &http.Client{
		Transport: &keyTransport{base: cmp.Or(cfg.Transport, http.DefaultTransport), key: cfg.Key, userAgent: cfg.UserAgent, version: version},
		Timeout:   timeout,
		// The key goes to the configured endpoint and nowhere else: a redirect is an error naming where it
		// pointed, so the user can set CSS_MCP_URL to it.
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("the server redirected to %s: set CSS_MCP_URL to the endpoint itself", req.URL.Redacted())
		},
	}
}

// keyTransport adds the API key (and the negotiated protocol version) to each request, and turns the
// server's refusal of the key into a *RefusedError. A refusal is final for the bridge, so it is reported
// as an error rather than handed to the SDK, which would only see a status text.
type keyTransport struct {
	base      http.RoundTripper
	key       string
	userAgent string
	version   *protocolVersion
}

func (t *keyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.key)
	if t.userAgent != "" {
		req.Header.Set("User-Agent", t.userAgent)
	}
	if req.Header.Get("Mcp-Protocol-Version") == "" {
		if v := t.version.get(); v != "" {
			req.Header.Set("Mcp-Protocol-Version", v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return resp, nil
	}
	defer resp.Body.Close()
	refused := &RefusedError{Status: resp.StatusCode}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody))
	refused.Code, refused.Message = errorBody(body)
	return nil, refused
}

// errorBody reads the service's Error shape ({"error": "...", "code": "..."}) or a JSON-RPC error
// ({"error": {"message": "..."}}); anything else yields nothing.
func errorBody(body []byte) (code, message string) {
	var shape struct {
		Error json.RawMessage `json:"error"`
		Code  string          `json:"code"`
	}
	if json.Unmarshal(body, &shape) != nil {
		return "", ""
	}
	var text string
	if json.Unmarshal(shape.Error, &text) != nil {
		var rpc struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(shape.Error, &rpc) == nil {
			text = rpc.Message
		}
	}
	return printable(shape.Code), printable(text)
}

// printable keeps a server's text from writing control sequences to the user's terminal, and short.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > maxRefusalMessage {
		s = string(r[:maxRefusalMessage]) + "…"
	}
	return s
}
