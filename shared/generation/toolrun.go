// Package generation holds AI generation: tool runs (the generation records that make up the history).
package generation

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/apperr"
)

// RunStatus is the state of a tool run.
type RunStatus string

const (
	Success RunStatus = "success"
	Failed  RunStatus = "failed"
	Pending RunStatus = "pending"
)

// ToolRun is one generation record.
type ToolRun struct {
	ID           string          `json:"id"`
	ToolName     string          `json:"toolName"`
	Status       RunStatus       `json:"status"`
	Input        json.RawMessage `json:"input,omitempty"`
	Output       json.RawMessage `json:"output,omitempty"`
	Error        *string         `json:"error,omitempty"` // why a failed run failed: "CODE: message"
	InputTokens  *int            `json:"inputTokens"`
	OutputTokens *int            `json:"outputTokens"`
	Model        *string         `json:"model"`
	GeneratedAt  time.Time       `json:"generatedAt"`
}

// Stored is a run as the store serves it: the JSON of the ToolRun shape, passed through as it is.
type Stored = json.RawMessage

// Completion is what a finished generation adds to its pending run.
type Completion struct {
	Status       RunStatus // Success or Failed
	Output       json.RawMessage
	Error        *string // a failed run's reason
	InputTokens  *int
	OutputTokens *int
	Model        *string
}

// Complete returns r finished with c. Only a pending run is completed, once, and only to success or
// failed; the tool and the input never change.
func (r ToolRun) Complete(c Completion) (ToolRun, error) {
	if r.Status != Pending {
		return ToolRun{}, apperr.Conflictf("run %s is %s already", r.ID, r.Status)
	}
	if c.Status != Success && c.Status != Failed {
		return ToolRun{}, apperr.Invalid("status", "a run completes as success or failed, not %q", c.Status)
	}
	r.Status, r.Output, r.Error, r.InputTokens, r.OutputTokens, r.Model = c.Status, c.Output, c.Error, c.InputTokens, c.OutputTokens, c.Model
	return r, nil
}

// Search looks at a bounded part of each run (decision 15, bounded so a history page never reads outputs
// to search them): the tool name, the input values up to SearchInputRunes characters and the output's
// values up to SearchOutputRunes characters, in document order. The contract's listHistory description
// states the same bounds.
const (
	SearchInputRunes  = 200
	SearchOutputRunes = 300
)

// Summary is what the history's filters look at of a run, kept apart from the run so a search reads
// summaries only: the tool name and the run's search text (lower case, bounded as above).
type Summary struct {
	Tool string
	Text string
}

// Summarize returns the summary of r.
func Summarize(r ToolRun) Summary {
	b := make([]byte, 0, 64)
	b = appendValues(b, gjson.ParseBytes(r.Input), SearchInputRunes)
	b = append(b, '\n')
	b = appendValues(b, gjson.ParseBytes(r.Output), SearchOutputRunes)
	return Summary{Tool: r.ToolName, Text: strings.ToLower(string(b))}
}

// appendValues appends the scalar values of v in document order, separated by newlines, up to max
// characters (cut at a character boundary). Object keys are left out, so searching "title" does not match
// every titles run by its field names.
func appendValues(b []byte, v gjson.Result, max int) []byte {
	budget := max
	var walk func(v gjson.Result) bool
	walk = func(v gjson.Result) bool {
		var text string
		switch v.Type {
		case gjson.JSON:
			v.ForEach(func(_, e gjson.Result) bool { return walk(e) })
			return budget > 0
		case gjson.String:
			text = v.Str
		case gjson.Number, gjson.True, gjson.False:
			text = v.Raw
		default:
			return true
		}
		if text == "" {
			return true
		}
		if budget < max {
			b = append(b, '\n')
		}
		for _, r := range text {
			if budget == 0 {
				return false
			}
			b = utf8.AppendRune(b, r)
			budget--
		}
		return budget > 0
	}
	walk(v)
	return b
}

// Matches reports whether the run summarised by s is of tool ("" or "all": any) and contains needle
// (lower case; "" matches every run).
func (s Summary) Matches(tool, needle string) bool {
	return (tool == "" || tool == "all" || s.Tool == tool) &&
		(needle == "" || strings.Contains(s.Tool, needle) || strings.Contains(s.Text, needle))
}

// HistoryRepository is what the history needs from storage.
type HistoryRepository interface {
	// RunPage returns the runs [offset, offset+limit) of tool ("": every tool), newest first, and how many
	// runs of the tool there are. With match set, only runs whose summary it accepts count.
	RunPage(ctx context.Context, channelID, tool string, match func(Summary) bool, limit, offset int) ([]Stored, int, error)
}

// History lists tool runs.
type History struct{ repo HistoryRepository }

// NewHistory returns the history service.
func NewHistory(repo HistoryRepository) *History { return &History{repo: repo} }

// HistoryQuery filters the history; Tool "" or "all" matches every tool.
type HistoryQuery struct {
	Tool   string
	Search string
	Limit  int
	Offset int
}

// List returns one page of matching runs, newest first, and the number of matching runs. Search is a
// case-insensitive substring match over the tool name and the bounded search text (decision 15; see
// SearchInputRunes).
func (h *History) List(ctx context.Context, channelID string, q HistoryQuery) ([]Stored, int, error) {
	tool := q.Tool
	if tool == "all" {
		tool = ""
	}
	var match func(Summary) bool
	if q.Search != "" {
		needle := strings.ToLower(q.Search)
		match = func(s Summary) bool { return s.Matches(tool, needle) }
	}
	if q.Limit <= 0 || q.Offset < 0 {
		return []Stored{}, 0, apperr.Invalid("limit", "limit must be at least 1 and offset at least 0")
	}
	return h.repo.RunPage(ctx, channelID, tool, match, q.Limit, q.Offset)
}
