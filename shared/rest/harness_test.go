package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
)

// docRouter routes requests to the operations of the OpenAPI document every response of the suite is checked against.
var docRouter = sync.OnceValues(func() (routers.Router, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(filepath.Join("..", "contract", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

var errorSchema = sync.OnceValue(func() *openapi3.Schema {
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "contract", "openapi.yaml"))
	if err != nil {
		panic(err)
	}
	return doc.Components.Schemas["Error"].Value
})

// countingTable counts the table calls requests make.
type countingTable struct {
	store.Table
	calls atomic.Int64
}

func (c *countingTable) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.calls.Add(1)
	return c.Table.Get(ctx, k)
}

func (c *countingTable) GetMany(ctx context.Context, k []store.Key) ([]store.Item, error) {
	c.calls.Add(1)
	return c.Table.GetMany(ctx, k)
}

func (c *countingTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	c.calls.Add(1)
	return c.Table.Query(ctx, q)
}

func (c *countingTable) Write(ctx context.Context, ops ...store.Op) error {
	c.calls.Add(1)
	return c.Table.Write(ctx, ops...)
}

func (c *countingTable) Increment(ctx context.Context, op store.Op) (int64, error) {
	c.calls.Add(1)
	return c.Table.Increment(ctx, op)
}

func (c *countingTable) AddCounter(ctx context.Context, k store.Key, name string, delta, max int64, drop []string) (store.Item, error) {
	c.calls.Add(1)
	return c.Table.AddCounter(ctx, k, name, delta, max, drop)
}

// env is the whole API over an embedded store, with two accounts: A (channels A1, A2; key for A1 and a
// session secret) and B (channel B1 and its key).
type env struct {
	t        *testing.T
	h        http.Handler
	store    *store.Store
	table    *countingTable
	accounts *accounts.Service
	authn    *auth.Authenticator
	now      atomic.Pointer[time.Time]
	secret   string

	accountA, channelA, channelA2, keyA string
	accountB, channelB, keyB            string

	// research is the research queue POST /research sends to; a test runs the pipeline over it.
	research *sentQueue
	// derivedOff: the deployment has not accepted YouTube's derived-metrics amendment (decision 48);
	// the env accepts it unless a test says otherwise (withoutDerivedMetrics).
	derivedOff bool
}

// withoutDerivedMetrics runs the env as a deployment that has not accepted the amendment.
func withoutDerivedMetrics(e *env, c *wire.APIConfig) {
	e.derivedOff, c.Research.DerivedMetrics = true, false
}

// sentQueue keeps what is sent to it, for the test to deliver.
type sentQueue struct {
	mu   sync.Mutex
	msgs []queue.Message
}

func (q *sentQueue) Send(_ context.Context, msgs ...queue.Outgoing) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		q.msgs = append(q.msgs, queue.Message{ID: fmt.Sprint("m", len(q.msgs)), Body: m.Body, Attempt: 1})
	}
	return nil
}

func (q *sentQueue) take() (queue.Message, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 {
		return queue.Message{}, false
	}
	m := q.msgs[0]
	q.msgs = q.msgs[1:]
	return m, true
}

func newEnv(t *testing.T, opts ...func(e *env, c *wire.APIConfig)) *env {
	t.Helper()
	e := &env{t: t, secret: "test-secret-of-enough-length-0123456789", research: &sentQueue{}}
	start := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC) // a Wednesday
	e.now.Store(&start)
	now := func() time.Time { return *e.now.Load() }
	// The table decides expiry (rate-limit windows) by the same clock.
	bt, err := pebble.Open(filepath.Join(t.TempDir(), "css.db"), pebble.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Close() })
	e.table = &countingTable{Table: bt}
	e.store = store.New(e.table, store.WithClock(now))
	e.accounts = accounts.NewService(e.store, now)
	e.authn = auth.NewAuthenticator(e.store, auth.NewHS256Verifier(e.secret), 20*time.Second, auth.WithClock(now))
	cfg := config.Config{Mode: config.Development, Version: "test", Research: config.Research{DerivedMetrics: true}}
	key, err := webhooks.DeriveKey("the webhook sealing key of the rest tests")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := webhooks.NewAESGCM(key)
	if err != nil {
		t.Fatal(err)
	}
	rc := wire.APIConfig{
		Config: cfg, Store: e.store, Log: slog.New(slog.DiscardHandler), Now: now, SecretCipher: sealer,
		Auth: authFunc(func(r *http.Request) (auth.Principal, error) {
			return e.authn.Authenticate(r.Context(), r.Header.Get("Authorization"), r.Header.Get(auth.ChannelHeader))
		}),
		Keys:          revoker{Service: e.accounts, authn: e.authn},
		ResearchQueue: e.research,
		Docs:          apidocs.FromFS(testRenderer),
	}
	for _, o := range opts {
		o(e, &rc)
	}
	h, err := wire.NewAPI(rc)
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	ctx := context.Background()
	e.accountA, e.channelA, e.keyA = e.newAccount(ctx, start.AddDate(1, 0, 0))
	ch2, err := e.accounts.CreateChannel(ctx, e.accountA, "second")
	if err != nil {
		t.Fatal(err)
	}
	e.channelA2 = ch2.ID
	e.accountB, e.channelB, e.keyB = e.newAccount(ctx, start.AddDate(1, 0, 0))
	return e
}

func (e *env) newAccount(ctx context.Context, accessUntil time.Time) (account, channel, key string) {
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
	return account, ch.ID, k.Key
}

func (e *env) session(account string) string {
	e.t.Helper()
	tok, err := auth.MintHS256(e.secret, account, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

type authFunc func(r *http.Request) (auth.Principal, error)

func (f authFunc) Authenticate(r *http.Request) (auth.Principal, error) { return f(r) }

type revoker struct {
	*accounts.Service
	authn *auth.Authenticator
}

func (r revoker) RevokeKey(ctx context.Context, accountID, keyID string) error {
	hash, err := r.Service.RevokeKeyHash(ctx, accountID, keyID)
	if err == nil {
		r.authn.Forget(hash)
	}
	return err
}

// req describes one request.
type req struct {
	method, path string
	cred         string // bearer credential; "" sends none
	body         any    // marshalled to JSON unless it is a string or []byte (sent as is)
	header       map[string]string
}

type resp struct {
	status int
	header http.Header
	raw    []byte
	json   map[string]any
}

// do sends r and checks the response against the OpenAPI document.
func (e *env) do(r req) resp {
	e.t.Helper()
	var body io.Reader
	var raw []byte
	switch b := r.body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr := httptest.NewRequest(r.method, r.path, body)
	if raw != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.cred != "" {
		hr.Header.Set("Authorization", "Bearer "+r.cred)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, hr)
	out := resp{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
	if len(out.raw) > 0 && out.raw[0] == '{' {
		if err := json.Unmarshal(out.raw, &out.json); err != nil {
			e.t.Fatalf("%s %s: response is not JSON: %v", r.method, r.path, err)
		}
	}
	e.checkContract(hr, raw, out)
	return out
}

// checkContract validates the response against the document: the operation's declared response when the
// request matched an operation, the Error schema otherwise.
func (e *env) checkContract(hr *http.Request, reqBody []byte, out resp) {
	e.t.Helper()
	router, err := docRouter()
	if err != nil {
		e.t.Fatalf("load the OpenAPI document: %v", err)
	}
	if out.status >= 400 {
		if out.header.Get("Content-Type") != "application/json" {
			e.t.Errorf("%s %s: error %d without a JSON body", hr.Method, hr.URL, out.status)
		}
		var v any
		_ = json.Unmarshal(out.raw, &v)
		if err := errorSchema().VisitJSON(v); err != nil {
			e.t.Errorf("%s %s: %d body %s is not the Error shape: %v", hr.Method, hr.URL, out.status, out.raw, err)
		}
	}
	probe := hr.Clone(context.Background())
	probe.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := router.FindRoute(probe)
	if err != nil {
		return // no such operation: only the Error shape applies (checked above)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route},
		Status:                 out.status,
		Header:                 out.header,
		Body:                   io.NopCloser(bytes.NewReader(out.raw)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Errorf("%s %s: response %d does not match the document: %v\nbody: %s", hr.Method, hr.URL, out.status, err, clip(out.raw))
	}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// must fails the test unless the response has the status (and, for errors, the code).
func (r resp) must(t *testing.T, status int, code ...string) resp {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, clip(r.raw))
	}
	if len(code) > 0 && r.json["code"] != code[0] {
		t.Fatalf("code %v, want %s; body %s", r.json["code"], code[0], clip(r.raw))
	}
	return r
}

func (r resp) str(field string) string {
	s, _ := r.json[field].(string)
	return s
}

func (r resp) list(field string) []any {
	l, _ := r.json[field].([]any)
	return l
}

func (r resp) num(field string) float64 {
	n, _ := r.json[field].(float64)
	return n
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }
