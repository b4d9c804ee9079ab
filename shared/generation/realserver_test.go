package generation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/queue"
)

// textFirst answers its first call in prose (an ai.AnswerError, as the adapters return it), then hands
// over to next.
type textFirst struct {
	mu    sync.Mutex
	texts []string
	next  ai.Model
	calls []ai.Request
}

func (m *textFirst) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	m.mu.Lock()
	m.calls = append(m.calls, req)
	if len(m.texts) > 0 {
		text := m.texts[0]
		m.texts = m.texts[1:]
		m.mu.Unlock()
		return ai.Result{}, &ai.AnswerError{Text: text, Err: errors.New("the answer does not start with a JSON object"),
			Usage: ai.Result{InputTokens: 7, OutputTokens: 3, Model: "local"}}
	}
	m.mu.Unlock()
	return m.next.Generate(ctx, req)
}

var longOnly = contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}

// A prose answer gets exactly one repair turn that shows the model its whole answer and the parse error.
func TestNotJSONAnswerIsRepairedOnce(t *testing.T) {
	const prose = "Sure! Here are some titles for you:\n1. Edit faster"
	var model *textFirst
	e := newEnv(t, 100, func(e *env, c *generation.Config) {
		model = &textFirst{texts: []string{prose}, next: e.writer}
		c.Models.Writer = model
	})
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	out, err := titles(t, e, longOnly, "")
	if err != nil || !out.Done {
		t.Fatalf("%+v, %v", out, err)
	}
	if len(model.calls) != 2 {
		t.Fatalf("%d writer calls, want 2", len(model.calls))
	}
	msgs := model.calls[1].Messages
	if len(msgs) != 3 || msgs[1].Role != "assistant" || msgs[1].Text != prose ||
		!strings.Contains(msgs[2].Text, "could not be read as JSON: the answer does not start with a JSON object") {
		t.Errorf("repair turn %+v", msgs)
	}

	// Prose twice: the run fails with the reason, after two billed calls.
	e = newEnv(t, 100, func(e *env, c *generation.Config) {
		c.Models.Writer = &textFirst{texts: []string{prose, prose}, next: e.writer}
	})
	_, err = titles(t, e, longOnly, "")
	ae, _ := apperr.As(err)
	if ae == nil || ae.Code != apperr.GenerationFailed || !strings.Contains(ae.Message, "the model's answer was not JSON after a repair") {
		t.Fatalf("err %v", err)
	}
}

// hanging never answers: it waits for its context, like a call to a server that does not answer.
type hanging struct{}

func (hanging) Generate(ctx context.Context, _ ai.Request) (ai.Result, error) {
	<-ctx.Done()
	return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: ctx.Err()}
}

// Past its deadline a run fails for good with its reason, instead of staying pending.
func TestRunDeadline(t *testing.T) {
	e := newEnv(t, 100, func(e *env, c *generation.Config) {
		c.Models.Writer = hanging{}
		c.Deadline = 30 * time.Millisecond
	})
	_, err := titles(t, e, longOnly, "")
	ae, _ := apperr.As(err)
	if ae == nil || ae.Code != apperr.GenerationFailed || ae.Message != "the model did not answer in time" {
		t.Fatalf("err %v", err)
	}
	page, _, _ := e.st.RunPage(context.Background(), "ch1", "titles", nil, 10, 0)
	if len(page) != 1 || !strings.Contains(string(page[0]), `"status":"failed"`) || !strings.Contains(string(page[0]), "did not answer in time") {
		t.Errorf("stored run %s", page)
	}
	// No model call answered, so none was billed: the unit is given back (issue 19 item 4).
	if n, _, _, _ := e.st.GenerationUsage(context.Background(), "acct1", time.Now().UTC().Format("2006-01")); n != 0 {
		t.Errorf("quota count %d, want 0", n)
	}
}

// A stopping worker (its context cancelled) leaves the run pending for the next delivery.
func TestStoppedWorkerLeavesTheRunPending(t *testing.T) {
	e := newEnv(t, 100, func(e *env, c *generation.Config) { c.Models.Writer = hanging{} })
	e.q.handle = func(context.Context, queue.Message) error { return nil } // the job is handled below
	out, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "generateTitles", ChannelID: "ch1", AccountID: "acct1", Body: &longOnly, Async: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	job, _ := json.Marshal(generation.Job{RunID: out.RunID, ChannelID: "ch1", AccountID: "acct1", Operation: "generateTitles"})
	if err := e.gen.Handle(ctx, queue.Message{Body: job, Attempt: 3}); err == nil {
		t.Fatal("a stopped run was acknowledged")
	}
	run, err := e.gen.Run(context.Background(), "ch1", out.RunID)
	if err != nil || run.Status != generation.Pending {
		t.Fatalf("run %+v, %v", run, err)
	}
}

// The provider's Retry-After reaches the client, bounded, also from the stored run.
func TestThrottleHintReachesTheClient(t *testing.T) {
	for _, tc := range []struct {
		hint time.Duration
		want int
	}{{17 * time.Second, 17}, {2 * time.Hour, generation.MaxRetryAfter}, {0, generation.MinRetryAfter}} {
		e := newEnv(t, 100)
		e.writer.err = &ai.Error{Kind: ai.ErrThrottled, RetryAfter: tc.hint, Err: errors.New("429")}
		_, err := titles(t, e, longOnly, "")
		ae, _ := apperr.As(err)
		if ae == nil || ae.Code != apperr.RateLimit || ae.RetryAfter != tc.want {
			t.Errorf("hint %s: err %v (%+v), want Retry-After %d", tc.hint, err, ae, tc.want)
		}
	}
}

// A refinement answers to its original tool's rules: a refined CTA set that lost a slot is repaired, and
// fails when the repair loses it again.
func TestRefineAppliesTheOriginalChecks(t *testing.T) {
	ctas := func(slots ...string) string {
		var parts []string
		for _, s := range slots {
			parts = append(parts, `{"slotPosition":"`+s+`","label":"L","text":"Subscribe for more"}`)
		}
		return `{"ctas":[` + strings.Join(parts, ",") + `]}`
	}
	full, lost := ctas("early", "middle", "end", "extra_1", "extra_2"), ctas("early", "middle", "end", "extra_1", "extra_1")
	for _, tc := range []struct {
		name    string
		answers []string
		ok      bool
	}{{"repaired", []string{lost, full}, true}, {"lost twice", []string{lost, lost}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 100)
			e.writer.answers[generation.TaskCTAs] = []string{full}
			out, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "generateCtas", ChannelID: "ch1", AccountID: "acct1", Body: &contract.CTAsRequest{}})
			if err != nil || !out.Done {
				t.Fatalf("%+v, %v", out, err)
			}
			e.writer.answers[generation.TaskRefine] = tc.answers
			res, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "refine", ChannelID: "ch1", AccountID: "acct1",
				Body: &contract.RefineRequest{GenerationID: out.RunID, Feedback: "warmer"}})
			if tc.ok {
				if err != nil || !strings.Contains(string(res.Output), `"extra_2"`) {
					t.Fatalf("%s, %v", res.Output, err)
				}
			} else if !strings.Contains(fmt.Sprint(err), "write exactly one per slotPosition") {
				t.Fatalf("err %v", err)
			}
			if n := e.writer.count(generation.TaskRefine); n != 2 {
				t.Errorf("%d refine calls, want 2", n)
			}
		})
	}
}
