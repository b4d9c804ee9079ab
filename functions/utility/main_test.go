package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/creatorstrategy/css/infra/emulators/emulatortest"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire/wiretest"
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
