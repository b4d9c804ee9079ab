package generation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

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
	if u.Model == "" {
		u.Model = r.Model
	}
}

// Inference settings per role: writing wants variety, grading wants the same grade twice.
const (
	writeTemperature = 0.8
	gradeTemperature = 0.1
	maxOutputTokens  = 4096
)

// checker is a task's rules beyond its schema (cardinality, one item per enum value, ...): it returns
// what is wrong, for the repair turn.
type checker func(b *Brief, answer json.RawMessage) []string

// ask makes one model call for b.Task and decodes the answer into out. An answer that does not match the
// task's schema (or its rules) gets one repair turn with the errors; a second bad answer is
// GENERATION_FAILED.
func ask(ctx context.Context, m ai.Model, role ai.Role, b *Brief, u *Usage, check checker, out any) error {
	return askRepairs(ctx, m, role, b, u, check, out, 1)
}

// askRepairs is ask with the number of repair turns given: a bad answer after them is GENERATION_FAILED
// caused by errBadAnswer.
func askRepairs(ctx context.Context, m ai.Model, role ai.Role, b *Brief, u *Usage, check checker, out any, repairs int) error {
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
	for attempt := 0; ; attempt++ {
		res, err := m.Generate(ctx, req)
		if err != nil {
			return modelError(err)
		}
		u.add(res)
		problems := validateAnswer(schemaTask, res.JSON)
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
			after := ""
			switch repairs {
			case 0:
			case 1:
				after = " after a repair"
			default:
				after = fmt.Sprintf(" after %d repairs", repairs)
			}
			return &apperr.Error{Code: apperr.GenerationFailed, Cause: errBadAnswer,
				Message: fmt.Sprintf("the model's answer did not match the %s schema%s: %s", schemaTask, after, strings.Join(problems, "; "))}
		}
		req.Messages = append(req.Messages,
			ai.Message{Role: "assistant", Text: string(res.JSON)},
			ai.Message{Role: "user", Text: "Your answer does not match the required schema:\n- " + strings.Join(problems, "\n- ") +
				"\nAnswer again with the whole corrected answer."})
	}
}

// modelError maps a model failure to the API's errors: throttling is RATE_LIMIT (429), anything else
// GENERATION_FAILED (500).
func modelError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var me *ai.Error
	retry := 0
	if errors.As(err, &me) {
		retry = int(me.RetryAfter.Seconds())
	}
	if errors.Is(err, ai.ErrThrottled) {
		return &apperr.Error{Code: apperr.RateLimit, Message: "the model provider is throttling requests; retry later",
			RetryAfter: max(retry, 10), Cause: err}
	}
	return &apperr.Error{Code: apperr.GenerationFailed, Message: "the model failed to generate", Cause: err}
}

// printer writes validation errors in English, the language of the repair turn.
var printer = message.NewPrinter(language.English)

var compiled sync.Map // task → *jsonschema.Schema

// validateAnswer checks a model's answer against its task's schema and returns what is wrong, each
// naming the place.
func validateAnswer(task string, answer json.RawMessage) []string {
	s, err := compiledSchema(task)
	if err != nil {
		return []string{err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(answer))
	if err != nil {
		return []string{"the answer is not JSON: " + err.Error()}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	for _, leaf := range leaves(ve) {
		at := "/" + strings.Join(leaf.InstanceLocation, "/")
		out = append(out, at+": "+leaf.ErrorKind.LocalizedString(printer))
		if len(out) == 10 {
			break
		}
	}
	return out
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func compiledSchema(task string) (*jsonschema.Schema, error) {
	if s, ok := compiled.Load(task); ok {
		return s.(*jsonschema.Schema), nil
	}
	raw, err := Schema(task)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(task+".json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(task + ".json")
	if err != nil {
		return nil, fmt.Errorf("generation: %s schema: %w", task, err)
	}
	compiled.Store(task, s)
	return s, nil
}
