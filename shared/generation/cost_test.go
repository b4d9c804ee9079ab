package generation_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
)

// Issue 19 item 4: a failed generation that called a model spends its quota unit, and its run keeps the
// tokens it was billed for. With a model that answers `{}` (every answer breaks the schema), N calls over a
// quota of N make N failures; the calls after them are USAGE_LIMIT and call no model.
func TestFailedRunAfterModelCallsSpendsItsUnit(t *testing.T) {
	const quota, calls = 8, 12
	e := newEnv(t, quota)
	e.writer.answers[generation.TaskTitles] = []string{`{}`}
	in := contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}
	failures, limited := 0, 0
	for range calls {
		_, err := titles(t, e, in, "")
		switch apperr.CodeOf(err) {
		case apperr.GenerationFailed:
			failures++
		case apperr.UsageLimit:
			limited++
		default:
			t.Fatalf("err = %v", err)
		}
	}
	paid := e.writer.count("") + e.grader.count("")
	t.Logf("%d calls: %d failures, %d USAGE_LIMIT, %d paid model calls", calls, failures, limited, paid)
	if failures != quota || limited != calls-quota || paid != 2*quota {
		t.Errorf("%d calls: %d failures, %d USAGE_LIMIT, %d paid model calls; want %d, %d, %d", calls, failures, limited, paid, quota, calls-quota, 2*quota)
	}
	if n, _, _, _ := e.st.GenerationUsage(context.Background(), "acct1", time.Now().UTC().Format("2006-01")); n != quota {
		t.Errorf("quota count %d, want %d", n, quota)
	}
	// GET /me reads the month's generations and billed tokens from here.
	if n, in, out, err := e.st.GenerationUsage(context.Background(), "acct1", time.Now().UTC().Format("2006-01")); err != nil ||
		n != quota || in != quota*200 || out != quota*100 {
		t.Errorf("month usage: %d generations, %d/%d tokens (%v); want %d, %d/%d", n, in, out, err, quota, quota*200, quota*100)
	}
	page, _, err := e.st.RunPage(context.Background(), "ch1", "titles", nil, 1, 0)
	if err != nil || len(page) != 1 {
		t.Fatal(page, err)
	}
	var r generation.ToolRun
	if err := json.Unmarshal(page[0], &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != generation.Failed || r.InputTokens == nil || *r.InputTokens != 200 || r.OutputTokens == nil || *r.OutputTokens != 100 {
		t.Errorf("failed run = %s, want inputTokens 200, outputTokens 100 (two billed calls)", page[0])
	}
}

// A run that failed before any model call was billed gives its unit back and stores no tokens.
func TestFailedRunWithoutModelCallRefunds(t *testing.T) {
	e := newEnv(t, 1)
	e.writer.err = errors.New("connection refused")
	in := contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}
	for range 3 {
		if _, err := titles(t, e, in, ""); apperr.CodeOf(err) != apperr.GenerationFailed {
			t.Fatalf("err = %v, want GENERATION_FAILED", err)
		}
	}
	if n, _, _, _ := e.st.GenerationUsage(context.Background(), "acct1", time.Now().UTC().Format("2006-01")); n != 0 {
		t.Errorf("quota count %d after failures no model billed, want 0", n)
	}
	page, _, _ := e.st.RunPage(context.Background(), "ch1", "titles", nil, 1, 0)
	var r generation.ToolRun
	_ = json.Unmarshal(page[0], &r)
	if r.InputTokens != nil && *r.InputTokens != 0 {
		t.Errorf("failed run = %s, want no tokens", page[0])
	}
}
