package youtube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/sourcetest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/memtable"
)

// outbox keeps the research queue's messages for the test to deliver in order.
type outbox struct{ msgs []queue.Message }

func (o *outbox) Send(_ context.Context, ms ...queue.Outgoing) error {
	for _, m := range ms {
		o.msgs = append(o.msgs, queue.Message{ID: fmt.Sprint(len(o.msgs)), Body: m.Body, Attempt: 1})
	}
	return nil
}

// A 500-video run spends at most 350 units (a run of searches alone would spend 1,000), and what it
// reports per step is what the server charged.
func TestRunOf500VideosSpendsAtMost350Units(t *testing.T) {
	n := sourcetest.Niche()
	src, srv := serve(t, n)
	ctx := context.Background()
	clock := func() time.Time { return now }
	st := store.New(memtable.New(memtable.WithClock(clock)), store.WithClock(clock))
	if err := st.PutProfile(ctx, "ch", profile.NicheProfile{Keywords: n.Keywords, FocusedNiche: n.Focus, ContentLanguage: n.Language}); err != nil {
		t.Fatal(err)
	}
	q := &outbox{}
	cfg := research.DefaultConfig(research.SourceYouTube)
	svc, err := research.NewService(st, q, cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	p, err := research.NewPipeline(st, src, q, cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	run, err := svc.Start(ctx, "ch", research.TriggerAPI)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(q.msgs); i++ {
		if err := p.Handle(ctx, q.msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.ResearchRun(ctx, "ch", run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != research.Succeeded || got.VideoCount != research.MaxVideos {
		t.Fatalf("run %s with %d videos: %s", got.Status, got.VideoCount, got.Message)
	}
	sum := 0
	for _, s := range got.Steps {
		t.Logf("%-17s %3d units  %v", s.Name, s.UnitsSpent, s.Counts)
		if s.UnitsSpent > cfg.Plan.StepCeiling(s.Name) {
			t.Errorf("%s spent %d units, over its ceiling %d", s.Name, s.UnitsSpent, cfg.Plan.StepCeiling(s.Name))
		}
		sum += s.UnitsSpent
	}
	t.Logf("total %d units for %d videos; server calls %v", got.UnitsSpent, got.VideoCount, srv.Calls())
	if got.UnitsSpent != sum || got.UnitsSpent != srv.Units() {
		t.Errorf("the run reports %d units (steps %d), the server charged %d", got.UnitsSpent, sum, srv.Units())
	}
	if got.UnitsSpent > 350 {
		t.Errorf("a 500-video run spent %d units, over 350", got.UnitsSpent)
	}
	if used, _, _ := st.BudgetUsed(ctx, dayOf(now)); used != got.UnitsSpent {
		t.Errorf("the day's budget holds %d units after the run settled, want the %d it spent", used, got.UnitsSpent)
	}
	checkUnits(t, srv)
}

func dayOf(t time.Time) string {
	c, err := research.NewClock()
	if err != nil {
		panic(err)
	}
	return c.Day(t)
}
