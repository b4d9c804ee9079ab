// Package bedrock is the ai.Model adapter for Amazon Bedrock Runtime's Converse API.
//
// Structured output is asked for in one of two ways (Options.Output):
//   - ToolUse (the default): one tool, named by the request's SchemaName, whose input schema is the
//     request's Schema, forced with toolChoice {tool: {name}}; the tool call's input is the answer. Every
//     Converse model with tool use supports it (Claude up to 4.6 and Haiku 4.5, Nova, Mistral, Llama …).
//   - NativeJSON: outputConfig.textFormat json_schema; the answer is the message text. For models that
//     refuse a forced tool (Claude Sonnet 5.5 does).
//
// A model that answers in text anyway has its JSON taken from the text (a fence, a sentence around it)
// before the call counts as failed. What the model produced is returned as it is: judging it against the
// schema, and repairing it, is the caller's.
//
// Throttling and transient failures are retried here with jittered exponential backoff (package
// ai/retry); the SDK's own retries are turned off for each call so the two do not multiply. Errors map to
// ai.ErrThrottled or ai.ErrFailed as errorTable says.
package bedrock

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/internal/check"
	"github.com/creatorstrategy/css/shared/ai/internal/textjson"
	"github.com/creatorstrategy/css/shared/ai/retry"
	"github.com/creatorstrategy/css/shared/awsenv"
)

// Converser is the part of *bedrockruntime.Client the adapter uses.
type Converser interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// Output says how structured output is asked for.
type Output int

const (
	ToolUse    Output = iota // a forced tool whose input schema is the request's Schema
	NativeJSON               // outputConfig.textFormat json_schema
)

// Options configure the adapter.
type Options struct {
	// GenerationModel and GradingModel are the model ids (or inference profile ids, or ARNs) of the two
	// roles. Both are required; config holds the defaults.
	GenerationModel string
	GradingModel    string
	Output          Output
	// StrictTools sets toolSpec.strict: the model's decoding is held to the schema. Off by default:
	// strict mode refuses schemas with keywords outside its subset (numeric and length bounds among
	// them), and the contract's schemas have them.
	StrictTools bool
	// CallTimeout bounds each call (0: DefaultCallTimeout); the caller's context bounds them all.
	CallTimeout time.Duration
	// Retry bounds the adapter's retries; its zero value uses retry's defaults.
	Retry  retry.Policy
	Logger *slog.Logger
}

// DefaultCallTimeout bounds one Converse call (CSS_MODEL_TIMEOUT's default).
const DefaultCallTimeout = 120 * time.Second

// Model is the Bedrock adapter.
type Model struct {
	client Converser
	opts   Options
	log    *slog.Logger
}

// New returns the adapter over client (see NewClient).
func New(client Converser, opts Options) (*Model, error) {
	if client == nil {
		return nil, errors.New("bedrock: no client")
	}
	if opts.GenerationModel == "" || opts.GradingModel == "" {
		return nil, errors.New("bedrock: both the generation and the grading model ids are required")
	}
	if opts.Output != ToolUse && opts.Output != NativeJSON {
		return nil, fmt.Errorf("bedrock: unknown output mode %d", opts.Output)
	}
	return &Model{client: client, opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))}, nil
}

// NewClient returns a Bedrock Runtime client for region, signing with the credentials in the environment
// (where Lambda puts the function role's) and without the SDK's config loader; it makes no call until
// used. Its own retries are off for the adapter's calls either way. endpoint, when set, replaces the
// regional endpoint (a server speaking Bedrock Runtime's protocol on loopback, in tests).
func NewClient(region, endpoint string) (*bedrockruntime.Client, error) {
	if region == "" {
		return nil, errors.New("bedrock: no region: set AWS_REGION")
	}
	client, err := awsenv.HTTPClient()
	if err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	opts := bedrockruntime.Options{
		Region:      region,
		Credentials: aws.NewCredentialsCache(awsenv.Credentials{}),
		HTTPClient:  client,
	}
	if endpoint != "" {
		opts.BaseEndpoint = aws.String(endpoint)
	}
	return bedrockruntime.New(opts), nil
}

// Generate asks the role's model for one JSON value.
func (m *Model) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	modelID, in, err := m.input(req)
	if err != nil {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	var out *bedrockruntime.ConverseOutput
	res, err := m.opts.Retry.Do(ctx, func(ctx context.Context) (retry.Outcome, error) {
		var err error
		callCtx, cancel := context.WithTimeout(ctx, cmp.Or(m.opts.CallTimeout, DefaultCallTimeout))
		out, err = m.client.Converse(callCtx, in, noSDKRetries)
		timedOut := errors.Is(callCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			return retry.Outcome{}, nil
		}
		if timedOut { // one call's own bound: transient, like a cut connection
			err = fmt.Errorf("no answer within %s: %w", cmp.Or(m.opts.CallTimeout, DefaultCallTimeout), err)
			m.log.WarnContext(ctx, "bedrock call timed out, may retry", "model", modelID, "task", req.Task)
			return retry.Outcome{Retry: true}, err
		}
		c := classify(ctx, err)
		if c.Retry {
			m.log.WarnContext(ctx, "bedrock call failed, may retry", "model", modelID, "task", req.Task, "error", err)
		}
		return retry.Outcome{Retry: c.Retry, RetryAfter: retryAfter(err)}, err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("bedrock %s: %w", modelID, ctx.Err()), Cause: ai.CauseTimeout}
		}
		e := &ai.Error{Kind: classify(ctx, err).Kind, Err: fmt.Errorf("bedrock %s after %d attempt(s): %w", modelID, res.Attempts, err),
			Cause: causeOf(err)}
		if e.Kind == ai.ErrThrottled { // a wait of 0: not retried, a quota
			e.RetryAfter = cmp.Or(res.NextWait, retryAfter(err), quotaRetryAfter)
		}
		return ai.Result{}, e
	}
	r := ai.Result{Model: modelID}
	if u := out.Usage; u != nil {
		r.InputTokens, r.OutputTokens = int(aws.ToInt32(u.InputTokens)), int(aws.ToInt32(u.OutputTokens))
	}
	answer, err := answer(out, req.SchemaName)
	if err != nil {
		if ae, ok := errors.AsType[*ai.AnswerError](err); ok { // text, not JSON: the caller's repair turn shows it to the model
			ae.Usage = r
			return ai.Result{}, ae
		}
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("bedrock %s: %w", modelID, err)}
	}
	if out.StopReason == types.StopReasonMaxTokens {
		m.log.WarnContext(ctx, "bedrock answer cut at max tokens", "model", modelID, "task", req.Task)
	}
	r.JSON = answer
	return r, nil
}

// noSDKRetries leaves retrying to the adapter, whose waits are injectable and bounded in time.
func noSDKRetries(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }

func (m *Model) input(req ai.Request) (string, *bedrockruntime.ConverseInput, error) {
	var modelID string
	switch req.Role {
	case ai.Generation:
		modelID = m.opts.GenerationModel
	case ai.Grading:
		modelID = m.opts.GradingModel
	default:
		return "", nil, fmt.Errorf("bedrock: unknown role %q", req.Role)
	}
	if !check.SchemaName(req.SchemaName) {
		return "", nil, fmt.Errorf("bedrock: schema name %q: want 1 to 64 letters, digits, _ or -", req.SchemaName)
	}
	var schema map[string]any
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return "", nil, fmt.Errorf("bedrock: the schema is not a JSON object: %w", err)
	}
	// The dialect marker tells the model nothing, and some models' tool validation refuses keys it does
	// not know.
	delete(schema, "$schema")
	if len(req.Messages) == 0 {
		return "", nil, errors.New("bedrock: no messages")
	}
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(modelID)}
	for _, msg := range req.Messages {
		var role types.ConversationRole
		switch msg.Role {
		case "user":
			role = types.ConversationRoleUser
		case "assistant":
			role = types.ConversationRoleAssistant
		default:
			return "", nil, fmt.Errorf("bedrock: unknown message role %q", msg.Role)
		}
		in.Messages = append(in.Messages, types.Message{Role: role,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: msg.Text}}})
	}
	if req.System != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	in.InferenceConfig = &types.InferenceConfiguration{Temperature: aws.Float32(float32(req.Temperature))}
	if req.MaxTokens > 0 {
		in.InferenceConfig.MaxTokens = aws.Int32(int32(min(req.MaxTokens, math.MaxInt32)))
	}
	description := "Record the answer. Its input must match this schema exactly."
	if d, ok := schema["description"].(string); ok && d != "" {
		description = d
	}
	switch m.opts.Output {
	case ToolUse:
		spec := types.ToolSpecification{
			Name:        aws.String(req.SchemaName),
			Description: aws.String(description),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
		}
		if m.opts.StrictTools {
			spec.Strict = aws.Bool(true)
		}
		in.ToolConfig = &types.ToolConfiguration{
			Tools:      []types.Tool{&types.ToolMemberToolSpec{Value: spec}},
			ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(req.SchemaName)}},
		}
	case NativeJSON:
		text, err := json.Marshal(schema)
		if err != nil {
			return "", nil, fmt.Errorf("bedrock: %w", err)
		}
		in.OutputConfig = &types.OutputConfig{TextFormat: &types.OutputFormat{
			Type: types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{
				Name: aws.String(req.SchemaName), Description: aws.String(description), Schema: aws.String(string(text)),
			}},
		}}
	}
	return modelID, in, nil
}

// answer takes the JSON out of the response: the named tool's input, else JSON found in the text.
func answer(out *bedrockruntime.ConverseOutput, tool string) (json.RawMessage, error) {
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, fmt.Errorf("no message in the response (stop reason %q)", out.StopReason)
	}
	var text strings.Builder
	var uses []types.ToolUseBlock
	for _, block := range msg.Value.Content {
		switch b := block.(type) {
		case *types.ContentBlockMemberToolUse:
			uses = append(uses, b.Value)
		case *types.ContentBlockMemberText:
			text.WriteString(b.Value)
			text.WriteByte('\n')
		}
	}
	// The forced tool's call; a model that renamed it still meant it.
	for _, pick := range []func(types.ToolUseBlock) bool{
		func(u types.ToolUseBlock) bool { return aws.ToString(u.Name) == tool },
		func(types.ToolUseBlock) bool { return true },
	} {
		for _, u := range uses {
			if pick(u) && u.Input != nil {
				raw, err := u.Input.MarshalSmithyDocument()
				if err != nil {
					return nil, fmt.Errorf("read the tool input: %w", err)
				}
				return unquote(raw), nil
			}
		}
	}
	v, err := textjson.Parse(text.String())
	if err != nil {
		return nil, &ai.AnswerError{Text: strings.TrimSpace(text.String()),
			Err: fmt.Errorf("the model answered without the tool (stop reason %q), and %w", out.StopReason, err)}
	}
	return v, nil
}

// unquote unwraps a tool input that a model sent as a JSON string holding the object, a known quirk;
// anything else is returned as it is.
func unquote(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	if v, ok := textjson.Extract(s); ok {
		return v
	}
	return raw
}
