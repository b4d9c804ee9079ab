package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/wire"
)

// rpcAnswer is an HTTP answer of the endpoint, its body read as one JSON-RPC response when it is one.
type rpcAnswer struct {
	status int
	ctype  string
	body   string
	// JSONRPC, ID and Error are the body's members when it is a single JSON-RPC response.
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// rpc sends body to path with method and the standard headers (changed by header; "" removes one) as
// channel A's key.
func (e *env) rpc(t *testing.T, method, path, body string, header map[string]string) rpcAnswer {
	t.Helper()
	r, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+e.keyA)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	for k, v := range header {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := rpcAnswer{status: res.StatusCode, ctype: res.Header.Get("Content-Type"), body: string(b)}
	if strings.HasPrefix(strings.TrimSpace(a.body), "{") {
		_ = json.Unmarshal(b, &a)
	}
	return a
}

// refused checks that a is a JSON-RPC error answer (application/json, "jsonrpc":"2.0", an error, no result)
// with the HTTP status and error code given.
func (a rpcAnswer) refused(t *testing.T, status int, code int64) {
	t.Helper()
	if a.status != status || a.ctype != "application/json" || a.JSONRPC != "2.0" || a.Error == nil ||
		a.Error.Code != code || a.Result != nil || a.Error.Message == "" {
		t.Fatalf("want %d application/json with JSON-RPC error %d, got %d %q %s", status, code, a.status, a.ctype, a.body)
	}
}

func (e *env) advance(d time.Duration) {
	later := e.now.Load().Add(d)
	e.now.Store(&later)
}

// TestEveryMCPReadIsCounted (issue 19, item 7): every resources/read (the template resources read the
// store directly), prompts/get and tools/call counts against the caller's rate group, a tool call whose
// arguments are refused before its operation runs, of an unknown tool, prompt or resource too; past the
// limit each answers RATE_LIMIT.
func TestEveryMCPReadIsCounted(t *testing.T) {
	const limit = 4
	e := newEnv(t, func(c *wire.APIConfig) { c.RequestsPerMinute = limit })
	cs := e.connect(e.keyA)
	video := str(ok(t, cs, "commit_video", map[string]any{"title": "Counted", "contentType": "Long", "formulaType": "how-to"}).structured, "id")
	ctx := context.Background()
	overLimit := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "RATE_LIMIT") {
			t.Fatalf("%s past the limit: want a RATE_LIMIT error, got %v", what, err)
		}
	}

	e.advance(time.Minute)
	// Not found, or no such resource: counted all the same, as REST counts a 404.
	for i, uri := range []string{"css://video/" + video, "css://series/7d1f1e4e-3c9a-4f0e-9a57-0c4f3b1e2d10", "css://nope", "css://video/" + video} {
		if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); (err == nil) != (i%3 == 0) {
			t.Fatalf("read %s: %v", uri, err)
		}
	}
	_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "css://video/" + video})
	overLimit("resources/read", err)

	e.advance(time.Minute)
	for i := range limit - 1 {
		if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brainstorm"}); err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "no-such-prompt"}); err == nil {
		t.Fatal("an unknown prompt answered")
	}
	_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brainstorm"})
	overLimit("prompts/get", err)

	e.advance(time.Minute)
	for range limit - 1 {
		fails(t, cs, "get_notes", []int{1}, "VALIDATION_ERROR")
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Fatal("an unknown tool answered")
	}
	fails(t, cs, "get_notes", map[string]any{}, "RATE_LIMIT")
	e.advance(time.Minute)
	for range limit {
		fails(t, cs, "batch_generate", map[string]any{"items": []any{}}, "VALIDATION_ERROR")
	}
	fails(t, cs, "get_notes", map[string]any{}, "RATE_LIMIT")
}

// TestEveryMCPMessageIsCounted (issue 32 item 4): a message that runs no tool (initialize, ping, the
// lists, a notification) counts as one call in the group of reads too, so a key past its limit gets
// RATE_LIMIT instead of the 30 KB tool list again and again (100 POSTs of 20 tools/list a minute were
// 60 MB); a batch counts each of its messages.
func TestEveryMCPMessageIsCounted(t *testing.T) {
	const limit = 5
	e := newEnv(t, func(c *wire.APIConfig) { c.RequestsPerMinute = limit })
	old := map[string]string{"Mcp-Protocol-Version": "2025-03-26"} // batches are of that version
	msg := func(method, params string) string {
		if params == "" {
			return `{"jsonrpc":"2.0","id":7,"method":"` + method + `"}`
		}
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	}
	limited := func(what string, a rpcAnswer) {
		t.Helper()
		if a.status != 200 || a.Error == nil || a.Error.Code != -32000 || !strings.HasPrefix(a.Error.Message, "RATE_LIMIT") {
			t.Errorf("%s past the limit: %d %.300s; want the JSON-RPC error -32000 RATE_LIMIT", what, a.status, a.body)
		}
	}
	for _, m := range []struct{ method, params string }{
		{"initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`},
		{"ping", ""}, {"tools/list", ""}, {"resources/list", ""}, {"resources/templates/list", ""}, {"prompts/list", ""},
	} {
		e.advance(time.Minute)
		for i := range limit {
			if a := e.rpc(t, http.MethodPost, mcp.Path, msg(m.method, m.params), nil); a.status != 200 || a.Error != nil || a.Result == nil {
				t.Fatalf("%s %d within the limit: %d %.300s", m.method, i, a.status, a.body)
			}
		}
		limited(m.method, e.rpc(t, http.MethodPost, mcp.Path, msg(m.method, m.params), nil))
	}

	e.advance(time.Minute)
	for range limit {
		if a := e.rpc(t, http.MethodPost, mcp.Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); a.status != 202 {
			t.Fatalf("notification: %d %s", a.status, a.body)
		}
	}
	limited("ping after the notifications", e.rpc(t, http.MethodPost, mcp.Path, msg("ping", ""), nil))
	e.rpc(t, http.MethodPost, mcp.Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil).refused(t, 429, -32000)

	e.advance(time.Minute)
	list := make([]string, 20)
	for i := range list {
		list[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)
	}
	a := e.rpc(t, http.MethodPost, mcp.Path, "["+strings.Join(list, ",")+"]", old)
	var answers []struct {
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &answers); err != nil || len(answers) != 20 {
		t.Fatalf("a batch of 20 tools/list: %d %.300s", a.status, a.body)
	}
	n := 0
	for _, x := range answers {
		if x.Error != nil && strings.HasPrefix(x.Error.Message, "RATE_LIMIT") {
			n++
		}
	}
	if n != 20-limit {
		t.Errorf("%d of a batch of 20 tools/list answered RATE_LIMIT with a limit of %d; want %d", n, limit, 20-limit)
	}
}

// An unknown tool's (or prompt's) name is echoed in its error at most 200 characters long (issue 32 item 4).
func TestUnknownNamesAreCapped(t *testing.T) {
	e := newEnv(t)
	name := strings.Repeat("x", 5000)
	for _, c := range []struct{ method, want string }{{"tools/call", "unknown tool"}, {"prompts/get", "unknown prompt"}} {
		a := e.rpc(t, http.MethodPost, mcp.Path, `{"jsonrpc":"2.0","id":1,"method":"`+c.method+`","params":{"name":"`+name+`","arguments":{}}}`, nil)
		if a.Error == nil || !strings.Contains(a.Error.Message, c.want) || !strings.Contains(a.Error.Message, strings.Repeat("x", 200)) ||
			strings.Contains(a.Error.Message, strings.Repeat("x", 201)) {
			t.Errorf("%s: %d %.400s; want %q echoing 200 characters of the name", c.method, a.status, a.body, c.want)
		}
	}
}

// A resource read that finds nothing repeats at most 200 characters of the URI it was sent, as JSON.
func TestUnknownResourcesAreCapped(t *testing.T) {
	e := newEnv(t)
	for _, uri := range []string{"css://video/" + strings.Repeat("x", 5000), "css://video/01a249c5-9134-7ab3-aba8-8d25f7879528"} {
		a := e.rpc(t, http.MethodPost, mcp.Path, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`"}}`, nil)
		var data struct {
			Error struct {
				Data struct{ URI string } `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(a.body), &data); err != nil || a.Error == nil || a.Error.Code != sdk.CodeResourceNotFound ||
			len([]rune(data.Error.Data.URI)) > 201 || !strings.HasPrefix(uri, strings.TrimSuffix(data.Error.Data.URI, "…")) {
			t.Errorf("%.40s…: %d %.400s; want resource not found naming at most 200 characters of the URI", uri, a.status, a.body)
		}
	}
}

// TestBatchesAreRefusedOrCapped (issue 19, item 7): the 2025-06-18 protocol removed JSON-RPC batches,
// and a request of that version or later that sends one is refused; an older one (2025-03-26, or no
// version header, which the SDK reads as 2025-03-26) may batch at most 20 messages, each counted. The
// figure of the issue: one ~950 KB POST carried 7,800 reads, none counted.
func TestBatchesAreRefusedOrCapped(t *testing.T) {
	const limit = 10
	e := newEnv(t, func(c *wire.APIConfig) { c.RequestsPerMinute = limit })
	batch := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"css://video/7d1f1e4e-3c9a-4f0e-9a57-0c4f3b1e2d10"}}`, i+1)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	for _, path := range []string{mcp.Path, sdkOnlyPath} {
		for _, v := range []string{"2025-06-18", "2025-11-25"} {
			e.rpc(t, http.MethodPost, path, batch(2), map[string]string{"Mcp-Protocol-Version": v}).refused(t, 400, -32600)
		}
		for _, v := range []string{"2025-03-26", ""} {
			e.rpc(t, http.MethodPost, path, batch(21), map[string]string{"Mcp-Protocol-Version": v}).refused(t, 400, -32600)
		}
	}
	big := batch(7800)
	a := e.rpc(t, http.MethodPost, mcp.Path, big, map[string]string{"Mcp-Protocol-Version": ""})
	t.Logf("a %d KB batch of 7,800 resources/read: %d %.120s", len(big)/1000, a.status, a.body)
	a.refused(t, 400, -32600)

	// 20 messages of an older version: each counted, so past the limit the rest answer RATE_LIMIT.
	a = e.rpc(t, http.MethodPost, mcp.Path, batch(20), map[string]string{"Mcp-Protocol-Version": "2025-03-26"})
	var answers []struct {
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &answers); err != nil || a.status != 200 || len(answers) != 20 {
		t.Fatalf("a batch of 20: %d %s", a.status, a.body)
	}
	limited := 0
	for _, x := range answers {
		if x.Error != nil && strings.HasPrefix(x.Error.Message, "RATE_LIMIT") {
			limited++
		}
	}
	if limited != 20-limit {
		t.Fatalf("%d of 20 reads answered RATE_LIMIT with a limit of %d; want %d\n%s", limited, limit, 20-limit, a.body)
	}
}

// TestMCPDecodesJSONAsREST (issue 19, item 9): duplicate member names (anywhere: the message, params,
// arguments), data after the message and two concatenated messages are refused, on both paths, before any
// tool runs; text that is not UTF-8 too.
func TestMCPDecodesJSONAsREST(t *testing.T) {
	e := newEnv(t)
	note := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"save_note","arguments":{"content":"saved","category":"general"}}}`
	cases := []struct {
		name, body string
		code       int64
	}{
		{"duplicate argument", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"save_note","arguments":{"content":"first","content":"second","category":"general"}}}`, -32600},
		{"duplicate escaped", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"save_note","arguments":{"content":"first","c\u006fntent":"second","category":"general"}}}`, -32600},
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","name":"save_note","arguments":{"content":"x","category":"general"}}}`, -32600},
		{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes"},"params":{"name":"save_note","arguments":{"content":"x","category":"general"}}}`, -32600},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"save_note","arguments":{"content":"x","category":"general"}}}`, -32600},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"save_note","arguments":{"content":"x","category":"general"}}}`, -32600},
		{"duplicate jsonrpc", `{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"save_note","arguments":{"content":"x","category":"general"}}}`, -32600},
		{"garbage after", note + `garbage`, -32700},
		{"two objects", note + note, -32700},
		{"two objects spaced", note + "\n" + note, -32700},
		{"invalid UTF-8", strings.Replace(note, "saved", "sa\xffved", 1), -32700},
		{"unpaired surrogate", strings.Replace(note, "saved", `sa\ud800ved`, 1), -32700},
	}
	for _, path := range []string{mcp.Path, sdkOnlyPath} {
		for _, c := range cases {
			t.Run(path+" "+c.name, func(t *testing.T) {
				e.rpc(t, http.MethodPost, path, c.body, nil).refused(t, 400, c.code)
			})
		}
	}
	r, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/notes", nil)
	r.Header.Set("Authorization", "Bearer "+e.keyA)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var notes struct {
		Total int `json:"total"`
	}
	if err := json.NewDecoder(res.Body).Decode(&notes); err != nil || notes.Total != 0 {
		t.Fatalf("a refused request saved %d notes (%v)", notes.Total, err)
	}
}

// TestProtocolErrorsAreJSONRPC (issue 19, item 10): every refusal of the endpoint past authentication is
// a JSON-RPC error in application/json, with the HTTP status that matches it.
func TestProtocolErrorsAreJSONRPC(t *testing.T) {
	e := newEnv(t)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`
	cases := []struct {
		name, method, body string
		header             map[string]string
		status             int
		code               int64
		id                 string // the error's id, when the request's is known
	}{
		{"parse error", "POST", `{"jsonrpc":"2.0",`, nil, 400, -32700, "null"},
		{"empty body", "POST", ``, nil, 400, -32700, "null"},
		{"not a message", "POST", `42`, nil, 400, -32600, "null"},
		{"empty batch", "POST", `[]`, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, 400, -32600, "null"},
		{"jsonrpc 1.0", "POST", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, nil, 400, -32600, ""},
		{"no method", "POST", `{"jsonrpc":"2.0","id":1}`, nil, 400, -32600, ""},
		{"method not a string", "POST", `{"jsonrpc":"2.0","id":1,"method":5}`, nil, 400, -32600, ""},
		{"too deep", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`, nil, 400, -32600, ""},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":7,"method":"no/such"}`, nil, 400, -32601, "7"},
		{"missing params", "POST", `{"jsonrpc":"2.0","id":8,"method":"resources/read"}`, nil, 400, -32602, "8"},
		{"invalid params", "POST", `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":5}}`, nil, 200, -32602, "9"},
		{"too large", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", mcp.MaxBodyBytes) + `"}}`, nil, 413, -32600, "null"},
		{"text/plain", "POST", call, map[string]string{"Content-Type": "text/plain"}, 415, -32600, "null"},
		{"no content type", "POST", call, map[string]string{"Content-Type": ""}, 415, -32600, "null"},
		{"accept json only", "POST", call, map[string]string{"Accept": "application/json"}, 400, -32600, "null"},
		{"unsupported version", "POST", call, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, 400, -32600, "null"},
		{"Last-Event-ID", "POST", call, map[string]string{"Last-Event-ID": "1"}, 400, -32600, "null"},
		{"GET", "GET", ``, nil, 405, -32600, "null"},
		{"DELETE", "DELETE", ``, nil, 405, -32600, "null"},
	}
	for _, path := range []string{mcp.Path, sdkOnlyPath} {
		for _, c := range cases {
			t.Run(path+" "+c.name, func(t *testing.T) {
				a := e.rpc(t, c.method, path, c.body, c.header)
				a.refused(t, c.status, c.code)
				if c.id != "" && string(a.ID) != c.id {
					t.Fatalf("id %s, want %s: %s", a.ID, c.id, a.body)
				}
			})
		}
	}
}

// TestOriginIsValidated (issue 19, item 8): a request with an Origin that is not allowed, "null"
// included, answers 403 as a JSON-RPC error before any work (before authentication); one without Origin
// (not from a browser) or from an allowed origin is served. By default no origin is allowed.
func TestOriginIsValidated(t *testing.T) {
	e := newEnv(t)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`
	for _, path := range []string{mcp.Path, sdkOnlyPath} {
		for _, origin := range []string{"https://evil.example", "null", "http://127.0.0.1:8080", ""} {
			header := map[string]string{"Origin": origin}
			if origin == "" {
				header = nil
			}
			a := e.rpc(t, http.MethodPost, path, call, header)
			if origin == "" {
				if a.status != 200 || a.Error != nil {
					t.Fatalf("%s without Origin: %d %s", path, a.status, a.body)
				}
				continue
			}
			a.refused(t, 403, -32003)
		}
		// Before authentication: a foreign page learns nothing about keys.
		e.rpc(t, http.MethodPost, path, call, map[string]string{"Origin": "https://evil.example", "Authorization": "Bearer nope"}).refused(t, 403, -32003)
	}

	h, err := mcp.ForAPI(e.api, rest.BearerAuth(e.authn), time.Now, nil, mcp.AllowedOrigins([]string{"https://app.example", " http://localhost:5173 "}))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(mcp.Path, h)
	allowed := &env{t: t, srv: httptest.NewServer(mux), keyA: e.keyA}
	t.Cleanup(allowed.srv.Close)
	for origin, want := range map[string]int{"https://app.example": 200, "HTTPS://APP.EXAMPLE": 200, "http://localhost:5173": 200,
		"https://app.example.evil": 403, "http://app.example": 403, "null": 403, "https://evil.example": 403} {
		a := allowed.rpc(t, http.MethodPost, mcp.Path, call, map[string]string{"Origin": origin})
		if want == 403 {
			a.refused(t, 403, -32003)
		} else if a.status != want || a.Error != nil {
			t.Fatalf("allowed origin %s: %d %s", origin, a.status, a.body)
		}
	}
}
