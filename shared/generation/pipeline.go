package generation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/apperr"
)

// Models are the two model roles generation runs on (issue 8: a large model writes, a smaller one of the
// same family grades) and the image model.
type Models struct {
	Writer ai.Model
	Grader ai.Model
	Images ai.ImageModel
}

// Usage adds up what a generation's model calls cost.
type Usage struct {
	mu           sync.Mutex
	InputTokens  int
	OutputTokens int
	Calls        int
	Model        string // the writer's model id (the first call's)
}

func (u *Usage) add(r ai.Result) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.InputTokens += r.InputTokens
	u.OutputTokens += r.OutputTokens
	u.Calls++
	u.Model = cmp.Or(u.Model, r.Model)
}

// The bounds of the Retry-After a throttled generation answers with, in seconds.
const (
	MinRetryAfter = 1
	MaxRetryAfter = 300
)

// Inference settings per role: writing wants variety, grading wants the same grade twice.
const (
	writeTemperature = 0.8
	gradeTemperature = 0.1
	maxOutputTokens  = 4096
)

// AnswerChecker checks a model's answer against its task's JSON Schema (Schema(task)) and returns what is
// wrong, each naming the place, or nil when it matches: schemacheck.Checker. A port rather than a call, so
// that the JSON Schema engine links only into the binaries that run generations (Handle, ResearchWriter)
// and not into the API functions, which only Submit.
type AnswerChecker interface {
	Check(task string, schema, answer json.RawMessage) []string
}

// errNoAnswerChecker is a wiring mistake: a generation runs on a Generator or ResearchWriter built
// without its AnswerChecker.
var errNoAnswerChecker = errors.New("generation: no AnswerChecker configured (Config.Answers, ResearchWriter.Answers)")

// checker is a task's rules beyond its schema (cardinality, one item per enum value, ...): it returns
// what is wrong, for the repair turn.
type checker func(b *Brief, answer json.RawMessage) []string

// ask makes one model call for b.Task and decodes the answer into out. An answer that does not match the
// task's schema (or its rules) gets one repair turn with the errors; a second bad answer is
// GENERATION_FAILED.
func ask(ctx context.Context, answers AnswerChecker, m ai.Model, role ai.Role, b *Brief, u *Usage, check checker, out any) error {
	return askRepairs(ctx, answers, m, role, b, u, check, out, 1)
}

// askRepairs is ask with the number of repair turns given: a bad answer after them is GENERATION_FAILED
// caused by errBadAnswer.
func askRepairs(ctx context.Context, answers AnswerChecker, m ai.Model, role ai.Role, b *Brief, u *Usage, check checker, out any, repairs int) error {
	if answers == nil {
		return errNoAnswerChecker
	}
	schemaTask := b.Task
	if b.Task == TaskRefine {
		schemaTask = b.OriginalTask
	}
	schema, err := Schema(schemaTask)
	if err != nil {
		return err
	}
	sys, usr, err := Render(b)
	if err != nil {
		return err
	}
	temp := writeTemperature
	if role == ai.Grading {
		temp = gradeTemperature
	}
	req := ai.Request{
		Role: role, Task: b.Task, System: sys, Messages: []ai.Message{{Role: "user", Text: usr}},
		Schema: schema, SchemaName: schemaTask, MaxTokens: maxOutputTokens, Temperature: temp, Brief: b,
	}
	allowed := briefURLs(b)
	// When the data holds text addressed to an assistant (an injection attempt in a title, a note, a
	// transcript...), an answer that carries such text on is repaired once, then refused.
	injected := briefAddressesAssistant(b)
	for attempt := 0; ; attempt++ {
		res, err := m.Generate(ctx, req)
		if notJSON, ok := errors.AsType[*ai.AnswerError](err); ok {
			// Text instead of JSON: billed all the same, and repaired once, showing the model its whole
			// answer and why it does not parse.
			u.add(notJSON.Usage)
			if attempt == repairs {
				return &apperr.Error{Code: apperr.GenerationFailed, Cause: errBadAnswer,
					Message: fmt.Sprintf("the model's answer was not JSON%s: %v", repairsSuffix(repairs), notJSON.Err)}
			}
			req.Messages = append(req.Messages,
				ai.Message{Role: "assistant", Text: notJSON.Text},
				ai.Message{Role: "user", Text: "Your answer could not be read as JSON: " + notJSON.Err.Error() +
					"\nAnswer again with the whole answer as one JSON object that matches the required schema, and nothing else."})
			continue
		}
		if err != nil {
			return modelError(ctx, err)
		}
		u.add(res)
		// Model output is plain text: every string is cleaned before it is checked, stored or shown.
		res.JSON = cleanAnswer(res.JSON, allowed)
		problems := answers.Check(schemaTask, schema, res.JSON)
		if len(problems) == 0 {
			problems = noText(schema, res.JSON)
		}
		if len(problems) == 0 && injected {
			problems = assistantText(res.JSON)
		}
		if len(problems) == 0 && check != nil {
			problems = check(b, res.JSON)
		}
		if len(problems) == 0 {
			if err := json.Unmarshal(res.JSON, out); err != nil {
				return &apperr.Error{Code: apperr.GenerationFailed, Message: "the model's answer could not be read", Cause: fmt.Errorf("%w: %w", errBadAnswer, err)}
			}
			return nil
		}
		if attempt == repairs {
			return &apperr.Error{Code: apperr.GenerationFailed, Cause: errBadAnswer,
				Message: fmt.Sprintf("the model's answer did not match the %s schema%s: %s", schemaTask, repairsSuffix(repairs), strings.Join(problems, "; "))}
		}
		req.Messages = append(req.Messages,
			ai.Message{Role: "assistant", Text: string(res.JSON)},
			ai.Message{Role: "user", Text: "Your answer does not match the required schema:\n- " + strings.Join(problems, "\n- ") +
				"\nAnswer again with the whole corrected answer."})
	}
}

func repairsSuffix(repairs int) string {
	switch repairs {
	case 0:
		return ""
	case 1:
		return " after a repair"
	}
	return fmt.Sprintf(" after %d repairs", repairs)
}

// modelError maps a model failure to the API's errors: throttling is RATE_LIMIT (429), anything else
// GENERATION_FAILED (500).
func modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err // the run's own end (its deadline, a shutdown): the caller says what it means
	}
	var me *ai.Error
	retry := 0
	if errors.As(err, &me) {
		retry = int(me.RetryAfter.Seconds())
	}
	if errors.Is(err, ai.ErrThrottled) {
		// The provider's hint, bounded: the message carries it, so a run that failed on it (and answers
		// later, from its stored reason) gives the client the same (RunError).
		retry = min(max(retry, MinRetryAfter), MaxRetryAfter)
		return &apperr.Error{Code: apperr.RateLimit, Message: fmt.Sprintf("the model provider is throttling requests; retry after %d s", retry),
			RetryAfter: retry, Cause: err}
	}
	msg := "the model failed to generate"
	if cause := ai.CauseOf(err); cause != "" {
		msg += ": " + cause
	}
	return &apperr.Error{Code: apperr.GenerationFailed, Message: msg, Cause: err}
}
