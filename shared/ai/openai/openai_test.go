package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/retry"
)

const (
	genModel   = "qwen3:32b"
	gradeModel = "qwen3:8b"
)

type reply struct {
	status int
	header map[string]string
	body   string
	hangup bool
	block  bool
}

func completion(model, content, finish string) reply {
	c, _ := json.Marshal(content)
	return reply{status: 200, body: `{"id":"chatcmpl-1","object":"chat.completion","created":1763600000,"model":"` + model +
		`","choices":[{"index":0,"message":{"role":"assistant","content":` + string(c) + `,"refusal":null},"finish_reason":"` + finish +
		`","logprobs":null}],"usage":{"prompt_tokens":321,"completion_tokens":54,"total_tokens":375}}`}
}

func apiError(status int, code, message string) reply {
	return reply{status: status, body: `{"error":{"message":"` + message + `","type":"invalid_request_error","param":null,"code":"` + code + `"}}`}
}

type received struct {
	path, authz string
	body        map[string]any
}

// fakeServer speaks the chat completions wire protocol on loopback. respond picks the reply to the n-th
// call (from 0) given its body; by default it follows replies, repeating the last.
type fakeServer struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	respond func(n int, body map[string]any) reply
	calls   []received
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil && r.Method == http.MethodPost {
		f.t.Errorf("body is not JSON: %v", err)
	}
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, received{path: r.URL.Path, authz: r.Header.Get("Authorization"), body: body})
	var rep reply
	if f.respond != nil {
		rep = f.respond(n, body)
	} else {
		rep = f.replies[min(n, len(f.replies)-1)]
	}
	f.mu.Unlock()
	switch {
	case rep.hangup:
		conn, _, _ := w.(http.Hijacker).Hijack()
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

func (f *fakeServer) received() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.calls...)
}

type clock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *clock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

type harness struct {
	fake  *fakeServer
	clock *clock
	model *Model
}

func newHarness(t *testing.T, opts Options, replies ...reply) *harness {
	t.Helper()
	fake := &fakeServer{t: t, replies: replies}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c := &clock{now: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
	opts.BaseURL = srv.URL + "/v1"
	if opts.GenerationModel == "" {
		opts.GenerationModel, opts.GradingModel = genModel, gradeModel
	}
	opts.HTTPClient = srv.Client()
	opts.Retry = retry.Policy{
		MaxAttempts: 4,
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
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{fake: fake, clock: c, model: m}
}

const titlesSchema = `{"type":"object","additionalProperties":false,"required":["titles"],"properties":{
	"titles":{"type":"array","minItems":1,"maxItems":10,"items":{"type":"object","required":["title"],"properties":{
		"title":{"type":"string","maxLength":100},"note":{"type":"string"},"kind":{"enum":["Long","Short"]},
		"alt":{"type":["string","null"]}}}}}}`

const titlesStrict = `{"type":"object","additionalProperties":false,"required":["titles"],"properties":{
	"titles":{"type":"array","minItems":1,"maxItems":10,"items":{"type":"object","additionalProperties":false,
		"required":["alt","kind","note","title"],"properties":{
		"title":{"type":"string","description":"(at most 100 characters)"},"note":{"type":["string","null"]},
		"kind":{"enum":["Long","Short",null]},"alt":{"type":["string","null"]}}}}}}`

func request(role ai.Role) ai.Request {
	return ai.Request{
		Role: role, Task: "titles", System: "You write YouTube titles.",
		Messages: []ai.Message{
			{Role: "user", Text: "Titles about vegan meal prep."},
			{Role: "assistant", Text: `{"titles":[]}`},
			{Role: "user", Text: "titles: must have at least 1 item. Answer again."},
		},
		Schema: json.RawMessage(titlesSchema), SchemaName: "titles", MaxTokens: 1024, Temperature: 0.4,
	}
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
			h := newHarness(t, Options{APIKey: "sk-local-test"}, completion(tc.model, `{"titles":[{"title":"A"}]}`, "stop"))
			if _, err := h.model.Generate(context.Background(), request(tc.role)); err != nil {
				t.Fatal(err)
			}
			c := h.fake.received()[0]
			if c.path != "/v1/chat/completions" || c.authz != "Bearer sk-local-test" {
				t.Errorf("path %q, Authorization %q", c.path, c.authz)
			}
			jsonEqual(t, c.body, `{"model":"`+tc.model+`","temperature":0.4,"max_tokens":1024,
				"messages":[
					{"role":"system","content":"You write YouTube titles.\n\nAnswer with one JSON object, and nothing else, that matches the response format's schema exactly."},
					{"role":"user","content":"Titles about vegan meal prep."},
					{"role":"assistant","content":"{\"titles\":[]}"},
					{"role":"user","content":"titles: must have at least 1 item. Answer again."}],
				"response_format":{"type":"json_schema","json_schema":{"name":"titles","strict":true,"schema":`+titlesStrict+`}}}`)
		})
	}
}

func TestRequestShapeVariants(t *testing.T) {
	t.Run("no key, whatever the environment says", func(t *testing.T) {
		t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
		t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/elsewhere")
		h := newHarness(t, Options{}, completion(genModel, `{"titles":[]}`, "stop"))
		if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
			t.Fatal(err)
		}
		if c := h.fake.received(); len(c) != 1 || c[0].authz != "" {
			t.Fatalf("calls %+v: want one, without Authorization", c)
		}
	})
	t.Run("not strict when the schema cannot be", func(t *testing.T) {
		h := newHarness(t, Options{}, completion(genModel, `{"m":{"a":"b"}}`, "stop"))
		req := request(ai.Generation)
		req.Schema = json.RawMessage(`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`)
		r, err := h.model.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, h.fake.received()[0].body["response_format"], `{"type":"json_schema","json_schema":{"name":"titles","strict":false,"schema":`+string(req.Schema)+`}}`)
		if string(r.JSON) != `{"m":{"a":"b"}}` {
			t.Errorf("answer %s", r.JSON)
		}
	})
	t.Run("OpenAI's own API: max_completion_tokens", func(t *testing.T) {
		m, err := New(Options{BaseURL: "https://api.openai.com/v1", GenerationModel: "gpt-5", GradingModel: "gpt-5-mini"})
		if err != nil || !m.maxCompletionTokens {
			t.Fatalf("%v, %v", m, err)
		}
		h := newHarness(t, Options{}, completion(genModel, `{"titles":[]}`, "stop"))
		h.model.maxCompletionTokens = true
		if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
			t.Fatal(err)
		}
		b := h.fake.received()[0].body
		if b["max_completion_tokens"] != 1024.0 || b["max_tokens"] != nil {
			t.Errorf("max_completion_tokens %v, max_tokens %v", b["max_completion_tokens"], b["max_tokens"])
		}
	})
	t.Run("no max tokens, no system", func(t *testing.T) {
		h := newHarness(t, Options{}, completion(genModel, `{"titles":[]}`, "stop"))
		req := request(ai.Generation)
		req.MaxTokens, req.System = 0, ""
		if _, err := h.model.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		b := h.fake.received()[0].body
		if _, has := b["max_tokens"]; has {
			t.Error("max_tokens sent")
		}
		// The system message is the form's instruction only.
		if msgs := b["messages"].([]any); len(msgs) != 4 || msgs[0].(map[string]any)["content"] != "Answer with one JSON object, and nothing else, that matches the response format's schema exactly." {
			t.Errorf("messages %v", msgs)
		}
	})
}

func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply reply
		want  string // "" when the call fails
		model string
	}{
		{name: "answer", reply: completion("qwen3:32b-q4_K_M", `{"titles":[{"title":"A","kind":"Long"}]}`, "stop"),
			want: `{"titles":[{"kind":"Long","title":"A"}]}`, model: "qwen3:32b-q4_K_M"}, // re-encoded: keys sorted
		{name: "introduced nulls removed, the schema's own null kept",
			reply: completion(genModel, `{"titles":[{"title":"A","note":null,"kind":null,"alt":null}]}`, "stop"),
			want:  `{"titles":[{"alt":null,"title":"A"}]}`, model: genModel},
		{name: "malformed answer as is", reply: completion(genModel, `{"titels":"oops"}`, "stop"), want: `{"titels":"oops"}`, model: genModel},
		{name: "fenced", reply: completion(genModel, "```json\n{\"titles\":[]}\n```", "stop"), want: `{"titles":[]}`, model: genModel},
		{name: "cut at max tokens, still JSON", reply: completion(genModel, `{"titles":[]}`, "length"), want: `{"titles":[]}`, model: genModel},
		{name: "cut at max tokens mid-value", reply: completion(genModel, `{"titles":[{"title":"A`, "length")},
		{name: "prose", reply: completion(genModel, "Sorry, I can't.", "stop")},
		{name: "refusal", reply: reply{status: 200, body: `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`}},
		{name: "no choices", reply: reply{status: 200, body: `{"id":"x","object":"chat.completion","model":"m","choices":[]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, tc.reply)
			r, err := h.model.Generate(context.Background(), request(ai.Generation))
			if tc.want == "" {
				if !errors.Is(err, ai.ErrFailed) || len(h.fake.received()) != 1 {
					t.Fatalf("err %v after %d calls, want ai.ErrFailed after 1", err, len(h.fake.received()))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(r.JSON) != tc.want || r.Model != tc.model || r.InputTokens != 321 || r.OutputTokens != 54 {
				t.Errorf("got %s model %s in %d out %d", r.JSON, r.Model, r.InputTokens, r.OutputTokens)
			}
		})
	}
}

// Every status row: retried or not, and the kind it ends as.
func TestErrorStatuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply reply
		kind  error
		calls int
	}{
		{"429 rate limit", apiError(429, "rate_limit_exceeded", "Rate limit reached"), ai.ErrThrottled, 4},
		{"429 insufficient quota", apiError(429, "insufficient_quota", "You exceeded your current quota"), ai.ErrFailed, 1},
		{"408", apiError(408, "timeout", "Request timed out"), ai.ErrFailed, 4},
		{"409", apiError(409, "conflict", "Conflict"), ai.ErrFailed, 4},
		{"500", apiError(500, "server_error", "The server had an error"), ai.ErrFailed, 4},
		{"502 plain text", reply{status: 502, body: "Bad Gateway"}, ai.ErrFailed, 4},
		{"503", apiError(503, "overloaded", "Overloaded"), ai.ErrFailed, 4},
		{"400", apiError(400, "context_length_exceeded", "This model's maximum context length is 8192 tokens"), ai.ErrFailed, 1},
		{"401", apiError(401, "invalid_api_key", "Incorrect API key provided"), ai.ErrFailed, 1},
		{"403", apiError(403, "", "Forbidden"), ai.ErrFailed, 1},
		{"404 model", apiError(404, "model_not_found", "model \\\"qwen3:32b\\\" not found, try pulling it first"), ai.ErrFailed, 1},
		{"422", apiError(422, "", "Unprocessable"), ai.ErrFailed, 1},
		// vLLM's error body has no "error" object.
		{"400 vLLM shape", reply{status: 400, body: `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`}, ai.ErrFailed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, tc.reply)
			_, err := h.model.Generate(context.Background(), request(ai.Generation))
			var aerr *ai.Error
			if !errors.As(err, &aerr) || !errors.Is(err, tc.kind) {
				t.Fatalf("err %v, want %v", err, tc.kind)
			}
			if n := len(h.fake.received()); n != tc.calls {
				t.Errorf("%d calls, want %d", n, tc.calls)
			}
			if n := len(h.clock.slept()); n != tc.calls-1 {
				t.Errorf("%d waits, want %d", n, tc.calls-1)
			}
			if tc.kind == ai.ErrThrottled && aerr.RetryAfter <= 0 {
				t.Error("throttled without RetryAfter")
			}
		})
	}
	t.Run("the server's message is in the error", func(t *testing.T) {
		h := newHarness(t, Options{}, reply{status: 400, body: `{"object":"error","message":"max_tokens is too large","code":400}`})
		_, err := h.model.Generate(context.Background(), request(ai.Generation))
		if err == nil || !strings.Contains(err.Error(), "HTTP 400: max_tokens is too large") {
			t.Errorf("err %v", err)
		}
	})
}

func TestThrottledThenSuccess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string]string
		waits  []time.Duration
	}{
		{"backoff", nil, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}},
		{"Retry-After seconds", map[string]string{"Retry-After": "3"}, []time.Duration{3 * time.Second, 3 * time.Second}},
		{"Retry-After-Ms", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}},
		{"Retry-After below backoff", map[string]string{"Retry-After": "0.1"}, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			throttled := apiError(429, "rate_limit_exceeded", "slow down")
			throttled.header = tc.header
			h := newHarness(t, Options{}, throttled, throttled, completion(genModel, `{"titles":[]}`, "stop"))
			r, err := h.model.Generate(context.Background(), request(ai.Generation))
			if err != nil || string(r.JSON) != `{"titles":[]}` {
				t.Fatalf("%s, %v", r.JSON, err)
			}
			if w := h.clock.slept(); !reflect.DeepEqual(w, tc.waits) {
				t.Errorf("waits %v, want %v", w, tc.waits)
			}
		})
	}
}

func TestTooManyThrottles(t *testing.T) {
	h := newHarness(t, Options{}, apiError(429, "rate_limit_exceeded", "slow down"))
	_, err := h.model.Generate(context.Background(), request(ai.Generation))
	var aerr *ai.Error
	if !errors.As(err, &aerr) || aerr.Kind != ai.ErrThrottled || aerr.RetryAfter != 2*time.Second || len(h.fake.received()) != 4 {
		t.Fatalf("err %v (%+v) after %d calls", err, aerr, len(h.fake.received()))
	}
}

// schemaIn says whether the system message carries the schema as given.
func schemaIn(body map[string]any) bool {
	system := body["messages"].([]any)[0].(map[string]any)
	return system["role"] == "system" && strings.HasPrefix(system["content"].(string), "You write YouTube titles.") &&
		strings.Contains(system["content"].(string), `"required":["title"]`)
}

// Every configured mode: the request's form, the instruction that matches it, and the answer read from
// where that form puts it.
func TestModes(t *testing.T) {
	toolCall := reply{status: 200, body: `{"id":"x","object":"chat.completion","model":"` + genModel + `","choices":[{"index":0,"message":{"role":"assistant","content":null,
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"titles","arguments":"{\"titles\":[{\"title\":\"A\"}]}"}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":321,"completion_tokens":54,"total_tokens":375}}`}
	plain := completion(genModel, `{"titles":[{"title":"A"}]}`, "stop")
	for _, tc := range []struct {
		mode   Mode
		reply  reply
		format string // response_format's JSON, "" when none is sent
		schema bool   // the system message carries the schema
		tools  bool
	}{
		{JSONSchema, plain, `{"type":"json_schema","json_schema":{"name":"titles","strict":true,"schema":` + titlesStrict + `}}`, false, false},
		// Without the length bounds a grammar cannot afford (they stay in the prompt's schema).
		{JSONObjectSchema, plain, `{"type":"json_object","schema":{"type":"object","additionalProperties":false,"required":["titles"],"properties":{
	"titles":{"type":"array","minItems":1,"items":{"type":"object","required":["title"],"properties":{
		"title":{"type":"string"},"note":{"type":"string"},"kind":{"enum":["Long","Short"]},
		"alt":{"type":["string","null"]}}}}}}}`, true, false},
		{JSONObject, plain, `{"type":"json_object"}`, true, false},
		{Tools, toolCall, "", false, true},
		{Prompt, plain, "", true, false},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			h := newHarness(t, Options{Mode: tc.mode}, tc.reply)
			r, err := h.model.Generate(context.Background(), request(ai.Generation))
			if err != nil {
				t.Fatal(err)
			}
			if string(r.JSON) != `{"titles":[{"title":"A"}]}` || r.InputTokens != 321 {
				t.Errorf("answer %s, %d tokens in", r.JSON, r.InputTokens)
			}
			body := h.fake.received()[0].body
			if tc.format == "" {
				if _, has := body["response_format"]; has {
					t.Errorf("response_format sent: %v", body["response_format"])
				}
			} else {
				jsonEqual(t, body["response_format"], tc.format)
			}
			if got := schemaIn(body); got != tc.schema {
				t.Errorf("schema in the system message: %v, want %v", got, tc.schema)
			}
			system := body["messages"].([]any)[0].(map[string]any)["content"].(string)
			if mentions := strings.Contains(system, "calling the function"); mentions != tc.tools {
				t.Errorf("system message mentions a tool: %v, want %v: %q", mentions, tc.tools, system)
			}
			if tc.tools {
				jsonEqual(t, body["tools"], `[{"type":"function","function":{"name":"titles","description":"Record the answer.","parameters":`+titlesSchema+`}}]`)
				jsonEqual(t, body["tool_choice"], `{"type":"function","function":{"name":"titles"}}`)
			} else if _, has := body["tools"]; has {
				t.Error("tools sent")
			}
		})
	}
}

// formOf names the structured output form of a request body.
func formOf(body map[string]any) Mode {
	if _, has := body["tools"]; has {
		return Tools
	}
	rf, _ := body["response_format"].(map[string]any)
	switch {
	case rf == nil:
		return Prompt
	case rf["type"] == "json_object" && rf["schema"] != nil:
		return JSONObjectSchema
	}
	return Mode(rf["type"].(string))
}

// Auto falls back, in its fixed order, on each way servers refuse a form, without waiting or spending a
// retry, and remembers what worked.
func TestAutoFallback(t *testing.T) {
	// llama-cpp-python 0.3.x: a 500 whose body names the allowed types.
	llamaCppPython := reply{status: 500, body: `{"error":{"message":"[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]","type":"internal_server_error","param":null,"code":null}}`}
	for _, tc := range []struct {
		name    string
		refuse  map[Mode]reply
		forms   []Mode // the forms of the first Generate's calls
		settled Mode
	}{
		{"json_schema works", nil, []Mode{JSONSchema}, JSONSchema},
		{"500 on json_schema (llama-cpp-python)", map[Mode]reply{JSONSchema: llamaCppPython},
			[]Mode{JSONSchema, JSONObjectSchema}, JSONObjectSchema},
		{"400 then 422 then a tools refusal", map[Mode]reply{
			JSONSchema:       apiError(400, "", "response_format type 'json_schema' is not supported"),
			JSONObjectSchema: apiError(422, "", "Extra inputs are not permitted: response_format.schema"),
			Tools:            apiError(400, "", "tool_choice is not supported by this model"),
		}, []Mode{JSONSchema, JSONObjectSchema, Tools, JSONObject}, JSONObject},
		{"every constraint refused: prompt", map[Mode]reply{
			JSONSchema:       apiError(400, "", "unknown field json_schema"),
			JSONObjectSchema: apiError(400, "", "unknown field schema"),
			Tools:            apiError(400, "", "tools are not supported"),
			JSONObject:       apiError(501, "", "json_object response_format not implemented"),
		}, []Mode{JSONSchema, JSONObjectSchema, Tools, JSONObject, Prompt}, Prompt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.fake.respond = func(_ int, body map[string]any) reply {
				if r, refused := tc.refuse[formOf(body)]; refused {
					return r
				}
				if formOf(body) == Tools {
					return reply{status: 200, body: `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"",
						"tool_calls":[{"id":"c","type":"function","function":{"name":"titles","arguments":"{\"titles\":[]}"}}]},"finish_reason":"tool_calls"}]}`}
				}
				return completion(genModel, "```json\n{\"titles\":[{\"title\":\"A\",\"note\":null}]}\n```", "stop")
			}
			for i := range 2 {
				if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			calls := h.fake.received()
			var forms []Mode
			for _, c := range calls {
				forms = append(forms, formOf(c.body))
			}
			// The second Generate goes straight to the form that worked.
			want := append(append([]Mode(nil), tc.forms...), tc.settled)
			if !slices.Equal(forms, want) {
				t.Errorf("forms %v, want %v", forms, want)
			}
			if h.model.Negotiated() != tc.settled {
				t.Errorf("negotiated %q, want %q", h.model.Negotiated(), tc.settled)
			}
			if len(h.clock.slept()) != 0 {
				t.Error("the fallback waited")
			}
		})
	}
	t.Run("a refusal of every form fails at once", func(t *testing.T) {
		h := newHarness(t, Options{}, apiError(400, "", "response_format and tools are not supported"))
		_, err := h.model.Generate(context.Background(), request(ai.Generation))
		if !errors.Is(err, ai.ErrFailed) || !errors.Is(err, errRefused) || len(h.fake.received()) != len(fallback) || len(h.clock.slept()) != 0 {
			t.Fatalf("err %v after %d calls and %d waits", err, len(h.fake.received()), len(h.clock.slept()))
		}
	})
	t.Run("a configured mode's refusal is not retried", func(t *testing.T) {
		h := newHarness(t, Options{Mode: JSONSchema}, llamaCppPython)
		_, err := h.model.Generate(context.Background(), request(ai.Generation))
		if !errors.Is(err, ai.ErrFailed) || !strings.Contains(err.Error(), "Input should be 'text' or 'json_object'") || len(h.fake.received()) != 1 {
			t.Fatalf("err %v after %d calls", err, len(h.fake.received()))
		}
	})
	t.Run("a 500 that names no form is retried, not a refusal", func(t *testing.T) {
		h := newHarness(t, Options{}, apiError(500, "", "CUDA out of memory"), completion(genModel, `{"titles":[]}`, "stop"))
		if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
			t.Fatal(err)
		}
		if forms := []Mode{formOf(h.fake.received()[0].body), formOf(h.fake.received()[1].body)}; !slices.Equal(forms, []Mode{JSONSchema, JSONSchema}) || len(h.clock.slept()) != 1 {
			t.Errorf("forms %v, %d waits", forms, len(h.clock.slept()))
		}
	})
}

func TestNew(t *testing.T) {
	if _, err := New(Options{BaseURL: "http://127.0.0.1:1/v1", GenerationModel: "a", GradingModel: "a", Mode: "grammar"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
	testNew(t)
}

// A 400 for another reason is not a refusal of json_schema.
func TestNoFallbackOnOtherErrors(t *testing.T) {
	h := newHarness(t, Options{}, apiError(400, "context_length_exceeded", "maximum context length exceeded"))
	if _, err := h.model.Generate(context.Background(), request(ai.Generation)); !errors.Is(err, ai.ErrFailed) {
		t.Fatal(err)
	}
	if n := len(h.fake.received()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
	// json_object that fails too does not stick.
	h2 := newHarness(t, Options{}, apiError(400, "", "json_schema unsupported"), apiError(400, "", "bad request"), completion(genModel, `{"titles":[]}`, "stop"))
	if _, err := h2.model.Generate(context.Background(), request(ai.Generation)); !errors.Is(err, ai.ErrFailed) {
		t.Fatal(err)
	}
	if m := h2.model.Negotiated(); m != "" {
		t.Errorf("remembered %q though it failed", m)
	}
}

func TestTransportErrors(t *testing.T) {
	h := newHarness(t, Options{}, reply{hangup: true}, completion(genModel, `{"titles":[]}`, "stop"))
	if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
		t.Fatal(err)
	}
	if n := len(h.fake.received()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
	h = newHarness(t, Options{}, reply{hangup: true})
	if _, err := h.model.Generate(context.Background(), request(ai.Generation)); !errors.Is(err, ai.ErrFailed) || len(h.fake.received()) != 4 {
		t.Fatalf("err %v after %d calls", err, len(h.fake.received()))
	}
	h = newHarness(t, Options{}, reply{status: 200, body: `{"choices":[`}, completion(genModel, `{"titles":[]}`, "stop"))
	if _, err := h.model.Generate(context.Background(), request(ai.Generation)); err != nil {
		t.Fatalf("a cut-off answer is retried: %v", err)
	}
}

func TestContextCancellation(t *testing.T) {
	h := newHarness(t, Options{}, reply{block: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(h.fake.received()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := h.model.Generate(ctx, request(ai.Generation))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ai.ErrFailed) || len(h.fake.received()) != 1 {
		t.Fatalf("err %v after %d calls", err, len(h.fake.received()))
	}
}

func TestBadRequests(t *testing.T) {
	for name, mutate := range map[string]func(*ai.Request){
		"unknown role":     func(r *ai.Request) { r.Role = "" },
		"bad schema name":  func(r *ai.Request) { r.SchemaName = "a.b" },
		"schema not JSON":  func(r *ai.Request) { r.Schema = json.RawMessage(`nope`) },
		"no messages":      func(r *ai.Request) { r.Messages = nil },
		"bad message role": func(r *ai.Request) { r.Messages[1].Role = "tool" },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{}, completion(genModel, `{}`, "stop"))
			req := request(ai.Generation)
			mutate(&req)
			if _, err := h.model.Generate(context.Background(), req); !errors.Is(err, ai.ErrFailed) || len(h.fake.received()) != 0 {
				t.Fatalf("err %v after %d calls", err, len(h.fake.received()))
			}
		})
	}
}

func testNew(t *testing.T) {
	for name, opts := range map[string]Options{
		"no base URL":      {GenerationModel: "a", GradingModel: "b"},
		"relative URL":     {BaseURL: "/v1", GenerationModel: "a", GradingModel: "b"},
		"other scheme":     {BaseURL: "ftp://host/v1", GenerationModel: "a", GradingModel: "b"},
		"no host":          {BaseURL: "http:///v1", GenerationModel: "a", GradingModel: "b"},
		"no models":        {BaseURL: "http://127.0.0.1:11434/v1"},
		"no grading model": {BaseURL: "http://127.0.0.1:11434/v1", GenerationModel: "a"},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	m, err := New(Options{BaseURL: "http://127.0.0.1:11434/v1", GenerationModel: "a", GradingModel: "b"})
	if err != nil || m.maxCompletionTokens {
		t.Errorf("a local server: %v, max_completion_tokens %v", err, m.maxCompletionTokens)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		header map[string]string
		min    time.Duration
		max    time.Duration
	}{
		{nil, 0, 0},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, 3 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "junk", "Retry-After": "2"}, 2 * time.Second, 2 * time.Second},
		{map[string]string{"Retry-After": future}, 80 * time.Second, 91 * time.Second},
		{map[string]string{"Retry-After": "99999"}, time.Hour, time.Hour},
		{map[string]string{"Retry-After": "0"}, 0, 0},
		{map[string]string{"Retry-After": "-5"}, 0, 0},
		{map[string]string{"Retry-After": "soon"}, 0, 0},
		{map[string]string{"Retry-After": "Mon, 02 Jan 2006 15:04:05 GMT"}, 0, 0}, // in the past
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := (exchange{header: h}).retryAfter(); got < tc.min || got > tc.max {
			t.Errorf("%v: %v, want %v..%v", tc.header, got, tc.min, tc.max)
		}
	}
}

// A long error body is cut in the error, which ends up in logs and ToolRuns.
func TestLongErrorMessageCut(t *testing.T) {
	h := newHarness(t, Options{}, apiError(400, "", strings.Repeat("x", 10000)))
	_, err := h.model.Generate(context.Background(), request(ai.Generation))
	if err == nil || len(err.Error()) > 700 || !strings.Contains(err.Error(), strings.Repeat("x", 500)+"…") {
		t.Fatalf("error of %d bytes: %.200v", len(err.Error()), err)
	}
}

// A server that never answers: each call is given up after CallTimeout and retried, then the request
// fails, without waiting on the server forever.
func TestServerNeverAnswers(t *testing.T) {
	h := newHarness(t, Options{CallTimeout: 20 * time.Millisecond}, reply{block: true})
	_, err := h.model.Generate(context.Background(), request(ai.Generation))
	if !errors.Is(err, ai.ErrFailed) || !strings.Contains(err.Error(), "no answer within 20ms") || len(h.fake.received()) != 4 {
		t.Fatalf("err %v after %d calls", err, len(h.fake.received()))
	}
}

// A text answer that is not JSON comes back whole, with the parse error and what the call was billed.
func TestAnswerNotJSON(t *testing.T) {
	h := newHarness(t, Options{}, completion(genModel, "Sure! Here are titles: {\"titles\":[]}", "stop"))
	_, err := h.model.Generate(context.Background(), request(ai.Generation))
	var ae *ai.AnswerError
	if !errors.As(err, &ae) || !errors.Is(err, ai.ErrFailed) {
		t.Fatalf("err %v", err)
	}
	if ae.Text != "Sure! Here are titles: {\"titles\":[]}" || !strings.Contains(ae.Err.Error(), "does not start with a JSON object") ||
		ae.Usage.InputTokens != 321 || ae.Usage.OutputTokens != 54 || ae.Usage.Model != genModel {
		t.Errorf("%+v", ae)
	}
	h = newHarness(t, Options{}, completion(genModel, `{"titles":[{"title":"A`, "length"))
	_, err = h.model.Generate(context.Background(), request(ai.Generation))
	if !errors.As(err, &ae) || !strings.Contains(ae.Err.Error(), "cut at the 1024-token limit") {
		t.Fatalf("err %v", err)
	}
}

func TestProbe(t *testing.T) {
	models := func(ids ...string) string {
		var parts []string
		for _, id := range ids {
			parts = append(parts, `{"id":"`+id+`","object":"model"}`)
		}
		return `{"object":"list","data":[` + strings.Join(parts, ",") + `]}`
	}
	for _, tc := range []struct {
		name      string
		reply     reply
		reachable bool
		missing   []string
		err       string
	}{
		{"both served", reply{status: 200, body: models(genModel, gradeModel, "other")}, true, nil, ""},
		{"grading model missing", reply{status: 200, body: models(genModel)}, true, []string{gradeModel}, ""},
		{"none served", reply{status: 200, body: models()}, true, []string{genModel, gradeModel}, ""},
		{"error status", apiError(401, "invalid_api_key", "Incorrect API key"), false, nil, "HTTP 401: Incorrect API key"},
		{"not JSON", reply{status: 200, body: "<html>"}, false, nil, "not readable"},
		{"connection closed", reply{hangup: true}, false, nil, "cannot reach the model server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{APIKey: "k"}, tc.reply)
			got := h.model.Probe(context.Background())
			if got.Reachable != tc.reachable || !slices.Equal(got.Missing, tc.missing) || (tc.err == "") != (got.Err == nil) ||
				(got.Err != nil && !strings.Contains(got.Err.Error(), tc.err)) {
				t.Errorf("%+v", got)
			}
			if c := h.fake.received(); len(c) != 1 || c[0].path != "/v1/models" || c[0].authz != "Bearer k" {
				t.Errorf("calls %+v", c)
			}
		})
	}
}

// A server that took the probe but answers nothing within its time is busy (llama-cpp-python serves one
// request at a time), not down; one that is gone is down at once.
func TestProbeBusyIsNotDown(t *testing.T) {
	h := newHarness(t, Options{}, reply{block: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if got := h.model.Probe(ctx); !got.Reachable || !got.Busy || got.Err != nil {
		t.Fatalf("busy server: %+v", got)
	}
	gone, err := New(Options{BaseURL: "http://127.0.0.1:1/v1", GenerationModel: genModel, GradingModel: gradeModel})
	if err != nil {
		t.Fatal(err)
	}
	if got := gone.Probe(context.Background()); got.Reachable || got.Busy || got.Err == nil {
		t.Fatalf("server gone: %+v", got)
	}
}

// Issue 36 item 4: each failure carries a short cause in the adapter's words (ai.CauseOf), which the API
// shows, and never the server's text (which may echo the prompt).
func TestFailuresNameTheirCause(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply reply
		want  string
	}{
		{"connection closed", reply{hangup: true}, ai.CauseUnreachable},
		{"context too small", apiError(400, "", "This model's maximum context length is 2048 tokens. However, you requested 6632 tokens (SECRET PROMPT TEXT)"), ai.CauseContext},
		{"llama-cpp-python's wording", apiError(400, "", "Requested tokens (6632) exceed context window of 2048"), ai.CauseContext},
		{"bad key", apiError(401, "invalid_api_key", "Incorrect API key provided: sk-abc"), "the model server refused the credentials (HTTP 401)"},
		{"server error", apiError(500, "", "boom: SECRET PROMPT TEXT"), "the model server failed (HTTP 500)"},
		{"not JSON", completion(genModel, "Sure! Here are titles", "stop"), ai.CauseNotJSON},
		{"cut short", completion(genModel, `{"titles":[{"title":"A`, "length"), ai.CauseCut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, tc.reply)
			_, err := h.model.Generate(context.Background(), request(ai.Generation))
			if err == nil {
				t.Fatal("no error")
			}
			if got := ai.CauseOf(err); got != tc.want {
				t.Errorf("cause %q, want %q (err %v)", got, tc.want, err)
			}
			if c := ai.CauseOf(err); strings.Contains(c, "SECRET") || strings.Contains(c, "sk-abc") {
				t.Errorf("the cause repeats the server's text: %q", c)
			}
		})
	}
}
