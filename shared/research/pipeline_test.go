package research_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
)

func TestOfflineRunEndToEnd(t *testing.T) {
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	ctx := context.Background()
	run := f.start("ch")
	if run.Status != research.Queued || run.Source != research.SourceOffline || len(run.Steps) != 7 {
		t.Fatalf("started %+v", run.View())
	}
	f.drain(0)
	got := f.run("ch", run.ID)
	if got.Status != research.Succeeded || got.VideoCount != research.MaxVideos || !got.Spent.IsZero() || got.FinishedAt == nil {
		t.Fatalf("run %s with %d videos, %v: %s", got.Status, got.VideoCount, got.Spent, got.Message)
	}
	for _, s := range got.Steps {
		if s.Status != research.StepSucceeded || s.FinishedAt == nil || len(s.Counts) == 0 {
			t.Errorf("step %+v", s)
		}
	}
	if c := got.Steps[0].Counts; c["searches"] != 3 || c["channels"] != 20 || c["seedVideos"] == 0 {
		t.Errorf("discover counts %v", c)
	}
	// Every video is labelled, scored against its channel, and in the window.
	vs, total, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: research.MaxVideos})
	if err != nil || total != research.MaxVideos || len(vs) != total {
		t.Fatalf("%d of %d videos, %v", len(vs), total, err)
	}
	for _, v := range vs {
		if v.Source != research.SourceOffline || v.SampleSize == 0 || v.ChannelMedianViews <= 0 || v.ViewsPerDay <= 0 ||
			v.PublishedAt.Before(start.AddDate(-1, 0, 0)) || (v.ContentType == research.Short) != (v.DurationSeconds <= 180) {
			t.Fatalf("video %+v", v)
		}
	}
	for i := 1; i < len(vs); i++ {
		if vs[i-1].OutlierScore < vs[i].OutlierScore {
			t.Fatalf("video %d has a lower outlier score than video %d", i-1, i)
		}
	}
	p, err := f.service.Insights(ctx, "ch")
	if err != nil || p.Titles == "" || p.Thumbnails == "" || p.LongScripts == "" || p.ShortScripts == "" || p.Descriptions == "" || p.Ideas == "" {
		t.Fatalf("patterns %+v, %v", p, err)
	}
	ideas, _ := f.store.ListIdeas(ctx, "ch")
	if len(ideas) != f.cfg.IdeasPerRun {
		t.Fatalf("%d ideas, want %d", len(ideas), f.cfg.IdeasPerRun)
	}
	for _, i := range ideas {
		if i.InspiredBy == nil || !strings.Contains(*i.InspiredBy, "https://"+youtubesample.Host+"/watch?v=") || i.ViewCount == nil || *i.ViewCount <= 0 {
			t.Fatalf("idea %+v does not name its inspiration", i)
		}
	}
	want := []string{"research.step:discover", "research.step:expand", "research.step:enrich", "research.step:score",
		"research.step:analyse_patterns", "research.step:write_ideas", "research.step:complete", "research.completed"}
	if got := f.events.names(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	done := f.events.list[7].data
	if v := reflect.ValueOf(done); v.FieldByName("IdeasAdded").Int() != int64(f.cfg.IdeasPerRun) || v.FieldByName("TopVideos").Len() != 5 {
		t.Fatalf("research.completed data %+v", done)
	}
	st, _ := f.store.ResearchState(ctx, "ch")
	if d := st.DueAt.Sub(start.Add(f.cfg.Interval)); st.ActiveRun != "" || d < 0 || d >= 12*time.Hour || st.LastRunID != run.ID {
		t.Fatalf("state after the run %+v", st)
	}
}

// A run crashing at any store write, queue send or event emission (before or after it takes effect) is
// delivered again and ends as the run that never crashed, with each event sent once through an emitter
// that sends each event key once (research.OnceEmitter, as an outbox is).
func TestResumesAfterACrashAnywhere(t *testing.T) {
	// Six channels instead of twenty: the same steps over fewer videos, since the run is replayed for every
	// crash point.
	small := func(c *research.Config) { c.Plan.Channels = 6 }
	// One sample source for all the runs: its corpus is built once (it is safe for concurrent use).
	shared := youtubesample.New(func() time.Time { return start })
	sample := func(func() time.Time) research.Source { return shared }
	base := newFixture(t, setup{keyed: true, config: small, source: sample})
	base.profile("ch", keywords...)
	want := base.outcome("ch", func() string { r := base.start("ch"); base.drain(0); return r.ID }())

	counter := &crasher{}
	{
		f := newFixture(t, setup{crash: counter, keyed: true, config: small, source: sample})
		f.profile("ch", keywords...)
		f.start("ch")
		f.drain(0)
	}
	if counter.n < 25 {
		t.Fatalf("only %d side effects counted", counter.n)
	}
	t.Logf("%d side effects (store writes, sends, emissions), each crashed before and after", counter.n)
	for point := 1; point <= counter.n; point++ {
		for _, after := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d-%v", point, after), func(t *testing.T) {
				t.Parallel()
				c := &crasher{point: point, after: after}
				f := newFixture(t, setup{crash: c, keyed: true, config: small, source: sample})
				f.profile("ch", keywords...)
				run, err := f.service.Start(context.Background(), "ch", research.TriggerAPI)
				if errors.Is(err, errCrash) {
					// The start itself failed: the client tries again. A run whose message was not queued
					// was abandoned; one whose write landed before the crash holds the channel until the
					// scheduler takes it over, once its lease has ended.
					if run, err = f.service.Start(context.Background(), "ch", research.TriggerAPI); apperr.CodeOf(err) == apperr.Conflict {
						f.clock.Add(f.cfg.Lease + time.Minute)
						if _, err := f.service.Schedule(context.Background()); err != nil {
							t.Fatal(err)
						}
						st, _ := f.store.ResearchState(context.Background(), "ch")
						run = f.run("ch", st.ActiveRun)
						f.clock.Set(start)
					} else if err != nil {
						t.Fatalf("start again: %v", err)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				f.drain(3)
				if d := f.outcome("ch", run.ID).diff(want); d != "" {
					t.Fatalf("crash at side effect %d (after: %v):\n%s", point, after, d)
				}
			})
		}
	}
}

// Every message delivered twice (a duplicate of each, as SQS may deliver): the same run, events once.
func TestDuplicateDeliveries(t *testing.T) {
	base := newFixture(t, setup{})
	base.profile("ch", keywords...)
	want := base.outcome("ch", func() string { r := base.start("ch"); base.drain(0); return r.ID }())

	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	run := f.start("ch")
	ctx := context.Background()
	for {
		m, ok := f.queue.take()
		if !ok {
			break
		}
		dup := m
		dup.ID += "-duplicate"
		for _, msg := range []queue.Message{m, dup, m} {
			if err := f.pipeline.Handle(ctx, msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d := f.outcome("ch", run.ID).diff(want); d != "" {
		t.Fatalf("with duplicates:\n%s", d)
	}
}

// While a step runs under one delivery's claim, a duplicate delivery leaves it alone; once the claim
// lapses (its holder died), a redelivery takes it up.
func TestClaimedStepIsLeftToItsHolder(t *testing.T) {
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	run := f.start("ch")
	m, _ := f.queue.take()
	r := f.run("ch", run.ID)
	r.Status, r.Steps[0].Status = research.Running, research.StepRunning
	r.Claim = research.Claim{MessageID: "other-delivery", Until: start.Add(f.cfg.ClaimFor)}
	if err := f.store.SaveResearchRun(context.Background(), &r, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.pipeline.Handle(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if got := f.run("ch", run.ID); got.Steps[0].Status != research.StepRunning || f.queue.len() != 0 {
		t.Fatalf("a duplicate ran a claimed step: %+v", got.Steps[0])
	}
	f.clock.Add(f.cfg.ClaimFor + time.Second)
	if err := f.pipeline.Handle(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if got := f.run("ch", run.ID); got.Steps[0].Status != research.StepSucceeded {
		t.Fatalf("after the claim lapsed: %+v", got.Steps[0])
	}
}

// Each step is visible while the run goes: after discover, discover is done and the rest pending.
func TestStepsVisibleWhileRunning(t *testing.T) {
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	run := f.start("ch")
	m, _ := f.queue.take()
	if err := f.pipeline.Handle(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got, err := f.service.Run(context.Background(), "ch", run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != research.Running || got.Steps[0].Status != research.StepSucceeded || got.Steps[1].Status != research.StepPending {
		t.Fatalf("after discover: %s, steps %+v", got.Status, got.Steps)
	}
	if _, err := f.service.Run(context.Background(), "another", run.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another channel reads the run: %v", err)
	}
}

func TestStartRules(t *testing.T) {
	f := newFixture(t, setup{})
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		prepare func()
	}{
		{"no profile", func() {}},
		{"a profile without keywords", func() { f.profile("ch") }},
	} {
		tc.prepare()
		_, err := f.service.Start(ctx, "ch", research.TriggerAPI)
		if e, ok := apperr.As(err); !ok || e.Code != apperr.Validation || e.Field != "keywords" {
			t.Fatalf("%s: %v; want VALIDATION_ERROR naming keywords", tc.name, err)
		}
	}
	f.profile("ch", keywords...)
	first := f.start("ch")
	_, err := f.service.Start(ctx, "ch", research.TriggerAPI)
	if apperr.CodeOf(err) != apperr.Conflict || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("a second start while queued: %v; want CONFLICT naming the run", err)
	}
	// A run that made no progress within its lease (its messages lost) gives way to a new one.
	f.queue.take()
	f.clock.Add(f.cfg.Lease + time.Second)
	second := f.start("ch")
	if old := f.run("ch", first.ID); old.Status != research.Failed || !strings.Contains(old.Message, "no progress") {
		t.Fatalf("the stalled run: %s %q", old.Status, old.Message)
	}
	f.drain(0)
	if got := f.run("ch", second.ID); got.Status != research.Succeeded {
		t.Fatalf("the new run: %s %s", got.Status, got.Message)
	}
}

// A completed run replaces the channel's research at once: until then readers see the previous run's,
// afterwards only the new one's, and the previous set is deleted.
func TestReplacesResearchAtOnce(t *testing.T) {
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	ctx := context.Background()
	first := f.start("ch")
	f.drain(0)
	before, _, _ := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 3})
	// A week later (the niche's research is stale) the channel runs again; the corpus has moved on a week.
	f.clock.Add(8 * 24 * time.Hour)
	second := f.start("ch")
	for f.queue.len() > 0 {
		m, _ := f.queue.take()
		if strings.Contains(string(m.Body), `"step":"complete"`) {
			now, _, _ := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 3})
			if !reflect.DeepEqual(now, before) {
				t.Fatal("the channel's videos changed before the run completed")
			}
		}
		if err := f.pipeline.Handle(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	after, _, _ := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 3})
	if reflect.DeepEqual(after, before) || f.run("ch", second.ID).Status != research.Succeeded {
		t.Fatal("the second run did not replace the research")
	}
	if _, err := f.store.ChannelResearchVideos(ctx, "ch", research.SetRef{RunID: first.ID, Chunks: f.run("ch", first.ID).Set.Chunks}); !errors.Is(err, research.ErrStale) {
		t.Fatalf("the first run's videos after the second completed: %v; want them deleted", err)
	}
}

// A second channel of the same niche reuses the first one's research while it is fresh: no fetching,
// the same videos; past the freshness window it fetches again.
func TestNicheResearchIsShared(t *testing.T) {
	f := newFixture(t, setup{})
	ctx := context.Background()
	f.profile("a", keywords...)
	f.profile("b", "Protein", "BUDGET", "meal  prep", "vegan")
	f.start("a")
	f.drain(0)
	f.clock.Add(time.Hour)
	runB := f.start("b")
	f.drain(0)
	b := f.run("b", runB.ID)
	if !b.Reused || b.Steps[1].Status != research.StepSkipped || b.Steps[2].Status != research.StepSkipped || b.VideoCount != research.MaxVideos {
		t.Fatalf("second channel of the niche: reused %v, steps %+v", b.Reused, b.Steps)
	}
	va, _, _ := f.service.Videos(ctx, "a", research.VideoQuery{Limit: research.MaxVideos})
	vb, _, _ := f.service.Videos(ctx, "b", research.VideoQuery{Limit: research.MaxVideos})
	if !reflect.DeepEqual(va, vb) {
		t.Fatal("the two channels of one niche see different videos")
	}
	f.clock.Add(f.cfg.Freshness)
	again := f.start("b")
	f.drain(0)
	if r := f.run("b", again.ID); r.Reused || r.Steps[1].Status != research.StepSucceeded {
		t.Fatalf("past the freshness window: reused %v", r.Reused)
	}
	if other := f.service; other == nil {
		t.Fatal()
	}
}

// Video listing: filter, sorts, paging (decision 31).
func TestVideosQuery(t *testing.T) {
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	ctx := context.Background()
	if vs, total, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 20}); err != nil || total != 0 || len(vs) != 0 {
		t.Fatalf("before research: %d, %d, %v", len(vs), total, err)
	}
	f.start("ch")
	f.drain(0)
	shorts, total, _ := f.service.Videos(ctx, "ch", research.VideoQuery{ContentType: research.Short, Limit: 100})
	all, _, _ := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: research.MaxVideos})
	n := 0
	for _, v := range all {
		n += map[bool]int{true: 1}[v.ContentType == research.Short]
	}
	if total != n || len(shorts) != min(n, 100) {
		t.Fatalf("shorts: %d listed of %d total, %d in all", len(shorts), total, n)
	}
	for _, v := range shorts {
		if v.ContentType != research.Short {
			t.Fatal("a Long video among shorts")
		}
	}
	for _, tc := range []struct {
		sort string
		less func(a, b research.Video) bool
	}{
		{research.SortViews, func(a, b research.Video) bool { return a.Views >= b.Views }},
		{research.SortRecent, func(a, b research.Video) bool { return !a.PublishedAt.Before(b.PublishedAt) }},
		{research.SortOutlier, func(a, b research.Video) bool { return a.OutlierScore >= b.OutlierScore }},
	} {
		vs, _, _ := f.service.Videos(ctx, "ch", research.VideoQuery{Sort: tc.sort, Limit: 100})
		for i := 1; i < len(vs); i++ {
			if !tc.less(vs[i-1], vs[i]) {
				t.Fatalf("sort %s: %d before %d out of order", tc.sort, i-1, i)
			}
		}
	}
	page, total, _ := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 10, Offset: 495})
	if total != research.MaxVideos || len(page) != 5 || page[0].VideoID != all[495].VideoID {
		t.Fatalf("last page: %d videos of %d", len(page), total)
	}
	if past, _, _ := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 10, Offset: 600}); len(past) != 0 {
		t.Fatal("an offset past the end lists videos")
	}
	top, _ := f.service.TopVideos(ctx, "ch", 10)
	if len(top) != 10 || top[0].VideoID != all[0].VideoID {
		t.Fatal("TopVideos are not the strongest outliers")
	}
}

// A run whose first message cannot be queued is failed at once and frees the channel: the client may
// start again right away.
func TestStartThatCannotQueueFreesTheChannel(t *testing.T) {
	c := &crasher{point: 2} // the start's writes, then its send
	f := newFixture(t, setup{crash: c})
	f.profile("ch", keywords...)
	if _, err := f.service.Start(context.Background(), "ch", research.TriggerAPI); !errors.Is(err, errCrash) {
		t.Fatalf("start with a failing queue: %v", err)
	}
	st, _ := f.store.ResearchState(context.Background(), "ch")
	if st.ActiveRun != "" {
		t.Fatal("the channel is still held")
	}
	again := f.start("ch")
	f.drain(0)
	if r := f.run("ch", again.ID); r.Status != research.Succeeded {
		t.Fatalf("the next start: %s", r.Status)
	}
}

// stalled is a model writer that does not answer: it returns when its context ends, or fails after a
// while (a step without a deadline would otherwise wait for ever).
type stalled struct{}

func (stalled) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("model: %w", ctx.Err())
	case <-time.After(5 * time.Second):
		return errors.New("model: no answer, and the step set no deadline")
	}
}

func (w stalled) WritePatterns(ctx context.Context, _ research.PatternInput) (research.Patterns, research.Usage, error) {
	return research.Patterns{}, research.Usage{ModelCalls: 1}, w.wait(ctx)
}

func (w stalled) WriteIdeas(ctx context.Context, _ research.IdeaInput) ([]research.IdeaDraft, research.Usage, error) {
	return nil, research.Usage{ModelCalls: 1}, w.wait(ctx)
}

// A writer past its deadline costs the run its model texts, not the run: the step writes with the
// statistics instead of failing and being tried again until the run fails and its videos go (issue 32
// item 16).
func TestWritersPastTheirDeadlineFallBackToStatistics(t *testing.T) {
	f := newFixture(t, setup{
		config:  func(c *research.Config) { c.DerivedMetrics, c.WriterDeadline = true, 20*time.Millisecond },
		options: []research.PipelineOption{research.WithPatternWriter(stalled{}), research.WithIdeaWriter(stalled{})},
	})
	f.profile("ch", keywords...)
	run := f.start("ch")
	f.drain(0)
	got := f.run("ch", run.ID)
	if got.Status != research.Succeeded || got.VideoCount == 0 {
		t.Fatalf("run %s with %d videos: %s", got.Status, got.VideoCount, got.Message)
	}
	st, err := f.store.ResearchState(context.Background(), "ch")
	if err != nil || st.Patterns.Titles == "" {
		t.Fatalf("patterns after the writer's deadline: %+v, %v; want the statistics'", st.Patterns, err)
	}
	if n := got.Steps[5].Counts["ideas"]; n == 0 {
		t.Fatalf("ideas after the writer's deadline: %v; want the statistics'", got.Steps[5].Counts)
	}
}
