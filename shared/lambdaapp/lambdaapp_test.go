package lambdaapp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	sample "github.com/creatorstrategy/css/infra/samevents"
	"github.com/creatorstrategy/css/infra/emulators/emulatortest"
	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/auth/authtest"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// env is a fresh table on DynamoDB Local holding the sample events' key, and an identity provider whose
// session tokens the functions trust, configured as template.yaml configures the functions.
type env struct {
	store    *store.Store
	accounts *accounts.Service
	idp      *authtest.Provider
}

func lambdaEnv(t *testing.T) *env {
	t.Helper()
	endpoint := emulatortest.DynamoDB(t)
	table := fmt.Sprintf("css-events-%d", time.Now().UnixNano())
	idp, err := authtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Close() })
	t.Setenv("CSS_DYNAMODB_ENDPOINT", endpoint)
	t.Setenv("CSS_TABLE_NAME", table)
	t.Setenv("AWS_REGION", "us-east-1")
	// The generation queue on ElasticMQ, as the template gives it to every function.
	sqsEndpoint := emulatortest.ElasticMQ(t)
	sqsClient, err := sqs.NewClient(sqsEndpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	spec := queue.Specs()[queue.Generation]
	spec.Name = fmt.Sprintf("generation-%d", time.Now().UnixNano())
	qs, err := sqs.CreateQueues(context.Background(), sqsClient, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CSS_SQS_ENDPOINT", sqsEndpoint)
	t.Setenv("CSS_GENERATION_QUEUE_URL", qs.URL)
	for _, kv := range idp.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	client, err := dynamo.NewClient(endpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.CreateTable(ctx, client, table); err != nil {
		t.Fatal(err)
	}
	if err := sample.Seed(ctx, dynamo.New(client, table)); err != nil {
		t.Fatal(err)
	}
	// The research queue POST /research sends to, on ElasticMQ.
	spec = queue.Specs()[queue.Research]
	spec.Name = fmt.Sprintf("research-%d", time.Now().UnixNano())
	research, err := sqs.CreateQueues(ctx, sqsClient, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CSS_RESEARCH_QUEUE_URL", research.URL)
	st := store.New(dynamo.New(client, table))
	return &env{store: st, accounts: accounts.NewService(st, time.Now), idp: idp}
}

// session mints a session token for account, as the account system would.
func (e *env) session(t *testing.T, account string) string {
	t.Helper()
	s, err := e.idp.Token(account, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func loadEvent(t *testing.T, name string, into *EventV2) {
	t.Helper()
	ev, err := sample.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	*into = ev
}

// operationOf is the contract's operation the event is a request for.
func operationOf(t *testing.T, c *contract.Contract, ev EventV2) *contract.Operation {
	t.Helper()
	for _, op := range c.Operations {
		if op.Method+" "+op.Path == ev.RouteKey {
			return op
		}
	}
	t.Fatalf("route %q is not in the contract", ev.RouteKey)
	return nil
}

// handlers builds each function's Lambda entry point once.
type handlers map[string]func(context.Context, EventV2) (ResponseV2, error)

func (hs handlers) get(t *testing.T, function string) func(context.Context, EventV2) (ResponseV2, error) {
	t.Helper()
	if h, ok := hs[function]; ok {
		return h
	}
	h, err := Handler(context.Background(), function, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("%s: %v", function, err)
	}
	hs[function] = h
	return h
}

// TestSampleEvents invokes each function's Lambda entry point with the sample events of events/, as API
// Gateway delivers them (no authorizer: the function authenticates the request itself), and the same events
// without their credential.
func TestSampleEvents(t *testing.T) {
	e := lambdaEnv(t)
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"integrations-list-my-videos.json": 200,
		"keys-list-keys.json":              200,
		"memory-create-note.json":          201,
		"memory-list-notes.json":           200,
		"planning-get-schedule.json":       200,
		"utility-health.json":              200,
		"utility-openapi.json":             200,
		"videos-commit-video.json":         200,
		"videos-delete-video-idea.json":    404, // no such idea in a fresh table
		"videos-list-my-videos.json":       200,
	}
	hs := handlers{}
	seen := 0
	for _, name := range sample.Names() {
		status, ok := want[name]
		if !ok {
			t.Errorf("%s: no expectation; add one", name)
			continue
		}
		seen++
		var ev EventV2
		loadEvent(t, name, &ev)
		op := operationOf(t, c, ev)
		if ev.RequestContext.Authorizer != nil {
			t.Errorf("%s: carries an authorizer context; the API has no authorizer", name)
		}
		if got := ev.Headers["authorization"] != ""; got == op.Public {
			t.Errorf("%s: credential sent %v for an operation whose credential is %q", name, got, op.Credential)
		}
		if op.Credential == contract.CredentialSession {
			// The event's token is a placeholder: sign one the test's identity provider vouches for.
			ev.Headers["authorization"] = "Bearer " + e.session(t, sample.Account)
		}
		h := hs.get(t, op.Function)
		resp, err := h(context.Background(), ev)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if resp.StatusCode != status {
			t.Errorf("%s via %s: %d, want %d: %s", name, op.Function, resp.StatusCode, status, resp.Body)
		}
		if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
			t.Errorf("%s: request id %q, want API Gateway's %q", name, resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
		}
		body := decodedBody(t, name, resp)
		if name == "utility-openapi.json" {
			// The event carries the Accept-Encoding curl --compressed sends: the document travels gzipped.
			if !resp.IsBase64Encoded || resp.Headers["Content-Encoding"] != "gzip" {
				t.Errorf("%s: isBase64Encoded %v, Content-Encoding %q; want a base64 gzip body",
					name, resp.IsBase64Encoded, resp.Headers["Content-Encoding"])
			}
			if !bytes.Equal(body, contract.Document()) {
				t.Errorf("%s: the body (%d bytes) is not openapi.json", name, len(body))
			}
		}
		if !op.Public {
			delete(ev.Headers, "authorization")
			mustRefuse(t, name+" without authorization", h, ev, 401, "UNAUTHORIZED")
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d expected events found", seen, len(want))
	}
}

// mustRefuse invokes h with ev and wants a refusal with status and code in the Error shape.
func mustRefuse(t *testing.T, name string, h func(context.Context, EventV2) (ResponseV2, error), ev EventV2, status int, code string) {
	t.Helper()
	resp, err := h(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var body struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	if resp.StatusCode != status || json.Unmarshal([]byte(resp.Body), &body) != nil || body.Code != code || body.Error == "" {
		t.Errorf("%s: %d %s, want %d with code %s in the Error shape", name, resp.StatusCode, resp.Body, status, code)
	}
	if status == 401 && resp.Headers["Www-Authenticate"] == "" && resp.Headers["WWW-Authenticate"] == "" {
		t.Errorf("%s: 401 without WWW-Authenticate: %v", name, resp.Headers)
	}
}

// event is a request for op as API Gateway delivers it, its path parameters filled with a valid uuid.
func event(op *contract.Operation, authorization string, body string) EventV2 {
	path := op.Path
	for {
		i := strings.Index(path, "{")
		j := strings.Index(path, "}")
		if i < 0 || j < i {
			break
		}
		path = path[:i] + "0b6e3f52-9c1a-4d7e-8f20-000000000000" + path[j+1:]
	}
	ev := EventV2{
		Version: "2.0", RouteKey: op.Method + " " + op.Path, RawPath: path,
		Headers: map[string]string{"accept": "application/json", "host": "abc123defg.execute-api.us-east-1.amazonaws.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			APIID: "abc123defg", RequestID: "test-" + op.ID, RouteKey: op.Method + " " + op.Path, Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: op.Method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7"},
		},
	}
	if authorization != "" {
		ev.Headers["authorization"] = authorization
	}
	if body != "" {
		ev.Headers["content-type"] = "application/json"
		ev.Body = body
	}
	return ev
}

// TestEveryRouteNeedsACredential sends every operation of the contract that takes a credential to its
// function with no credential, a malformed one, an unknown key and a credential of the wrong kind: each is
// refused with 401 in the Error shape before anything else is looked at. The public operations answer
// without one.
func TestEveryRouteNeedsACredential(t *testing.T) {
	e := lambdaEnv(t)
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	hs := handlers{}
	session := "Bearer " + e.session(t, sample.Account)
	forged, err := authtest.Forged(sample.Account)
	if err != nil {
		t.Fatal(err)
	}
	forgedSession := "Bearer " + forged
	for _, op := range c.Operations {
		h := hs.get(t, op.Function)
		if op.Public {
			resp, err := h(context.Background(), event(op, "", ""))
			if err != nil || resp.StatusCode != op.SuccessStatus {
				t.Errorf("%s (public): %v %d %s", op.ID, err, resp.StatusCode, resp.Body)
			}
			continue
		}
		refusals := map[string]string{
			"no credential":  "",
			"basic scheme":   "Basic " + base64.StdEncoding.EncodeToString([]byte("user:pass")),
			"malformed key":  "Bearer sk-css-NOT-A-KEY",
			"unknown key":    "Bearer sk-css-ffffffffffffffffffffffffffffffff",
			"forged session": forgedSession,
		}
		if op.Credential == contract.CredentialSession {
			refusals["API key on a session-only operation"] = "Bearer " + sample.Key
		}
		for what, authz := range refusals {
			mustRefuse(t, op.ID+" with "+what, h, event(op, authz, ""), 401, "UNAUTHORIZED")
		}
		// With the right credential the request gets past authentication (whatever the operation then says).
		good := "Bearer " + sample.Key
		if op.Credential == contract.CredentialSession {
			good = session
		}
		resp, err := h(context.Background(), event(op, good, ""))
		if err != nil || resp.StatusCode == 401 || resp.StatusCode == 403 || resp.StatusCode >= 500 && resp.StatusCode != 501 {
			t.Errorf("%s with a valid credential: %v %d %s", op.ID, err, resp.StatusCode, resp.Body)
		}
	}
}

// TestAKeySeesOnlyItsChannel: a key of another account's channel cannot see, or reach by projectId, what
// the sample key's channel holds.
func TestAKeySeesOnlyItsChannel(t *testing.T) {
	e := lambdaEnv(t)
	ctx := context.Background()
	const otherKey = "sk-css-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	if _, err := e.accounts.EnsureDevKey(ctx, "other-account", otherKey); err != nil {
		t.Fatal(err)
	}
	memory, err := Handler(ctx, "memory", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var create, list EventV2
	loadEvent(t, "memory-create-note.json", &create)
	loadEvent(t, "memory-list-notes.json", &list)
	if resp, err := memory(ctx, create); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create note: %v %d %s", err, resp.StatusCode, resp.Body)
	}
	total := func(authz string) string {
		ev := list
		ev.Headers = maps.Clone(list.Headers)
		ev.Headers["authorization"] = authz
		resp, err := memory(ctx, ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("list notes: %v %d %s", err, resp.StatusCode, resp.Body)
		}
		var b struct{ Total int }
		if err := json.Unmarshal([]byte(resp.Body), &b); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(b.Total)
	}
	if got := total("Bearer " + sample.Key); got != "1" {
		t.Errorf("the sample key sees %s notes, want 1", got)
	}
	if got := total("Bearer " + otherKey); got != "0" {
		t.Errorf("another channel's key sees %s notes, want 0", got)
	}

	integrations, err := Handler(ctx, "integrations", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var ev EventV2
	loadEvent(t, "integrations-list-my-videos.json", &ev)
	ev.Headers["authorization"] = "Bearer " + otherKey
	if resp, err := integrations(ctx, ev); err != nil || resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("another channel's key with the sample channel's projectId: %v %d %s", err, resp.StatusCode, resp.Body)
	}
}

// TestRevokedKeyStopsWithinTheCacheTTL: each Lambda instance caches a resolved key for config's
// AuthCacheTTL, so a key revoked by another instance keeps working there at most that long (decision 2:
// at most 60 s), and not a moment longer.
func TestRevokedKeyStopsWithinTheCacheTTL(t *testing.T) {
	e := lambdaEnv(t)
	ctx := context.Background()
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AuthCacheTTL <= 0 || cfg.AuthCacheTTL > 60*time.Second {
		t.Fatalf("AuthCacheTTL %v: decision 2 allows at most 60 s", cfg.AuthCacheTTL)
	}
	start := time.Now()
	var now atomic.Pointer[time.Time]
	now.Store(&start)
	h, err := handler(ctx, "memory", slog.New(slog.DiscardHandler), func() time.Time { return *now.Load() })
	if err != nil {
		t.Fatal(err)
	}
	var ev EventV2
	loadEvent(t, "memory-list-notes.json", &ev)
	at := func(d time.Duration) int {
		t.Helper()
		later := start.Add(d)
		now.Store(&later)
		resp, err := h(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if s := at(0); s != 200 {
		t.Fatalf("before revocation: %d", s)
	}
	if err := e.accounts.RevokeKey(ctx, sample.Account, sample.KeyID); err != nil {
		t.Fatal(err)
	}
	if s := at(cfg.AuthCacheTTL - time.Millisecond); s != 200 {
		t.Errorf("within the cache TTL the cached key answered %d (the cache is not used?)", s)
	}
	if s := at(cfg.AuthCacheTTL); s != 401 {
		t.Errorf("revoked key after the cache TTL: %d, want 401", s)
	}
}

// TestOpenAPIDocumentEncoding checks how the document leaves the utility Lambda: a gzip body must reach API
// Gateway base64-encoded (isBase64Encoded), a plain one as text.
func TestOpenAPIDocumentEncoding(t *testing.T) {
	lambdaEnv(t)
	h, err := Handler(context.Background(), "utility", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
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
		var ev EventV2
		loadEvent(t, "utility-openapi.json", &ev)
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
		if body := decodedBody(t, name, resp); !bytes.Equal(body, contract.Document()) {
			t.Errorf("%s: the body (%d bytes) is not openapi.json", name, len(body))
		}
	}
}

// decodedBody is what a client receives from API Gateway for resp: the body base64-decoded when
// isBase64Encoded, then decompressed as its Content-Encoding says.
func decodedBody(t *testing.T, name string, resp ResponseV2) []byte {
	t.Helper()
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatalf("%s: isBase64Encoded, but the body is not base64: %v", name, err)
		}
	}
	switch enc := resp.Headers["Content-Encoding"]; enc {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: Content-Encoding gzip, but %v", name, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: gzip body: %v", name, err)
		}
	default:
		t.Fatalf("%s: unexpected Content-Encoding %q", name, enc)
	}
	return body
}

// The wiring reads only the environment (nothing listens on the endpoints below: the table and the JWKS are
// reached on first use), and a misconfiguration stops the cold start instead of refusing every request later.
func TestHandlerWiring(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("CSS_TABLE_NAME", "css-test")
	t.Setenv("CSS_DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("CSS_JWKS_URL", "https://127.0.0.1:1/jwks")
	t.Setenv("CSS_JWT_ISSUER", authtest.Issuer)
	t.Setenv("CSS_JWT_AUDIENCE", authtest.Audience)
	logger := slog.New(slog.DiscardHandler)
	if _, err := Handler(context.Background(), "memory", logger); err != nil {
		t.Fatalf("wiring: %v", err)
	}
	// A function that runs generations needs its queue.
	if _, err := Handler(context.Background(), "generation", logger); err == nil {
		t.Error("the generation function started without CSS_GENERATION_QUEUE_URL")
	}
	t.Setenv("CSS_GENERATION_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/css-generation")
	if _, err := Handler(context.Background(), "generation", logger); err != nil {
		t.Errorf("generation wiring: %v", err)
	}
	t.Setenv("CSS_JWKS_URL", "http://127.0.0.1:1/jwks")
	if _, err := Handler(context.Background(), "memory", logger); err == nil {
		t.Error("an http JWKS URL was accepted")
	}
	t.Setenv("CSS_JWKS_URL", "https://127.0.0.1:1/jwks")
	// In Lambda, development mode (HS256 tokens, detail in errors) is refused whatever CSS_MODE says.
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "css-memory")
	t.Setenv("CSS_MODE", "development")
	if _, err := Handler(context.Background(), "memory", logger); err == nil {
		t.Error("development mode was accepted inside Lambda")
	}
	t.Setenv("CSS_MODE", "production")
	if _, err := Handler(context.Background(), "memory", logger); err != nil {
		t.Fatalf("production inside Lambda: %v", err)
	}
	t.Setenv("CSS_JWT_AUDIENCE", "")
	if _, err := Handler(context.Background(), "memory", logger); err == nil {
		t.Error("a JWKS URL without an audience was accepted")
	}
	t.Setenv("CSS_JWT_AUDIENCE", authtest.Audience)
	t.Setenv("CSS_TABLE_NAME", "")
	if _, err := Handler(context.Background(), "memory", logger); err == nil {
		t.Error("production wiring without CSS_TABLE_NAME was accepted")
	}
}

// WithFiles mounts the pictures' handler at /files/ in front of the function's operations, with the
// function's configuration; a handler that cannot be built stops the function at start.
func TestFilesBesideTheOperations(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("CSS_TABLE_NAME", "css-test")
	t.Setenv("CSS_DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("CSS_JWKS_URL", "https://127.0.0.1:1/jwks")
	t.Setenv("CSS_JWT_ISSUER", authtest.Issuer)
	t.Setenv("CSS_JWT_AUDIENCE", authtest.Audience)
	t.Setenv("CSS_IMAGES_BUCKET", "css-images")
	var bucket string
	files := WithFiles(func(cfg config.Config, _ *slog.Logger) (http.Handler, error) {
		bucket = cfg.ImagesBucket
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "https://s3.example/"+strings.TrimPrefix(r.URL.Path, "/files/"))
			w.WriteHeader(http.StatusFound)
		}), nil
	})
	h, err := Handler(context.Background(), "utility", slog.New(slog.DiscardHandler), files)
	if err != nil {
		t.Fatal(err)
	}
	if bucket != "css-images" {
		t.Errorf("the files handler was built with bucket %q", bucket)
	}
	for _, tc := range []struct {
		path     string
		status   int
		location string
	}{
		{"/files/images/c/0123456789abcdef0123456789abcdef.png", 302, "https://s3.example/images/c/0123456789abcdef0123456789abcdef.png"},
		{"/files/anything", 302, "https://s3.example/anything"},
		{"/api/v1/openapi.json", 200, ""},
		{"/filesx", 401, ""}, // the API's: an unknown path asks for a credential first
	} {
		var ev EventV2
		loadEvent(t, "utility-openapi.json", &ev)
		ev.RawPath, ev.RequestContext.HTTP.Path = tc.path, tc.path
		ev.RouteKey, ev.RequestContext.RouteKey = "GET /files/{proxy+}", "GET /files/{proxy+}"
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != tc.status || resp.Headers["Location"] != tc.location {
			t.Errorf("GET %s: %d %v %v", tc.path, resp.StatusCode, resp.Headers, err)
		}
	}
	broken := WithFiles(func(config.Config, *slog.Logger) (http.Handler, error) { return nil, errors.New("no") })
	if _, err := Handler(context.Background(), "utility", slog.New(slog.DiscardHandler), broken); err == nil {
		t.Error("started without its files handler")
	}
}

// The function that sends to the research queue is the one the contract routes POST /research to.
func TestResearchStarterServesStartResearch(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	if op := c.Operation("startResearch"); op == nil || op.Function != ResearchStarter {
		t.Fatalf("startResearch is served by %v, lambdaapp gives the research queue to %q", op, ResearchStarter)
	}
}

// TestRefusalMetric: each credential refused that was not in the cache writes one line in CloudWatch's
// embedded metric format (whatever the log level), which CloudWatch turns into CSS/CredentialRefusals by
// function; a refusal answered from the cache writes none.
func TestRefusalMetric(t *testing.T) {
	lambdaEnv(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	h, err := Handler(context.Background(), "memory", logger)
	if err != nil {
		t.Fatal(err)
	}
	var ev EventV2
	loadEvent(t, "memory-list-notes.json", &ev)
	send := func(authz string) {
		t.Helper()
		e := ev
		e.Headers = maps.Clone(ev.Headers)
		e.Headers["authorization"] = authz
		if _, err := h(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	send("Bearer " + sample.Key)
	send("Bearer sk-css-ffffffffffffffffffffffffffffffff")
	send("Bearer sk-css-ffffffffffffffffffffffffffffffff") // cached
	send("Bearer sk-css-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee")
	var points int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct {
			AWS struct {
				Timestamp         int64
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
			FunctionName string
			Count        *int `json:"CredentialRefusals"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Count == nil {
			continue
		}
		points += *rec.Count
		m := rec.AWS.CloudWatchMetrics
		if len(m) != 1 || m[0].Namespace != MetricNamespace || fmt.Sprint(m[0].Dimensions) != "[[FunctionName]]" ||
			len(m[0].Metrics) != 1 || m[0].Metrics[0].Name != MetricCredentialRefusals || m[0].Metrics[0].Unit != "Count" ||
			rec.FunctionName != "memory" || rec.AWS.Timestamp == 0 {
			t.Errorf("not an EMF line for %s: %s", MetricCredentialRefusals, line)
		}
	}
	if points != 2 {
		t.Errorf("%d refusals counted, want 2 (two unknown keys, one of them repeated): %s", points, logs.String())
	}
}
