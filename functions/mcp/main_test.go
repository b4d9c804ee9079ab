package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/wire"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// The function serves MCP at /mcp over every group's operations (a read tool answers from the table), and
// asks for a credential first, as the REST groups do.
func TestServesMCP(t *testing.T) {
	wiretest.Setup(t)
	t.Setenv("CSS_PUBLIC_URL", "https://api.example.com")
	h := wiretest.Build(t, "mcp", build)
	call := func(authorization string) wire.ResponseV2 {
		t.Helper()
		ev := wire.EventV2{
			Version: "2.0", RouteKey: "POST /mcp", RawPath: "/mcp",
			Body:    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_my_videos","arguments":{}}}`,
			Headers: map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: "POST /mcp", Stage: "$default", RequestID: "mcp-1",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/mcp"}},
		}
		if authorization != "" {
			ev.Headers["authorization"] = authorization
		}
		resp, err := h(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := call("Bearer " + samevents.Key); resp.StatusCode != 200 || !strings.Contains(resp.Body, `"result"`) || strings.Contains(resp.Body, `"isError":true`) {
		t.Errorf("tools/call get_my_videos: %d %s", resp.StatusCode, resp.Body)
	}
	if resp := call(""); resp.StatusCode != 401 {
		t.Errorf("without a credential: %d %s", resp.StatusCode, resp.Body)
	}
	// An OAuth client learns where to sign in from the 401 (decision 55).
	const metadata = `resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"`
	if resp := call(""); !strings.Contains(resp.Headers["Www-Authenticate"], metadata) {
		t.Errorf("the 401's WWW-Authenticate: %v, want %s", resp.Headers, metadata)
	}
	// An access token unknown to the table is refused as any bad credential is.
	if resp := call("Bearer ory_at_bm9wZQ.bm9wZQ"); resp.StatusCode != 401 {
		t.Errorf("an unknown access token: %d %s", resp.StatusCode, resp.Body)
	}
}
