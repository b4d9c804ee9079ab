// Package ai is the port of the language and image models generation runs on. Adapters: ai/bedrock
// (Amazon Bedrock Runtime, the cloud default), ai/openai (any OpenAI-compatible chat server: Ollama,
// llama.cpp, vLLM, LM Studio, OpenAI) and the local stack's offline model (shared/testkit/offline/textmodel:
// deterministic, no network; the local default, which no Lambda links).
//
// A model answers with structured output: a JSON value meant to match the request's JSON Schema. The
// caller validates it against the contract and may ask once more with the errors (a repair turn), so an
// adapter returns what the model produced and leaves judging it to the caller.
package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/brief"
)

// Role says which of the two configured models a request is for.
type Role string

const (
	Generation Role = "generation" // the large model: writes the content
	Grading    Role = "grading"    // the smaller model of the same family: scores it
)

// Message is one turn of a conversation.
type Message struct {
	Role string // "user" or "assistant"
	Text string
}

// Request asks a model for one JSON value.
type Request struct {
	Role Role
	// Task names what is asked ("titles", "long_script", "grade_titles", ...): the offline model picks
	// its writer by it, and logs and metrics say it.
	Task   string
	System string
	// Messages are the conversation so far; the last is the user's. A repair appends the model's answer
	// and a user turn listing what was wrong.
	Messages []Message
	// Schema is the JSON Schema (self-contained: no $ref) the answer must match; SchemaName names it
	// (letters, digits, _ and -, as tool and response-format names must be).
	Schema      json.RawMessage
	SchemaName  string
	MaxTokens   int
	Temperature float64
	// Brief is the structured material the prompt was written from. Network models read the prompt text
	// and ignore it; the offline model writes from it.
	Brief *brief.Brief
}

// Result is a model's answer.
type Result struct {
	JSON         json.RawMessage
	InputTokens  int
	OutputTokens int
	Model        string // the model id that answered; the offline model's says "offline"
}

// Model writes structured output.
type Model interface {
	Generate(ctx context.Context, req Request) (Result, error)
}

// ImageRequest asks for one picture.
type ImageRequest struct {
	Task    string // "thumbnail" or "banner"
	Prompt  string
	Width   int
	Height  int
	Palette []string // hex colours, e.g. "#FF0000"
	Text    string   // overlay text, if any
}

// Image is a generated picture.
type Image struct {
	Data        []byte
	ContentType string // "image/png" or "image/jpeg"
	Model       string
}

// ImageModel draws pictures.
type ImageModel interface {
	Image(ctx context.Context, req ImageRequest) (Image, error)
}

// Error kinds every adapter maps its failures to.
var (
	// ErrThrottled: the provider refused for rate or quota after the adapter's own retries (the API
	// answers 429 RATE_LIMIT with Retry-After).
	ErrThrottled = errors.New("model throttled")
	// ErrFailed: anything else (the API answers 500 GENERATION_FAILED).
	ErrFailed = errors.New("model failed")
)

// Error is a failure of a model call: Kind is ErrThrottled or ErrFailed, RetryAfter a hint when the
// provider gave one, Cause a short sentence the API may show (CauseOf).
type Error struct {
	Kind       error
	RetryAfter time.Duration
	Err        error
	// Cause says what failed in words the caller may read: one of the adapter's own sentences, never the
	// server's text, a secret or the prompt ("the model server could not be reached").
	Cause string
}

// Causes the adapters name a failure with (Error.Cause). A failed run's error and the API's 500 carry
// them, so the cause is not only in the log (issue 36 item 4).
const (
	CauseUnreachable = "the model server could not be reached"
	CauseTimeout     = "the model did not answer in time"
	CauseContext     = "the prompt and its answer do not fit the model's context window (CSS_MODEL_CONTEXT_TOKENS, shared/ai/README.md)"
	CauseCut         = "the answer was cut at the token limit"
	CauseNotJSON     = "the answer was not JSON"
	CauseNoChoice    = "the model server's answer held no text"
	CauseRefusal     = "the model refused to answer"
)

// CauseOf is the short, safe cause of a model failure, or "" when the adapter named none.
func CauseOf(err error) string {
	if ae, ok := errors.AsType[*AnswerError](err); ok {
		if ae.Cut {
			return CauseCut
		}
		return CauseNotJSON
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Cause
	}
	return ""
}

func (e *Error) Error() string { return fmt.Sprintf("%v: %v", e.Kind, e.Err) }

func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

// AnswerError: the model answered, but not with a JSON value. Text is its whole answer (the caller's
// repair turn shows it to the model with Err, the parse error); Usage is what the call was billed for.
// It is an ErrFailed.
type AnswerError struct {
	Text  string
	Err   error
	Usage Result // tokens and model; JSON is nil
	Cut   bool   // the answer stopped at the token limit
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("%v: the answer is not JSON: %v", ErrFailed, e.Err)
}

func (e *AnswerError) Is(target error) bool { return target == ErrFailed }

func (e *AnswerError) Unwrap() error { return e.Err }
