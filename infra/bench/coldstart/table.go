package main

// The table mode (-dynamodb): besides the default event, each group function is also timed on a request
// authenticated with the sample events' key (package events) that reads the table, against a DynamoDB Local: the key lookup, the store client's
// first connection, validation and the handler all run before the answer, as on a real cold start. The
// default event is refused (401) or answered from memory before any of that.

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/testkit/authtest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
)

// tableRequest is the request a function is timed on in table mode: the cheapest read each serves.
type tableRequest struct {
	method, path, query string
	route               string // the route's path when it has parameters
	session             bool   // a session token instead of the API key (key management)
	status              int    // the answer it must get
	body                string // a JSON body (the MCP endpoint's JSON-RPC request)
}

var tableRequests = map[string]tableRequest{
	"context":      {method: "GET", path: "/api/v1/history", status: 200},
	"videos":       {method: "GET", path: "/api/v1/my-videos", status: 200},
	"planning":     {method: "GET", path: "/api/v1/schedule", status: 200},
	"memory":       {method: "GET", path: "/api/v1/notes", status: 200},
	"integrations": {method: "GET", path: "/api/my-videos", query: "projectId=" + samevents.Channel, status: 200},
	"keys":         {method: "GET", path: "/api/v1/keys", session: true, status: 200},
	"generation": {method: "GET", path: "/api/v1/generations/" + benchRunID, route: "/api/v1/generations/{id}",
		status: 200},
	"intelligence": {method: "GET", path: "/api/v1/research/videos", status: 200},
	"webhooks":     {method: "GET", path: "/api/webhooks", status: 200},
	"utility":      {method: "GET", path: "/api/v1/health", status: 200}, // public; probes the table
	// The MCP endpoint's read tool: the server's construction, JSON-RPC and the videos read.
	"mcp": {method: "POST", path: "/mcp", status: 200,
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_my_videos","arguments":{}}}`},
	// The sign-in for /mcp (decision 55): its authorization server's metadata, the first request a
	// connector sends it (no table call; the library is set up, and its secret read, on first OAuth use).
	"signin": {method: "GET", path: "/.well-known/oauth-authorization-server", status: 200},
}

// workers are the functions that consume queues and schedules rather than serve the API: the harness,
// which times HTTP requests, leaves them out (make bench-coldstart does not pass them).
// localStack is functions/local, the local stack's main: beside the functions, but no Lambda.
const localStack = "local"

var workers = map[string]bool{"webhook-dispatcher": true, "generation-worker": true, "research-worker": true, "research-scheduler": true}

// tableSetup is the sample events' key in a table behind a meter, and an identity provider the functions
// trust.
type tableSetup struct {
	env     []string // for every process of a table-mode target
	session string   // a session token of the sample account
	idp     *authtest.Provider
	meter   *tableMeter
	certDir string // an empty folder: SSL_CERT_DIR
}

func (s *tableSetup) close() {
	s.idp.Close()
	s.meter.close()
	os.Remove(s.certDir)
}

// tableMeter forwards the functions' DynamoDB calls to the DynamoDB Local and records when each waited for
// its answer, so that a run's own work can be told apart from the emulator's latency (a few ms a call on
// its JVM, which is no part of a cold start; DynamoDB's latency in the cloud is another figure). Calls a
// function makes at once overlap, and their waits count once (the union of the intervals): only time in
// which the function had nothing to do but wait is taken off. Runs are one at a time, so one record
// serves them all. With idp set, the wait for the identity provider counts too (connMeter).
type tableMeter struct {
	srv *http.Server
	url string
	idp *connMeter

	mu    sync.Mutex
	calls []tableCall // since reset
}

// tableCall is one request a function made of the table: its operation (X-Amz-Target without the API
// version) and when the meter had it and when it had answered it.
type tableCall struct {
	op       string
	from, to time.Time
}

func startMeter(endpoint string, cert *tls.Certificate) (*tableMeter, error) {
	upstream, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("-dynamodb %q: %w", endpoint, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &tableMeter{url: "http://" + ln.Addr().String()}
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
		m.url = "https://" + ln.Addr().String()
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	m.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := time.Now()
		proxy.ServeHTTP(w, r)
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		m.mu.Lock()
		m.calls = append(m.calls, tableCall{op: op, from: from, to: time.Now()})
		m.mu.Unlock()
	})}
	go m.srv.Serve(ln)
	return m, nil
}

func (m *tableMeter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = nil
	if m.idp != nil {
		m.idp.reset()
	}
}

// read returns the time spent waiting for the table and the identity provider since reset (overlapping
// waits counted once), the table operations called, in the order they were answered, and the table calls.
func (m *tableMeter) read() (waited time.Duration, ops []string, calls []tableCall) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.calls {
		ops = append(ops, c.op)
	}
	waits := m.calls
	if m.idp != nil {
		waits = append(slices.Clone(m.calls), m.idp.waits()...)
	}
	return union(waits), ops, slices.Clone(m.calls)
}

// phasesAround splits a run's handling of its event (from received to answered) around its table calls:
// the time before the first call, the time between calls when none was waiting, and the time after the
// last answer. Zero for all three when the run made no call or its event's delivery time is unknown.
func phasesAround(received time.Time, calls []tableCall, answered time.Time) (before, between, after time.Duration) {
	if len(calls) == 0 || received.IsZero() {
		return 0, 0, 0
	}
	first := slices.MinFunc(calls, func(a, b tableCall) int { return a.from.Compare(b.from) }).from
	last := slices.MaxFunc(calls, func(a, b tableCall) int { return a.to.Compare(b.to) }).to
	return first.Sub(received), last.Sub(first) - union(calls), answered.Sub(last)
}

func (m *tableMeter) close() {
	m.srv.Close()
	if m.idp != nil {
		m.idp.close()
	}
}

// union is the length of the union of the calls' intervals.
func union(calls []tableCall) time.Duration {
	sorted := slices.Clone(calls)
	slices.SortFunc(sorted, func(a, b tableCall) int { return a.from.Compare(b.from) })
	var total time.Duration
	var from, to time.Time
	for i, c := range sorted {
		switch {
		case i == 0:
			from, to = c.from, c.to
		case c.from.After(to): // a gap: close the interval so far
			total += to.Sub(from)
			from, to = c.from, c.to
		case c.to.After(to):
			to = c.to
		}
	}
	if len(sorted) > 0 {
		total += to.Sub(from)
	}
	return total
}

// setupTable creates a table on the DynamoDB Local at endpoint holding the sample events' key, warms the
// emulator with warmup rounds of calls, and starts an identity provider that signs a session token for the
// key's account.
//
// With overTLS the meter serves HTTPS under a certificate of its own, as DynamoDB does in the cloud: each run
// then pays its first TLS connection and the root pool it verifies with. The meter's certificate and the
// identity provider's reach the functions in SSL_CERT_FILE, and the machine's certificate folders stay where
// Go looks for them (SSL_CERT_DIR unset), as in a Lambda's image: a client that trusts Go's default pool
// loads all of them (about 290 parses here), one that trusts only Amazon's roots (shared/awsenv) reads
// the file alone.
func setupTable(ctx context.Context, endpoint string, warmup int, overTLS bool) (*tableSetup, error) {
	client, err := dynamo.NewClient(endpoint, "us-east-1")
	if err != nil {
		return nil, err
	}
	table := fmt.Sprintf("css-coldstart-%d", time.Now().UnixNano())
	if err := dynamo.CreateTable(ctx, client, table); err != nil {
		return nil, fmt.Errorf("create table on %s: %w", endpoint, err)
	}
	if err := samevents.Seed(ctx, dynamo.New(client, table)); err != nil {
		return nil, err
	}
	// The run the generation function's request reads.
	if err := store.New(dynamo.New(client, table)).CreateRun(ctx, samevents.Channel, generation.ToolRun{
		ID: benchRunID, ToolName: "hooks", Status: generation.Success, Input: json.RawMessage(`{"topic":"bench"}`),
		Output: json.RawMessage(`{"hooks":[]}`), GeneratedAt: time.Now().UTC(),
	}); err != nil {
		return nil, fmt.Errorf("seed the bench run: %w", err)
	}
	if err := warmEmulator(ctx, dynamo.New(client, table), warmup); err != nil {
		return nil, err
	}
	certDir, err := os.MkdirTemp("", "coldstart-certs-")
	if err != nil {
		return nil, err
	}
	var meterCert *tls.Certificate
	var meterPEM []byte
	if overTLS {
		if meterCert, meterPEM, err = selfSigned(); err != nil {
			os.RemoveAll(certDir)
			return nil, err
		}
	}
	meter, err := startMeter(endpoint, meterCert)
	if err != nil {
		os.RemoveAll(certDir)
		return nil, err
	}
	idp, err := authtest.Start()
	if err != nil {
		meter.close()
		return nil, err
	}
	session, err := idp.Token(samevents.Account, 24*time.Hour)
	jwks, _ := url.Parse(idp.URL) // the provider's own https URL, which parses
	if err == nil {
		meter.idp, err = startConnMeter(jwks.Host)
	}
	if err != nil {
		idp.Close()
		meter.close()
		return nil, err
	}
	jwks.Host = meter.idp.addr() // the provider's certificate names 127.0.0.1, whatever the port
	env := append([]string{"CSS_DYNAMODB_ENDPOINT=" + meter.url, "CSS_TABLE_NAME=" + table}, idp.Env()...)
	env = append(env, "CSS_JWKS_URL="+jwks.String()) // the last value of a name is the one a process sees
	if !overTLS {
		// The identity provider's certificate reaches the functions through SSL_CERT_FILE, but Go's root
		// pool then also reads every certificate of this machine's certificate folders (about 290 parses
		// here, 18-37 ms), which would be timed in the first session-token request (keys) alone. An empty
		// SSL_CERT_DIR leaves the pool at the provider's certificate. Without -dynamodb-tls no row includes
		// a root pool's load or a TLS connection to the table.
		env = append(env, "SSL_CERT_DIR="+certDir)
	} else {
		idpPEM, err := os.ReadFile(idp.CAFile)
		if err == nil {
			trust := filepath.Join(certDir, "trust.pem")
			err = os.WriteFile(trust, append(append(idpPEM, '\n'), meterPEM...), 0o600)
			env = append(env, "SSL_CERT_FILE="+trust) // the last value of a name is the one a process sees
		}
		if err != nil {
			idp.Close()
			meter.close()
			os.RemoveAll(certDir)
			return nil, err
		}
	}
	return &tableSetup{env: env, session: session, idp: idp, meter: meter, certDir: certDir}, nil
}

// defaultEmulatorWarmup is how many rounds of the calls the functions make warmEmulator runs before timing, so
// the JVM has compiled DynamoDB Local's paths for them: on a fresh emulator hellotable's GetItem waited
// 4.0 ms and videos' four calls 19 ms (p50); after 300 rounds 1.7 and 9.6 ms, after 3,000 1.0 and 4.7 ms.
// The runs' own times (without the wait) hardly change; the rounds take about 9 s.
const defaultEmulatorWarmup = 3000

// warmEmulator makes rounds rounds of a GetItem, a Query and an UpdateItem (the calls of a table request)
// on an item of its own.
func warmEmulator(ctx context.Context, table store.Table, rounds int) error {
	key := store.Key{PK: "COLDSTART#WARMUP", SK: "COUNT"}
	for range rounds {
		if _, err := table.Increment(ctx, store.Incr(key, 1, 0)); err != nil {
			return fmt.Errorf("warm up the emulator: %w", err)
		}
		if _, err := table.Get(ctx, key); err != nil {
			return fmt.Errorf("warm up the emulator: %w", err)
		}
		if _, err := table.Query(ctx, store.Query{PK: key.PK}); err != nil {
			return fmt.Errorf("warm up the emulator: %w", err)
		}
	}
	return nil
}

// benchRunID is the generation run setupTable stores for the generation function's request.
const benchRunID = "5f0c2a8e-7d41-4b9a-9e63-1c2d3e4f5a6b"

// functionOf is the function a target's name times: the name up to an "@", so that two builds of one
// function (videos@base=old/videos videos=new/videos) run side by side on the same request.
func functionOf(name string) string {
	fn, _, _ := strings.Cut(name, "@")
	return fn
}

// isTableBaseline says whether the target named name is a baseline of the table rows (./hellotable, under
// the names hellotable and hellotable1 to hellotable4): those run only against the table, on the default
// event.
func isTableBaseline(name string) bool { return strings.HasPrefix(functionOf(name), "hellotable") }

// tableTarget is t timed on its function's table request, or false when t is not a function of the service
// (the baselines).
func (s *tableSetup) tableTarget(t target) (target, bool) {
	req, ok := tableRequests[functionOf(t.name)]
	if !ok {
		return target{}, false
	}
	authz := "Bearer " + samevents.Key
	if req.session {
		authz = "Bearer " + s.session
	}
	if req.path == "/api/v1/health" {
		authz = ""
	}
	route := cmp.Or(req.route, req.path)
	ev := apiEvent(req.method+" "+route, req.path, req.query, authz)
	if req.body != "" {
		ev.Body = req.body
		ev.Headers["content-type"] = "application/json"
		ev.Headers["accept"] = "application/json, text/event-stream"
	}
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // a value of our own that always marshals
	}
	return target{name: t.name + "+table", path: t.path, event: b, env: s.env, wantStatus: req.status, meter: s.meter}, true
}

// apiEvent is a request as API Gateway's HTTP API (payload 2.0) delivers it.
func apiEvent(route, path, query, authorization string) events.APIGatewayV2HTTPRequest {
	method, _, _ := strings.Cut(route, " ")
	headers := map[string]string{
		"accept":          "application/json",
		"accept-encoding": "gzip, deflate, br, zstd", // a browser's; every common client includes gzip
		"host":            "bench.execute-api.us-east-1.amazonaws.com",
	}
	if authorization != "" {
		headers["authorization"] = authorization
	}
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: route, RawPath: path, RawQueryString: query, Headers: headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID: "123456789012", APIID: "bench", DomainName: "bench.execute-api.us-east-1.amazonaws.com",
			DomainPrefix: "bench", RequestID: "coldstart-bench", RouteKey: route, Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "127.0.0.1", UserAgent: "coldstart",
			},
		},
	}
}

// selfSigned makes a certificate for 127.0.0.1 that is its own CA (ECDSA P-256, one day), and its PEM.
func selfSigned() (*tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "coldstart meter"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
