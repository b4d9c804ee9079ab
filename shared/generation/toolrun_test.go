package generation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
)

func TestSummarizeIsBounded(t *testing.T) {
	long := strings.Repeat("é", SearchOutputRunes+50)
	r := ToolRun{
		ToolName: "long_scripts",
		Input:    json.RawMessage(`{"Title":"Knife SKILLS","count":3,"nested":{"tags":["A","b"]},"flag":true,"none":null}`),
		Output:   json.RawMessage(`{"script":"` + long + `","after":"never reached"}`),
	}
	s := Summarize(r)
	in, out, ok := strings.Cut(s.Text, "\n\u00e9")
	if !ok || s.Tool != "long_scripts" {
		t.Fatalf("summary %+v", s)
	}
	if in != "knife skills\n3\na\nb\ntrue" {
		t.Errorf("input values %q; want them in document order, lower case, keys and null left out", in)
	}
	if n := len([]rune(out)) + 1; n != SearchOutputRunes || strings.Contains(s.Text, "never") {
		t.Errorf("output text of %d characters; want the first %d", n, SearchOutputRunes)
	}

	bigInput := `{"a":"` + strings.Repeat("x", 150) + `","b":"` + strings.Repeat("y", 150) + `"}`
	s = Summarize(ToolRun{ToolName: "t", Input: json.RawMessage(bigInput), Output: json.RawMessage(`"plain OUTPUT"`)})
	in, out, _ = strings.Cut(s.Text, "\n\n")
	if got := strings.Count(in, "x") + strings.Count(in, "y"); got != SearchInputRunes {
		t.Errorf("input text holds %d characters; want %d", got, SearchInputRunes)
	}
	if !strings.HasSuffix(s.Text, "\nplain output") {
		t.Errorf("a scalar output: %q", s.Text)
	}
	if empty := Summarize(ToolRun{ToolName: "t"}); empty.Text != "\n" {
		t.Errorf("a run without input or output: %q", empty.Text)
	}
	if bad := Summarize(ToolRun{ToolName: "t", Output: json.RawMessage(`{not json`)}); len(bad.Text) > SearchOutputRunes+1 {
		t.Errorf("invalid JSON: %q", bad.Text)
	}
}

func TestMatches(t *testing.T) {
	s := Summary{Tool: "titles", Text: "sourdough\n\nbread 101"}
	for _, c := range []struct {
		tool, needle string
		want         bool
	}{
		{"", "", true}, {"all", "", true}, {"titles", "", true}, {"hooks", "", false},
		{"", "sourdough", true}, {"", "titl", true}, {"", "bread 1", true}, {"", "pasta", false},
		{"hooks", "sourdough", false},
	} {
		if got := s.Matches(c.tool, c.needle); got != c.want {
			t.Errorf("Matches(%q, %q) = %t", c.tool, c.needle, got)
		}
	}
}

func TestComplete(t *testing.T) {
	model, tokens := "m", 5
	pending := ToolRun{ID: "r", ToolName: "titles", Status: Pending, Input: json.RawMessage(`{"a":1}`)}
	done, err := pending.Complete(Completion{Status: Success, Output: json.RawMessage(`{"b":2}`), InputTokens: &tokens, OutputTokens: &tokens, Model: &model})
	if err != nil || done.Status != Success || string(done.Output) != `{"b":2}` || *done.Model != "m" ||
		done.ToolName != "titles" || string(done.Input) != `{"a":1}` {
		t.Fatalf("Complete = %+v, %v", done, err)
	}
	if _, err := done.Complete(Completion{Status: Failed}); apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("completing a finished run: %v; want CONFLICT", err)
	}
	for _, st := range []RunStatus{Pending, "", "done"} {
		if _, err := pending.Complete(Completion{Status: st}); apperr.CodeOf(err) != apperr.Validation {
			t.Errorf("completing as %q: %v; want VALIDATION_ERROR", st, err)
		}
	}
	if failed, err := pending.Complete(Completion{Status: Failed}); err != nil || failed.Status != Failed {
		t.Errorf("failing a run: %+v, %v", failed, err)
	}
}
