package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/lambdatest"
)

// The test binary doubles as the Lambda function under measurement: run with COLDSTART_TEST_FUNCTION set,
// it serves the Runtime API the harness plays, through aws-lambda-go like the real functions.
func TestMain(m *testing.M) {
	fn := os.Getenv("COLDSTART_TEST_FUNCTION")
	if fn == "by-name" { // the target's name picks the function, so the runs of one harness can differ
		fn = strings.TrimPrefix(os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), "css-bench-")
	}
	echo := func(_ context.Context, ev json.RawMessage) (json.RawMessage, error) { return ev, nil }
	switch fn {
	case "":
		emulatortest.Main(m)
	case "table":
		lambda.Start(readTable)
	case "echo":
		lambda.Start(echo)
	case "slow":
		time.Sleep(300 * time.Millisecond)
		lambda.Start(echo)
	case "orphan":
		// Leaves behind a process that outlives the kill and keeps asking this run's Runtime API for events.
		self, _ := os.Executable()
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), "COLDSTART_TEST_FUNCTION=steal")
		if err := cmd.Start(); err != nil {
			os.Exit(4)
		}
		_ = os.WriteFile(os.Getenv("COLDSTART_TEST_PIDFILE"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
		lambda.Start(echo)
	case "steal":
		steal(os.Getenv("AWS_LAMBDA_RUNTIME_API"), 3*time.Second)
	case "fail":
		lambda.Start(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("refused")
		})
	case "exit":
		os.Stderr.WriteString("cannot start: CSS_TABLE_NAME missing\n")
		os.Exit(3)
	}
}

// readTable is a function of table mode: two reads of the table at once, then one more, as a function
// that looks two things up together would.
func readTable(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	table, err := dynamo.Open(os.Getenv("CSS_DYNAMODB_ENDPOINT"), os.Getenv("AWS_REGION"), os.Getenv("CSS_TABLE_NAME"))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	key := store.Key{PK: "COLDSTART#WARMUP", SK: "COUNT"}
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := table.Get(ctx, key); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
	}
	if _, err := table.Query(ctx, store.Query{PK: key.PK}); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
}

// Table mode on a DynamoDB Local: the baseline's runs are timed on the table, every call the process makes
// is counted and named, and the time it waited for them is reported apart.
func TestTableMode(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// The guard as the Makefile gives it, at a smoke's few runs: checked, but not judged.
	args := []string{"-n", "3", "-dynamodb", emulatortest.DynamoDB(t), "-warm-table", "10", "-env", "COLDSTART_TEST_FUNCTION=table",
		"-guard", "hellotable=1.5", "base=" + self, "hellotable=" + self}
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	lines := mainTable(out.String())
	if len(lines) != 3 || !strings.HasPrefix(lines[2], "hellotable ") {
		t.Fatalf("table:\n%s", out.String())
	}
	if !strings.HasSuffix(lines[2], "response 200  3 (GetItem GetItem Query)") || !strings.Contains(lines[2], " ms ") {
		t.Errorf("row %q: want 200 after three calls, their wait in ms", lines[2])
	}
	if !strings.Contains(out.String(), "guard: not judged at -n 3") {
		t.Errorf("no word that the guard was not judged:\n%s", out.String())
	}
}

func TestHarnessMeasuresAProcess(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	event := []byte(`{"rawPath":"/api/v1/health","n":1}`)
	tests := []struct {
		function   string
		wantAnswer lambdatest.Kind
		wantErr    string // part of the failure, when there is no answer
	}{
		{function: "echo", wantAnswer: lambdatest.KindResponse},
		{function: "fail", wantAnswer: lambdatest.KindError},
		{function: "exit", wantErr: "CSS_TABLE_NAME missing"},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			h, err := startHarness(30*time.Second, []string{"COLDSTART_TEST_FUNCTION=" + tt.function})
			if err != nil {
				t.Fatal(err)
			}
			defer h.close()
			for run := range 2 {
				s := h.once(context.Background(), target{name: tt.function, path: self, event: event})
				if s.answer != tt.wantAnswer {
					t.Fatalf("run %d: answer %q (err %v), want %q", run, s.answer, s.err, tt.wantAnswer)
				}
				if tt.wantErr != "" {
					if s.err == nil || !strings.Contains(s.err.Error(), tt.wantErr) {
						t.Fatalf("run %d: err %v, want it to mention %q", run, s.err, tt.wantErr)
					}
					continue
				}
				if s.err != nil || s.took <= 0 {
					t.Fatalf("run %d: err %v, took %v", run, s.err, s.took)
				}
			}
		})
	}
}

// steal polls the Runtime API at api for events until the time is up and answers any it gets with
// statusCode 409: what a late next call of a killed process does, many times over.
func steal(api string, d time.Duration) {
	client := &http.Client{Timeout: 20 * time.Millisecond}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, err := client.Get("http://" + api + "/2018-06-01/runtime/invocation/next")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if id := resp.Header.Get("Lambda-Runtime-Aws-Request-Id"); id != "" {
			r, err := http.Post("http://"+api+"/2018-06-01/runtime/invocation/"+id+"/response", "application/json",
				strings.NewReader(`{"statusCode":409}`))
			if err == nil {
				r.Body.Close()
			}
		}
	}
}

// TestALeftoverProcessCannotTakeTheNextRunsEvent: a process of one run that still calls the Runtime API
// (here an orphan that outlives the kill; in practice the next call a killed process had already sent)
// must not receive the event of the following run.
func TestALeftoverProcessCannotTakeTheNextRunsEvent(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "orphan.pid")
	t.Cleanup(func() {
		b, _ := os.ReadFile(pidFile)
		if pid, err := strconv.Atoi(string(b)); err == nil {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	h, err := startHarness(5*time.Second, []string{"COLDSTART_TEST_FUNCTION=by-name", "COLDSTART_TEST_PIDFILE=" + pidFile})
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	if s := h.once(context.Background(), target{name: "orphan", path: self, event: []byte(`{"statusCode":200}`)}); s.status != 200 {
		t.Fatalf("orphan run: %q %d (err %v)", s.answer, s.status, s.err)
	}
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("no orphan was left: %v", err)
	}
	// The next process asks for its event only after 300 ms: plenty of time for the orphan to take it.
	s := h.once(context.Background(), target{name: "slow", path: self, event: []byte(`{"statusCode":201}`)})
	if s.answer != lambdatest.KindResponse || s.status != 201 {
		t.Fatalf("the run after the orphan's: %q %d (err %v), want its own process's response 201", s.answer, s.status, s.err)
	}
}

func TestHarnessDeliversTheEventAndReadsTheAnswer(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, err := startHarness(30*time.Second, []string{"COLDSTART_TEST_FUNCTION=echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	// The echo function answers with the event: the statusCode read back proves the round trip.
	s := h.once(context.Background(), target{name: "echo", path: self, event: []byte(`{"statusCode":418}`)})
	if s.answer != lambdatest.KindResponse || s.status != 418 {
		t.Fatalf("got %q %d (err %v), want response 418", s.answer, s.status, s.err)
	}
}

// TestDefaultEventIsARealRequest: the default event is GET /api/v1/openapi.json as API Gateway delivers a
// real client's request: header names lowercased, and an Accept-Encoding that accepts gzip.
func TestDefaultEventIsARealRequest(t *testing.T) {
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(defaultEvent, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.RouteKey != "GET /api/v1/openapi.json" || ev.RequestContext.HTTP.Method != "GET" || ev.RawPath != "/api/v1/openapi.json" {
		t.Errorf("route %q, %s %s", ev.RouteKey, ev.RequestContext.HTTP.Method, ev.RawPath)
	}
	for name := range ev.Headers {
		if name != strings.ToLower(name) {
			t.Errorf("header %q: API Gateway delivers header names lowercased", name)
		}
	}
	if ae := ev.Headers["accept-encoding"]; !slices.Contains(strings.Split(strings.ReplaceAll(ae, " ", ""), ","), "gzip") {
		t.Errorf("accept-encoding %q: real clients accept gzip", ae)
	}
}

func TestParseTarget(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "ev.json")
	if err := os.WriteFile(ev, []byte(`{"rawPath":"/x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in        string
		wantName  string
		wantEvent string
		wantErr   bool
	}{
		{in: "utility=/tmp/utility", wantName: "utility", wantEvent: string(defaultEvent)},
		{in: "utility=/tmp/utility:" + ev, wantName: "utility", wantEvent: `{"rawPath":"/x"}`},
		{in: "utility=/tmp/utility:" + bad, wantErr: true},
		{in: "utility=/tmp/utility:" + filepath.Join(dir, "missing.json"), wantErr: true},
		{in: "/tmp/utility", wantErr: true},
		{in: "=/tmp/utility", wantErr: true},
		{in: "utility=", wantErr: true},
		{in: "utility=:" + ev, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: err %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && (got.name != tt.wantName || string(got.event) != tt.wantEvent || !filepath.IsAbs(got.path)) {
			t.Errorf("%q: got %q %q %s", tt.in, got.name, got.path, got.event)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{ms(7), 0.5, 7 * time.Millisecond},
		{ms(7), 0.9, 7 * time.Millisecond},
		{ms(1, 2), 0.5, 1 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.5, 5 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 1, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 0.9, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
		}
	}
}

func TestSummarizeAndTable(t *testing.T) {
	samples := []sample{
		{took: 30 * time.Millisecond, answer: lambdatest.KindResponse, status: 200},
		{took: 10 * time.Millisecond, answer: lambdatest.KindError},
		{err: errors.New("no answer within 10s")},
		{took: 20 * time.Millisecond, answer: lambdatest.KindResponse, status: 200},
	}
	r := summarize("utility", samples, false)
	if r.runs != 4 || r.failed != 1 || r.errors != 1 || r.min != 10*time.Millisecond ||
		r.p50 != 20*time.Millisecond || r.p90 != 30*time.Millisecond || r.answer != "response 200" ||
		r.firstFailure == nil {
		t.Fatalf("summary %+v", r)
	}
	base := summarize("hello", []sample{{took: 10 * time.Millisecond, answer: lambdatest.KindResponse, status: 200}}, false)
	// A metered row: of 40 ms, 25 ms waiting for the table leaves 15 ms of the function's own.
	table := summarize("utility+table", []sample{
		{took: 40 * time.Millisecond, waited: 25 * time.Millisecond, answer: lambdatest.KindResponse, status: 200, calls: []string{"GetItem", "Query"}},
		{took: 60 * time.Millisecond, waited: 50 * time.Millisecond, answer: lambdatest.KindResponse, status: 200, calls: []string{"GetItem", "Query", "Query"}},
		{took: 35 * time.Millisecond, waited: 15 * time.Millisecond, answer: lambdatest.KindResponse, status: 200, calls: []string{"GetItem"}},
	}, true)
	if table.p50 != 40*time.Millisecond || table.waitP50 != 25*time.Millisecond || table.ownP50 != 15*time.Millisecond ||
		table.minCalls != 1 || table.maxCalls != 3 || !slices.Equal(table.calls, []string{"GetItem", "Query"}) {
		t.Fatalf("metered summary %+v", table)
	}
	var out bytes.Buffer
	printTable(&out, []row{base, r, table}, "hello")
	lines := mainTable(out.String())
	if len(lines) != 4 {
		t.Fatalf("table:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "\nphases (p50)") || !strings.Contains(out.String(), "utility+table  0.0 ms") {
		t.Errorf("no phases table, or no row of utility+table in it:\n%s", out.String())
	}
	if f := strings.Fields(lines[2]); f[0] != "utility" || !strings.Contains(lines[2], "2.00x") {
		t.Errorf("utility row %q: want p50 twice the baseline's", lines[2])
	}
	if f := strings.Fields(lines[3]); f[0] != "utility+table" || !strings.Contains(lines[3], "4.00x") ||
		!strings.Contains(lines[3], "25.0 ms") || !strings.Contains(lines[3], "1.50x") || !strings.HasSuffix(lines[3], "1-3 (GetItem Query)") {
		t.Errorf("metered row %q: want p50 4.00x, table wait 25.0 ms, 1.50x without it, 1-3 calls (GetItem Query)", lines[3])
	}
}

// Calls a function makes at once wait together: the meter takes their union off, not their sum.
func TestUnion(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	call := func(from, to int) tableCall { return tableCall{from: at(from), to: at(to)} }
	tests := []struct {
		name  string
		calls []tableCall
		want  time.Duration
	}{
		{"none", nil, 0},
		{"one", []tableCall{call(2, 5)}, 3 * time.Millisecond},
		{"one after the other", []tableCall{call(0, 2), call(3, 6)}, 5 * time.Millisecond},
		{"answered out of order", []tableCall{call(3, 6), call(0, 2)}, 5 * time.Millisecond},
		{"touching", []tableCall{call(0, 2), call(2, 4)}, 4 * time.Millisecond},
		{"overlapping", []tableCall{call(0, 4), call(2, 6)}, 6 * time.Millisecond},
		{"one inside another", []tableCall{call(0, 10), call(2, 3), call(4, 6)}, 10 * time.Millisecond},
		{"at once, then alone", []tableCall{call(0, 3), call(1, 4), call(1, 2), call(8, 9)}, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := union(tt.calls); got != tt.want {
			t.Errorf("%s: union = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRunRejectsBadArguments(t *testing.T) {
	tests := [][]string{
		{},
		{"-n", "0", "hello=/bin/true"},
		{"-warmup", "-1", "hello=/bin/true"},
		{"-warm-table", "-1", "hello=/bin/true"},
		{"hello"},
		{"-env", "NOEQUALS", "hello=/bin/true"},
	}
	for _, args := range tests {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

func TestRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	args := []string{"-n", "3", "-env", "COLDSTART_TEST_FUNCTION=echo", "base=" + self, "same=" + self}
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	lines := mainTable(out.String())
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "base ") || !strings.HasPrefix(lines[2], "same ") {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); f[1] != "3" || f[2] != "0" || f[len(f)-2] != "response" || f[len(f)-1] != "-" {
			t.Errorf("row %q: want 3 runs, all answered", l)
		}
	}

	args = []string{"-n", "1", "-warmup", "0", "-env", "COLDSTART_TEST_FUNCTION=exit", "broken=" + self}
	if err := run(context.Background(), args, io.Discard); err == nil || !strings.Contains(err.Error(), "CSS_TABLE_NAME missing") {
		t.Errorf("run with a function that dies: err %v", err)
	}
}

// coldStartWeights are packages no function behind the HTTP API may link, each for what it costs every
// cold start or why it belongs elsewhere.
var coldStartWeights = map[string]string{
	"github.com/santhosh-tekuri/jsonschema/v6":              "compiles the JSON Schema meta-schemas at init (3-4 ms): the workers' AnswerChecker only",
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas": "serde schemas built at init (about 1 ms): hold service/dynamodb below v1.69",
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas":      "serde schemas built at init (0.2-0.4 ms): hold service/sqs below v1.49",
	"github.com/cockroachdb/pebble/v2":                      "the local stack's store",
	"google.golang.org/grpc":                                "the research worker's YouTube client",
	"github.com/getkin/kin-openapi/openapi3":                "the tests' response checks",
}

// signinWeights are what the sign-in's OAuth library brings into functions/signin alone (decision 55):
// ory/fosite's tracing (ory/x/otelx) links the OTLP exporters and with them gRPC. Its package inits cost
// about 3 ms more than the keys function's (GODEBUG=inittrace=1: 4-5 ms against 1.5), paid by a sign-in or
// an hourly token refresh, never by /mcp or the REST API.
var signinWeights = map[string]bool{"google.golang.org/grpc": true}

// No function behind the HTTP API links what its cold start should not pay for, and only mcp links the MCP
// SDK. `go list -deps` of each, as the Lambda build sees it.
func TestAPIFunctionsLinkNoColdStartWeight(t *testing.T) {
	entries, err := os.ReadDir("../../../functions")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || workers[e.Name()] || e.Name() == localStack {
			continue
		}
		cmd := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", "../../../functions/"+e.Name())
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", e.Name(), err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 100 {
			t.Fatalf("%s: only %d packages listed", e.Name(), len(deps))
		}
		for _, d := range deps {
			if why, ok := coldStartWeights[d]; ok && !(e.Name() == "signin" && signinWeights[d]) {
				t.Errorf("functions/%s links %s: %s", e.Name(), d, why)
			}
			if strings.HasPrefix(d, "github.com/modelcontextprotocol/go-sdk") && e.Name() != "mcp" {
				t.Errorf("functions/%s links the MCP SDK (%s): only functions/mcp serves MCP", e.Name(), d)
			}
		}
	}
}

// Every function has a table request in table mode, and each request is an operation of that function in
// the contract, answered with the status it expects (200, or 501 for the operations not implemented yet).
func TestTableRequestsCoverEveryFunction(t *testing.T) {
	entries, err := os.ReadDir("../../../functions")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		if !e.IsDir() || workers[e.Name()] || e.Name() == localStack {
			continue
		}
		seen++
		req, ok := tableRequests[e.Name()]
		if !ok {
			t.Errorf("functions/%s: no table request", e.Name())
			continue
		}
		route := req.route
		if route == "" {
			route = req.path
		}
		if e.Name() == "signin" { // OAuth, not a REST operation of the contract (decision 55)
			if req.method != "GET" || route != "/.well-known/oauth-authorization-server" || req.status != 200 {
				t.Errorf("signin: %+v, want GET /.well-known/oauth-authorization-server answered 200", req)
			}
			continue
		}
		if e.Name() == "mcp" { // JSON-RPC at /mcp, not a REST operation of the contract
			if req.method != "POST" || route != "/mcp" || req.body == "" || req.status != 200 {
				t.Errorf("mcp: %+v, want a JSON-RPC POST /mcp answered 200", req)
			}
			continue
		}
		var op *contract.Operation
		for _, o := range c.Operations {
			if o.Method == req.method && o.Path == route {
				op = o
			}
		}
		switch {
		case op == nil:
			t.Errorf("%s: %s %s is not in the contract", e.Name(), req.method, route)
		case op.Function != e.Name():
			t.Errorf("%s: %s %s is served by %s", e.Name(), req.method, route, op.Function)
		case req.session != (op.Credential == contract.CredentialSession):
			t.Errorf("%s: %s %s takes credential %q; session %v", e.Name(), req.method, route, op.Credential, req.session)
		case req.status != 200 && req.status != 501:
			t.Errorf("%s: status %d", e.Name(), req.status)
		}
	}
	if seen != len(tableRequests) {
		t.Errorf("%d functions, %d table requests", seen, len(tableRequests))
	}
}

// A label after "@" names a second build of the same function: it gets that function's table request.
func TestLabelledTargetsTimeTheirFunction(t *testing.T) {
	for name, want := range map[string]string{"videos@base": "videos", "videos": "videos", "mcp@before": "mcp", "hello": "hello"} {
		if got := functionOf(name); got != want {
			t.Errorf("functionOf(%q) = %q, want %q", name, got, want)
		}
	}
	s := &tableSetup{}
	if _, ok := s.tableTarget(target{name: "videos@base"}); !ok {
		t.Error("videos@base has no table request")
	}
}

// mainTable returns the lines of the first table the harness prints (the phases table follows it).
func mainTable(out string) []string {
	main, _, _ := strings.Cut(out, "\n\nphases")
	return strings.Split(strings.TrimSpace(main), "\n")
}

func TestPhasesAround(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }
	// Received at 0; calls 2-5 and 4-6 (overlapping), then 8-9; answered at 12.
	calls := []tableCall{{op: "GetItem", from: at(2), to: at(5)}, {op: "Query", from: at(8), to: at(9)}, {op: "GetItem", from: at(4), to: at(6)}}
	before, between, after := phasesAround(at(0), calls, at(12))
	if before != 2*time.Millisecond || between != 2*time.Millisecond || after != 3*time.Millisecond {
		t.Errorf("phases %v %v %v, want 2ms before the first call, 2ms between (6 to 8), 3ms after", before, between, after)
	}
	if b, w, a := phasesAround(time.Time{}, calls, at(12)); b != 0 || w != 0 || a != 0 {
		t.Errorf("unknown delivery time: %v %v %v, want zeros", b, w, a)
	}
	if b, w, a := phasesAround(at(0), nil, at(12)); b != 0 || w != 0 || a != 0 {
		t.Errorf("no calls: %v %v %v, want zeros", b, w, a)
	}
}
