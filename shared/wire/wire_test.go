package wire_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/testkit/authtest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/wire"
)

// configured names, in the environment, a table and an identity provider nothing listens on: the steps
// reach them on first use only.
func configured(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("CSS_TABLE_NAME", "css-test")
	t.Setenv("CSS_DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("CSS_JWKS_URL", "https://127.0.0.1:1/jwks")
	t.Setenv("CSS_JWT_ISSUER", authtest.Issuer)
	t.Setenv("CSS_JWT_AUDIENCE", authtest.Audience)
}

// The steps read only the environment (nothing listens on the endpoints: the table and the JWKS are reached
// on first use), and a misconfiguration stops the cold start instead of refusing every request later.
func TestStepsReadOnlyTheEnvironment(t *testing.T) {
	configured(t)
	logger := slog.New(slog.DiscardHandler)
	steps := func() error {
		env, err := wire.NewEnv("memory", logger)
		if err != nil {
			return err
		}
		st, err := wire.Store(env)
		if err != nil {
			return err
		}
		_, err = wire.Authenticator(env, st)
		return err
	}
	if err := steps(); err != nil {
		t.Fatalf("wiring: %v", err)
	}
	t.Setenv("CSS_JWKS_URL", "http://127.0.0.1:1/jwks")
	if steps() == nil {
		t.Error("an http JWKS URL was accepted")
	}
	t.Setenv("CSS_JWKS_URL", "https://127.0.0.1:1/jwks")
	// In Lambda, development mode (HS256 tokens, detail in errors) is refused whatever CSS_MODE says.
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "css-memory")
	t.Setenv("CSS_MODE", "development")
	if steps() == nil {
		t.Error("development mode was accepted inside Lambda")
	}
	t.Setenv("CSS_MODE", "production")
	if err := steps(); err != nil {
		t.Fatalf("production inside Lambda: %v", err)
	}
	t.Setenv("CSS_JWT_AUDIENCE", "")
	if steps() == nil {
		t.Error("a JWKS URL without an audience was accepted")
	}
	t.Setenv("CSS_JWT_AUDIENCE", authtest.Audience)
	t.Setenv("CSS_TABLE_NAME", "")
	if steps() == nil {
		t.Error("production wiring without CSS_TABLE_NAME was accepted")
	}
}

// ServeFiles mounts the pictures' handler at /files/ in front of the function's operations.
func TestFilesBesideTheOperations(t *testing.T) {
	files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "https://s3.example/"+strings.TrimPrefix(r.URL.Path, "/files/"))
		w.WriteHeader(http.StatusFound)
	})
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/openapi.json" {
			w.WriteHeader(http.StatusUnauthorized) // the API's: an unknown path asks for a credential first
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	h := wire.HTTP(wire.ServeFiles(files, api))
	for _, tc := range []struct {
		path     string
		status   int
		location string
	}{
		{"/files/images/c/0123456789abcdef0123456789abcdef.png", 302, "https://s3.example/images/c/0123456789abcdef0123456789abcdef.png"},
		{"/files/anything", 302, "https://s3.example/anything"},
		{"/api/v1/openapi.json", 200, ""},
		{"/filesx", 401, ""},
	} {
		ev, err := samevents.Load("utility-openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		ev.RawPath, ev.RequestContext.HTTP.Path = tc.path, tc.path
		ev.RouteKey, ev.RequestContext.RouteKey = "GET /files/{proxy+}", "GET /files/{proxy+}"
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != tc.status || resp.Headers["Location"] != tc.location {
			t.Errorf("GET %s: %d %v %v", tc.path, resp.StatusCode, resp.Headers, err)
		}
	}
}

// RequestID is API Gateway's id of the request, and none outside Lambda.
func TestRequestID(t *testing.T) {
	var got string
	h := wire.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = wire.RequestID(r)
		w.WriteHeader(http.StatusNoContent)
	}))
	ev, err := samevents.Load("utility-health.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h(context.Background(), ev); err != nil || got != ev.RequestContext.RequestID || got == "" {
		t.Errorf("request id %q, want API Gateway's %q (%v)", got, ev.RequestContext.RequestID, err)
	}
	if id := wire.RequestID(httptest.NewRequest("GET", "/", nil)); id != "" {
		t.Errorf("outside Lambda: %q", id)
	}
}
