package generation_test

import (
	"context"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
)

type outbox struct{ msgs []queue.Message }

func (o *outbox) Send(_ context.Context, ms ...queue.Outgoing) error {
	for _, m := range ms {
		o.msgs = append(o.msgs, queue.Message{ID: string(rune('a' + len(o.msgs))), Body: m.Body, Attempt: 1})
	}
	return nil
}

// Generation's outliers are the channel's strongest research videos of the kind asked.
func TestOutliersForGeneration(t *testing.T) {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC) }
	st := store.New(memstore.New(t, pebble.WithClock(now)), store.WithClock(now))
	if err := st.PutProfile(ctx, "ch", profile.NicheProfile{Keywords: []string{"vegan", "meal prep", "budget", "protein"}}); err != nil {
		t.Fatal(err)
	}
	q := &outbox{}
	cfg := research.DefaultConfig(research.SourceOffline)
	svc, _ := research.NewService(st, q, cfg, now)
	p, _ := research.NewPipeline(st, youtubesample.New(now), q, cfg, now)
	if _, err := svc.Start(ctx, "ch", research.TriggerAPI); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(q.msgs); i++ {
		if err := p.Handle(ctx, q.msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	src := generation.ResearchOutliers{Research: svc}
	for kind, want := range map[string]string{"shortScripts": research.Short, "longScripts": research.Long, "titles": ""} {
		outs, err := src.Outliers(ctx, "ch", kind, 10)
		if err != nil || len(outs) != 10 {
			t.Fatalf("%s: %d outliers, %v", kind, len(outs), err)
		}
		for i, o := range outs {
			if want != "" && o.ContentType != want || o.URL == "" || o.Score <= 0 || i > 0 && o.Score > outs[i-1].Score {
				t.Fatalf("%s: outlier %d %+v", kind, i, o)
			}
		}
	}
	if outs, err := src.Outliers(ctx, "another", "titles", 10); err != nil || len(outs) != 0 {
		t.Fatalf("a channel without research: %v, %v", outs, err)
	}
}
