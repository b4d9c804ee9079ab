package generation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/brief"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/videos"
)

// fixedOutliers is the niche's research as generation reads it.
type fixedOutliers []generation.Outlier

func (f fixedOutliers) Outliers(_ context.Context, _, kind string, n int) ([]generation.Outlier, error) {
	if kind != "ideas" {
		return nil, fmt.Errorf("ideas read the %s outliers", kind)
	}
	return f[:min(n, len(f))], nil
}

var niche = fixedOutliers{
	{Title: "7 vegan meal prep mistakes", URL: "https://www.youtube.com/watch?v=a", Views: 900000, Score: 12, ContentType: "Long"},
	{Title: "Tofu in 30 seconds", URL: "https://www.youtube.com/watch?v=b", Views: 400000, Score: 8, ContentType: "Short"},
	{Title: "Rice vs quinoa", URL: "https://www.youtube.com/watch?v=c", Views: 200000, Score: 5, ContentType: "Long"},
}

func withResearch(_ *env, c *generation.Config) { c.Outliers = niche }

func ideasIn(t *testing.T, body string) *contract.IdeasRequest {
	t.Helper()
	var in contract.IdeasRequest
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	return &in
}

func submitIdeas(e *env, in *contract.IdeasRequest, key string) (generation.Outcome, error) {
	return e.gen.Submit(context.Background(), generation.Submission{Operation: "generateIdeas", ChannelID: "ch1", AccountID: "acct1",
		Body: in, IdempotencyKey: key})
}

// addedIdeas reads an output's ideas.
func addedIdeas(t *testing.T, out generation.Outcome) []videos.Idea {
	t.Helper()
	var res struct{ Ideas []videos.Idea }
	if err := json.Unmarshal(out.Output, &res); err != nil {
		t.Fatal(err)
	}
	return res.Ideas
}

func fillBacklog(t *testing.T, e *env, n int) {
	t.Helper()
	for i := range n {
		if err := e.st.PutIdea(context.Background(), "ch1", videos.Idea{ID: e.st.NewID(), Title: fmt.Sprintf("Backlog idea %d", i),
			ContentType: "Long", FormulaType: "story", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIdeasTool(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 100, withResearch)
	fillBacklog(t, e, 1) // "Backlog idea 0"
	if err := e.st.CreateVideo(ctx, "ch1", videos.Video{ID: e.st.NewID(), Title: "My First Vlog", ContentType: "Long", FormulaType: "vlog",
		Status: videos.Planned, CreatedAt: time.Now(), UpdatedAt: time.Now()}, 0, videos.DefaultMaxVideos); err != nil {
		t.Fatal(err)
	}
	e.writer.answers[generation.TaskIdeas] = []string{`{"ideas":[
		{"title":"Meal prep for exam week","contentType":"Long","formulaType":"listicle","outlier":1},
		{"title":"BACKLOG IDEA 0","contentType":"Short","formulaType":"how-to"},
		{"title":" my first vlog","contentType":"Long","formulaType":"story","outlier":2},
		{"title":"meal prep for exam week","contentType":"Short","formulaType":"listicle"},
		{"title":"Protein for students","contentType":"Short","formulaType":"question","outlier":0}]}`}
	out, err := submitIdeas(e, ideasIn(t, `{}`), "")
	if err != nil || !out.Done {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := contract.ValidateJSON("IdeasResult", out.Output); err != nil {
		t.Fatalf("output: %v\n%s", err, out.Output)
	}
	// The titles the backlog or the pipeline hold (in any case) and the repeated one are not added; the
	// outlier number becomes the idea's inspiration.
	ideas := addedIdeas(t, out)
	if len(ideas) != 2 || ideas[0].Title != "Meal prep for exam week" || ideas[1].Title != "Protein for students" {
		t.Fatalf("added %+v", ideas)
	}
	if by := *ideas[0].InspiredBy; by != "Tofu in 30 seconds (https://www.youtube.com/watch?v=b)" || *ideas[0].ViewCount != 400000 {
		t.Errorf("inspiredBy %q views %v", by, *ideas[0].ViewCount)
	}
	backlog, _ := e.st.ListIdeas(ctx, "ch1")
	if len(backlog) != 3 {
		t.Fatalf("backlog of %d", len(backlog))
	}
	// One writer call, default count 10, the taken titles and the numbered outliers in its prompt.
	if e.writer.count("") != 1 || e.grader.count("") != 0 {
		t.Fatalf("%d writer, %d grader calls", e.writer.count(""), e.grader.count(""))
	}
	call := e.writer.calls[0]
	b := call.Brief
	user := userText(call)
	if b.Count != 10 || !strings.Contains(user, "Write 10 video ideas") || !strings.Contains(user, `"Backlog idea 0"`) ||
		!strings.Contains(user, `"My First Vlog"`) || !strings.Contains(user, `{"n":1,"title":"Tofu in 30 seconds"`) {
		t.Errorf("prompt:\n%s\n%s", call.System, user)
	}
	run, _, err := e.st.GetRun(ctx, "ch1", out.RunID)
	if err != nil || run.ToolName != generation.ToolIdeas || run.Status != generation.Success {
		t.Fatalf("run %+v %v", run, err)
	}
	if _, total, _ := e.st.RunPage(ctx, "ch1", generation.ToolIdeas, nil, 10, 0); total != 1 {
		t.Errorf("history of ideas: %d runs", total)
	}
	waitFor(t, func() bool { return len(e.events.snapshot()) == 1 })
	if ev := e.events.snapshot(); ev[0] != "ch1 content.generated" {
		t.Errorf("events %v", ev)
	}
}

func TestIdeasToolRules(t *testing.T) {
	ctx := context.Background()
	idea := func(title, ct string) string {
		return fmt.Sprintf(`{"title":%q,"contentType":%q,"formulaType":"story"}`, title, ct)
	}
	answer := func(items ...string) string { return `{"ideas":[` + strings.Join(items, ",") + `]}` }
	for _, c := range []struct {
		name     string
		body     string
		backlog  int
		answers  []string
		calls    int
		want     []string
		code     apperr.Code
		quotaUse int64
	}{
		{name: "count caps what is added", body: `{"count":2}`,
			answers: []string{answer(idea("One", "Long"), idea("Two", "Short"), idea("Three", "Long"))}, calls: 1, want: []string{"One", "Two"}, quotaUse: 1},
		{name: "a taken title does not take the place of a new one", body: `{"count":1}`, backlog: 1,
			answers: []string{answer(idea("backlog IDEA 0", "Long"), idea("New", "Long"))}, calls: 1, want: []string{"New"}, quotaUse: 1},
		{name: "the asked format: a repair when the model strays", body: `{"contentType":"Short","count":1}`,
			answers: []string{answer(idea("Long one", "Long")), answer(idea("Short one", "Short"))}, calls: 2, want: []string{"Short one"}, quotaUse: 1},
		{name: "a backlog with room for two", body: `{"count":5}`, backlog: videos.MaxBacklog - 2,
			answers: []string{answer(idea("A", "Long"), idea("B", "Long"), idea("C", "Long"))}, calls: 1, want: []string{"A", "B"}, quotaUse: 1},
		{name: "a full backlog: 400 before any quota or model call", body: `{}`, backlog: videos.MaxBacklog,
			calls: 0, code: apperr.Validation},
		{name: "an outlier the prompt did not list: repaired", body: `{"count":1}`,
			answers: []string{`{"ideas":[{"title":"X","contentType":"Long","formulaType":"story","outlier":3}]}`,
				`{"ideas":[{"title":"X","contentType":"Long","formulaType":"story","outlier":2}]}`}, calls: 2, want: []string{"X"}, quotaUse: 1},
		{name: "still wrong after the repair: failed, the unit spent on two billed calls", body: `{"contentType":"Long"}`,
			answers: []string{answer(idea("S", "Short"))}, calls: 2, code: apperr.GenerationFailed, quotaUse: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, 100, withResearch)
			fillBacklog(t, e, c.backlog)
			e.writer.answers[generation.TaskIdeas] = c.answers
			out, err := submitIdeas(e, ideasIn(t, c.body), "")
			if apperr.CodeOf(err) != c.code {
				t.Fatalf("error %v, want code %q", err, c.code)
			}
			if e.writer.count("") != c.calls {
				t.Errorf("%d model calls, want %d", e.writer.count(""), c.calls)
			}
			if n, _, _, _ := e.st.GenerationUsage(ctx, "acct1", time.Now().UTC().Format("2006-01")); n != c.quotaUse {
				t.Errorf("quota used %d, want %d", n, c.quotaUse)
			}
			backlog, _ := e.st.ListIdeas(ctx, "ch1")
			if len(backlog) != c.backlog+len(c.want) || len(backlog) > videos.MaxBacklog {
				t.Errorf("backlog of %d", len(backlog))
			}
			if c.code != "" {
				return
			}
			var got []string
			for _, i := range addedIdeas(t, out) {
				got = append(got, i.Title)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("added %v, want %v", got, c.want)
			}
		})
	}
}

// failOnce fails the first completion of a run, as a worker that dies after adding the ideas would.
type failOnce struct {
	generation.RunStore
	failed atomic.Bool
}

func (f *failOnce) UpdateRun(ctx context.Context, channelID string, r generation.ToolRun, was int64) error {
	if r.Status == generation.Success && f.failed.CompareAndSwap(false, true) {
		return errors.New("the worker died")
	}
	return f.RunStore.UpdateRun(ctx, channelID, r, was)
}

// A job delivered again after it added its ideas, but before its run completed, answers the ideas it
// added and adds none more, whatever the model writes the second time.
func TestIdeasRedeliveredAfterAdding(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 100, withResearch, func(e *env, c *generation.Config) { c.Runs = &failOnce{RunStore: e.st} })
	e.writer.answers[generation.TaskIdeas] = []string{
		`{"ideas":[{"title":"First","contentType":"Long","formulaType":"story"},{"title":"Second","contentType":"Short","formulaType":"story","outlier":0}]}`,
		`{"ideas":[{"title":"Other","contentType":"Long","formulaType":"story"}]}`,
	}
	out, err := submitIdeas(e, ideasIn(t, `{"count":2}`), "")
	if err != nil || !out.Done {
		t.Fatalf("%+v %v", out, err)
	}
	ideas := addedIdeas(t, out)
	backlog, _ := e.st.ListIdeas(ctx, "ch1")
	if e.writer.count("") != 2 || len(ideas) != 2 || ideas[0].Title != "First" || ideas[1].Title != "Second" || len(backlog) != 2 {
		t.Fatalf("%d calls, answered %+v, backlog %+v", e.writer.count(""), ideas, backlog)
	}
	// Newest first, the run's ideas list in the order written.
	if backlog[0].Title != "First" || backlog[1].Title != "Second" {
		t.Errorf("backlog order %q, %q", backlog[0].Title, backlog[1].Title)
	}
}

// The same Idempotency-Key answers the first ideas, even once the backlog is full.
func TestIdeasIdempotencyKey(t *testing.T) {
	e := newEnv(t, 100, withResearch)
	fillBacklog(t, e, videos.MaxBacklog-1)
	e.writer.answers[generation.TaskIdeas] = []string{`{"ideas":[{"title":"Last one","contentType":"Long","formulaType":"story"}]}`}
	first, err := submitIdeas(e, ideasIn(t, `{"count":1}`), "k1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := submitIdeas(e, ideasIn(t, `{"count":1}`), "k1")
	if err != nil || string(again.Output) != string(first.Output) || again.RunID != first.RunID {
		t.Fatalf("again: %+v %v", again, err)
	}
	if _, err := submitIdeas(e, ideasIn(t, `{"count":1}`), "k2"); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("a new request into the full backlog: %v", err)
	}
}

// Refining an ideas run rewrites its ideas and adds them to the backlog.
func TestRefineIdeas(t *testing.T) {
	e := newEnv(t, 100, withResearch)
	e.writer.answers[generation.TaskIdeas] = []string{`{"ideas":[{"title":"Plain idea","contentType":"Long","formulaType":"story"}]}`}
	e.writer.answers[generation.TaskRefine] = []string{`{"ideas":[{"title":"Punchier idea","contentType":"Short","formulaType":"story","outlier":1}]}`}
	first, err := submitIdeas(e, ideasIn(t, `{"count":1}`), "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.gen.Submit(context.Background(), generation.Submission{Operation: "refine", ChannelID: "ch1", AccountID: "acct1",
		Body: &contract.RefineRequest{GenerationID: first.RunID, Feedback: "punchier"}})
	if err != nil || !out.Done {
		t.Fatalf("%+v %v", out, err)
	}
	if !strings.Contains(string(out.Output), `"title":"Punchier idea"`) || !strings.Contains(string(out.Output), "Tofu in 30 seconds") {
		t.Errorf("refined %s", out.Output)
	}
	if backlog, _ := e.st.ListIdeas(context.Background(), "ch1"); len(backlog) != 2 {
		t.Errorf("backlog of %d", len(backlog))
	}
}

// ownTerms is a connected channel's own results with search terms only.
type ownTerms struct{}

func (ownTerms) OwnResults(_ context.Context, channelID string) (*brief.OwnResults, error) {
	if channelID != "ch1" {
		return nil, nil
	}
	return &brief.OwnResults{Label: "own", Best: []brief.OwnVideo{}, Worst: []brief.OwnVideo{}, SearchPeriod: "2026-10-01/2026-10-28",
		SearchTerms: []brief.SearchTerm{{Term: "exam week meal prep", Views: 900}, {Term: "meal prep", Views: 400}, {Term: "tofu", Views: 50}}}, nil
}

// An idea whose title holds one of the channel's own search terms carries it as its demand, the most
// viewed term first (decision 53); the others carry none.
func TestIdeasCarryTheirOwnSearchDemand(t *testing.T) {
	e := newEnv(t, 100, func(_ *env, c *generation.Config) { c.Own = ownTerms{} })
	e.writer.answers[generation.TaskIdeas] = []string{`{"ideas":[
		{"title":"Meal prep for exam week","contentType":"Long","formulaType":"listicle"},
		{"title":"Meal-prep on a budget","contentType":"Short","formulaType":"how-to"},
		{"title":"Protein for students","contentType":"Short","formulaType":"question"}]}`}
	out, err := submitIdeas(e, ideasIn(t, `{}`), "")
	if err != nil || !out.Done {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := contract.ValidateJSON("IdeasResult", out.Output); err != nil {
		t.Fatalf("output: %v\n%s", err, out.Output)
	}
	ideas := addedIdeas(t, out)
	want := []*videos.Demand{
		{Source: "own search terms", Term: "exam week meal prep", Views: 900, Period: "2026-10-01/2026-10-28"},
		{Source: "own search terms", Term: "meal prep", Views: 400, Period: "2026-10-01/2026-10-28"},
		nil,
	}
	for i, w := range want {
		if got := ideas[i].Demand; (got == nil) != (w == nil) || got != nil && *got != *w {
			t.Errorf("idea %q: demand %+v, want %+v", ideas[i].Title, got, w)
		}
	}
	// The backlog keeps it.
	backlog, _ := e.st.ListIdeas(context.Background(), "ch1")
	kept := 0
	for _, i := range backlog {
		if i.Demand != nil {
			kept++
		}
	}
	if kept != 2 {
		t.Fatalf("%d ideas in the backlog carry demand", kept)
	}
}
