// Package textmodel is the offline text model, a stand-in of the local stack and the tests that no Lambda
// links: the model adapter that needs no network and no account, so `make run` generates with no model
// configured.
//
// It is schema-driven: it fills the JSON Schema of the task's answer (the request's Schema, or
// generation.Schema of the task) from a small English vocabulary made of the brief (the request's title or
// topic, the profile's niche, keywords and audience), within every bound the schema sets (enum,
// minLength/maxLength, pattern, minItems/maxItems, minimum/maximum). A task needs a hook (hooks.go) only
// where a check of the pipeline asks for content no schema can say: word counts and cues of scripts, clip
// times inside the transcript, one grade per title, ideas from the listed outliers. A new tool needs no code
// here unless it adds such a check.
//
// The same brief always gives the same bytes: every choice comes from a generator seeded with a hash of the
// task and the brief. Every answer is English; for a channel in another language, its main text starts with
// Marker, so what was written in English is labelled as such.
package textmodel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/research"
)

// Name is the model name every answer reports.
const Name = "offline"

// Marker starts the main text of an answer for a channel whose language is not English.
const Marker = "[offline sample, written in english]"

// Model is the offline model. The zero value is ready to use; it holds no state.
type Model struct{}

// New returns the offline model.
func New() *Model { return &Model{} }

var _ ai.Model = (*Model)(nil)

// errUnknownTask is wrapped in the ai.Error of a task that has no schema.
var errUnknownTask = errors.New("no such task")

// Generate writes the answer of req.Task from req.Brief, which must be set.
func (m *Model) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	if err := ctx.Err(); err != nil {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	b := req.Brief
	if b == nil {
		return ai.Result{}, failed(errors.New("the offline model writes from the request's brief, and it has none"))
	}
	task := cmp.Or(req.Task, b.Task)
	if task == generation.TaskRefine { // a refinement answers in its original task's schema and rules
		task = b.OriginalTask
	}
	raw := req.Schema
	if len(raw) == 0 {
		var err error
		if raw, err = generation.Schema(task); err != nil {
			return ai.Result{}, failed(fmt.Errorf("task %q: %w", task, errUnknownTask))
		}
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return ai.Result{}, failed(fmt.Errorf("task %q: schema: %w", task, err))
	}
	// The seed hashes the whole brief; its raw JSON fields go in as bytes, so a malformed one still hashes.
	seedJSON, err := json.Marshal(struct {
		*generation.Brief
		Input    []byte `json:"input"`
		Original []byte `json:"original"`
	}{b, b.Input, b.Original})
	if err != nil {
		return ai.Result{}, failed(fmt.Errorf("brief: %w", err))
	}
	seed := hash(task, seedJSON)
	answer, err := json.Marshal(newWriter(b, task, seed, false).answer(schema))
	if err == nil && addressesAssistant(answer) {
		// Words of the brief, put side by side, read as an instruction to an assistant, which the pipeline
		// refuses to pass on: write from the neutral vocabulary instead.
		answer, err = json.Marshal(newWriter(b, task, seed, true).answer(schema))
	}
	if err != nil {
		return ai.Result{}, failed(fmt.Errorf("answer: %w", err))
	}
	in := utf8.RuneCountInString(req.System)
	for _, msg := range req.Messages {
		in += utf8.RuneCountInString(msg.Text)
	}
	if in == 0 { // no prompt rendered: the brief is what was read
		in = utf8.RuneCount(seedJSON)
	}
	return ai.Result{JSON: answer, InputTokens: tokens(in), OutputTokens: tokens(utf8.RuneCount(answer)), Model: Name}, nil
}

// tokens estimates a token count from a character count (about four characters a token).
func tokens(chars int) int { return (chars + 3) / 4 }

func hash(task string, brief []byte) uint64 {
	h := fnv.New64a()
	h.Write([]byte(task))
	h.Write([]byte{0})
	h.Write(brief)
	return h.Sum64()
}

func failed(err error) error {
	return &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("offline: %w", err)}
}

// addressesAssistant reports whether any string of the answer reads as text addressed to an assistant.
func addressesAssistant(answer []byte) bool {
	var v any
	_ = json.Unmarshal(answer, &v)
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			found = found || research.AddressesAssistant(x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}
