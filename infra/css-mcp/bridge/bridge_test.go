package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/infra/css-mcp/internal/testserver"
)

const userAgent = "css-mcp-test"

// running is a bridge started on in-memory pipes: the test is the assistant on the other end.
type running struct {
	clientTransport *mcp.IOTransport
	errors          *syncBuffer
	done            chan error
}

func startBridge(t *testing.T, cfg Config) *running {
	t.Helper()
	toBridge, fromClient := io.Pipe()
	toClient, fromBridge := io.Pipe()
	r := &running{
		clientTransport: &mcp.IOTransport{Reader: toClient, Writer: fromClient},
		errors:          &syncBuffer{},
		done:            make(chan error, 1),
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = userAgent
	}
	cfg.Errors = r.errors
	go func() {
		r.done <- Run(t.Context(), &mcp.IOTransport{Reader: toBridge, Writer: fromBridge}, cfg)
	}()
	return r
}

// wait returns Run's result.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-t.Context().Done():
		t.Fatal("the bridge did not end")
		return nil
	}
}

func connect(t *testing.T, r *running, protocolVersion string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-assistant", Version: "1"}, nil)
	return client.Connect(t.Context(), r.clientTransport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
}

func TestBridgeCarriesToolsResourcesAndPrompts(t *testing.T) {
	for _, tc := range []struct {
		name, clientVersion, wantVersion string
	}{
		// The SDK's own client: server/discover, then the version in each request's _meta.
		{"latest", "", "2026-07-28"},
		// Clients of the initialize handshake: the bridge sends the negotiated version's header itself.
		{"2025-11-25", "2025-11-25", "2025-11-25"},
		{"2025-06-18", "2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26", "2025-03-26"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := testserver.Start(t)
			r := startBridge(t, Config{Endpoint: server.URL, Key: server.Key})
			session, err := connect(t, r, tc.clientVersion)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if got := session.InitializeResult().ServerInfo.Name; got != "creator-strategy-service" {
				t.Errorf("server name %q", got)
			}
			ctx := t.Context()

			tools, err := session.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if strings.Join(names, ",") != "add,hold" {
				t.Errorf("tools %v, want add and hold", names)
			}

			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			structured, _ := json.Marshal(res.StructuredContent)
			if res.IsError || string(structured) != `{"sum":5}` {
				t.Errorf("add(2, 3): isError %v, structuredContent %s", res.IsError, structured)
			}

			resource, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceURI})
			if err != nil {
				t.Fatalf("resources/read: %v", err)
			}
			if len(resource.Contents) != 1 || resource.Contents[0].Text != testserver.ResourceJSON ||
				resource.Contents[0].MIMEType != "application/json" {
				t.Errorf("resource contents %+v", resource.Contents)
			}

			prompt, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: testserver.PromptName,
				Arguments: map[string]string{"title": "vegan lunches"}})
			if err != nil {
				t.Fatalf("prompts/get: %v", err)
			}
			if len(prompt.Messages) != 1 || prompt.Messages[0].Content.(*mcp.TextContent).Text != "Call generate_titles for vegan lunches" {
				t.Errorf("prompt messages %+v", prompt.Messages)
			}

			if err := session.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if err := r.wait(t); err != nil {
				t.Errorf("Run after the client closed: %v, want nil", err)
			}

			seen := server.Requests()
			if len(seen) < 5 {
				t.Fatalf("the server saw %d requests: %+v", len(seen), seen)
			}
			for _, req := range seen {
				if req.UserAgent != userAgent {
					t.Errorf("%s: User-Agent %q", req.Method, req.UserAgent)
				}
				if req.Method != "initialize" && req.ProtocolVersion != tc.wantVersion {
					t.Errorf("%s: MCP-Protocol-Version %q, want %q", req.Method, req.ProtocolVersion, tc.wantVersion)
				}
			}
			if out := r.errors.String(); out != "" {
				t.Errorf("errors written: %s", out)
			}
		})
	}
}

func TestBridgeEndsOnARefusedKey(t *testing.T) {
	server := testserver.Start(t)
	for _, tc := range []struct {
		name, key, want string
		status          int
	}{
		{"unknown key", "sk-css-00000000000000000000000000000000", "the server refused the API key (401 Unauthorized, UNAUTHORIZED: invalid API key); check CSS_API_KEY", 401},
		{"expired account", server.ExpiredKey, "the server refused access with this API key (403 Forbidden, ACCESS_EXPIRED: access to this account expired at 2026-01-01T00:00:00Z); check CSS_API_KEY", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startBridge(t, Config{Endpoint: server.URL, Key: tc.key})
			// An initialize-handshake client: its first call is the one refused.
			_, err := connect(t, r, "2025-11-25")
			if err == nil || !strings.Contains(err.Error(), "css-mcp: "+tc.want) {
				t.Errorf("connect: %v, want the refusal", err)
			}
			runErr := r.wait(t)
			var refused *RefusedError
			if !errors.As(runErr, &refused) || refused.Status != tc.status || runErr.Error() != tc.want {
				t.Errorf("Run: %v, want %q", runErr, tc.want)
			}
			// The refusal is Run's error, for the caller to report once.
			if out := r.errors.String(); out != "" {
				t.Errorf("errors %q", out)
			}
		})
	}
}

// A call that fails on its own is answered with an error, and the bridge goes on.
func TestBridgeAnswersAFailedCallAndGoesOn(t *testing.T) {
	server := testserver.Start(t)
	r := startBridge(t, Config{Endpoint: server.URL, Key: server.Key, RequestTimeout: time.Second})
	session, err := connect(t, r, "")
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	_, err = session.CallTool(t.Context(), &mcp.CallToolParams{Name: "hold"})
	if err == nil || !strings.Contains(err.Error(), "css-mcp: "+server.URL+": no answer within 1s") {
		t.Errorf("hold past the request timeout: %v", err)
	}
	res, err := session.CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 1}})
	if err != nil || res.IsError {
		t.Fatalf("a call after the failed one: %v %+v", err, res)
	}
	session.Close()
	if err := r.wait(t); err != nil {
		t.Errorf("Run: %v", err)
	}
	if out := r.errors.String(); out != "css-mcp: "+server.URL+": no answer within 1s\n" {
		t.Errorf("errors %q, want one line naming the endpoint", out)
	}
}

func TestBridgeUnreachableServer(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL + "/mcp"
	closed.Close()
	r := startBridge(t, Config{Endpoint: url, Key: "sk-css-0123456789abcdef0123456789abcdef"})
	_, err := connect(t, r, "2025-11-25")
	want := "css-mcp: cannot reach " + url + ": dial tcp " + strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://") + ": connect: connection refused"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("connect: %v, want %q", err, want)
	}
	// Not fatal: the bridge ends only because the client, its connect failed, closes its side.
	if err := r.wait(t); err != nil {
		t.Errorf("Run: %v, want nil", err)
	}
	if out := r.errors.String(); out != want+"\n" {
		t.Errorf("errors %q, want %q", out, want)
	}
}

func TestBridgeNeverFollowsARedirect(t *testing.T) {
	var leaked sync.Map
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"), true)
	}))
	defer elsewhere.Close()
	redirecting := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/mcp", http.StatusTemporaryRedirect))
	defer redirecting.Close()

	r := startBridge(t, Config{Endpoint: redirecting.URL + "/mcp", Key: "sk-css-0123456789abcdef0123456789abcdef"})
	_, err := connect(t, r, "2025-11-25")
	if err == nil || !strings.Contains(err.Error(), "the server redirected to "+elsewhere.URL+"/mcp: set CSS_MCP_URL to the endpoint itself") {
		t.Errorf("connect: %v", err)
	}
	leaked.Range(func(k, _ any) bool {
		t.Errorf("the redirect's target got a request (Authorization %q)", k)
		return true
	})
}

func TestBridgeBoundsMessagesInFlight(t *testing.T) {
	server := testserver.Start(t)
	full := make(chan struct{}, 8)
	cfg := Config{Endpoint: server.URL, Key: server.Key, MaxInFlight: 2, full: func() { full <- struct{}{} }}
	r := startBridge(t, cfg)
	session, err := connect(t, r, "")
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	results := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := session.CallTool(t.Context(), &mcp.CallToolParams{Name: "hold"})
			results <- err
		}()
	}
	receive(t, server.Started)
	receive(t, server.Started)
	receive(t, full) // the third call is read and waits for a slot
	select {
	case <-server.Started:
		t.Fatal("a third call reached the server while two were in flight")
	default:
	}
	close(server.Release)
	for range 3 {
		if err := <-results; err != nil {
			t.Errorf("hold: %v", err)
		}
	}
	session.Close()
	if err := r.wait(t); err != nil {
		t.Errorf("Run: %v", err)
	}
}

// When the assistant's input ends, the calls in flight are still answered before the bridge ends.
func TestBridgeAnswersCallsInFlightAfterInputEnds(t *testing.T) {
	server := testserver.Start(t)
	toBridge, fromClient := io.Pipe()
	toClient, fromBridge := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(t.Context(), &mcp.IOTransport{Reader: toBridge, Writer: fromBridge}, Config{Endpoint: server.URL, Key: server.Key})
	}()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{}}}` + "\n"
	if _, err := io.WriteString(fromClient, call); err != nil {
		t.Fatal(err)
	}
	fromClient.Close()
	receive(t, server.Started)
	select {
	case err := <-done:
		t.Fatalf("the bridge ended with a call in flight: %v", err)
	default:
	}
	close(server.Release)
	line, err := bufio.NewReader(toClient).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.ID != 7 || resp.Result.IsError {
		t.Errorf("answer %s (%v)", line, err)
	}
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestRunStopsWithItsContext(t *testing.T) {
	server := testserver.Start(t)
	ctx, cancel := context.WithCancel(t.Context())
	toBridge, _ := io.Pipe()
	_, fromBridge := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, &mcp.IOTransport{Reader: toBridge, Writer: fromBridge}, Config{Endpoint: server.URL, Key: server.Key})
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want context.Canceled", err)
	}
}

func TestErrorBody(t *testing.T) {
	for _, tc := range []struct {
		name, body, code, message string
	}{
		{"service shape", `{"error":"invalid API key","code":"UNAUTHORIZED"}`, "UNAUTHORIZED", "invalid API key"},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"no key"}}`, "", "no key"},
		{"not JSON", `Unauthorized`, "", ""},
		{"empty", ``, "", ""},
		{"control characters", `{"error":"bad\u001b[31m key\n","code":"UNAUTHORIZED"}`, "UNAUTHORIZED", "bad [31m key"},
		{"long", `{"error":"` + strings.Repeat("é", maxRefusalMessage+1) + `"}`, "", strings.Repeat("é", maxRefusalMessage) + "…"},
		{"at the bound", `{"error":"` + strings.Repeat("é", maxRefusalMessage) + `"}`, "", strings.Repeat("é", maxRefusalMessage)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, message := errorBody([]byte(tc.body))
			if code != tc.code || message != tc.message {
				t.Errorf("errorBody(%s) = %q, %q; want %q, %q", tc.body, code, message, tc.code, tc.message)
			}
		})
	}
}

// receive waits for one value on ch; the bound only turns a broken bridge's hang into a failure.
func receive(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came within 10 s")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// BenchmarkCallTool compares one tools/call straight over HTTP with the same call through the bridge
// (in-process pipes standing for standard input and output), against the loopback test server.
func BenchmarkCallTool(b *testing.B) {
	server := testserver.Start(b)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	direct := &mcp.StreamableClientTransport{Endpoint: server.URL, HTTPClient: &http.Client{
		Transport: &keyTransport{base: http.DefaultTransport, key: server.Key, version: &protocolVersion{}}}}
	bridged := func() mcp.Transport {
		toBridge, fromClient := io.Pipe()
		toClient, fromBridge := io.Pipe()
		go Run(b.Context(), &mcp.IOTransport{Reader: toBridge, Writer: fromBridge}, Config{Endpoint: server.URL, Key: server.Key})
		return &mcp.IOTransport{Reader: toClient, Writer: fromClient}
	}
	for _, bc := range []struct {
		name      string
		transport func() mcp.Transport
	}{
		{"direct", func() mcp.Transport { return direct }},
		{"bridge", bridged},
	} {
		b.Run(bc.name, func(b *testing.B) {
			session, err := client.Connect(b.Context(), bc.transport(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer session.Close()
			params := &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}
			for b.Loop() {
				if _, err := session.CallTool(b.Context(), params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
