// Package generation holds AI generation: tool runs (the generation records that make up the history).
package generation

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/page"
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
	InputTokens  *int            `json:"inputTokens"`
	OutputTokens *int            `json:"outputTokens"`
	Model        *string         `json:"model"`
	GeneratedAt  time.Time       `json:"generatedAt"`
}

// HistoryRepository is what the history needs from storage.
type HistoryRepository interface {
	// ListToolRuns returns the channel's runs, newest first.
	ListToolRuns(ctx context.Context, channelID string) ([]ToolRun, error)
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
// case-insensitive substring match over the tool name, the input values and the output text
// (decision 15).
func (h *History) List(ctx context.Context, channelID string, q HistoryQuery) ([]ToolRun, int, error) {
	runs, err := h.repo.ListToolRuns(ctx, channelID)
	if err != nil {
		return nil, 0, err
	}
	needle := strings.ToLower(q.Search)
	matching := runs[:0]
	for _, r := range runs {
		if q.Tool != "" && q.Tool != "all" && r.ToolName != q.Tool {
			continue
		}
		if needle != "" && !r.matches(needle) {
			continue
		}
		matching = append(matching, r)
	}
	return page.Of(matching, q.Limit, q.Offset), len(matching), nil
}

// matches reports whether needle (lower case) occurs in the tool name, any input value or the output text.
func (r ToolRun) matches(needle string) bool {
	if strings.Contains(strings.ToLower(r.ToolName), needle) {
		return true
	}
	var input any
	if len(r.Input) > 0 && json.Unmarshal(r.Input, &input) == nil && valuesContain(input, needle) {
		return true
	}
	var output any
	return len(r.Output) > 0 && json.Unmarshal(r.Output, &output) == nil && valuesContain(output, needle)
}

// valuesContain walks a decoded JSON value and looks for needle in its scalar values (not its keys, so
// searching "title" does not match every titles run by its field names).
func valuesContain(v any, needle string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(strings.ToLower(x), needle)
	case map[string]any:
		for _, e := range x {
			if valuesContain(e, needle) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if valuesContain(e, needle) {
				return true
			}
		}
	case json.Number, float64, bool:
		b, _ := json.Marshal(x)
		return strings.Contains(string(b), needle)
	}
	return false
}
