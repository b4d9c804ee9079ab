package research_test

import (
	"context"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

func (f *fixture) schedule() research.ScheduleReport {
	f.t.Helper()
	rep, err := f.service.Schedule(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}

func (f *fixture) lastRun(channelID string) research.Run {
	f.t.Helper()
	st, err := f.store.ResearchState(context.Background(), channelID)
	if err != nil {
		f.t.Fatal(err)
	}
	id := st.ActiveRun
	if id == "" {
		id = st.LastRunID
	}
	return f.run(channelID, id)
}

// A keyword change queues a run (decision 33); the research is run again once older than the interval,
// not before; a profile that lost its keywords is taken off the schedule.
func TestSchedule(t *testing.T) {
	f := newFixture(t, setup{})
	ctx := context.Background()
	f.profile("ch", keywords...)
	if rep := f.schedule(); rep.Started != 1 {
		t.Fatalf("after the keywords were set: %+v; want a run started", rep)
	}
	first := f.lastRun("ch")
	if first.Trigger != research.TriggerProfile {
		t.Fatalf("trigger %q", first.Trigger)
	}
	f.drain(0)
	if rep := f.schedule(); rep.Started != 0 || rep.Due != 0 {
		t.Fatalf("right after the run: %+v; want nothing due", rep)
	}
	// Due again after the interval, later by the channel's own offset (spread over 12 hours).
	st, _ := f.store.ResearchState(ctx, "ch")
	if d := st.DueAt.Sub(f.clock.Now().Add(f.cfg.Interval)); d < 0 || d >= 12*time.Hour {
		t.Fatalf("due at %s, %s after the interval", st.DueAt, d)
	}
	f.clock.Add(f.cfg.Interval - time.Minute)
	if rep := f.schedule(); rep.Started != 0 {
		t.Fatalf("before the interval: %+v", rep)
	}
	f.clock.Set(st.DueAt.Add(time.Minute))
	if rep := f.schedule(); rep.Started != 1 || rep.Due != 1 {
		t.Fatalf("after the interval: %+v", rep)
	}
	second := f.lastRun("ch")
	if second.ID == first.ID || second.Trigger != research.TriggerSchedule {
		t.Fatalf("the scheduled run: %+v", second.View())
	}
	f.drain(0)
	// The same keywords written again ask for nothing; new ones do, at once.
	f.profile("ch", "protein", "budget", "meal prep", "vegan")
	if rep := f.schedule(); rep.Started != 0 {
		t.Fatalf("same keywords: %+v", rep)
	}
	f.clock.Add(time.Second)
	f.profile("ch", "keto", "budget", "meal prep", "protein")
	if rep := f.schedule(); rep.Started != 1 {
		t.Fatalf("new keywords: %+v", rep)
	}
	f.drain(0)
	// Keywords removed: the channel leaves the schedule when it is next due.
	if err := f.store.PutProfile(ctx, "ch", profile.NicheProfile{BroadNiche: "cooking"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(f.cfg.Interval + 12*time.Hour) // past the channel's offset too
	if rep := f.schedule(); rep.Cleared != 1 || rep.Started != 0 {
		t.Fatalf("without keywords: %+v", rep)
	}
	if st, _ := f.store.ResearchState(ctx, "ch"); !st.DueAt.IsZero() {
		t.Fatalf("still scheduled at %s", st.DueAt)
	}
	f.clock.Add(f.cfg.Interval)
	if rep := f.schedule(); rep.Due != 0 {
		t.Fatalf("a cleared channel is due: %+v", rep)
	}
}

// The scheduler starts only what the day's budget has room for, oldest first; the rest stays due.
func TestScheduleWithinTheBudget(t *testing.T) {
	var srv *youtubetest.Server
	// Searches for two new niches.
	f := newFixture(t, setup{source: onYouTube(t, &srv), config: func(c *research.Config) { c.Daily.Searches, c.ScheduledReserve = 7, 0 }})
	for _, ch := range []string{"a", "b", "c"} { // keyword changes: on demand, no reserve kept here
		f.profile(ch, ch+" one", ch+" two", "vegan", "budget")
		f.clock.Add(time.Second)
	}
	rep := f.schedule()
	if rep.Started != 2 || rep.BudgetShort != 1 {
		t.Fatalf("three due, room for two runs of %v: %+v", f.cfg.Plan.Ceiling(), rep)
	}
	if st, _ := f.store.ResearchState(context.Background(), "c"); st.ActiveRun != "" {
		t.Fatal("the newest entry was started before the older ones")
	}
	f.drain(0)
	if u := f.quotaUsed(); u.Used.Searches > 7 || u.Used != srv.Spent() {
		t.Fatalf("the day's budget holds %v, the API charged %v", u.Used, srv.Spent())
	}
	if rep := f.schedule(); rep.Started != 0 || rep.BudgetShort != 1 {
		t.Fatalf("later that day: %+v", rep)
	}
	f.clock.Add(24 * time.Hour)
	if rep := f.schedule(); rep.Started != 1 {
		t.Fatalf("the next day: %+v", rep)
	}
}
