// Package openai is the ai.Model adapter for OpenAI-compatible chat completion servers: OpenAI itself,
// and the self-hosted ones (Ollama, llama.cpp's llama-server, llama-cpp-python, vLLM, LM Studio) a
// `make run` user or a self-hoster points it at with a base URL.
//
// Structured output (Options.Mode, CSS_OPENAI_STRUCTURED_OUTPUT) is asked for in one of five ways, since
// servers support different subsets:
//
//   - json_schema: response_format {type: json_schema}, strict where the schema allows: the adapter
//     rewrites the schema into strict form (every property required, optional ones nullable,
//     additionalProperties false, unsupported keywords dropped and said in the description) and takes the
//     nulls it introduced back out of the answer. A schema strict form cannot express is sent with strict
//     off. OpenAI, vLLM, LM Studio, Ollama 0.5+, llama-server.
//   - json_object_schema: response_format {type: json_object, schema: …}: llama-cpp-python's own form
//     (its server answers json_schema with a 500).
//   - json_object: response_format {type: json_object}, the schema in the system prompt.
//   - tools: one function tool whose parameters are the schema, forced with tool_choice; the call's
//     arguments are the answer.
//   - prompt: no constraint at all, the schema in the system prompt.
//
// Auto (the default) starts with json_schema; a refusal that names the response format, the schema or
// the tools (400, 422, or a 5xx whose body says so) moves to the next mode in that order, at once and
// without spending a retry. The mode that worked is remembered by the adapter (one per base URL) for the
// life of the process. A refusal in a configured mode fails at once: it is not transient.
//
// The answer must be one JSON value (or one fence holding it): anything else is an ai.AnswerError with
// the whole text, for the caller's repair turn.
//
// Retries: 429 (with Retry-After or Retry-After-Ms when given, up to retry.Policy.MaxRetryAfter), 408,
// 409, 5xx other than a refusal, and transport errors (refused or reset connections, a call that outlived
// Options.CallTimeout), with jittered exponential backoff (package ai/retry); the SDK's own retries are
// off. A 429 that outlives the retries is ai.ErrThrottled carrying the provider's bounded hint, except
// OpenAI's insufficient_quota (billing: an operator must act), which is ai.ErrFailed like every other
// failure.
package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/internal/check"
	"github.com/creatorstrategy/css/shared/ai/internal/textjson"
	"github.com/creatorstrategy/css/shared/ai/retry"
)

// Mode is how structured output is asked for (see the package comment).
type Mode string

const (
	Auto             Mode = "auto"
	JSONSchema       Mode = "json_schema"
	JSONObjectSchema Mode = "json_object_schema"
	JSONObject       Mode = "json_object"
	Tools            Mode = "tools"
	Prompt           Mode = "prompt"
)

// Modes are the valid settings, Auto first.
var Modes = []Mode{Auto, JSONSchema, JSONObjectSchema, JSONObject, Tools, Prompt}

// fallback is the order Auto tries: the most constrained first. json_object_schema before tools: a
// server that reads it (llama-cpp-python) constrains decoding to the schema, and one that ignores the
// member still gets the schema in the prompt. prompt last: it asks the server for nothing it can refuse.
var fallback = []Mode{JSONSchema, JSONObjectSchema, Tools, JSONObject, Prompt}

// DefaultCallTimeout bounds one HTTP call to the server (CSS_MODEL_TIMEOUT's default).
const DefaultCallTimeout = 120 * time.Second

// Options configure the adapter.
type Options struct {
	// BaseURL is the server's API root, e.g. http://127.0.0.1:11434/v1 (Ollama),
	// http://127.0.0.1:8080/v1 (llama.cpp), https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token when set; local servers need none.
	APIKey string
	// GenerationModel and GradingModel are the model names of the two roles (both required).
	GenerationModel string
	GradingModel    string
	// Mode is how structured output is asked for; "" is Auto.
	Mode Mode
	// CallTimeout bounds each HTTP call (0: DefaultCallTimeout); the caller's context bounds them all.
	CallTimeout time.Duration
	Retry       retry.Policy
	// HTTPClient defaults to one with no overall timeout: calls are bounded by CallTimeout and the context.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Model is the OpenAI-compatible adapter.
type Model struct {
	chat oai.ChatCompletionService
	http *http.Client
	opts Options
	log  *slog.Logger
	// maxCompletionTokens: OpenAI's own API wants max_completion_tokens (its reasoning models refuse
	// max_tokens); the self-hosted servers read max_tokens.
	maxCompletionTokens bool

	mu      sync.Mutex
	working Mode // Auto: the mode the server last answered in ("" until one did)
}

// New returns the adapter. It makes no call.
func New(opts Options) (*Model, error) {
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: want an http or https URL", opts.BaseURL)
	}
	if opts.GenerationModel == "" || opts.GradingModel == "" {
		return nil, errors.New("openai: both the generation and the grading model names are required")
	}
	opts.Mode = cmp.Or(opts.Mode, Auto)
	if !slices.Contains(Modes, opts.Mode) {
		return nil, fmt.Errorf("openai: structured output mode %q: want one of %v", opts.Mode, Modes)
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	hc := cmp.Or(opts.HTTPClient, &http.Client{})
	reqOpts := []option.RequestOption{
		option.WithBaseURL(opts.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		reqOpts = append(reqOpts, option.WithAPIKey(opts.APIKey))
	}
	return &Model{
		// The service, not oai.NewClient: the client would read OPENAI_* variables from the environment
		// (and send OPENAI_API_KEY to whatever server the base URL names).
		chat:                oai.NewChatCompletionService(reqOpts...),
		http:                hc,
		opts:                opts,
		log:                 cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		maxCompletionTokens: strings.EqualFold(u.Hostname(), "api.openai.com"),
	}, nil
}

// startMode is the mode a call starts in: the configured one, or what Auto learnt.
func (m *Model) startMode() Mode { return cmp.Or(m.Negotiated(), fallback[0]) }

// Negotiated is the mode Auto settled on, "" before a call succeeded (the configured mode otherwise).
func (m *Model) Negotiated() Mode {
	if m.opts.Mode != Auto {
		return m.opts.Mode
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.working
}

func (m *Model) remember(mode Mode) {
	if m.opts.Mode != Auto {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.working = mode
}

// next is the mode after mode in the fallback order.
func next(mode Mode) (Mode, bool) {
	for i, v := range fallback {
		if v == mode && i+1 < len(fallback) {
			return fallback[i+1], true
		}
	}
	return "", false
}

// errRefused: the server refused every mode Auto tries, or the configured one.
var errRefused = errors.New("the server refused the structured output mode")

// Generate asks the role's model for one JSON value.
func (m *Model) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	call, err := m.prepare(req)
	if err != nil {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	var (
		resp *oai.ChatCompletion
		last exchange
		mode = m.startMode()
	)
	res, err := m.opts.Retry.Do(ctx, func(ctx context.Context) (retry.Outcome, error) {
		for {
			var err error
			resp, last, err = m.send(ctx, call, mode)
			if err == nil {
				m.remember(mode)
				return retry.Outcome{}, nil
			}
			if last.refusesMode() {
				// A capability mismatch: the next mode at once, and no retry of this one.
				n, ok := next(mode)
				if m.opts.Mode != Auto || !ok {
					return retry.Outcome{}, fmt.Errorf("%w (%s): %w", errRefused, mode, err)
				}
				m.log.WarnContext(ctx, "the server refused a structured output mode; trying the next", "model", call.model,
					"refused", mode, "next", n, "status", last.status)
				mode = n
				continue
			}
			c := last.classify(ctx)
			if c.Retry {
				m.log.WarnContext(ctx, "model call failed, may retry", "model", call.model, "task", req.Task, "error", err)
			}
			return retry.Outcome{Retry: c.Retry, RetryAfter: last.retryAfter()}, err
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("openai %s: %w", call.model, ctx.Err()), Cause: ai.CauseTimeout}
		}
		kind := last.classify(ctx).Kind
		if errors.Is(err, errRefused) {
			kind = ai.ErrFailed
		}
		e := &ai.Error{Kind: kind, Err: fmt.Errorf("openai %s after %d attempt(s): %w", call.model, res.Attempts, err),
			Cause: last.cause()}
		if e.Kind == ai.ErrThrottled {
			e.RetryAfter = res.NextWait
		}
		return ai.Result{}, e
	}
	if len(resp.Choices) == 0 {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("openai %s: no choices in the answer", call.model), Cause: ai.CauseNoChoice}
	}
	usage := ai.Result{InputTokens: int(resp.Usage.PromptTokens), OutputTokens: int(resp.Usage.CompletionTokens),
		Model: cmp.Or(resp.Model, call.model)}
	choice := resp.Choices[0]
	if choice.Message.Refusal != "" {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("openai %s: the model refused: %s", call.model, choice.Message.Refusal), Cause: ai.CauseRefusal}
	}
	text := choice.Message.Content
	if mode == Tools {
		for _, tc := range choice.Message.ToolCalls {
			if tc.Function.Arguments != "" {
				text = tc.Function.Arguments
				break
			}
		}
	}
	answer, perr := textjson.Parse(text)
	if perr != nil {
		if choice.FinishReason == "length" {
			perr = fmt.Errorf("%w (the answer was cut at the %d-token limit)", perr, call.req.MaxTokens)
		}
		return ai.Result{}, &ai.AnswerError{Text: text, Err: perr, Usage: usage, Cut: choice.FinishReason == "length"}
	}
	if choice.FinishReason == "length" {
		m.log.WarnContext(ctx, "answer cut at max tokens", "model", call.model, "task", req.Task)
	}
	usage.JSON = call.pruner.pruneJSON(answer)
	return usage, nil
}

// call is a request made ready: what does not change between attempts.
type call struct {
	model               string
	req                 ai.Request
	schema              any // strict form, or the schema as given
	raw                 any // the schema as given
	strict              bool
	pruner              *pruner
	maxCompletionTokens bool
}

func (m *Model) prepare(req ai.Request) (*call, error) {
	c := &call{req: req, maxCompletionTokens: m.maxCompletionTokens}
	switch req.Role {
	case ai.Generation:
		c.model = m.opts.GenerationModel
	case ai.Grading:
		c.model = m.opts.GradingModel
	default:
		return nil, fmt.Errorf("openai: unknown role %q", req.Role)
	}
	if !check.SchemaName(req.SchemaName) {
		return nil, fmt.Errorf("openai: schema name %q: want 1 to 64 letters, digits, _ or -", req.SchemaName)
	}
	var schema map[string]any
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return nil, fmt.Errorf("openai: the schema is not a JSON object: %w", err)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("openai: no messages")
	}
	for _, msg := range req.Messages {
		if msg.Role != "user" && msg.Role != "assistant" {
			return nil, fmt.Errorf("openai: unknown message role %q", msg.Role)
		}
	}
	var raw map[string]any
	_ = json.Unmarshal(req.Schema, &raw)
	c.raw = raw
	if strict, p, err := toStrict(schema); err == nil {
		c.schema, c.pruner, c.strict = strict, p, true
	} else {
		m.log.Debug("schema sent without strict", "schema", req.SchemaName, "why", err)
		c.schema = schema
	}
	return c, nil
}

// instruction is what the system prompt says about the answer's form in mode: the shared prompts
// say nothing of it, since a tool is only sent in tools mode.
func (c *call) instruction(mode Mode) string {
	switch mode {
	case Tools:
		return "Answer only by calling the function " + c.req.SchemaName + ", with arguments that match its parameters' schema exactly."
	case JSONSchema:
		return "Answer with one JSON object, and nothing else, that matches the response format's schema exactly."
	}
	// The schema as given, not the strict form: without strict decoding, its bounds tell the model more.
	schema, _ := json.Marshal(c.raw)
	return "Answer with one JSON object, and nothing else (no Markdown, no comments), that matches this JSON Schema exactly:\n" + string(schema)
}

// params builds the request body of mode, and the body members the SDK's types have no field for.
func (c *call) params(mode Mode) (oai.ChatCompletionNewParams, []option.RequestOption) {
	system := strings.TrimSpace(c.req.System + "\n\n" + c.instruction(mode))
	p := oai.ChatCompletionNewParams{Model: c.model, Temperature: oai.Float(c.req.Temperature)}
	var extra []option.RequestOption
	switch mode {
	case JSONSchema:
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name: c.req.SchemaName, Schema: c.schema, Strict: oai.Bool(c.strict),
		}}
	case JSONObjectSchema:
		extra = append(extra, option.WithJSONSet("response_format", map[string]any{"type": "json_object", "schema": forGrammar(c.raw)}))
	case JSONObject:
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	case Tools:
		extra = append(extra,
			option.WithJSONSet("tools", []any{map[string]any{"type": "function", "function": map[string]any{
				"name": c.req.SchemaName, "description": "Record the answer.", "parameters": c.raw,
			}}}),
			option.WithJSONSet("tool_choice", map[string]any{"type": "function", "function": map[string]any{"name": c.req.SchemaName}}))
	}
	p.Messages = append(p.Messages, oai.SystemMessage(system))
	for _, msg := range c.req.Messages {
		if msg.Role == "assistant" {
			p.Messages = append(p.Messages, oai.AssistantMessage(msg.Text))
		} else {
			p.Messages = append(p.Messages, oai.UserMessage(msg.Text))
		}
	}
	if c.req.MaxTokens > 0 {
		if c.maxCompletionTokens {
			p.MaxCompletionTokens = oai.Int(int64(c.req.MaxTokens))
		} else {
			p.MaxTokens = oai.Int(int64(c.req.MaxTokens))
		}
	}
	return p, extra
}

// exchange is what came back from one attempt at the HTTP level, read by the adapter itself: servers
// differ in their error bodies (vLLM's has no "error" object), which the SDK does not always parse.
type exchange struct {
	status int
	header http.Header
	body   []byte // error bodies only, at most maxErrorBody
}

const maxErrorBody = 64 << 10

func (m *Model) send(ctx context.Context, c *call, mode Mode) (*oai.ChatCompletion, exchange, error) {
	params, extra := c.params(mode)
	// One call's own bound: a server that never answers is given up on and retried, within the caller's.
	ctx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
	defer cancel()
	var ex exchange
	capture := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		resp, err := next(r)
		if resp != nil {
			ex.status, ex.header = resp.StatusCode, resp.Header
			if resp.StatusCode >= 400 && resp.Body != nil {
				ex.body, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
				resp.Body.Close()
				resp.Body = io.NopCloser(bytes.NewReader(ex.body))
			}
		}
		return resp, err
	})
	resp, err := m.chat.New(ctx, params, append(extra, capture)...)
	switch {
	case err != nil && ex.status >= 400:
		msg := ex.message()
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		err = fmt.Errorf("HTTP %d: %s", ex.status, msg)
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("no answer within %s: %w", m.opts.CallTimeout, err)
	}
	return resp, ex, err
}

// message is the error's text, wherever the server put it.
func (ex exchange) message() string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(ex.body, &body) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var plain string
		switch {
		case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(body.Error, &plain) == nil && plain != "":
			return plain
		case body.Message != "":
			return body.Message
		}
	}
	return strings.TrimSpace(string(ex.body))
}

// code is OpenAI's error code (e.g. insufficient_quota), if the body has one.
func (ex exchange) code() string {
	var body struct {
		Error struct {
			Code any `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(ex.body, &body) != nil {
		return ""
	}
	s, _ := body.Error.Code.(string)
	return s
}

// refusesMode: the server refused the request's structured output form (a capability it lacks), not
// the request. llama-cpp-python answers json_schema with a 500 ("Input should be 'text' or
// 'json_object'"), others with 400 or 422.
func (ex exchange) refusesMode() bool {
	if ex.status != http.StatusBadRequest && ex.status != http.StatusUnprocessableEntity && ex.status < 500 {
		return false
	}
	msg := strings.ToLower(ex.message())
	return slices.ContainsFunc([]string{"response_format", "json_schema", "json_object", "schema", "tool_choice", "tools", "function call", "grammar"},
		func(s string) bool { return strings.Contains(msg, s) })
}

// cause names the exchange's failure for the caller in the adapter's own words (ai.Error.Cause): never
// the server's text, which may echo the prompt.
func (ex exchange) cause() string {
	msg := strings.ToLower(ex.message())
	switch s := ex.status; {
	case s == 0:
		return ai.CauseUnreachable
	case strings.Contains(msg, "context length") || strings.Contains(msg, "context window") ||
		strings.Contains(msg, "maximum context") || strings.Contains(msg, "n_ctx") || strings.Contains(msg, "too many tokens"):
		return ai.CauseContext
	case s == http.StatusTooManyRequests && ex.code() == "insufficient_quota":
		return "the model provider's quota is spent (HTTP 429 insufficient_quota)"
	case s == http.StatusTooManyRequests:
		return "the model server is throttling requests (HTTP 429)"
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return fmt.Sprintf("the model server refused the credentials (HTTP %d)", s)
	case s == http.StatusNotFound:
		return "the model server does not serve the model (HTTP 404)"
	case s >= 500:
		return fmt.Sprintf("the model server failed (HTTP %d)", s)
	case s >= 400:
		return fmt.Sprintf("the model server refused the request (HTTP %d)", s)
	}
	return "the model server's answer could not be read"
}

type class struct {
	Retry bool
	Kind  error
}

// classify: see the package comment and shared/ai/README.md's table.
func (ex exchange) classify(ctx context.Context) class {
	switch s := ex.status; {
	case ctx.Err() != nil:
		return class{Kind: ai.ErrFailed}
	case s == 0 || (s >= 200 && s < 300): // no answer, or one that did not decode: transport
		return class{Retry: true, Kind: ai.ErrFailed}
	case s == http.StatusTooManyRequests && ex.code() == "insufficient_quota":
		return class{Kind: ai.ErrFailed}
	case s == http.StatusTooManyRequests:
		return class{Retry: true, Kind: ai.ErrThrottled}
	case s == http.StatusRequestTimeout || s == http.StatusConflict || s >= 500:
		return class{Retry: true, Kind: ai.ErrFailed}
	default:
		return class{Kind: ai.ErrFailed}
	}
}

// retryAfter reads Retry-After-Ms or Retry-After (seconds or an HTTP date), bounded to an hour.
func (ex exchange) retryAfter() time.Duration {
	if ex.header == nil {
		return 0
	}
	var d time.Duration
	if ms, err := strconv.ParseFloat(ex.header.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		d = time.Duration(ms * float64(time.Millisecond))
	} else if v := ex.header.Get("Retry-After"); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
			d = time.Duration(secs * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = time.Until(t)
		}
	}
	return max(0, min(d, time.Hour))
}
