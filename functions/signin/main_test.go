package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/wire"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// The function serves the sign-in's metadata for the deployment's public URL: the authorization server's
// endpoints and the /mcp resource it grants.
func TestServesSignIn(t *testing.T) {
	wiretest.Setup(t)
	t.Setenv("CSS_PUBLIC_URL", "https://api.example.com")
	h := wiretest.Build(t, "signin", build)
	get := func(path string) map[string]any {
		t.Helper()
		resp, err := h(context.Background(), wire.EventV2{Version: "2.0", RouteKey: "GET " + path, RawPath: path,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: "GET " + path, Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: path}}})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, resp.Body, err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(resp.Body), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if as := get("/.well-known/oauth-authorization-server"); as["issuer"] != "https://api.example.com" ||
		as["token_endpoint"] != "https://api.example.com/oauth/token" || as["client_id_metadata_document_supported"] != true {
		t.Errorf("authorization server metadata: %v", as)
	}
	if pr := get("/.well-known/oauth-protected-resource/mcp"); pr["resource"] != "https://api.example.com/mcp" {
		t.Errorf("protected resource metadata: %v", pr)
	}
}
