package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/wire"
)

// TestFastPathAnswersAsTheSDK sends every request twice, once to the endpoint and once to the same endpoint
// with every request through the SDK, and requires the same answer: status, content type and JSON (ids
// and times aside, for the calls that create something). It also checks from the endpoint's log which
// requests took the fast path, so the cases cover both sides of every condition it has.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	e := newEnv(t, func(c *wire.APIConfig) { c.RequestsPerMinute = 1 << 20 })
	cs := e.connect(e.keyA)
	for i := range 3 {
		ok(t, cs, "commit_video", map[string]any{"title": fmt.Sprintf("Video <%d> & \"more\"", i), "contentType": "Long", "formulaType": "how-to"})
	}
	ok(t, cs, "save_note", map[string]any{"content": "Prefers short intros \u2028 and <b>bold</b> claims", "category": "style"})

	callBody := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	std := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2025-06-18"}
	with := func(changes map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range std {
			h[k] = v
		}
		for k, v := range changes {
			h[k] = v
		}
		return h
	}
	deep := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{"x":` +
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}}`
	cases := []struct {
		name   string
		body   string
		header map[string]string
		fast   bool
	}{
		// Taken: every read tool, the edges of their arguments, writes, composites, errors.
		{"get_niche_profile", callBody("get_niche_profile", `{}`), std, true},
		{"get_my_videos", callBody("get_my_videos", `{}`), std, true},
		{"get_my_videos status", callBody("get_my_videos", `{"status":"planned"}`), std, true},
		{"get_my_videos bad status", callBody("get_my_videos", `{"status":"done"}`), std, true},
		{"get_video_ideas limit 0", callBody("get_video_ideas", `{"limit":0}`), std, true},
		{"get_video_ideas limit 100", callBody("get_video_ideas", `{"limit":100}`), std, true},
		{"get_video_ideas limit 101", callBody("get_video_ideas", `{"limit":101}`), std, true},
		{"get_video_ideas limit string", callBody("get_video_ideas", `{"limit":"5"}`), std, true},
		{"unknown argument", callBody("get_notes", `{"bogus":1}`), std, true},
		{"get_schedule", callBody("get_schedule", `{}`), std, true},
		{"get_my_series", callBody("get_my_series", `{}`), std, true},
		{"get_research_insights", callBody("get_research_insights", `{}`), std, true},
		{"get_history", callBody("get_history", `{}`), std, true},
		{"get_trending", callBody("get_trending", `{}`), std, true},
		{"get_notes", callBody("get_notes", `{}`), std, true},
		{"get_performance", callBody("get_performance", `{}`), std, true},
		{"no arguments member", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes"}}`, std, true},
		{"arguments null", callBody("get_notes", `null`), std, true},
		{"arguments not an object", callBody("get_notes", `[1]`), std, true},
		{"missing required", callBody("save_note", `{}`), std, true},
		{"foreign id", callBody("update_video_status", `{"id":"7d1f1e4e-3c9a-4f0e-9a57-0c4f3b1e2d10","status":"filmed"}`), std, true},
		{"malformed id", callBody("update_video_status", `{"id":"nope","status":"filmed"}`), std, true},
		{"save_note", callBody("save_note", `{"content":"A <note> & more","category":"idea"}`), std, true},
		{"commit_video", callBody("commit_video", `{"title":"New & <shiny>","contentType":"Short","formulaType":"how-to"}`), std, true},
		{"content_audit", callBody("content_audit", `{}`), std, true},
		{"composite bad argument", callBody("batch_generate", `{"items":[]}`), std, true},
		{"string id", `{"jsonrpc":"2.0","id":"req-\u00e9<1>","method":"tools/call","params":{"name":"get_notes","arguments":{}}}`, std, true},
		{"negative id", `{"jsonrpc":"2.0","id":-42,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`, std, true},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`, std, true},
		{"_meta", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"get_notes","arguments":{}}}`, std, true},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"tools/call","extra":true,"params":{"name":"get_notes","arguments":{}}}`, std, true},
		{"no version header", callBody("get_notes", `{}`), with(map[string]string{"Mcp-Protocol-Version": ""}), true},
		{"2025-03-26", callBody("get_notes", `{}`), with(map[string]string{"Mcp-Protocol-Version": "2025-03-26"}), true},
		{"2025-11-25", callBody("get_notes", `{}`), with(map[string]string{"Mcp-Protocol-Version": "2025-11-25"}), true},
		{"charset", callBody("get_notes", `{}`), with(map[string]string{"Content-Type": "application/json; charset=utf-8"}), true},
		{"accept reversed", callBody("get_notes", `{}`), with(map[string]string{"Accept": "text/event-stream;q=0.5, application/json"}), true},

		// Left to the SDK.
		{"unknown tool", callBody("no_such_tool", `{}`), std, false},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, std, false},
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, std, false},
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_notes","arguments":{}}}`, std, false},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`, std, false},
		{"batch", `[` + callBody("get_notes", `{}`) + `]`, with(map[string]string{"Mcp-Protocol-Version": "2025-03-26"}), false},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`, std, false},
		{"params null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, std, false},
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, std, false},
		{"Params capitalised", `{"jsonrpc":"2.0","id":1,"method":"tools/call","Params":{"name":"get_notes","arguments":{}}}`, std, false},
		{"Name capitalised", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"get_notes","arguments":{}}}`, std, false},
		{"trailing data", callBody("get_notes", `{}`) + ` {}`, std, false},
		{"garbage after", callBody("save_note", `{"content":"x","category":"general"}`) + `garbage`, std, false},
		{"two objects", callBody("save_note", `{"content":"x","category":"general"}`) + callBody("get_notes", `{}`), std, false},
		{"duplicate argument", callBody("save_note", `{"content":"first","content":"second","category":"general"}`), std, false},
		{"duplicate argument escaped", callBody("save_note", `{"content":"first","c\u006fntent":"second","category":"general"}`), std, false},
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","name":"save_note","arguments":{}}}`, std, false},
		{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes"},"params":{"name":"get_notes"}}`, std, false},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"get_notes"}}`, std, false},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"get_notes"}}`, std, false},
		{"invalid UTF-8", callBody("get_notes", "{\"a\":\"\xff\"}"), std, false},
		{"batch 2025-06-18", `[` + callBody("get_notes", `{}`) + `]`, std, false},
		{"batch of 21", `[` + strings.Repeat(callBody("get_notes", `{}`)+`,`, 20) + callBody("get_notes", `{}`) + `]`, with(map[string]string{"Mcp-Protocol-Version": "2025-03-26"}), false},
		{"not JSON", `{"jsonrpc":"2.0",`, std, false},
		{"empty body", ``, std, false},
		{"too deep", deep, std, false},
		{"requestState", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{},"requestState":"x"}}`, std, false},
		{"text/plain", callBody("get_notes", `{}`), with(map[string]string{"Content-Type": "text/plain"}), false},
		{"accept json only", callBody("get_notes", `{}`), with(map[string]string{"Accept": "application/json"}), false},
		{"accept wildcard", callBody("get_notes", `{}`), with(map[string]string{"Accept": "*/*"}), false},
		{"future version", callBody("get_notes", `{}`), with(map[string]string{"Mcp-Protocol-Version": "2026-07-28"}), false},
		{"unsupported version", callBody("get_notes", `{}`), with(map[string]string{"Mcp-Protocol-Version": "1999-01-01"}), false},
		{"Last-Event-ID", callBody("get_notes", `{}`), with(map[string]string{"Last-Event-ID": "1"}), false},
		{"foreign host", callBody("get_notes", `{}`), with(map[string]string{"Host": "attacker.example"}), false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("fastpath-%02d", i)
			sdkStatus, sdkType, sdkBody := e.post(t, "/mcp-sdk", c.body, c.header, id+"-sdk")
			status, ctype, body := e.post(t, mcp.Path, c.body, c.header, id)
			line := e.mcpLog.find("mcp request", id)
			if line == nil {
				t.Fatalf("no log line for request %s", id)
			}
			if line["fast"] != c.fast {
				t.Errorf("fast path taken: %v, want %v", line["fast"], c.fast)
			}
			if status != sdkStatus || ctype != sdkType {
				t.Fatalf("answer %d %q, the SDK's %d %q\n%s\n%s", status, ctype, sdkStatus, sdkType, body, sdkBody)
			}
			if !sameJSON(body, sdkBody) {
				t.Fatalf("answers differ:\nfast %s\nsdk  %s", body, sdkBody)
			}
		})
	}
}

func (e *env) post(t *testing.T, path, body string, header map[string]string, requestID string) (int, string, string) {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			r.Host = v
		} else if v != "" {
			r.Header.Set(k, v)
		}
	}
	r.Header.Set("Authorization", "Bearer "+e.keyA)
	r.Header.Set("X-Request-Id", requestID)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// variable matches what two calls that create something answer differently: ids and times.
var variable = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT[0-9:.]+Z`)

// sameJSON reports whether a and b are the same JSON value, strings inside strings (the text content
// carrying the structured content) compared as JSON too; non-JSON answers compare as text.
func sameJSON(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return reflect.DeepEqual(normalise(va), normalise(vb))
}

func normalise(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = normalise(x)
		}
	case []any:
		for i, x := range v {
			v[i] = normalise(x)
		}
	case string:
		var inner any
		if strings.HasPrefix(v, "{") && json.Unmarshal([]byte(v), &inner) == nil {
			return normalise(inner)
		}
		return variable.ReplaceAllString(v, "<variable>")
	}
	return v
}
