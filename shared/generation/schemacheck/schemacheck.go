// Package schemacheck checks a model's answer against its task's JSON Schema (draft 2020-12, formats
// asserted) with santhosh-tekuri/jsonschema: the generation pipeline's AnswerChecker.
//
// It is a package of its own so that only the binaries that run generations (the generation and research
// workers, the local stack) link that library: its package init compiles every draft's meta-schemas, about
// 3-4 ms and 1.7 MB of allocations, which every API function paid on its cold start when the pipeline
// imported it directly.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxProblems bounds what Check reports: enough for a repair turn, short enough for its prompt.
const maxProblems = 10

// Checker compiles each task's schema once, on first use, and checks answers against it. The zero value
// is not usable: call New. Safe for concurrent use.
type Checker struct {
	printer  *message.Printer
	compiled sync.Map // task -> *jsonschema.Schema
}

// New returns a Checker. Its messages are in English, the language of the repair turn.
func New() *Checker {
	return &Checker{printer: message.NewPrinter(language.English)}
}

// Check returns what is wrong with answer against schema, each naming the place (at most maxProblems),
// or nil when it matches. task names the schema in the Checker's cache: a task must always come with the
// same schema (generation.Schema(task) does).
func (c *Checker) Check(task string, schema, answer json.RawMessage) []string {
	s, err := c.compile(task, schema)
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
		out = append(out, at+": "+leaf.ErrorKind.LocalizedString(c.printer))
		if len(out) == maxProblems {
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

func (c *Checker) compile(task string, raw json.RawMessage) (*jsonschema.Schema, error) {
	if s, ok := c.compiled.Load(task); ok {
		return s.(*jsonschema.Schema), nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("generation: %s schema: %w", task, err)
	}
	jc := jsonschema.NewCompiler()
	jc.AssertFormat()
	if err := jc.AddResource(task+".json", doc); err != nil {
		return nil, fmt.Errorf("generation: %s schema: %w", task, err)
	}
	s, err := jc.Compile(task + ".json")
	if err != nil {
		return nil, fmt.Errorf("generation: %s schema: %w", task, err)
	}
	c.compiled.Store(task, s)
	return s, nil
}
