package generation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

// scripted is a model whose answers the test writes per task; it records every request.
type scripted struct {
	mu      sync.Mutex
	answers map[string][]string // task → answers, used in turn (the last repeats)
	calls   []ai.Request
	err     error
}

func (m *scripted) Generate(_ context.Context, req ai.Request) (ai.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, req)
	if m.err != nil {
		return ai.Result{}, m.err
	}
	list := m.answers[req.Task]
	if len(list) == 0 {
		return ai.Result{}, fmt.Errorf("no answer scripted for %s", req.Task)
	}
	a := list[0]
	if len(list) > 1 {
		m.answers[req.Task] = list[1:]
	}
	return ai.Result{JSON: json.RawMessage(a), InputTokens: 100, OutputTokens: 50, Model: "scripted"}, nil
}

func (m *scripted) count(task string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		if task == "" || c.Task == task {
			n++
		}
	}
	return n
}

// direct is a queue that hands each job to the worker at once, on its own goroutine, redelivering a
// failed one like the real queues do (the queue adapters have their own conformance suite).
type direct struct {
	handle func(context.Context, queue.Message) error
	sent   atomic.Int32
}

func (d *direct) Send(ctx context.Context, msgs ...queue.Outgoing) error {
	for _, m := range msgs {
		d.sent.Add(1)
		go func() {
			for attempt := 1; attempt <= 3; attempt++ {
				if d.handle(context.WithoutCancel(ctx), queue.Message{ID: "m", Body: m.Body, Attempt: attempt}) == nil {
					return
				}
			}
		}()
	}
	return nil
}

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Emit(_ context.Context, channelID, event string, _ any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, channelID+" "+event)
	return nil
}

type env struct {
	gen    *generation.Generator
	st     *store.Store
	writer *scripted
	grader *scripted
	events *recorder
	q      *direct
}

// newEnv is a generator over a memory store with scripted models; opts change its configuration.
func newEnv(t *testing.T, quota int, opts ...func(*env, *generation.Config)) *env {
	t.Helper()
	st := store.New(memstore.New(t))
	e := &env{st: st, events: &recorder{},
		writer: &scripted{answers: map[string][]string{}}, grader: &scripted{answers: map[string][]string{}}}
	e.q = &direct{}
	cfg := generation.Config{
		Runs: st, Data: st, Idempotency: st, Quota: st, Backlog: st, Queue: e.q,
		Models:  generation.Models{Writer: e.writer, Grader: e.grader},
		Answers: schemacheck.New(),
		Emitter: e.events,
		// Submit waits for the run as a synchronous call does: long enough that a loaded machine (race
		// detector, load 30) never turns an answer into a pending 202 in a test that expects the answer.
		MonthlyQuota: quota, Wait: 2 * time.Minute, Now: time.Now,
		NewID: func() string { return uuid.Must(uuid.NewV7()).String() },
	}
	for _, o := range opts {
		o(e, &cfg)
	}
	e.gen = generation.New(cfg)
	e.q.handle = e.gen.Handle
	return e
}

const titlesDraft = `{"titles":[{"title":"How to edit a week of videos in one day"},{"title":"The one-day editing system I use"},{"title":"Edit faster: my batch workflow"},{"title":"I edited 7 videos in 8 hours"}]}`

func gradesFor(n int, dim float64) string {
	var b strings.Builder
	b.WriteString(`{"grades":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		d := dim - float64(i)
		fmt.Fprintf(&b, `{"index":%d,"nicheRelevance":%g,"researchAlignment":%g,"hookStrength":%g,"brandVoice":%g,"feedback":"ok"}`, i, d, d, d, d)
	}
	b.WriteString("]}")
	return b.String()
}

func titles(t *testing.T, e *env, in contract.TitlesRequest, key string) (generation.Outcome, error) {
	t.Helper()
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	return e.gen.Submit(context.Background(), generation.Submission{Operation: "generateTitles", ChannelID: "ch1", AccountID: "acct1", Body: &in, IdempotencyKey: key})
}

func TestTitlesEndToEnd(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	// 8 titles (4 Long, 4 Short, duplicates across formats dropped: none here since both drafts are equal).
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	out, err := titles(t, e, contract.TitlesRequest{Title: "Editing a week of videos in a day", Type: "how-to"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Done {
		t.Fatal("not done within the wait")
	}
	if _, err := contract.ValidateJSON("TitlesResult", out.Output); err != nil {
		t.Fatalf("output does not match TitlesResult: %v\n%s", err, out.Output)
	}
	// Long and Short in parallel plus one batched grading call: 3 model calls (issue 8).
	if w, g := e.writer.count(""), e.grader.count(""); w != 2 || g != 1 {
		t.Errorf("model calls: %d writer + %d grader, want 2 + 1", w, g)
	}
	var res contract.TitlesResult
	json.Unmarshal(out.Output, &res)
	// Both drafts are the same 4 titles: the Short duplicates are dropped, 4 remain; scores 9,8,7,6 per
	// dimension with rules at 10 → 92, 84, 76, 68: the 68 is below 70 but the best 3 are kept anyway and
	// the fourth is dropped.
	if res.Generated != 4 || res.Filtered != 3 || len(res.Titles) != 3 {
		t.Fatalf("generated %d filtered %d titles %d, want 4 3 3", res.Generated, res.Filtered, len(res.Titles))
	}
	if best := res.Titles[0]; contract.Value(best.Score) != 92 || best.Grade != "A-" || contract.Value(best.Dimensions.RulesCompliance) != 10 {
		t.Errorf("best title = %+v", res.Titles[0])
	}
	run, _, err := e.st.GetRun(context.Background(), "ch1", out.RunID)
	if err != nil || run.Status != generation.Success || *run.InputTokens != 300 || *run.Model != "scripted" {
		t.Fatalf("run = %+v, %v", run, err)
	}
	waitFor(t, func() bool { return len(e.events.snapshot()) == 2 })
	if ev := e.events.snapshot(); ev[0] != "ch1 titles.generated" || ev[1] != "ch1 content.generated" {
		t.Errorf("events = %v", ev)
	}
	if n, _, _, _ := e.st.GenerationUsage(context.Background(), "acct1", time.Now().UTC().Format("2006-01")); n != 1 {
		t.Errorf("quota count = %d, want 1", n)
	}
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("condition not met")
}

func TestCountCapsTitles(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 10)}
	out, err := titles(t, e, contract.TitlesRequest{Title: "x topic here", Type: "question", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long")), Count: contract.Ptr(2)}, "")
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Generated, Filtered int }
	json.Unmarshal(out.Output, &res)
	if res.Generated != 4 || res.Filtered != 2 || e.writer.count("") != 1 {
		t.Errorf("generated %d filtered %d with %d writer calls, want 4 2 1", res.Generated, res.Filtered, e.writer.count(""))
	}
}

func TestOneRepairThenFailure(t *testing.T) {
	e := newEnv(t, 100)
	bad := `{"titles":[]}`
	e.writer.answers[generation.TaskTitles] = []string{bad, titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	if _, err := titles(t, e, contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Short"))}, ""); err != nil {
		t.Fatalf("a repaired answer failed: %v", err)
	}
	last := e.writer.calls[len(e.writer.calls)-1]
	if len(last.Messages) != 3 || last.Messages[1].Text != bad || !strings.Contains(last.Messages[2].Text, "/titles") {
		t.Errorf("repair turn = %+v", last.Messages)
	}

	e = newEnv(t, 100)
	e.writer.answers[generation.TaskTitles] = []string{bad}
	_, err := titles(t, e, contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Short"))}, "")
	if apperr.CodeOf(err) != apperr.GenerationFailed || e.writer.count("") != 2 {
		t.Fatalf("err = %v after %d calls, want GENERATION_FAILED after 2", err, e.writer.count(""))
	}
	// Two model calls were billed, so the run spends its unit (issue 19 item 4; it used to be refunded).
	if n, _, _, _ := e.st.GenerationUsage(context.Background(), "acct1", time.Now().UTC().Format("2006-01")); n != 1 {
		t.Errorf("a failed generation after two billed model calls: quota count %d, want 1", n)
	}
	page, total, _ := e.st.RunPage(context.Background(), "ch1", "titles", nil, 10, 0)
	if total != 1 || !strings.Contains(string(page[0]), `"status":"failed"`) || !strings.Contains(string(page[0]), "GENERATION_FAILED") {
		t.Errorf("history = %d %s", total, page)
	}
}

func TestThrottledModelIsRateLimit(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.err = &ai.Error{Kind: ai.ErrThrottled, Err: fmt.Errorf("ThrottlingException")}
	_, err := titles(t, e, contract.TitlesRequest{Title: "topic", Type: "story"}, "")
	ae, _ := apperr.As(err)
	if ae == nil || ae.Code != apperr.RateLimit || ae.RetryAfter <= 0 {
		t.Fatalf("err = %v, want RATE_LIMIT with Retry-After", err)
	}
}

// Issue 36 item 4: a model failure's cause (ai.CauseOf) reaches the caller, in the sync answer and in the
// failed run's stored error, not only the log.
func TestModelFailureNamesItsCause(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.err = &ai.Error{Kind: ai.ErrFailed, Err: errors.New("openai m after 8 attempt(s): dial tcp: connection refused"),
		Cause: ai.CauseUnreachable}
	_, err := titles(t, e, contract.TitlesRequest{Title: "topic", Type: "story"}, "")
	ae, _ := apperr.As(err)
	want := "the model failed to generate: " + ai.CauseUnreachable
	if ae == nil || ae.Code != apperr.GenerationFailed || ae.Message != want {
		t.Fatalf("err = %v, want GENERATION_FAILED %q", err, want)
	}
	runs, _, err := e.st.RunPage(context.Background(), "ch1", "", nil, 10, 0)
	if err != nil || len(runs) != 1 || !strings.Contains(string(runs[0]), `"error":"GENERATION_FAILED: `+want+`"`) {
		t.Fatalf("runs %s (%v): want the failed run's error to name the cause", runs, err)
	}
}

func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	in := contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}
	first, err := titles(t, e, in, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := titles(t, e, in, "key-1")
	if err != nil || again.RunID != first.RunID || string(again.Output) != string(first.Output) {
		t.Fatalf("same key: run %s (%v), want %s", again.RunID, err, first.RunID)
	}
	if e.q.sent.Load() != 1 {
		t.Errorf("%d jobs queued for one key", e.q.sent.Load())
	}
	in.Title = "another topic"
	if _, err := titles(t, e, in, "key-1"); apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("same key, other body: %v, want CONFLICT", err)
	}
}

func TestMonthlyQuota(t *testing.T) {
	e := newEnv(t, 1)
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	in := contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}
	if _, err := titles(t, e, in, ""); err != nil {
		t.Fatal(err)
	}
	_, err := titles(t, e, in, "")
	ae, _ := apperr.As(err)
	if ae == nil || ae.Code != apperr.UsageLimit || ae.RetryAfter <= 0 {
		t.Fatalf("over quota: %v, want USAGE_LIMIT with Retry-After", err)
	}
}

// A job delivered again after its run completed makes no second run and no second model call.
func TestRedeliveredJobRunsOnce(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	out, err := titles(t, e, contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}, "")
	if err != nil {
		t.Fatal(err)
	}
	calls := e.writer.count("")
	job, _ := json.Marshal(generation.Job{RunID: out.RunID, ChannelID: "ch1", AccountID: "acct1", Operation: "generateTitles"})
	if err := e.gen.Handle(context.Background(), queue.Message{Body: job, Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	if e.writer.count("") != calls {
		t.Error("a completed run was generated again")
	}
	if _, total, _ := e.st.RunPage(context.Background(), "ch1", "", nil, 10, 0); total != 1 {
		t.Errorf("%d runs, want 1", total)
	}
}

func TestRefineNeedsTheChannelsSuccessfulRun(t *testing.T) {
	e := newEnv(t, 100)
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	out, err := titles(t, e, contract.TitlesRequest{Title: "topic", Type: "story", VideoType: contract.Ptr(contract.TitlesRequestVideoType("Long"))}, "")
	if err != nil {
		t.Fatal(err)
	}
	refine := func(channel, id string) (generation.Outcome, error) {
		return e.gen.Submit(context.Background(), generation.Submission{Operation: "refine", ChannelID: channel, AccountID: "acct1",
			Body: &contract.RefineRequest{GenerationID: id, Feedback: "shorter", SpecificItem: contract.Ptr("0")}})
	}
	if _, err := refine("other-channel", out.RunID); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("foreign run: %v, want NOT_FOUND", err)
	}
	if _, err := refine("ch1", uuid.NewString()); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("unknown run: %v, want NOT_FOUND", err)
	}
	e.writer.answers[generation.TaskRefine] = []string{`{"titles":[{"title":"Edit a week of videos in a day"}]}`}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(1, 9)}
	res, err := refine("ch1", out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := contract.ValidateJSON("RefineResult", res.Output); err != nil || !strings.Contains(string(res.Output), out.RunID) {
		t.Fatalf("refine output %s: %v", res.Output, err)
	}
	last := e.writer.calls[len(e.writer.calls)-1]
	b := last.Brief
	if b.OriginalTask != generation.TaskTitles || b.Feedback != "shorter" || b.SpecificItem != "0" || len(b.Original) == 0 {
		t.Errorf("refine brief = %+v", b)
	}
}

// The prompt stays under its budget whatever the channel holds: 500 notes of 2,000 characters and 1,000
// runs in the history.
func TestPromptBudgetHolds(t *testing.T) {
	st := store.New(memstore.New(t))
	ctx := context.Background()
	ns := notes.NewService(st, time.Now)
	if _, err := profile.NewService(st).Put(ctx, "ch1", contract.NicheProfile{FocusedNiche: contract.Ptr("home espresso"), Keywords: []string{"espresso", "grinder", "latte art", "beans"}}); err != nil {
		t.Fatal(err)
	}
	for i := range notes.MaxNotes {
		cat := []contract.NoteCategory{"feedback", "style", "general"}[i%3]
		if _, err := ns.Create(ctx, "ch1", contract.NoteCreate{Category: cat, Content: strings.Repeat(fmt.Sprintf("note %d ", i), 400)[:2000]}, notes.FromApp); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		out := fmt.Sprintf(`{"titles":[{"title":"%s"}]}`, strings.Repeat("t", 90))
		r := generation.ToolRun{ID: uuid.Must(uuid.NewV7()).String(), ToolName: "titles", Status: generation.Success, Input: json.RawMessage(`{}`), Output: json.RawMessage(out), GeneratedAt: time.Now()}
		_ = i
		if err := st.CreateRun(ctx, "ch1", r); err != nil {
			t.Fatal(err)
		}
	}
	// Every tool's main task on the heaviest channel, with research patterns and a long transcript.
	if err := st.PutPatterns(ctx, "ch1", research.Patterns{Titles: strings.Repeat("numbers in titles win; ", 300),
		LongScripts: strings.Repeat("open on the result; ", 300), ShortScripts: strings.Repeat("loop the ending; ", 300),
		Descriptions: strings.Repeat("chapters help; ", 300), Thumbnails: strings.Repeat("faces left; ", 300), Ideas: strings.Repeat("myths; ", 300)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, task string }{
		{"titles", generation.TaskTitles}, {"long_scripts", generation.TaskLongScript}, {"short_scripts", generation.TaskShortScript},
		{"descriptions", generation.TaskDescription}, {"thumbnails", generation.TaskThumbnail}, {"hooks", generation.TaskHooks},
		{"ctas", generation.TaskCTAs}, {"podcast_prep", generation.TaskPodcastPrep}, {"newsletter", generation.TaskNewsletter},
		{"clips", generation.TaskClips}, {"community_posts", generation.TaskCommunityPosts}, {"channel_optimize", generation.TaskChannelBanner},
		{"reoptimize", generation.TaskReoptimize}, {"niche_score", generation.TaskNicheScore},
	} {
		a := &generation.Assembler{Data: st}
		b, err := a.Assemble(ctx, "ch1", c.tool, "", generation.Brief{Task: c.task, VideoType: "Long",
			Transcript: strings.Repeat("0:00 a long transcript line about espresso\n", 5000),
			Input:      json.RawMessage(`{"title":"espresso at home","type":"how-to","context":"` + strings.Repeat("c", 5000) + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		sys, usr, err := generation.Render(b)
		if err != nil {
			t.Fatal(err)
		}
		used := generation.Tokens(sys) + generation.Tokens(usr)
		if used > generation.DefaultPromptBudget {
			t.Errorf("%s: %d tokens over the budget", c.tool, used)
		}
		if c.tool != "titles" && len(b.Recent) > 0 {
			t.Errorf("%s: recent outputs of another tool: %v", c.tool, b.Recent[0])
		}
		t.Logf("%-16s %5d tokens (%d notes, %d recent, patterns %v)", c.tool, used, len(b.Notes), len(b.Recent), b.Patterns != "")
	}
	for _, budget := range []int{2500, generation.DefaultPromptBudget} {
		a := &generation.Assembler{Data: st, Budget: budget}
		b, err := a.Assemble(ctx, "ch1", "titles", "", generation.Brief{Task: generation.TaskTitles, VideoType: "Long", Input: json.RawMessage(`{"title":"espresso at home","type":"how-to","context":"` + strings.Repeat("c", 5000) + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		sys, usr, err := generation.Render(b)
		if err != nil {
			t.Fatal(err)
		}
		used := generation.Tokens(sys) + generation.Tokens(usr)
		if used > budget {
			t.Errorf("budget %d: prompt uses %d tokens", budget, used)
		}
		if len(b.Notes) == 0 || b.Notes[0].Category != "feedback" || len(b.Recent) == 0 {
			t.Errorf("budget %d: %d notes (first %q), %d recent: the budget was not filled by priority", budget, len(b.Notes), b.Notes[0].Category, len(b.Recent))
		}
		t.Logf("budget %d: %d tokens, %d notes, %d recent", budget, used, len(b.Notes), len(b.Recent))
	}
}

// A Generator built without an AnswerChecker (the API side's, which only submits) cannot run a generation:
// the job fails before any model call instead of passing unchecked answers on.
func TestNoAnswerCheckerNoModelCall(t *testing.T) {
	e := newEnv(t, 100, func(_ *env, c *generation.Config) { c.Answers = nil })
	e.writer.answers[generation.TaskTitles] = []string{titlesDraft}
	e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 9)}
	_, err := titles(t, e, contract.TitlesRequest{Title: "topic", Type: "story"}, "")
	if err == nil || e.writer.count("") != 0 || e.grader.count("") != 0 {
		t.Fatalf("err = %v after %d writer and %d grader calls, want a failure before any", err, e.writer.count(""), e.grader.count(""))
	}
}
