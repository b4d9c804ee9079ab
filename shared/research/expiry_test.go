package research_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
)

// TestResearchExpires (issue 30 item 4, decision 49): a completed run leaves other channels' data only in
// the channel's state (its research.completed event still carries the patterns); when that research turns
// research.DataLifetime old without a refresh, readers see none, and the scheduler's pass deletes it and
// researches the channel again, which shows fresh research.
func TestResearchExpires(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	first := f.start("ch")
	f.drain(0)
	if run := f.run("ch", first.ID); run.Status != research.Succeeded || !run.Patterns.Empty() {
		t.Fatalf("completed run: %s, patterns %+v; want succeeded, keeping none", run.Status, run.Patterns)
	}
	var completed string
	for _, e := range f.events.list {
		if e.name == research.EventCompleted {
			b, _ := json.Marshal(e.data)
			completed = string(b)
		}
	}
	if !strings.Contains(completed, `"patterns":{"titles":`) {
		t.Fatalf("research.completed without the patterns: %s", completed)
	}
	st, err := f.store.ResearchState(ctx, "ch")
	if err != nil || st.Set == nil || st.Patterns.Empty() {
		t.Fatalf("state %+v, %v; want the run's research", st, err)
	}
	expiry := research.DataExpiry(st.Set.FetchedAt)

	f.clock.Set(expiry.Add(-time.Minute))
	if _, n, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 1}); err != nil || n == 0 {
		t.Fatalf("a minute before expiry: %d videos, %v", n, err)
	}
	f.clock.Set(expiry)
	if _, n, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 1}); err != nil || n != 0 {
		t.Fatalf("at expiry: %d videos, %v; want none", n, err)
	}
	if p, err := f.service.Insights(ctx, "ch"); err != nil || !p.Empty() {
		t.Fatalf("at expiry: insights %+v, %v; want none", p, err)
	}
	rep, err := f.service.Schedule(ctx)
	if err != nil || rep.Swept != 1 || rep.Started != 1 {
		t.Fatalf("pass %+v, %v; want the research swept and a refresh started", rep, err)
	}
	f.drain(0)
	if _, n, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 1}); err != nil || n == 0 {
		t.Fatalf("after the refresh: %d videos, %v; want fresh research", n, err)
	}
	if st, _ := f.store.ResearchState(ctx, "ch"); st.Expired(f.clock.Now()) || st.LastRunID == first.ID {
		t.Fatalf("after the refresh: state %+v", st)
	}
}

// A niche's shared research is kept a day past the freshness window, so that window must end a day
// before other channels' data expires.
func TestFreshnessWithinDataLifetime(t *testing.T) {
	c := research.DefaultConfig(research.SourceYouTube)
	c.Freshness = research.DataLifetime - 23*time.Hour
	if err := c.Validate(); err == nil {
		t.Fatalf("freshness %s validated; want an error", c.Freshness)
	}
	c.Freshness = research.DataLifetime - 24*time.Hour
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// A state stored before research expired has its scheduler entry at DueAt even when its research expires
// sooner: the pass at DueAt still sweeps the channel instead of dropping the entry as nobody's.
func TestEntryOfAnEarlierBuildIsSwept(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	f.start("ch")
	f.drain(0)
	st, err := f.store.ResearchState(ctx, "ch")
	if err != nil || st.Set == nil {
		t.Fatalf("state %+v, %v", st, err)
	}
	// A failed refresh a day before the research expires leaves DueAt past its expiry, and earlier builds
	// indexed the state at DueAt.
	expiry := research.DataExpiry(st.Set.FetchedAt)
	st.DueAt = expiry.Add(12 * time.Hour)
	if err := f.store.SaveResearchState(ctx, "ch", st); err != nil {
		t.Fatal(err)
	}
	dues, err := f.store.DueResearch(ctx, expiry.Add(24*time.Hour), 10)
	if err != nil || len(dues) != 2 || !dues[1].At.Equal(expiry) || dues[1].Kick {
		t.Fatalf("index %+v, %v; want the keyword change's kick and the channel at its research's expiry", dues, err)
	}
	for _, d := range dues {
		if err := f.store.DeleteResearchDue(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	due := fmt.Sprintf("DUE#%013d#ch", st.DueAt.UnixMilli())
	if err := f.store.Table().Write(ctx, store.Put(store.Item{Key: store.Key{PK: "RSCHED", SK: due}, Data: []byte("ch")}, store.Always)); err != nil {
		t.Fatal(err)
	}
	f.clock.Set(st.DueAt)
	rep, err := f.service.Schedule(ctx)
	if err != nil || rep.Swept != 1 || rep.Started != 1 {
		t.Fatalf("pass at DueAt %+v, %v; want the research swept and refreshed", rep, err)
	}
}

// The one-off sweeps of earlier builds' leftovers are bounded per pass; a channel past the bound stays due
// and is swept, and visited, at the next pass.
func TestOldSweepsBoundedPerPass(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, setup{})
	const channels = 23
	for i := range channels {
		if err := f.store.SaveResearchState(ctx, fmt.Sprintf("ch%02d", i), research.State{DueAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := f.service.Schedule(ctx)
	if err != nil || first.Due != channels || first.OldSwept != 20 || first.Cleared != 20 {
		t.Fatalf("first pass %+v, %v; want 20 swept and visited", first, err)
	}
	second, err := f.service.Schedule(ctx)
	if err != nil || second.Due != 3 || second.OldSwept != 3 || second.Cleared != 3 {
		t.Fatalf("second pass %+v, %v; want the other 3", second, err)
	}
	for i := range channels {
		if st, _ := f.store.ResearchState(ctx, fmt.Sprintf("ch%02d", i)); !st.OldRunsSwept {
			t.Fatalf("ch%02d not swept", i)
		}
	}
}
