package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/testkit/offline/textmodel"
	"github.com/creatorstrategy/css/shared/wire"
)

// servedVersions are the MCP protocol versions the endpoint is tested with (issue 34 item 4): a
// 2026-07-28 client discovers the server (server/discover) and sends stateless requests, the earlier ones
// initialize a session.
var servedVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// connectAs opens an SDK client session with key, pinned to protocol version. The client has list-changed
// handlers, as assistants do: a 2026-07-28 client opens subscriptions/listen when the server says a list
// changes.
func (e *env) connectAs(ctx context.Context, key, version string) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {},
	})
	return client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: e.srv.URL + mcp.Path,
		// The timeout fails a request the server holds open (the SDK's client opens subscriptions/listen
		// outside ctx) rather than hanging the test.
		HTTPClient: &http.Client{Transport: bearer{key: key, base: http.DefaultTransport}, Timeout: 30 * time.Second},
	}, &sdk.ClientSessionOptions{ProtocolVersion: version})
}

// TestEveryProtocolVersionIsServed runs a representative suite with the SDK's client pinned to each
// version: opening (initialize or server/discover), the lists, tool calls checked against their output
// schemas, a tool refusal, an unknown tool, resources, prompts and ping (which 2026-07-28 removed).
func TestEveryProtocolVersionIsServed(t *testing.T) {
	for _, v := range servedVersions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := e.connectAs(ctx, e.keyA, v)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			init := cs.InitializeResult()
			if init.ProtocolVersion != v || init.ServerInfo == nil || init.ServerInfo.Name != mcp.Name {
				t.Fatalf("negotiated %q with %+v, want %s", init.ProtocolVersion, init.ServerInfo, v)
			}
			// The lists never change while the server runs, and a stateless server could not say so.
			if c := init.Capabilities; c == nil || c.Tools == nil || c.Tools.ListChanged || c.Prompts == nil ||
				c.Prompts.ListChanged || c.Resources == nil || c.Resources.ListChanged {
				t.Errorf("capabilities %+v: want tools, prompts and resources, none of whose lists changes", c)
			}
			outputs := outputSchemas(t, cs)
			if len(outputs) != len(specTools) {
				t.Fatalf("%d tools listed", len(outputs))
			}
			note := ok(t, cs, "save_note", map[string]any{"category": "preference", "content": "Version " + v})
			matchesOutputSchema(t, outputs, "save_note", note)
			notes := ok(t, cs, "get_notes", map[string]any{})
			matchesOutputSchema(t, outputs, "get_notes", notes)
			if n := list(notes.structured, "notes"); len(n) != 1 {
				t.Fatalf("get_notes: %v", notes.structured)
			}
			matchesOutputSchema(t, outputs, "get_schedule", ok(t, cs, "get_schedule", map[string]any{}))
			fails(t, cs, "get_video_ideas", map[string]any{"limit": 1000}, "VALIDATION_ERROR: limit")
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("an unknown tool: %v", err)
			}
			res, err := cs.ListResources(ctx, nil)
			if err != nil || len(res.Resources) != 4 {
				t.Fatalf("resources/list: %v %v", res, err)
			}
			read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "css://niche-profile"})
			if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "application/json" {
				t.Fatalf("resources/read: %v %v", read, err)
			}
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "css://video/7d1f1e4e-3c9a-4f0e-9a57-0c4f3b1e2d10"}); err == nil {
				t.Error("another channel's or no video read")
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(prompts.Prompts) != len(specPrompts) {
				t.Fatalf("prompts/list: %v %v", prompts, err)
			}
			p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brainstorm", Arguments: map[string]string{"topic": "planning"}})
			if err != nil || len(p.Messages) != 1 {
				t.Fatalf("prompts/get: %v %v", p, err)
			}
			// 2026-07-28 has no ping (nor a session to keep alive).
			if err := cs.Ping(ctx, nil); (err == nil) != (v < "2026-07-28") {
				t.Fatalf("ping: %v", err)
			}
		})
	}
}

// versionMessage is a JSON-RPC request of protocol version v and the headers it goes with, as the SDK's
// client sends them: from 2026-07-28 on, every request carries the version and the client's capabilities
// in its _meta (it is stateless) and names its method (and tool) in headers.
func versionMessage(v, method, params string) (string, map[string]string) {
	header := map[string]string{"Mcp-Protocol-Version": v}
	if v < "2026-07-28" {
		if params == "" {
			return `{"jsonrpc":"2.0","id":7,"method":"` + method + `"}`, header
		}
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`, header
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":{}}`
	if params == "" || params == "{}" {
		params = "{" + meta + "}"
	} else {
		params = strings.Replace(params, "{", "{"+meta+",", 1)
	}
	header["Mcp-Method"] = method
	if name := gjson.Get(params, "name"); name.Exists() {
		header["Mcp-Name"] = name.Str
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`, header
}

// TestEveryVersionIsCountedAndChecked: whatever the protocol version, each request counts in the key's
// window (server/discover and a stateless tools/list as reads, a tool call through its operation), past
// the limit it answers RATE_LIMIT, and the strict reading and the Origin check refuse before anything.
func TestEveryVersionIsCountedAndChecked(t *testing.T) {
	const limit = 3
	for _, v := range servedVersions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t, func(c *wire.APIConfig) { c.RequestsPerMinute = limit })
			open := []string{"initialize", `{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`}
			if v >= "2026-07-28" {
				open = []string{"server/discover", "{}"}
			}
			msgs := [][]string{open, {"tools/list", ""}, {"prompts/list", ""}}
			if v >= "2026-07-28" {
				// A subscription answers at once (as an event stream): no list changes, nothing to wait for.
				msgs = append(msgs, []string{"subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`})
			}
			for _, m := range msgs {
				e.advance(time.Minute)
				body, header := versionMessage(v, m[0], m[1])
				for i := range limit {
					if a := e.rpc(t, http.MethodPost, mcp.Path, body, header); a.status != 200 || a.Result == nil && !strings.Contains(a.body, `"id":7,"result":{`) {
						t.Fatalf("%s %d within the limit: %d %.300s", m[0], i, a.status, a.body)
					}
				}
				a := e.rpc(t, http.MethodPost, mcp.Path, body, header)
				if !strings.Contains(a.body, `"error":{"code":-32000,"message":"RATE_LIMIT`) {
					t.Errorf("%s past the limit: %d %.300s; want the JSON-RPC error -32000 RATE_LIMIT", m[0], a.status, a.body)
				}
			}

			e.advance(time.Minute)
			body, header := versionMessage(v, "tools/call", `{"name":"get_notes","arguments":{}}`)
			for i := range limit + 1 {
				a := e.rpc(t, http.MethodPost, mcp.Path, body, header)
				limited := strings.Contains(a.body, `"isError":true`) && strings.Contains(a.body, "RATE_LIMIT")
				if a.status != 200 || a.Error != nil || limited != (i == limit) {
					t.Fatalf("tools/call %d (limit %d): %d %.300s", i, limit, a.status, a.body)
				}
			}

			e.advance(time.Minute)
			body, header = versionMessage(v, "tools/list", "")
			header["Origin"] = "https://evil.example"
			e.rpc(t, http.MethodPost, mcp.Path, body, header).refused(t, http.StatusForbidden, -32003)
			delete(header, "Origin")
			dup := strings.Replace(body, `"method":"tools/list"`, `"method":"tools/list","method":"tools/list"`, 1)
			e.rpc(t, http.MethodPost, mcp.Path, dup, header).refused(t, http.StatusBadRequest, -32600)
			e.rpc(t, http.MethodPost, mcp.Path, "["+body+"]", header).refused(t, http.StatusBadRequest, -32600)
		})
	}
}

// TestPendingGenerationMatchesItsOutputSchema: a generation still running answers its 202 body
// ({generationId, status: "pending"}), which its output schema allows beside the finished result.
func TestPendingGenerationMatchesItsOutputSchema(t *testing.T) {
	e := newEnv(t, func(c *wire.APIConfig) {
		q, err := inproc.Open(inproc.Config{Name: "generation"}) // never started: every run stays queued
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close(context.Background()) })
		model := textmodel.New()
		c.Generation = generation.New(generation.Config{
			Runs: c.Store, Data: c.Store, Idempotency: c.Store, Quota: c.Store, Backlog: c.Store, Queue: q,
			Models: generation.Models{Writer: model, Grader: model}, Answers: schemacheck.New(), MonthlyQuota: 1000,
			Wait: time.Nanosecond, Now: c.Now, NewID: c.Store.NewID,
		})
	})
	cs := e.connect(e.keyA)
	outputs := outputSchemas(t, cs)
	r := ok(t, cs, "generate_hooks", map[string]any{"title": "Pending"})
	if r.structured["status"] != "pending" || str(r.structured, "generationId") == "" {
		t.Fatalf("want a pending generation, got %v", r.structured)
	}
	matchesOutputSchema(t, outputs, "generate_hooks", r)
}
