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

// completer answers Begin with begun and Complete with conn or err, and records the callback's browser
// binding; the other operations are not called here.
type completer struct {
	Connections
	begun   connection.Begun
	conn    connection.Completed
	err     error
	browser *string
}

func (c completer) Begin(context.Context, string) (connection.Begun, error) { return c.begun, c.err }

func (c completer) Complete(_ context.Context, cb connection.Callback) (connection.Completed, error) {
	if c.browser != nil {
		*c.browser = cb.Browser
	}
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
	conn := connection.Completed{Connection: connection.Connection{Status: connection.Connected, YouTubeChannelID: "UCaaaaaaaaaaaaaaaaaaaaaa",
		YouTubeChannelTitle: `<script>alert("x")</script> & Co`, ConnectedAt: time.Now()}, ChannelName: "Vegan <b>Bites</b>"}
	w := httptest.NewRecorder()
	var browser string
	// Google adds parameters of its own (scope, authuser, prompt, hd, iss): they are accepted.
	req := httptest.NewRequest("GET",
		"/api/youtube/oauth/callback?state=s&code=c&scope=x&authuser=0&prompt=consent&hd=example.com&iss=https%3A%2F%2Faccounts.google.com", nil)
	req.AddCookie(&http.Cookie{Name: "__Host-css-youtube-connect", Value: "the-binding"})
	callbackServer(t, completer{conn: conn, browser: &browser}, "").ServeHTTP(w, req)
	body := w.Body.String()
	if w.Code != 200 || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") || !strings.Contains(body, "&amp; Co") ||
		!strings.Contains(body, "Vegan &lt;b&gt;Bites&lt;/b&gt;") {
		t.Fatalf("page %d %s", w.Code, body)
	}
	if browser != "the-binding" {
		t.Fatalf("the callback passed on the browser binding %q", browser)
	}
	// The binding is spent: the answer clears the cookie.
	if c := w.Result().Cookies(); len(c) != 1 || c[0].Name != "__Host-css-youtube-connect" || c[0].MaxAge >= 0 {
		t.Fatalf("cookies %v", w.Header()["Set-Cookie"])
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
	// A YouTube channel of another account's: 409, naming it.
	w = httptest.NewRecorder()
	conflict := &connection.RefusedError{Conflict: true, Message: "The YouTube channel “A” is connected to a channel of another account"}
	callbackServer(t, completer{err: conflict}, "https://app.example.com/").
		ServeHTTP(w, httptest.NewRequest("GET", "/api/youtube/oauth/callback?state=s&code=c", nil))
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "The YouTube channel “A” is connected") {
		t.Fatalf("conflict %d %s", w.Code, w.Body.String())
	}
	// An over-long parameter is refused before anything runs (the contract's bound).
	w = httptest.NewRecorder()
	callbackServer(t, completer{conn: conn}, "").
		ServeHTTP(w, httptest.NewRequest("GET", "/api/youtube/oauth/callback?state="+strings.Repeat("s", 513), nil))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "VALIDATION_ERROR") {
		t.Fatalf("a 513-character state: %d %s", w.Code, w.Body.String())
	}
}

// The start step sets the browser's binding as a cookie (__Host-, Secure on https; neither on a plain-http
// public URL), and shows the service channel's name with the link on to Google.
func TestStartStepSetsTheBrowserCookie(t *testing.T) {
	begun := connection.Begun{AuthorizationURL: "https://accounts.google.com/o/oauth2/v2/auth?a=1&state=s",
		Browser: "the-binding", ChannelName: "Vegan <Bites>"}
	for _, tc := range []struct {
		public, name string
		secure       bool
	}{
		{"https://api.example.com", "__Host-css-youtube-connect", true},
		{"http://127.0.0.1:8080", "css-youtube-connect", false},
	} {
		doc, _ := contract.Load()
		s, err := New(Options{Contract: doc, Auth: noAuth{}, Services: Services{Connections: completer{begun: begun}}, PublicURL: tc.public})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/api/youtube/oauth/start?state=s", nil))
		body := w.Body.String()
		if w.Code != 200 || !strings.Contains(body, `href="https://accounts.google.com/o/oauth2/v2/auth?a=1&amp;state=s"`) ||
			!strings.Contains(body, "“Vegan &lt;Bites&gt;”") || w.Header().Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("%s: %d %s", tc.public, w.Code, body)
		}
		cookies := w.Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v", tc.public, w.Header()["Set-Cookie"])
		}
		c := cookies[0]
		if c.Name != tc.name || c.Value != "the-binding" || c.Secure != tc.secure || !c.HttpOnly || c.Path != "/" ||
			c.SameSite != http.SameSiteLaxMode || c.MaxAge != 600 || c.Domain != "" {
			t.Fatalf("%s: cookie %+v", tc.public, c)
		}
	}
	w := httptest.NewRecorder()
	callbackServer(t, completer{err: &connection.RefusedError{Message: "This link was opened already"}}, "").
		ServeHTTP(w, httptest.NewRequest("GET", "/api/youtube/oauth/start?state=s", nil))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "opened already") || len(w.Result().Cookies()) != 0 {
		t.Fatalf("refused start: %d %v %s", w.Code, w.Header(), w.Body.String())
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
