package generation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/videos"
)

// Issue 19 item 11: a generation without a body (POST /niche-score) keeps {} as its input, an object as the
// contract says, not null.
func TestBodilessRunKeepsAnObjectInput(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.answers[generation.TaskNicheScore] = []string{`{}`}
	out, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "scoreNiche", ChannelID: "ch1",
		AccountID: "acct1", Body: (*contract.NicheScoreRequest)(nil), Async: true})
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := e.st.GetRun(context.Background(), "ch1", out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if string(run.Input) != "{}" {
		t.Errorf("input = %s, want {}", run.Input)
	}
	b, _ := json.Marshal(run)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, ok := m["input"].(map[string]any); !ok {
		t.Errorf("ToolRun.input = %v, want an object", m["input"])
	}
}

// Issue 19 item 12: identical concurrent requests with one Idempotency-Key all get the same answer: the
// same run, no 409, one job.
func TestConcurrentSameIdempotencyKey(t *testing.T) {
	for round := range 7 {
		e := newEnv(t, 1000)
		e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
		e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
		in := contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}
		if err := in.Validate(); err != nil {
			t.Fatal(err)
		}
		const n = 20
		var wg sync.WaitGroup
		start := make(chan struct{})
		runs := make([]string, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "generateTitles",
					ChannelID: "ch1", AccountID: "acct1", Body: &in, IdempotencyKey: "same-key", Async: true})
				runs[i], errs[i] = out.RunID, err
			}()
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d: call %d: %v", round, i, errs[i])
			}
			if runs[i] != runs[0] {
				t.Fatalf("round %d: call %d got run %s, call 0 run %s", round, i, runs[i], runs[0])
			}
		}
		if got := e.q.sent.Load(); got != 1 {
			t.Errorf("round %d: %d jobs queued for one key", round, got)
		}
	}
}

// Issue 19 item 13: concurrent generations of ideas near the backlog's cap answer as a call at the cap
// does: ideas added, or 400 VALIDATION_ERROR when the backlog filled up meanwhile; never 200 with no ideas.
func TestConcurrentIdeasAtTheBacklogCap(t *testing.T) {
	e := newEnv(t, 1000, withResearch)
	fillBacklog(t, e, videos.MaxBacklog-10)
	const n = 12
	var answers []string
	for call := range n {
		var items []string
		for i := range 20 {
			items = append(items, fmt.Sprintf(`{"title":"Idea %d of call %d","contentType":"Long","formulaType":"story"}`, i, call))
		}
		answers = append(answers, `{"ideas":[`+strings.Join(items, ",")+`]}`)
	}
	e.writer.answers[generation.TaskIdeas] = answers
	var wg sync.WaitGroup
	start := make(chan struct{})
	outs := make([]generation.Outcome, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			outs[i], errs[i] = submitIdeas(e, ideasIn(t, `{"count":20}`), "")
		}()
	}
	close(start)
	wg.Wait()
	added := 0
	for i := range n {
		if errs[i] != nil {
			if apperr.CodeOf(errs[i]) != apperr.Validation || !strings.Contains(errs[i].Error(), "the idea backlog holds") {
				t.Errorf("call %d: %v, want ideas or the full backlog's VALIDATION_ERROR", i, errs[i])
			}
			continue
		}
		got := addedIdeas(t, outs[i])
		if len(got) == 0 {
			t.Errorf("call %d: 200 with no ideas, where a call at the cap answers 400", i)
		}
		added += len(got)
	}
	if added != 10 {
		t.Errorf("%d ideas added, want the 10 the backlog had room for", added)
	}
	if _, err := submitIdeas(e, ideasIn(t, `{"count":20}`), ""); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("a call at the cap: %v, want VALIDATION_ERROR", err)
	}
}
