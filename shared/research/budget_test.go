package research_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/sourcetest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/youtube"
)

const apiKey = "AIzaTestKey-budget"

// onYouTube is a setup whose source is the real YouTube client against the Data API's wire format on
// loopback, serving the sample corpus of both test niches.
func onYouTube(t *testing.T, srv **youtubetest.Server) func(now func() time.Time) research.Source {
	return func(now func() time.Time) research.Source {
		s := youtubetest.Start(apiKey, youtubesample.Corpus(sourcetest.Niche(), now()))
		t.Cleanup(s.Close)
		*srv = s
		src, err := youtube.New(context.Background(), youtube.Config{APIKey: apiKey, Endpoint: s.Endpoint(), HTTPClient: s.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
}

func (f *fixture) quotaUsed() quota.Usage {
	f.t.Helper()
	c, _ := research.NewClock()
	u, err := f.store.QuotaUsed(context.Background(), c.Day(f.clock.Now()))
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// A run the day's budget has no room for waits for the next quota day, says so, spends nothing, and goes
// on by itself when the scheduler finds the new day has begun.
func TestRunWaitsForTheNextBudgetDay(t *testing.T) {
	var srv *youtubetest.Server
	// Searches for one new niche: the second waits.
	f := newFixture(t, setup{source: onYouTube(t, &srv), config: func(c *research.Config) { c.Daily.Searches = 5 }})
	// Two channels of two niches (a second of the same niche would reuse the first's research).
	f.profile("a", sourcetest.Niche().Keywords...)
	f.profile("b", "vegan", "tofu", "budget", "protein")
	first := f.start("a")
	f.drain(0)
	if r := f.run("a", first.ID); r.Status != research.Succeeded || r.Spent.Searches != 3 {
		t.Fatalf("first run: %s, %v", r.Status, r.Spent)
	}
	spent := srv.Spent()
	second := f.start("b")
	f.drain(0)
	r := f.run("b", second.ID)
	nextDay := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC) // midnight Pacific (PST) after 2026-11-20 18:00 UTC
	if r.Status != research.WaitingQuota || r.WaitingUntil == nil || !r.WaitingUntil.Equal(nextDay) ||
		!strings.Contains(r.Message, "next quota day") || srv.Spent() != spent {
		t.Fatalf("second run: %s until %v (%q), server charged %v more", r.Status, r.WaitingUntil, r.Message, srv.Spent().Sub(spent))
	}
	if u := f.quotaUsed(); u.Used != spent {
		t.Fatalf("budget holds %v, want the %v spent", u.Used, spent)
	}
	// Before the new day the scheduler leaves it; after, it queues it again and the run finishes.
	f.clock.Set(nextDay.Add(-time.Minute))
	if rep, err := f.service.Schedule(context.Background()); err != nil || rep.Resumed != 0 {
		t.Fatalf("before the new day: %+v, %v", rep, err)
	}
	f.clock.Set(nextDay.Add(time.Minute))
	rep, err := f.service.Schedule(context.Background())
	if err != nil || rep.Resumed != 1 {
		t.Fatalf("on the new day: %+v, %v", rep, err)
	}
	f.drain(0)
	if r := f.run("b", second.ID); r.Status != research.Succeeded || r.VideoCount == 0 || r.Message != "" {
		t.Fatalf("resumed run: %s, %d videos, %q", r.Status, r.VideoCount, r.Message)
	}
	if u := f.quotaUsed(); u.Used != srv.Spent().Sub(spent) {
		t.Fatalf("the new day's budget holds %v, want %v", u.Used, srv.Spent().Sub(spent))
	}
}

// quotaExceeded from the API for search.list stops searching for the day: the run waits, and a run of a
// new niche started later that day waits too without calling the API.
func TestQuotaExceededStopsSpendingForTheDay(t *testing.T) {
	var srv *youtubetest.Server
	f := newFixture(t, setup{source: onYouTube(t, &srv)})
	f.profile("a", sourcetest.Niche().Keywords...)
	f.profile("b", "vegan", "tofu", "budget", "protein")
	srv.SetBucketQuota(quota.Searches, 1) // one search, then quotaExceeded
	first := f.start("a")
	f.drain(0)
	r := f.run("a", first.ID)
	if r.Status != research.WaitingQuota || !strings.Contains(r.Message, "quotaExceeded for its search.list calls") ||
		r.Spent != (quota.Cost{Searches: 2}) || r.Steps[0].Status != research.StepPending {
		t.Fatalf("run after quotaExceeded: %s %q, %v, discover %s", r.Status, r.Message, r.Spent, r.Steps[0].Status)
	}
	if u := f.quotaUsed(); !u.Out(quota.Searches) || u.Out(quota.Units) || u.Used != (quota.Cost{Searches: 2}) {
		t.Fatalf("budget: %+v; want the searches bucket out after its 2 calls, the units not", u)
	}
	calls := srv.Spent()
	second := f.start("b")
	f.drain(0)
	if r := f.run("b", second.ID); r.Status != research.WaitingQuota || srv.Spent() != calls {
		t.Fatalf("a run started after quotaExceeded: %s, %v more", r.Status, srv.Spent().Sub(calls))
	}
	if rep, _ := f.service.Schedule(context.Background()); rep.Resumed != 0 || rep.Started != 0 {
		t.Fatalf("the scheduler spends on an exhausted day: %+v", rep)
	}
	srv.SetBucketQuota(quota.Searches, 0)
	f.clock.Add(24 * time.Hour)
	if rep, err := f.service.Schedule(context.Background()); err != nil || rep.Resumed != 2 {
		t.Fatalf("next day: %+v, %v", rep, err)
	}
	f.drain(0)
	for ch, id := range map[string]string{"a": first.ID, "b": second.ID} {
		if r := f.run(ch, id); r.Status != research.Succeeded {
			t.Fatalf("run of %s: %s %s", ch, r.Status, r.Message)
		}
	}
}

// Passing failures are tried again after a delay with their units recorded; failures another try cannot
// mend fail the run, free the channel and have the scheduler try it a day later.
func TestFailures(t *testing.T) {
	var srv *youtubetest.Server
	f := newFixture(t, setup{source: onYouTube(t, &srv)})
	f.profile("ch", sourcetest.Niche().Keywords...)
	run := f.start("ch")
	m, _ := f.queue.take()
	srv.FailNext("search", youtubetest.RateLimited())
	err := f.pipeline.Handle(context.Background(), m)
	if d, ok := queue.RetryDelay(err); !ok || d <= 0 {
		t.Fatalf("rate limited: %v; want a retry after a delay", err)
	}
	if r := f.run("ch", run.ID); r.Spent != quota.SearchCall || r.Status != research.Running {
		t.Fatalf("after the throttled call: %s, %v", r.Status, r.Spent)
	}
	srv.FailNext("search", youtubetest.Forbidden())
	m.Attempt++
	if err := f.pipeline.Handle(context.Background(), m); err != nil {
		t.Fatalf("a permanent failure is the run's, not the message's: %v", err)
	}
	r := f.run("ch", run.ID)
	if r.Status != research.Failed || r.Steps[0].Status != research.StepFailed || !strings.Contains(r.Message, "forbidden") || r.FinishedAt == nil {
		t.Fatalf("after a permanent failure: %s %q, step %s", r.Status, r.Message, r.Steps[0].Status)
	}
	if u := f.quotaUsed(); u.Used != r.Spent {
		t.Fatalf("budget holds %v after the run settled, it spent %v", u.Used, r.Spent)
	}
	// A failed run ended too: research.completed says how.
	if names := f.events.names(run.ID); len(names) != 1 || names[0] != research.EventCompleted {
		t.Fatalf("events of the failed run: %v", names)
	}
	if b, _ := json.Marshal(f.events.list[len(f.events.list)-1].data); !strings.Contains(string(b), `"status":"failed"`) ||
		!strings.Contains(string(b), `"message":"discover failed`) || r.Spent != quota.SearchCall.Times(2) ||
		!strings.Contains(string(b), `"unitsSpent":0,"searchCallsSpent":2,"statsCallsSpent":0`) {
		t.Fatalf("research.completed of a failed run that spent %v: %s", r.Spent, b)
	}
	st, _ := f.store.ResearchState(context.Background(), "ch")
	if st.ActiveRun != "" || !st.DueAt.Equal(start.Add(f.cfg.RetryFailedAfter)) {
		t.Fatalf("state after the failure: %+v", st)
	}
	again := f.start("ch") // the channel is free
	m, _ = f.queue.take()
	srv.FailNext("search", youtubetest.BackendError())
	m.Attempt = f.cfg.MaxAttempts
	if err := f.pipeline.Handle(context.Background(), m); err != nil {
		t.Fatalf("the last attempt fails the run instead of dead-lettering the message: %v", err)
	}
	if r := f.run("ch", again.ID); r.Status != research.Failed {
		t.Fatalf("after the last attempt: %s", r.Status)
	}
}

// Runs going at once never spend past the day's budget together: each reserves what it may spend before
// its first call.
func TestConcurrentRunsStayWithinTheBudget(t *testing.T) {
	var srv *youtubetest.Server
	budget := quota.Cost{Units: 9000, Searches: 12, Stats: 9000} // new niches: the searches bind, 4 runs
	f := newFixture(t, setup{source: onYouTube(t, &srv), config: func(c *research.Config) { c.Daily, c.ScheduledReserve = budget, 0 }})
	channels := []string{"a", "b", "c", "d", "e", "f"}
	for _, ch := range channels {
		f.profile(ch, ch+" one", ch+" two", "vegan", "budget")
		f.start(ch)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				m, ok := f.queue.take()
				if !ok {
					return
				}
				if err := f.pipeline.Handle(context.Background(), m); err != nil {
					f.queue.again(m) // a lost race (CONFLICT): the queue delivers it again
				}
			}
		})
	}
	wg.Wait()
	done, waiting := 0, 0
	for _, ch := range channels {
		switch r := f.lastRun(ch); r.Status {
		case research.Succeeded:
			done++
		case research.WaitingQuota:
			waiting++
		default:
			t.Fatalf("run of %s: %s %q", ch, r.Status, r.Message)
		}
	}
	u := f.quotaUsed()
	if !srv.Spent().Within(budget) || u.Used != srv.Spent() || done != budget.Searches/f.cfg.Plan.Searches || done+waiting != len(channels) {
		t.Fatalf("%d runs done, %d waiting; the API charged %v, the budget holds %v, of %v", done, waiting, srv.Spent(), u.Used, budget)
	}
}
