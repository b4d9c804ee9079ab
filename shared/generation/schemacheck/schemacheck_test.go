package schemacheck_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
)

// The generation pipeline takes a Checker as its AnswerChecker.
var _ generation.AnswerChecker = (*schemacheck.Checker)(nil)

const schema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"additionalProperties": false,
	"required": ["title", "items"],
	"properties": {
		"title": {"type": "string", "minLength": 1, "maxLength": 10},
		"when": {"type": "string", "format": "date"},
		"items": {"type": "array", "maxItems": 20, "items": {"type": "integer", "minimum": 0}}
	}
}`

func TestCheck(t *testing.T) {
	many := make([]string, 15)
	for i := range many {
		many[i] = "-1"
	}
	cases := []struct {
		name   string
		answer string
		want   []string // each a substring of the problem at the same index; nil: the answer matches
		count  int      // the number of problems, when want is not nil
	}{
		{name: "matches", answer: `{"title":"ok","items":[1,2]}`},
		{name: "matches with a date", answer: `{"title":"ok","items":[],"when":"2025-11-24"}`},
		{name: "missing member", answer: `{"title":"ok"}`, want: []string{"/: ", "items"}, count: 1},
		{name: "member not in the schema", answer: `{"title":"ok","items":[],"extra":1}`, want: []string{"/: ", "extra"}, count: 1},
		{name: "wrong type names the place", answer: `{"title":"ok","items":["x"]}`, want: []string{"/items/0: "}, count: 1},
		{name: "too long", answer: `{"title":"0123456789x","items":[]}`, want: []string{"/title: "}, count: 1},
		{name: "format is asserted", answer: `{"title":"ok","items":[],"when":"24.11.2025"}`, want: []string{"/when: ", "date"}, count: 1},
		{name: "every place", answer: `{"title":"","items":[-1]}`, count: 2},
		{name: "at most ten problems", answer: `{"title":"ok","items":[` + strings.Join(many, ",") + `]}`, count: 10},
		{name: "not JSON", answer: `{"title":`, want: []string{"the answer is not JSON"}, count: 1},
	}
	c := schemacheck.New()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Check("task", json.RawMessage(schema), json.RawMessage(tc.answer))
			if tc.count == 0 {
				if got != nil {
					t.Fatalf("Check = %q, want nil", got)
				}
				return
			}
			if len(got) != tc.count {
				t.Fatalf("Check = %q (%d problems), want %d", got, len(got), tc.count)
			}
			for i, w := range tc.want {
				if !strings.Contains(strings.Join(got, "\n"), w) {
					t.Errorf("problem %d: %q does not say %q", i, got, w)
				}
			}
		})
	}
}

func TestBadSchemaIsAProblem(t *testing.T) {
	for _, s := range []string{`{"type":`, `{"type":"no such type"}`} {
		got := schemacheck.New().Check("broken", json.RawMessage(s), json.RawMessage(`{}`))
		if len(got) != 1 || !strings.Contains(got[0], "broken schema") {
			t.Errorf("schema %s: Check = %q, want one problem naming the schema", s, got)
		}
	}
}

// A task's schema is compiled once: a task name is the cache key, so a second schema under the same name
// is not read. Each Checker has its own cache.
func TestCompiledOncePerTask(t *testing.T) {
	c := schemacheck.New()
	if got := c.Check("t", json.RawMessage(`{"type":"string"}`), json.RawMessage(`"x"`)); got != nil {
		t.Fatalf("first schema: %q", got)
	}
	if got := c.Check("t", json.RawMessage(`{"type":"integer"}`), json.RawMessage(`"x"`)); got != nil {
		t.Errorf("the task's compiled schema was not reused: %q", got)
	}
	if got := schemacheck.New().Check("t", json.RawMessage(`{"type":"integer"}`), json.RawMessage(`"x"`)); got == nil {
		t.Error("another Checker used the first one's schema")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := schemacheck.New()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			task := fmt.Sprintf("t%d", i%4)
			if got := c.Check(task, json.RawMessage(schema), json.RawMessage(`{"title":"ok","items":[]}`)); got != nil {
				errs <- fmt.Errorf("%s: %q", task, got)
			}
			if got := c.Check(task, json.RawMessage(schema), json.RawMessage(`{"title":"ok"}`)); len(got) != 1 {
				errs <- fmt.Errorf("%s: %q, want one problem", task, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
