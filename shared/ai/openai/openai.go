// Package openai is the ai.Model adapter for OpenAI-compatible chat completion servers: OpenAI itself,
// and the self-hosted ones (Ollama, llama.cpp's server, vLLM, LM Studio) a `make run` user or a
// self-hoster points it at with a base URL.
//
// Structured output uses response_format json_schema, strict where the schema allows: the adapter
// rewrites the schema into strict form (every property required, optional ones nullable,
// additionalProperties false, unsupported keywords dropped and said in the description) and takes the
// nulls it introduced back out of the answer, so the caller's validator sees the shape it asked for. A
// schema strict form cannot express is sent as it is with strict off.
//
// A server that refuses json_schema (a 400 or 422 whose message names response_format or json_schema;
// older llama.cpp and Ollama builds) gets json_object instead, with the schema written into the system
// prompt; once that works the adapter stays on json_object. The answer's JSON is taken out of any fence
// or sentence around it.
//
// Retries: 429 (with Retry-After or Retry-After-Ms when given), 408, 409, 5xx and transport errors, with
// jittered exponential backoff (package ai/retry); the SDK's own retries are off. A 429 that outlives the
// retries is ai.ErrThrottled, except OpenAI's insufficient_quota (billing: an operator must act), which
// is ai.ErrFailed like every other failure.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/internal/check"
	"github.com/creatorstrategy/css/shared/ai/internal/textjson"
	"github.com/creatorstrategy/css/shared/ai/retry"
)

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
	Retry           retry.Policy
	// HTTPClient defaults to one with no overall timeout: a generation is bounded by its context.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Model is the OpenAI-compatible adapter.
type Model struct {
	chat oai.ChatCompletionService
	opts Options
	log  *slog.Logger
	// maxCompletionTokens: OpenAI's own API wants max_completion_tokens (its reasoning models refuse
	// max_tokens); the self-hosted servers read max_tokens.
	maxCompletionTokens bool
	// jsonObject: the server refused json_schema once and json_object worked.
	jsonObject atomic.Bool
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
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	reqOpts := []option.RequestOption{
		option.WithBaseURL(opts.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		reqOpts = append(reqOpts, option.WithAPIKey(opts.APIKey))
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Model{
		// The service, not oai.NewClient: the client would read OPENAI_* variables from the environment
		// (and send OPENAI_API_KEY to whatever server the base URL names).
		chat:                oai.NewChatCompletionService(reqOpts...),
		opts:                opts,
		log:                 log,
		maxCompletionTokens: strings.EqualFold(u.Hostname(), "api.openai.com"),
	}, nil
}

// Generate asks the role's model for one JSON value.
func (m *Model) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	call, err := m.prepare(req)
	if err != nil {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	var resp *oai.ChatCompletion
	var last exchange
	res, err := m.opts.Retry.Do(ctx, func(ctx context.Context) (retry.Outcome, error) {
		var err error
		resp, last, err = m.send(ctx, call.params(m.jsonObject.Load()))
		if err != nil && !m.jsonObject.Load() && last.refusesJSONSchema() {
			m.log.WarnContext(ctx, "the server refused json_schema; asking for json_object", "model", call.model, "status", last.status)
			resp, last, err = m.send(ctx, call.params(true))
			if err == nil {
				m.jsonObject.Store(true)
			}
		}
		if err == nil {
			return retry.Outcome{}, nil
		}
		c := last.classify(ctx)
		if c.Retry {
			m.log.WarnContext(ctx, "model call failed, may retry", "model", call.model, "task", req.Task, "error", err)
		}
		return retry.Outcome{Retry: c.Retry, RetryAfter: last.retryAfter()}, err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("openai %s: %w", call.model, ctx.Err())}
		}
		e := &ai.Error{Kind: last.classify(ctx).Kind, Err: fmt.Errorf("openai %s after %d attempt(s): %w", call.model, res.Attempts, err)}
		if e.Kind == ai.ErrThrottled {
			e.RetryAfter = res.NextWait
		}
		return ai.Result{}, e
	}
	if len(resp.Choices) == 0 {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("openai %s: no choices in the answer", call.model)}
	}
	choice := resp.Choices[0]
	answer, ok := textjson.Extract(choice.Message.Content)
	if !ok {
		why := "no JSON in the answer"
		if choice.Message.Refusal != "" {
			why = "the model refused: " + choice.Message.Refusal
		}
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("openai %s: %s (finish reason %q)", call.model, why, choice.FinishReason)}
	}
	if choice.FinishReason == "length" {
		m.log.WarnContext(ctx, "answer cut at max tokens", "model", call.model, "task", req.Task)
	}
	model := resp.Model
	if model == "" {
		model = call.model
	}
	return ai.Result{
		JSON:         call.pruner.pruneJSON(answer),
		InputTokens:  int(resp.Usage.PromptTokens),
		OutputTokens: int(resp.Usage.CompletionTokens),
		Model:        model,
	}, nil
}

// call is a request made ready: what does not change between attempts.
type call struct {
	model               string
	req                 ai.Request
	schema              any // strict form, or the schema as given
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
	if strict, p, err := toStrict(schema); err == nil {
		c.schema, c.pruner, c.strict = strict, p, true
	} else {
		m.log.Debug("schema sent without strict", "schema", req.SchemaName, "why", err)
		c.schema = schema
	}
	return c, nil
}

// params builds the request body, with json_schema or, for a server that refused it, json_object.
func (c *call) params(jsonObject bool) oai.ChatCompletionNewParams {
	system := c.req.System
	p := oai.ChatCompletionNewParams{Model: c.model, Temperature: oai.Float(c.req.Temperature)}
	if jsonObject {
		// json_object promises JSON, not the shape: the shape goes into the prompt.
		schema, _ := json.Marshal(c.schema)
		system = strings.TrimSpace(system + "\n\nAnswer with one JSON object, and nothing else, that matches this JSON Schema:\n" + string(schema))
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	} else {
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name: c.req.SchemaName, Schema: c.schema, Strict: oai.Bool(c.strict),
		}}
	}
	if system != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(system))
	}
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
	return p
}

// exchange is what came back from one attempt at the HTTP level, read by the adapter itself: servers
// differ in their error bodies (vLLM's has no "error" object), which the SDK does not always parse.
type exchange struct {
	status int
	header http.Header
	body   []byte // error bodies only, at most maxErrorBody
}

const maxErrorBody = 64 << 10

func (m *Model) send(ctx context.Context, params oai.ChatCompletionNewParams) (*oai.ChatCompletion, exchange, error) {
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
	resp, err := m.chat.New(ctx, params, capture)
	if err != nil && ex.status >= 400 {
		msg := ex.message()
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		err = fmt.Errorf("HTTP %d: %s", ex.status, msg)
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

func (ex exchange) refusesJSONSchema() bool {
	if ex.status != http.StatusBadRequest && ex.status != http.StatusUnprocessableEntity {
		return false
	}
	msg := strings.ToLower(ex.message())
	return strings.Contains(msg, "response_format") || strings.Contains(msg, "json_schema")
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
