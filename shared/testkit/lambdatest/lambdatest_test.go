package lambdatest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/creatorstrategy/css/shared/testkit/lambdatest"
)

// The test binary doubles as the function under test: run with LAMBDATEST_FUNCTION set, it serves the
// Runtime API through aws-lambda-go, as the real functions do.
func TestMain(m *testing.M) {
	n := 0
	switch os.Getenv("LAMBDATEST_FUNCTION") {
	case "":
		os.Exit(m.Run())
	case "count":
		// Answers each event with how many it has handled: one process, many invocations.
		lambda.Start(func(_ context.Context, ev json.RawMessage) (map[string]any, error) {
			n++
			return map[string]any{"n": n, "event": ev, "fn": os.Getenv("AWS_LAMBDA_FUNCTION_NAME")}, nil
		})
	case "fail-odd":
		lambda.Start(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			if n++; n%2 == 1 {
				return nil, errors.New("refused")
			}
			return json.RawMessage(`"ok"`), nil
		})
	case "exit":
		// What wire.Start does when the handler cannot be built: log why, exit 1.
		fmt.Println(`{"level":"ERROR","msg":"start","error":"CSS_TABLE_NAME missing"}`)
		os.Exit(1)
	}
}

func start(t *testing.T, fn string) *lambdatest.Process {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := lambdatest.Start("css-test-"+fn, self, lambdatest.Options{Env: []string{"LAMBDATEST_FUNCTION=" + fn}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// One process answers several invocations in sequence, each with its own event.
func TestInvokeDeliversEventsInSequence(t *testing.T) {
	p := start(t, "count")
	for i := 1; i <= 3; i++ {
		out, err := p.Invoke(context.Background(), []byte(fmt.Sprintf(`{"i":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			N     int
			Event struct{ I int }
			Fn    string
		}
		if err := json.Unmarshal(out, &got); err != nil || got.N != i || got.Event.I != i || got.Fn != "css-test-count" {
			t.Fatalf("invocation %d: %s (%v)", i, out, err)
		}
	}
}

// A function error is a *FunctionError carrying what the function posted; the process serves the next.
func TestInvokeReportsFunctionErrors(t *testing.T) {
	p := start(t, "fail-odd")
	_, err := p.Invoke(context.Background(), []byte(`{}`))
	var fe *lambdatest.FunctionError
	if !errors.As(err, &fe) || fe.Kind != lambdatest.KindError || !strings.Contains(string(fe.Body), "refused") {
		t.Fatalf("first: %v", err)
	}
	if out, err := p.Invoke(context.Background(), []byte(`{}`)); err != nil || string(out) != `"ok"` {
		t.Fatalf("second: %s %v", out, err)
	}
}

// A process that exits during init fails the invocation with its output.
func TestInvokeReportsAnExitedProcess(t *testing.T) {
	p := start(t, "exit")
	_, err := p.Invoke(context.Background(), []byte(`{}`))
	if !errors.Is(err, lambdatest.ErrExited) || !strings.Contains(err.Error(), "CSS_TABLE_NAME missing") {
		t.Fatalf("got %v", err)
	}
	p.Close()
	if _, err := p.Invoke(context.Background(), []byte(`{}`)); err == nil {
		t.Error("invoked after Close")
	}
}

func TestRuntimeAPI(t *testing.T) {
	api := lambdatest.NewRuntimeAPI()
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	base := srv.URL + "/2018-06-01/runtime/"

	post := func(path, body string) int {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	next := func() (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Get(base + "invocation/next")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, body
	}

	if code := post("invocation/req-0/response", "{}"); code != http.StatusNotFound {
		t.Errorf("response with nothing armed: %d, want 404", code)
	}
	inv := lambdatest.NewInvocation("req-1", []byte(`{"a":1}`), "arn:aws:lambda:us-east-1:1:function:f", time.Minute)
	api.Arm(inv)
	resp, body := next()
	if resp.StatusCode != http.StatusOK || string(body) != `{"a":1}` {
		t.Fatalf("next: %d %s", resp.StatusCode, body)
	}
	for _, h := range []string{"Lambda-Runtime-Aws-Request-Id", "Lambda-Runtime-Deadline-Ms",
		"Lambda-Runtime-Invoked-Function-Arn", "Lambda-Runtime-Trace-Id"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("next: header %s missing", h)
		}
	}
	if got := resp.Header.Get("Lambda-Runtime-Aws-Request-Id"); got != "req-1" {
		t.Errorf("request id %q", got)
	}
	if code := post("invocation/req-0/response", "{}"); code != http.StatusNotFound {
		t.Errorf("response for another invocation: %d, want 404", code)
	}
	if code := post("invocation/req-1/response", `{"ok":true}`); code != http.StatusAccepted {
		t.Errorf("response: %d, want 202", code)
	}
	// A second answer is accepted (the runtime may retry) but the first one stands.
	if code := post("invocation/req-1/error", `{}`); code != http.StatusAccepted {
		t.Errorf("second answer: %d, want 202", code)
	}
	o := <-inv.Done()
	if o.Kind != lambdatest.KindResponse || !bytes.Equal(o.Body, []byte(`{"ok":true}`)) || o.DeliveredAt.IsZero() {
		t.Errorf("outcome %q %s at %v", o.Kind, o.Body, o.DeliveredAt)
	}

	// The next call waits while nothing is armed, and gets the next invocation once it is.
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "invocation/next")
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		got <- resp.Header.Get("Lambda-Runtime-Aws-Request-Id")
	}()
	select {
	case id := <-got:
		t.Fatalf("next answered %q with nothing armed", id)
	case <-time.After(50 * time.Millisecond):
	}
	api.Arm(lambdatest.NewInvocation("req-2", []byte(`{}`), "arn", time.Minute))
	if id := <-got; id != "req-2" {
		t.Errorf("the waiting next got %q, want req-2", id)
	}

	// An init error is the outcome of the armed invocation, and of the next one armed.
	initInv := lambdatest.NewInvocation("req-3", []byte(`{}`), "arn", time.Minute)
	api.Arm(initInv)
	if code := post("init/error", `{"errorType":"Runtime.ExitError"}`); code != http.StatusAccepted {
		t.Errorf("init error: %d, want 202", code)
	}
	if o := <-initInv.Done(); o.Kind != lambdatest.KindInitError {
		t.Errorf("outcome %q, want init error", o.Kind)
	}
	later := lambdatest.NewInvocation("req-4", []byte(`{}`), "arn", time.Minute)
	api.Arm(later)
	if o := <-later.Done(); o.Kind != lambdatest.KindInitError || !strings.Contains(string(o.Body), "Runtime.ExitError") {
		t.Errorf("outcome after an init error %q %s", o.Kind, o.Body)
	}
}

// Build makes binaries as `make build` does, which run here through the Runtime API: the cold-start
// baseline (a plain aws-lambda-go function built with lambda.norpc) answers two invocations in a row.
func TestBuildAndInvokeAFunction(t *testing.T) {
	bins, err := lambdatest.Build(context.Background(), "../../..", t.TempDir(), "./infra/bench/coldstart/hello")
	if err != nil {
		t.Fatal(err)
	}
	p, err := lambdatest.Start("css-test-hello", bins["hello"], lambdatest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range 2 {
		out, err := p.Invoke(context.Background(), []byte(`{"version":"2.0","rawPath":"/"}`))
		var resp struct {
			StatusCode int
			Body       string
		}
		if err != nil || json.Unmarshal(out, &resp) != nil || resp.StatusCode != 200 || resp.Body != `{"hello":"world"}` {
			t.Fatalf("invocation %d: %s %v", i, out, err)
		}
	}
	if _, err := lambdatest.Build(context.Background(), "../../..", t.TempDir(), "./shared/testkit/lambdatest/no-such-main"); err == nil {
		t.Error("built a package that does not exist")
	}
}
