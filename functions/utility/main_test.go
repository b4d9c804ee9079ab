package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/wire"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func TestServesTheUtilityOperations(t *testing.T) {
	c := wiretest.Setup(t)
	wiretest.CheckFunction(t, c, contract.FunctionUtility, wiretest.Build(t, "utility", build))
}

// TestOpenAPIDocumentEncoding checks how the document leaves the utility Lambda: a gzip body must reach API
// Gateway base64-encoded (isBase64Encoded), a plain one as text.
func TestOpenAPIDocumentEncoding(t *testing.T) {
	wiretest.Setup(t)
	h := wiretest.Build(t, "utility", build)
	tests := []struct {
		acceptEncoding string // "" sends none
		gzip           bool
	}{
		{"", false},
		{"identity", false},
		{"gzip;q=0, br", false},
		{"br", false},
		{"gzip", true},
		{"*", true},
		{"GZIP;q=0.5", true},
		{"gzip, deflate, br, zstd", true},
	}
	for _, tt := range tests {
		ev := wiretest.LoadEvent(t, "utility-openapi.json")
		delete(ev.Headers, "accept-encoding")
		if tt.acceptEncoding != "" {
			ev.Headers["accept-encoding"] = tt.acceptEncoding
		}
		name := fmt.Sprintf("accept-encoding %q", tt.acceptEncoding)
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %d", name, err, resp.StatusCode)
		}
		if resp.IsBase64Encoded != tt.gzip {
			t.Errorf("%s: isBase64Encoded %v, want %v", name, resp.IsBase64Encoded, tt.gzip)
		}
		if got, want := resp.Headers["Content-Encoding"], map[bool]string{true: "gzip"}[tt.gzip]; got != want {
			t.Errorf("%s: Content-Encoding %q, want %q", name, got, want)
		}
		if resp.Headers["Vary"] != "Accept-Encoding" || resp.Headers["Content-Type"] != "application/json" {
			t.Errorf("%s: Vary %q, Content-Type %q", name, resp.Headers["Vary"], resp.Headers["Content-Type"])
		}
		if body := wiretest.DecodedBody(t, name, resp); !bytes.Equal(body, contract.Document()) {
			t.Errorf("%s: the body (%d bytes) is not openapi.json", name, len(body))
		}
	}
}

// TestDocsThroughTheLambda: the reference page and its script leave the Lambda as API Gateway needs them,
// a gzip body base64-encoded, with the page's policy; the function embeds the renderer this build has
// (make test installs it first; without it, the page says so and the script answers 404).
func TestDocsThroughTheLambda(t *testing.T) {
	wiretest.Setup(t)
	h := wiretest.Build(t, "utility", build)
	docs := apidocs.New()
	request := func(path, acceptEncoding string) wire.ResponseV2 {
		t.Helper()
		ev := wiretest.LoadEvent(t, "utility-openapi.json")
		ev.RawPath, ev.RequestContext.HTTP.Path = path, path
		ev.RouteKey, ev.RequestContext.RouteKey = "GET "+path, "GET "+path
		delete(ev.Headers, "accept-encoding")
		if acceptEncoding != "" {
			ev.Headers["accept-encoding"] = acceptEncoding
		}
		resp, err := h(context.Background(), ev)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp
	}
	for _, ae := range []string{"", "gzip, deflate, br, zstd"} {
		name := fmt.Sprintf("GET /api/v1/docs, accept-encoding %q", ae)
		resp := request("/api/v1/docs", ae)
		gz := ae != ""
		if resp.StatusCode != 200 || resp.IsBase64Encoded != gz || (resp.Headers["Content-Encoding"] == "gzip") != gz {
			t.Errorf("%s: %d, isBase64Encoded %v, Content-Encoding %q", name, resp.StatusCode, resp.IsBase64Encoded, resp.Headers["Content-Encoding"])
		}
		if resp.Headers["Content-Security-Policy"] != apidocs.ContentSecurityPolicy || resp.Headers["Content-Type"] != "text/html; charset=utf-8" {
			t.Errorf("%s: headers %v", name, resp.Headers)
		}
		if body := wiretest.DecodedBody(t, name, resp); !bytes.Equal(body, docs.Page()) {
			t.Errorf("%s: the body is not the page:\n%s", name, body)
		}
	}
	resp := request("/api/v1/"+apidocs.ScriptPath, "gzip")
	script, ok := docs.Script()
	switch {
	case !ok && resp.StatusCode != 404:
		t.Errorf("the script without a renderer: %d", resp.StatusCode)
	case ok && (resp.StatusCode != 200 || !resp.IsBase64Encoded || resp.Headers["Content-Encoding"] != "gzip"):
		t.Errorf("the script: %d, isBase64Encoded %v, Content-Encoding %q", resp.StatusCode, resp.IsBase64Encoded, resp.Headers["Content-Encoding"])
	case ok:
		if raw, err := base64.StdEncoding.DecodeString(resp.Body); err != nil || !bytes.Equal(raw, script) {
			t.Errorf("the script: the body (%d bytes) is not the embedded one (%d bytes): %v", len(raw), len(script), err)
		}
	}
}

// The pictures are served at /files/ beside the operations; a files handler that cannot be built stops the
// function at start.
func TestFilesBesideTheOperations(t *testing.T) {
	wiretest.Setup(t)
	h := wiretest.Build(t, "utility", build)
	ev := wiretest.LoadEvent(t, "utility-openapi.json")
	ev.RawPath, ev.RequestContext.HTTP.Path = "/files/images/c/0123456789abcdef0123456789abcdef.png", "/files/images/c/0123456789abcdef0123456789abcdef.png"
	ev.RouteKey, ev.RequestContext.RouteKey = "GET /files/{proxy+}", "GET /files/{proxy+}"
	// No bucket is configured: the files handler finds nothing (the API would ask for a credential).
	if resp, err := h(context.Background(), ev); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET %s: %d %s %v", ev.RawPath, resp.StatusCode, resp.Body, err)
	}
	env := wiretest.Env(t, "utility")
	env.Config.ImagesBucket, env.Config.S3Endpoint = "css-images", "ftp://127.0.0.1:1"
	if _, err := build(context.Background(), env); err == nil {
		t.Error("started without its files handler")
	}
}

// TestHealthNamesTheConfiguredModels: the utility function runs no model, so /health names the configured
// ones (not probed) instead of reporting none.
func TestHealthNamesTheConfiguredModels(t *testing.T) {
	wiretest.Setup(t)
	t.Setenv("CSS_GENERATION_MODEL", "global.anthropic.claude-sonnet-4-6")
	t.Setenv("CSS_GRADING_MODEL", "global.anthropic.claude-haiku-4-5-20251001-v1:0")
	h := wiretest.Build(t, "utility", build)
	resp, err := h(context.Background(), wiretest.LoadEvent(t, "utility-health.json"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %d %s", err, resp.StatusCode, resp.Body)
	}
	var body struct {
		Services map[string]string
		Models   struct{ Text, Grading string }
	}
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatal(err)
	}
	if body.Services["ai"] != "ok" || body.Services["images"] != "ok" || body.Models.Text != "global.anthropic.claude-sonnet-4-6" ||
		body.Models.Grading != "global.anthropic.claude-haiku-4-5-20251001-v1:0" {
		t.Errorf("health: %s", resp.Body)
	}
}
