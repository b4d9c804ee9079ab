package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/retry"
	"github.com/creatorstrategy/css/shared/testkit/sigv4test"
)

const (
	genModel   = "global.anthropic.claude-sonnet-4-6"
	gradeModel = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
	region     = "us-east-1"
	accessKey  = "AKIDTESTBEDROCK"
	secretKey  = "test-secret"
)

// reply is one answer of the fake Bedrock.
type reply struct {
	status int
	header map[string]string
	body   string
	hangup bool // close the connection without an answer (a transport error)
	block  bool // answer only when the request's context ends
}

func ok(body string) reply { return reply{status: 200, body: body} }

// apiError answers as Bedrock does: the code in X-Amzn-ErrorType (with the namespace suffix real
// responses carry) and a message in the body.
func apiError(code string, status int) reply {
	return reply{status: status, header: map[string]string{
		"X-Amzn-ErrorType": code + ":http://internal.amazon.com/coral/com.amazon.bedrock/",
	}, body: `{"message":"` + code + ` from the fake"}`}
}

func toolAnswer(name, input string) string {
	return `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"` + name +
		`","input":` + input + `}}]}},"stopReason":"tool_use","usage":{"inputTokens":812,"outputTokens":95,"totalTokens":907},"metrics":{"latencyMs":1200}}`
}

func textAnswer(text string) string {
	b, _ := json.Marshal(text)
	return `{"output":{"message":{"role":"assistant","content":[{"text":` + string(b) +
		`}]}},"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":20,"totalTokens":30},"metrics":{"latencyMs":5}}`
}

type received struct {
	path string
	body map[string]any
}

// fakeBedrock speaks Bedrock Runtime's Converse wire protocol (restJson1, SigV4) on loopback. It answers
// from a script; past its end it repeats the last reply.
type fakeBedrock struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	calls   []received
}

func (f *fakeBedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("read body: %v", err)
	}
	checkSigV4(f.t, r, raw)
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		f.t.Errorf("%s with Content-Type %q, want POST application/json", r.Method, r.Header.Get("Content-Type"))
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("body is not JSON: %v: %s", err, raw)
	}
	f.mu.Lock()
	f.calls = append(f.calls, received{path: r.URL.Path, body: body})
	rep := f.replies[min(len(f.calls), len(f.replies))-1]
	f.mu.Unlock()
	switch {
	case rep.hangup:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Fatalf("hijack: %v", err)
		}
		conn.Close()
		return
	case rep.block:
		<-r.Context().Done()
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

func (f *fakeBedrock) received() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.calls...)
}

// checkSigV4 checks that the SDK signed the request with the test credentials, for the bedrock service in
// region.
func checkSigV4(t *testing.T, r *http.Request, body []byte) {
	t.Helper()
	sc, err := sigv4test.Verify(r, body, aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey})
	if err != nil || sc.Service != "bedrock" || sc.Region != region {
		t.Errorf("signed for %+v, want bedrock in %s: %v", sc, region, err)
	}
}

// clock is the adapter's time: sleeping advances it and records the wait.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *clock) policy(attempts int) retry.Policy {
	return retry.Policy{
		MaxAttempts: attempts,
		Rand:        func() float64 { return 0.5 },
		Now: func() time.Time {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.now
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.waits = append(c.waits, d)
			c.now = c.now.Add(d)
			return ctx.Err()
		},
	}
}

func (c *clock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

type harness struct {
	fake  *fakeBedrock
	clock *clock
	model *Model
}

func newHarness(t *testing.T, opts Options, replies ...reply) *harness {
	t.Helper()
	fake := &fakeBedrock{t: t, replies: replies}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client := bedrockruntime.New(bedrockruntime.Options{
		Region:       region,
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		HTTPClient:   srv.Client(),
	})
	c := &clock{now: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
	if opts.GenerationModel == "" {
		opts.GenerationModel, opts.GradingModel = genModel, gradeModel
	}
	if opts.Retry.MaxAttempts == 0 {
		opts.Retry = c.policy(4)
	}
	m, err := New(client, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{fake: fake, clock: c, model: m}
}

// titlesSchema is what a tool's request carries; the adapter sends it without $schema.
const titlesSchema = `{"type":"object","description":"Titles for one video.","additionalProperties":false,` +
	`"required":["titles"],"properties":{"titles":{"type":"array","minItems":1,"maxItems":10,` +
	`"items":{"type":"object","required":["title"],"properties":{"title":{"type":"string","maxLength":100},` +
	`"note":{"type":["string","null"]},"kind":{"enum":["Long","Short"]}}}}}}`

func request(role ai.Role) ai.Request {
	return ai.Request{
		Role: role, Task: "titles", System: "You write YouTube titles.",
		Messages: []ai.Message{
			{Role: "user", Text: "Five titles about vegan meal prep."},
			{Role: "assistant", Text: `{"titles":[]}`},
			{Role: "user", Text: "titles: must have at least 1 item. Answer again."},
		},
		Schema:     json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema",` + titlesSchema[1:]),
		SchemaName: "titles", MaxTokens: 2048, Temperature: 0.7,
	}
}

// at walks a decoded JSON body.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

func TestRequestShape(t *testing.T) {
	for _, tc := range []struct {
		role  ai.Role
		model string
	}{{ai.Generation, genModel}, {ai.Grading, gradeModel}} {
		t.Run(string(tc.role), func(t *testing.T) {
			h := newHarness(t, Options{}, ok(toolAnswer("titles", `{"titles":[{"title":"A"}]}`)))
			if _, err := h.model.Generate(context.Background(), request(tc.role)); err != nil {
				t.Fatal(err)
			}
			calls := h.fake.received()
			if len(calls) != 1 {
				t.Fatalf("%d calls", len(calls))
			}
			c := calls[0]
			if c.path != "/model/"+tc.model+"/converse" {
				t.Errorf("path %q, want /model/%s/converse", c.path, tc.model)
			}
			if _, ok := c.body["modelId"]; ok {
				t.Error("modelId belongs in the path, not the body")
			}
			jsonEqual(t, c.body["system"], `[{"text":"You write YouTube titles."}]`)
			jsonEqual(t, c.body["messages"], `[
				{"role":"user","content":[{"text":"Five titles about vegan meal prep."}]},
				{"role":"assistant","content":[{"text":"{\"titles\":[]}"}]},
				{"role":"user","content":[{"text":"titles: must have at least 1 item. Answer again."}]}]`)
			jsonEqual(t, c.body["inferenceConfig"], `{"maxTokens":2048,"temperature":0.7}`)
			jsonEqual(t, c.body["toolConfig"], `{"tools":[{"toolSpec":{"name":"titles","description":"Titles for one video.",
				"inputSchema":{"json":`+titlesSchema+`}}}],"toolChoice":{"tool":{"name":"titles"}}}`)
			if _, ok := c.body["outputConfig"]; ok {
				t.Error("outputConfig sent in tool-use mode")
			}
		})
	}
}

func TestRequestShapeOptions(t *testing.T) {
	t.Run("strict tools", func(t *testing.T) {
		h := newHarness(t, Options{StrictTools: true}, ok(toolAnswer("titles", `{"titles":[]}`)))
		if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
			t.Fatal(err)
		}
		if s := at(h.fake.received()[0].body, "toolConfig", "tools", 0, "toolSpec", "strict"); s != true {
			t.Errorf("toolSpec.strict %v, want true", s)
		}
	})
	t.Run("native JSON output", func(t *testing.T) {
		h := newHarness(t, Options{Output: NativeJSON}, ok(textAnswer(`{"titles":[{"title":"A"}]}`)))
		r, err := h.model.Generate(context.Background(), request(ai.Generation))
		if err != nil {
			t.Fatal(err)
		}
		body := h.fake.received()[0].body
		if _, ok := body["toolConfig"]; ok {
			t.Error("toolConfig sent in native JSON mode")
		}
		if at(body, "outputConfig", "textFormat", "type") != "json_schema" ||
			at(body, "outputConfig", "textFormat", "structure", "jsonSchema", "name") != "titles" {
			t.Errorf("outputConfig %v", body["outputConfig"])
		}
		// The schema travels as a string holding the JSON.
		s, _ := at(body, "outputConfig", "textFormat", "structure", "jsonSchema", "schema").(string)
		var sent any
		if err := json.Unmarshal([]byte(s), &sent); err != nil {
			t.Fatalf("schema %q: %v", s, err)
		}
		jsonEqual(t, sent, titlesSchema)
		if string(r.JSON) != `{"titles":[{"title":"A"}]}` {
			t.Errorf("answer %s", r.JSON)
		}
	})
	t.Run("no max tokens, zero temperature", func(t *testing.T) {
		h := newHarness(t, Options{}, ok(toolAnswer("titles", `{}`)))
		req := request(ai.Generation)
		req.MaxTokens, req.Temperature, req.System = 0, 0, ""
		if _, err := h.model.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		body := h.fake.received()[0].body
		jsonEqual(t, body["inferenceConfig"], `{"temperature":0}`)
		if _, ok := body["system"]; ok {
			t.Error("empty system prompt sent")
		}
		// The schema has no description: the tool gets a generic one.
		if d := at(body, "toolConfig", "tools", 0, "toolSpec", "description"); d == "" || d == nil {
			t.Error("tool without a description")
		}
	})
}

func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reply     reply
		want      string // the JSON returned; "" when the call fails
		in, out   int
		wantCalls int
	}{
		{name: "tool use", reply: ok(toolAnswer("titles", `{"titles":[{"title":"Meal prep in 20 minutes","kind":"Long"}]}`)),
			want: `{"titles":[{"kind":"Long","title":"Meal prep in 20 minutes"}]}`, in: 812, out: 95},
		// Malformed output is the pipeline's to judge and repair: it comes back as the model wrote it.
		{name: "malformed tool output as is", reply: ok(toolAnswer("titles", `{"titels":"oops","extra":[1,2]}`)),
			want: `{"extra":[1,2],"titels":"oops"}`, in: 812, out: 95},
		{name: "tool under another name", reply: ok(toolAnswer("answer", `{"titles":[]}`)), want: `{"titles":[]}`, in: 812, out: 95},
		{name: "tool input quoted as a string", reply: ok(toolAnswer("titles", `"{\"titles\":[]}"`)), want: `{"titles":[]}`, in: 812, out: 95},
		{name: "tool input a plain string", reply: ok(toolAnswer("titles", `"no"`)), want: `"no"`, in: 812, out: 95},
		{name: "text with fenced JSON", reply: ok(textAnswer("```json\n{\"titles\":[{\"title\":\"A\"}]}\n```")),
			want: `{"titles":[{"title":"A"}]}`, in: 10, out: 20},
		{name: "text without JSON", reply: ok(textAnswer("I can't help with that.")), wantCalls: 1},
		{name: "JSON inside prose is not picked out", reply: ok(textAnswer("Here:\n```json\n{\"titles\":[{\"title\":\"A\"}]}\n```")), wantCalls: 1},
		{name: "no usage", reply: ok(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t","name":"titles","input":{"a":1}}}]}},"stopReason":"tool_use"}`),
			want: `{"a":1}`},
		{name: "cut at max tokens", reply: ok(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t","name":"titles","input":{"titles":[]}}}]}},"stopReason":"max_tokens","usage":{"inputTokens":5,"outputTokens":2048,"totalTokens":2053}}`),
			want: `{"titles":[]}`, in: 5, out: 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, tc.reply)
			r, err := h.model.Generate(context.Background(), request(ai.Generation))
			if tc.want == "" {
				if !errors.Is(err, ai.ErrFailed) {
					t.Fatalf("err %v, want ai.ErrFailed", err)
				}
				if n := len(h.fake.received()); n != tc.wantCalls {
					t.Errorf("%d calls, want %d (an answer is not retried)", n, tc.wantCalls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(r.JSON) != tc.want || r.InputTokens != tc.in || r.OutputTokens != tc.out || r.Model != genModel {
				t.Errorf("got %s in=%d out=%d model=%s; want %s in=%d out=%d model=%s", r.JSON, r.InputTokens, r.OutputTokens, r.Model,
					tc.want, tc.in, tc.out, genModel)
			}
		})
	}
}

// Every row of errorTable, answered by the fake with its status: retried or not, and the kind it ends as.
func TestErrorTable(t *testing.T) {
	if len(errorTable) < 11 {
		t.Fatalf("errorTable has %d rows; Converse alone declares 11 errors", len(errorTable))
	}
	for code, c := range errorTable {
		t.Run(code, func(t *testing.T) {
			h := newHarness(t, Options{}, apiError(code, c.Status))
			_, err := h.model.Generate(context.Background(), request(ai.Generation))
			var aerr *ai.Error
			if !errors.As(err, &aerr) || !errors.Is(err, c.Kind) {
				t.Fatalf("err %v, want kind %v", err, c.Kind)
			}
			if !strings.Contains(err.Error(), code) {
				t.Errorf("error %q does not name %s", err, code)
			}
			wantCalls := 1
			if c.Retry {
				wantCalls = 4
			}
			if n := len(h.fake.received()); n != wantCalls {
				t.Errorf("%d calls, want %d", n, wantCalls)
			}
			if n := len(h.clock.slept()); n != wantCalls-1 {
				t.Errorf("%d waits, want %d", n, wantCalls-1)
			}
			if c.Kind == ai.ErrThrottled && aerr.RetryAfter <= 0 {
				t.Errorf("throttled without a RetryAfter hint")
			}
		})
	}
}

// Codes the table does not know are judged by their HTTP status.
func TestUnknownErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   error
		calls  int
	}{
		{http.StatusTooManyRequests, ai.ErrThrottled, 4},
		{http.StatusBadGateway, ai.ErrFailed, 4},
		{http.StatusTeapot, ai.ErrFailed, 1},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			h := newHarness(t, Options{}, apiError("SomethingNewException", tc.status))
			_, err := h.model.Generate(context.Background(), request(ai.Generation))
			if !errors.Is(err, tc.kind) || len(h.fake.received()) != tc.calls {
				t.Fatalf("err %v after %d calls; want %v after %d", err, len(h.fake.received()), tc.kind, tc.calls)
			}
		})
	}
}

func TestThrottledThenSuccess(t *testing.T) {
	throttled := apiError("ThrottlingException", 429)
	h := newHarness(t, Options{}, throttled, throttled, ok(toolAnswer("titles", `{"titles":[{"title":"A"}]}`)))
	r, err := h.model.Generate(context.Background(), request(ai.Generation))
	if err != nil {
		t.Fatal(err)
	}
	if string(r.JSON) != `{"titles":[{"title":"A"}]}` || len(h.fake.received()) != 3 {
		t.Fatalf("answer %s after %d calls", r.JSON, len(h.fake.received()))
	}
	// The backoff: full jitter (rand 0.5 here) below 500 ms, then below 1 s.
	if w := h.clock.slept(); !reflect.DeepEqual(w, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}) {
		t.Errorf("waits %v", w)
	}
}

func TestTooManyThrottles(t *testing.T) {
	h := newHarness(t, Options{}, apiError("ThrottlingException", 429))
	_, err := h.model.Generate(context.Background(), request(ai.Generation))
	var aerr *ai.Error
	if !errors.As(err, &aerr) || aerr.Kind != ai.ErrThrottled || !errors.Is(err, ai.ErrThrottled) {
		t.Fatalf("err %v, want ai.ErrThrottled", err)
	}
	if len(h.fake.received()) != 4 || aerr.RetryAfter != 2*time.Second {
		t.Errorf("%d calls, RetryAfter %v; want 4 and the next backoff, 2s", len(h.fake.received()), aerr.RetryAfter)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	throttled := apiError("ThrottlingException", 429)
	throttled.header["Retry-After"] = "7"
	h := newHarness(t, Options{}, throttled, ok(toolAnswer("titles", `{}`)))
	if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
		t.Fatal(err)
	}
	if w := h.clock.slept(); !reflect.DeepEqual(w, []time.Duration{7 * time.Second}) {
		t.Errorf("waits %v, want the server's 7s", w)
	}
}

func TestTransportErrors(t *testing.T) {
	t.Run("hang-up then success", func(t *testing.T) {
		h := newHarness(t, Options{}, reply{hangup: true}, ok(toolAnswer("titles", `{"titles":[]}`)))
		if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
			t.Fatal(err)
		}
		if n := len(h.fake.received()); n != 2 {
			t.Errorf("%d calls, want 2", n)
		}
	})
	t.Run("always hangs up", func(t *testing.T) {
		h := newHarness(t, Options{}, reply{hangup: true})
		_, err := h.model.Generate(context.Background(), request(ai.Generation))
		if !errors.Is(err, ai.ErrFailed) || len(h.fake.received()) != 4 {
			t.Fatalf("err %v after %d calls; want ai.ErrFailed after 4", err, len(h.fake.received()))
		}
	})
	t.Run("cut-off body", func(t *testing.T) {
		h := newHarness(t, Options{}, ok(`{"output":{"message":`), ok(toolAnswer("titles", `{}`)))
		if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestContextCancellation(t *testing.T) {
	t.Run("during the call", func(t *testing.T) {
		h := newHarness(t, Options{}, reply{block: true})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for len(h.fake.received()) == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := h.model.Generate(ctx, request(ai.Generation))
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ai.ErrFailed) {
			t.Fatalf("err %v, want ai.ErrFailed wrapping context.Canceled", err)
		}
		if n := len(h.fake.received()); n != 1 {
			t.Errorf("%d calls after cancellation, want 1", n)
		}
	})
	t.Run("during the backoff", func(t *testing.T) {
		h := newHarness(t, Options{}, apiError("ThrottlingException", 429))
		ctx, cancel := context.WithCancel(context.Background())
		h.model.opts.Retry.Sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
		_, err := h.model.Generate(ctx, request(ai.Generation))
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ai.ErrFailed) || len(h.fake.received()) != 1 {
			t.Fatalf("err %v after %d calls", err, len(h.fake.received()))
		}
	})
}

// Requests the adapter cannot send fail without a call.
func TestBadRequests(t *testing.T) {
	for name, mutate := range map[string]func(*ai.Request){
		"unknown role":       func(r *ai.Request) { r.Role = "critic" },
		"empty schema name":  func(r *ai.Request) { r.SchemaName = "" },
		"schema name spaces": func(r *ai.Request) { r.SchemaName = "two words" },
		"schema name long":   func(r *ai.Request) { r.SchemaName = strings.Repeat("a", 65) },
		"schema not JSON":    func(r *ai.Request) { r.Schema = json.RawMessage(`{`) },
		"schema not object":  func(r *ai.Request) { r.Schema = json.RawMessage(`[]`) },
		"no messages":        func(r *ai.Request) { r.Messages = nil },
		"bad message role":   func(r *ai.Request) { r.Messages[0].Role = "system" },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{}, ok(toolAnswer("titles", `{}`)))
			req := request(ai.Generation)
			mutate(&req)
			if _, err := h.model.Generate(context.Background(), req); !errors.Is(err, ai.ErrFailed) {
				t.Fatalf("err %v, want ai.ErrFailed", err)
			}
			if n := len(h.fake.received()); n != 0 {
				t.Errorf("%d calls", n)
			}
		})
	}
}

func TestNew(t *testing.T) {
	client := bedrockruntime.New(bedrockruntime.Options{Region: region})
	for name, opts := range map[string]Options{
		"no generation model": {GradingModel: gradeModel},
		"no grading model":    {GenerationModel: genModel},
		"unknown output":      {GenerationModel: genModel, GradingModel: gradeModel, Output: 7},
	} {
		if _, err := New(client, opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(nil, Options{GenerationModel: genModel, GradingModel: gradeModel}); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := NewClient("", ""); err == nil {
		t.Error("NewClient without a region")
	}
	if c, err := NewClient(region, ""); err != nil || c.Options().Region != region || c.Options().BaseEndpoint != nil {
		t.Errorf("NewClient: %v", err)
	}
	if c, err := NewClient(region, "http://127.0.0.1:9"); err != nil || *c.Options().BaseEndpoint != "http://127.0.0.1:9" {
		t.Errorf("NewClient with an endpoint: %v", err)
	}
}

func TestRetryAfterHeaderBounds(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"7": 7 * time.Second, "3600": time.Hour, "99999": time.Hour,
		// no usable hint: the next backoff, 250 ms at rand 0.5
		"0": 250 * time.Millisecond, "-3": 250 * time.Millisecond, "soon": 250 * time.Millisecond, "": 250 * time.Millisecond,
	} {
		throttled := apiError("ThrottlingException", 429)
		throttled.header["Retry-After"] = v
		h := newHarness(t, Options{Retry: retry.Policy{MaxAttempts: 1, Rand: func() float64 { return 0.5 }}}, throttled)
		_, err := h.model.Generate(context.Background(), request(ai.Generation))
		var aerr *ai.Error
		if !errors.As(err, &aerr) || aerr.RetryAfter != want {
			t.Errorf("Retry-After %q: %v (%+v), want RetryAfter %v", v, err, aerr, want)
		}
	}
}

// A call that outlives CallTimeout is given up and retried, then the request fails.
func TestCallTimeout(t *testing.T) {
	h := newHarness(t, Options{CallTimeout: 20 * time.Millisecond}, reply{block: true})
	_, err := h.model.Generate(context.Background(), request(ai.Generation))
	if !errors.Is(err, ai.ErrFailed) || !strings.Contains(err.Error(), "no answer within 20ms") || len(h.fake.received()) != 4 {
		t.Fatalf("err %v after %d calls", err, len(h.fake.received()))
	}
}
