package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/contract"
)

// completer answers Complete with conn or err; the other operations are not called here.
type completer struct {
	Connections
	conn connection.Connection
	err  error
}

func (c completer) Complete(context.Context, connection.Callback) (connection.Connection, error) {
	return c.conn, c.err
}

type noAuth struct{}

func (noAuth) Authenticate(*http.Request) (auth.Principal, error) { return auth.Principal{}, nil }

func callbackServer(t *testing.T, c Connections, connectedURL string) *Server {
	t.Helper()
	doc, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Contract: doc, Auth: noAuth{}, Services: Services{Connections: c}, ConnectedURL: connectedURL})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The callback's page escapes what it prints (a channel title is the owner's text) and forbids scripts,
// framing and referrers; with a return URL configured it redirects there instead.
func TestCallbackPageAndRedirect(t *testing.T) {
	conn := connection.Connection{Status: connection.Connected, YouTubeChannelID: "UCaaaaaaaaaaaaaaaaaaaaaa",
		YouTubeChannelTitle: `<script>alert("x")</script> & Co`, ConnectedAt: time.Now()}
	w := httptest.NewRecorder()
	// Google adds parameters of its own (scope, authuser, prompt, hd, iss): they are accepted.
	callbackServer(t, completer{conn: conn}, "").ServeHTTP(w, httptest.NewRequest("GET",
		"/api/youtube/oauth/callback?state=s&code=c&scope=x&authuser=0&prompt=consent&hd=example.com&iss=https%3A%2F%2Faccounts.google.com", nil))
	body := w.Body.String()
	if w.Code != 200 || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") || !strings.Contains(body, "&amp; Co") {
		t.Fatalf("page %d %s", w.Code, body)
	}
	for h, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "Referrer-Policy": "no-referrer",
		"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}

	w = httptest.NewRecorder()
	callbackServer(t, completer{conn: conn}, "https://app.example.com/settings?tab=youtube").
		ServeHTTP(w, httptest.NewRequest("GET", "/api/youtube/oauth/callback?state=s&code=c", nil))
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "https://app.example.com/settings?tab=youtube&youtube=connected" || w.Body.Len() != 0 {
		t.Fatalf("redirect %d %v %q", w.Code, w.Header(), w.Body.String())
	}

	w = httptest.NewRecorder()
	refused := &connection.RefusedError{Message: `Access was not granted <b>`}
	callbackServer(t, completer{err: refused}, "https://app.example.com/").
		ServeHTTP(w, httptest.NewRequest("GET", "/api/youtube/oauth/callback?state=s&error=access_denied", nil))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "Access was not granted &lt;b&gt;") || w.Header().Get("Location") != "" {
		t.Fatalf("refusal %d %s", w.Code, w.Body.String())
	}
	// An over-long parameter is refused before anything runs (the contract's bound).
	w = httptest.NewRecorder()
	callbackServer(t, completer{conn: conn}, "").
		ServeHTTP(w, httptest.NewRequest("GET", "/api/youtube/oauth/callback?state="+strings.Repeat("s", 513), nil))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "VALIDATION_ERROR") {
		t.Fatalf("a 513-character state: %d %s", w.Code, w.Body.String())
	}
}

// GET /youtube/connection's body matches the contract whatever the status.
func TestConnectionViewMatchesTheContract(t *testing.T) {
	at := time.Now()
	for _, c := range []connection.Connection{
		{Status: connection.NotConnected},
		{Status: connection.Connected, YouTubeChannelID: "UC1", YouTubeChannelTitle: "t", Scopes: connection.Scopes, ConnectedAt: at, LastSyncAt: &at},
		{Status: connection.NeedsReconnect, YouTubeChannelID: "UC1", ConnectedAt: at},
	} {
		b, err := jsonMarshal(connectionView(c))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := contract.ValidateJSON("YouTubeConnection", b); err != nil {
			t.Errorf("%s: %v: %s", c.Status, err, b)
		}
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
