package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/ai/localimages"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/offline/imagemodel"
	"github.com/creatorstrategy/css/shared/testkit/offline/textmodel"
	"github.com/creatorstrategy/css/shared/wire"
)

// env is the API and its MCP endpoint over an embedded store, the offline model and an in-process
// generation queue, served on loopback: what `make run` serves, in one test.
type env struct {
	t        testing.TB
	srv      *httptest.Server
	store    *store.Store
	accounts *accounts.Service
	authn    *auth.Authenticator
	now      atomic.Pointer[time.Time]
	api      *rest.Server
	mcpLog   *logBuffer // the MCP endpoint's JSON log lines

	accountA, channelA, keyA, keyIDA string
	accountB, channelB, keyB         string
}

type envOption func(*wire.APIConfig)

// sdkOnlyPath serves the same endpoint with every request through the SDK (no fast path).
const sdkOnlyPath = "/mcp-sdk"

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t}
	start := time.Now().UTC()
	e.now.Store(&start)
	now := func() time.Time { return *e.now.Load() }
	table, err := pebble.Open(filepath.Join(t.TempDir(), "css.db"), pebble.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	e.store = store.New(table, store.WithClock(now))
	e.accounts = accounts.NewService(e.store, now)
	e.authn = auth.NewAuthenticator(e.store, auth.NewHS256Verifier("test-secret-of-enough-length-0123456789"),
		20*time.Second, auth.WithClock(now))
	q, err := inproc.Open(inproc.Config{Name: "generation"})
	if err != nil {
		t.Fatal(err)
	}
	model := textmodel.New()
	painter, err := imagemodel.New()
	if err != nil {
		t.Fatal(err)
	}
	images, err := localimages.New(t.TempDir(), "http://127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	gen := generation.New(generation.Config{
		Runs: e.store, Data: e.store, Idempotency: e.store, Quota: e.store, Backlog: e.store, Queue: q, Images: images,
		Models: generation.Models{Writer: model, Grader: model, Images: painter}, Answers: schemacheck.New(), MonthlyQuota: 1000,
		Wait: 20 * time.Second, Now: now, NewID: e.store.NewID,
	})
	if err := q.Start(gen.Handle, 4); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close(context.Background()) })
	authn := rest.BearerAuth(e.authn)
	rc := wire.APIConfig{
		Config: config.Config{Mode: config.Development, Version: "test"}, Store: e.store,
		Log: slog.New(slog.DiscardHandler), Now: now, Auth: authn, Generation: gen,
	}
	for _, o := range opts {
		o(&rc)
	}
	e.api, err = wire.NewAPI(rc)
	if err != nil {
		t.Fatal(err)
	}
	e.mcpLog = &logBuffer{}
	mcpLog := slog.New(slog.NewJSONHandler(e.mcpLog, nil))
	if _, bench := t.(*testing.B); bench {
		mcpLog = slog.New(slog.DiscardHandler) // as the REST side's: the figures compare like with like
	}
	h, err := mcp.ForAPI(e.api, authn, now, mcpLog)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(mcp.Path, h)
	mux.Handle(sdkOnlyPath, mcp.WithoutFastPath(h))
	mux.Handle("/", e.api)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	ctx := context.Background()
	e.accountA, e.channelA, e.keyA, e.keyIDA = e.newAccount(ctx, start.AddDate(1, 0, 0))
	e.accountB, e.channelB, e.keyB, _ = e.newAccount(ctx, start.AddDate(1, 0, 0))
	return e
}

func (e *env) newAccount(ctx context.Context, accessUntil time.Time) (account, channel, key, keyID string) {
	e.t.Helper()
	account = e.store.NewID()
	if _, err := e.accounts.CreateAccount(ctx, account, accessUntil); err != nil {
		e.t.Fatal(err)
	}
	ch, err := e.accounts.CreateChannel(ctx, account, "main")
	if err != nil {
		e.t.Fatal(err)
	}
	k, err := e.accounts.CreateKey(ctx, account, ch.ID, "test")
	if err != nil {
		e.t.Fatal(err)
	}
	return account, ch.ID, k.Key, k.ID
}

// logBuffer collects log lines written by concurrent requests.
type logBuffer struct {
	mu    sync.Mutex
	lines [][]byte
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, bytes.Clone(p))
	return len(p), nil
}

// find returns the first line with the message msg and request id id, decoded.
func (b *logBuffer) find(msg, id string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["msg"] == msg && m["request_id"] == id {
			return m
		}
	}
	return nil
}

// bearer adds an API key to every request of a client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// connect opens an SDK client session with key over streamable HTTP.
func (e *env) connect(key string) *sdk.ClientSession {
	e.t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint:   e.srv.URL + mcp.Path,
		HTTPClient: &http.Client{Transport: bearer{key: key, base: http.DefaultTransport}},
	}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// callResult is a tool call's outcome, decoded.
type callResult struct {
	raw        *sdk.CallToolResult
	text       string         // the first text content (the summary, or the error)
	structured map[string]any // structuredContent
}

func call(t testing.TB, cs *sdk.ClientSession, name string, args any) callResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	out := callResult{raw: res}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			out.text = tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &out.structured); err != nil {
			t.Fatalf("%s: structuredContent is not an object: %s", name, b)
		}
	}
	return out
}

// ok calls a tool that must succeed.
func ok(t testing.TB, cs *sdk.ClientSession, name string, args any) callResult {
	t.Helper()
	r := call(t, cs, name, args)
	if r.raw.IsError {
		t.Fatalf("%s(%v): %s", name, args, r.text)
	}
	return r
}

// fails calls a tool that must fail with a tool error whose text starts with prefix.
func fails(t *testing.T, cs *sdk.ClientSession, name string, args any, prefix string) callResult {
	t.Helper()
	r := call(t, cs, name, args)
	if !r.raw.IsError || !strings.HasPrefix(r.text, prefix) {
		t.Fatalf("%s(%v): want a tool error starting %q, got isError=%v %q", name, args, prefix, r.raw.IsError, r.text)
	}
	if r.structured != nil {
		t.Fatalf("%s: an error carries no structuredContent: %v", name, r.structured)
	}
	return r
}

func str(m map[string]any, path ...string) string {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	s, _ := v.(string)
	return s
}

func list(m map[string]any, field string) []any {
	l, _ := m[field].([]any)
	return l
}

// rawPost posts a JSON-RPC body to the endpoint with the given headers.
func (e *env) rawPost(body string, header map[string]string) *http.Response {
	e.t.Helper()
	r, err := http.NewRequest(http.MethodPost, e.srv.URL+mcp.Path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { res.Body.Close() })
	return res
}

// config is the server configuration ForAPI builds over the env's API.
func (e *env) config() mcp.Config {
	sv := e.api.Services()
	return mcp.Config{Contract: e.api.Contract(), Operations: e.api, Videos: sv.Videos, Series: sv.Series,
		Research: sv.Research, Now: time.Now}
}

func (e *env) principalA() auth.Principal {
	return auth.Principal{AccountID: e.accountA, ChannelID: e.channelA, KeyID: e.keyIDA, Method: auth.MethodAPIKey}
}
