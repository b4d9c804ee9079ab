package youtube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/sourcetest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/youtube"
)

// outbox keeps the research queue's messages for the test to deliver in order.
type outbox struct{ msgs []queue.Message }

func (o *outbox) Send(_ context.Context, ms ...queue.Outgoing) error {
	for _, m := range ms {
		o.msgs = append(o.msgs, queue.Message{ID: fmt.Sprint(len(o.msgs)), Body: m.Body, Attempt: 1})
	}
	return nil
}

// researcher runs research of one channel through the real pipeline and the real YouTube client against
// the metered wire-protocol stand-in, with a clock the test moves.
type researcher struct {
	t     *testing.T
	at    time.Time
	st    *store.Store
	src   *youtube.Source
	srv   *youtubetest.Server
	cfg   research.Config
	queue *outbox
	svc   *research.Service
	pipe  *research.Pipeline
	done  int // messages delivered so far
}

func newResearcher(t *testing.T) *researcher {
	n := sourcetest.Niche()
	r := &researcher{t: t, at: now, queue: &outbox{}, cfg: research.DefaultConfig(research.SourceYouTube)}
	r.src, r.srv = serve(t, n)
	clock := func() time.Time { return r.at }
	r.st = store.New(memstore.New(t, pebble.WithClock(clock)), store.WithClock(clock))
	if err := r.st.PutProfile(context.Background(), "ch", profile.NicheProfile{Keywords: n.Keywords, FocusedNiche: n.Focus, ContentLanguage: n.Language}); err != nil {
		t.Fatal(err)
	}
	var err error
	if r.svc, err = research.NewService(r.st, r.queue, r.cfg, clock); err != nil {
		t.Fatal(err)
	}
	if r.pipe, err = research.NewPipeline(r.st, r.src, r.queue, r.cfg, clock); err != nil {
		t.Fatal(err)
	}
	return r
}

// run starts a run of the channel and delivers its messages; it returns the run as stored, and checks that
// what it reports, step by step, is what the server charged and within the plan's ceilings.
func (r *researcher) run(trigger string) research.Run {
	t := r.t
	t.Helper()
	ctx := context.Background()
	before := r.srv.Spent()
	run, err := r.svc.Start(ctx, "ch", trigger)
	if err != nil {
		t.Fatal(err)
	}
	for ; r.done < len(r.queue.msgs); r.done++ {
		if err := r.pipe.Handle(ctx, r.queue.msgs[r.done]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.st.ResearchRun(ctx, "ch", run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != research.Succeeded || got.VideoCount == 0 {
		t.Fatalf("run %s with %d videos: %s", got.Status, got.VideoCount, got.Message)
	}
	var sum quota.Cost
	for _, s := range got.Steps {
		if ceiling := r.cfg.Plan.StepCeiling(s.Name, got.Discovery); !s.Spent().Within(ceiling) {
			t.Errorf("%s spent %v, over its ceiling %v", s.Name, s.Spent(), ceiling)
		}
		sum = sum.Add(s.Spent())
	}
	if charged := r.srv.Spent().Sub(before); got.Spent != sum || got.Spent != charged {
		t.Errorf("the run reports %v (steps %v), the server charged %v", got.Spent, sum, charged)
	}
	if u, _ := r.st.QuotaUsed(ctx, dayOf(r.at)); u.Used != got.Spent {
		t.Errorf("the day's budget holds %v after the run settled, want the %v it spent", u.Used, got.Spent)
	}
	return got
}

// A new niche's 500-video run spends 3 search calls and a few dozen units (a run of searches alone would
// spend 10 searches), and what it reports per step is what the server charged.
func TestNewNicheSpendsThreeSearches(t *testing.T) {
	r := newResearcher(t)
	got := r.run(research.TriggerAPI)
	for _, s := range got.Steps {
		t.Logf("%-17s %v  %v", s.Name, s.Spent(), s.Counts)
	}
	t.Logf("total %v for %d videos; server calls %v", got.Spent, got.VideoCount, r.srv.Calls())
	if got.Discovery != research.DiscoverNew || got.VideoCount != research.MaxVideos || got.Spent.Searches != 3 || got.Spent.Stats != 0 {
		t.Errorf("a new niche: %s discovery, %d videos, %v; want new, %d videos, 3 searches, no stats call", got.Discovery, got.VideoCount, got.Spent, research.MaxVideos)
	}
	if !got.Spent.Within(r.cfg.Plan.Ceiling()) {
		t.Errorf("spent %v, over the run's ceiling %v", got.Spent, r.cfg.Plan.Ceiling())
	}
	checkUnits(t, r.srv)
}

// A refresh of a niche whose channels are known spends no search: it reads those channels' uploads, and
// the statistics of the videos it keeps from videos:batchGetStats. Once the last discovery is over 21
// days old it spends one search for new channels, or none when the day's searches ran out; past 28 days
// the channels are forgotten and the niche is discovered anew.
func TestRefreshOfAKnownNicheSpendsNoSearch(t *testing.T) {
	r := newResearcher(t)
	first := r.run(research.TriggerAPI)
	week := 7 * 24 * time.Hour

	r.at = r.at.Add(week)
	refresh := r.run(research.TriggerSchedule)
	if refresh.Discovery != research.DiscoverKnown || refresh.Spent.Searches != 0 || r.srv.Calls()["search"] != 3 {
		t.Fatalf("a week later: %s discovery, %v, %d searches in all; want known, none more", refresh.Discovery, refresh.Spent, r.srv.Calls()["search"])
	}
	if refresh.Spent.Stats != research.MaxVideos/research.MaxIDs || refresh.Steps[2].Counts["statsOnly"] != research.MaxVideos {
		t.Errorf("the kept videos' statistics: %v, %v; want %d videos in %d stats calls", refresh.Spent, refresh.Steps[2].Counts, research.MaxVideos, research.MaxVideos/research.MaxIDs)
	}
	if refresh.Spent.Units >= first.Spent.Units || refresh.VideoCount != first.VideoCount {
		t.Errorf("the refresh spent %v for %d videos, the new niche %v for %d", refresh.Spent, refresh.VideoCount, first.Spent, first.VideoCount)
	}
	// The kept videos' snippets were read by the first run: the refreshed set's data counts from then.
	if st, _ := r.st.ResearchState(context.Background(), "ch"); st.Set == nil || !st.Set.DataFetched().Equal(first.CreatedAt) ||
		!st.DataExpiresAt().Equal(research.DataExpiry(first.CreatedAt)) {
		t.Errorf("the refreshed set: %+v; want its data counted from the first run's fetch, %s", st.Set, first.CreatedAt)
	}

	r.at = r.at.Add(2 * week) // 21 days after the discovery
	more := r.run(research.TriggerSchedule)
	if more.Discovery != research.DiscoverMore || more.Spent.Searches != 1 {
		t.Fatalf("21 days after the discovery: %s discovery, %v; want one search", more.Discovery, more.Spent)
	}

	// 21 days later again, the day's searches out: the refresh goes on without one.
	r.at = r.at.Add(3 * week)
	if err := r.st.MarkQuotaExhausted(context.Background(), dayOf(r.at), quota.Searches); err != nil {
		t.Fatal(err)
	}
	if noSearch := r.run(research.TriggerSchedule); noSearch.Discovery != research.DiscoverKnown || noSearch.Spent.Searches != 0 {
		t.Fatalf("searches out: %s discovery, %v; want the known channels, no search", noSearch.Discovery, noSearch.Spent)
	}
	// 28 days after the last discovery its channels are gone: the niche is new again.
	r.at = r.at.Add(week)
	if again := r.run(research.TriggerSchedule); again.Discovery != research.DiscoverNew || again.Spent.Searches != 3 {
		t.Fatalf("28 days after the discovery: %s discovery, %v; want new, 3 searches", again.Discovery, again.Spent)
	}
}

// What one project's default quota supports, measured on the real pipeline and client against the metered
// stand-in: new niches a day (if the day went to them alone), and niches kept fresh at a weekly refresh
// (likewise), over twelve weekly refreshes (the discovery's 3-week and the snippets' 2-week cycles both
// come round). The research README's capacity table is this test's output.
func TestDefaultQuotaCapacity(t *testing.T) {
	r := newResearcher(t)
	fresh := r.run(research.TriggerAPI).Spent
	const weeks = 12
	var refreshes quota.Cost
	for range weeks {
		r.at = r.at.Add(7 * 24 * time.Hour)
		refreshes = refreshes.Add(r.run(research.TriggerSchedule).Spent)
	}
	daily := r.cfg.Daily
	// perDay is how many runs of the given cost (times n, over n runs) fit a day's budget, bucket by bucket.
	perDay := func(cost quota.Cost, n int) (int, quota.Bucket) {
		best, by := -1, quota.Units
		for _, b := range quota.Buckets() {
			if c := cost.Of(b); c > 0 {
				if fit := daily.Of(b) * n / c; best < 0 || fit < best {
					best, by = fit, b
				}
			}
		}
		return best, by
	}
	newPerDay, newBy := perDay(fresh, 1)
	refreshPerDay, refreshBy := perDay(refreshes, weeks)
	weekly := refreshPerDay * 7
	t.Logf("default daily budget: %v", daily)
	t.Logf("| run | units | search calls | stats calls | per day | bound by |")
	t.Logf("|---|---|---|---|---|---|")
	t.Logf("| new niche | %d | %d | %d | %d | %s |", fresh.Units, fresh.Searches, fresh.Stats, newPerDay, newBy)
	t.Logf("| weekly refresh (mean of %d) | %.1f | %.2f | %.1f | %d | %s |", weeks,
		float64(refreshes.Units)/weeks, float64(refreshes.Searches)/weeks, float64(refreshes.Stats)/weeks, refreshPerDay, refreshBy)
	t.Logf("new niches a day: %d; niches kept fresh at a weekly refresh: %d", newPerDay, weekly)
	if newPerDay < 30 {
		t.Errorf("the default quota supports %d new niches a day, want at least 30", newPerDay)
	}
	if weekly < 1000 {
		t.Errorf("the default quota keeps %d niches fresh weekly, want at least 1,000", weekly)
	}
}

func dayOf(t time.Time) string {
	c, err := research.NewClock()
	if err != nil {
		panic(err)
	}
	return c.Day(t)
}
