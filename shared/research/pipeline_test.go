package research_test

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/research"
)

var keywords = []string{"vegan", "meal prep", "budget", "protein"}

func TestOfflineRunEndToEnd(t *testing.T) {
	f := newFixture(t, offlineSource(nil), nil)
	f.profile("ch", keywords...)
	ctx := context.Background()
	run, err := f.service.Start(ctx, "ch", research.TriggerAPI)
	if err != nil {
		t.Fatal(err)
	}
	f.drain(20)
	got := f.run("ch", run.ID)
	t.Logf("%+v", got.View())
	if got.Status != research.Succeeded {
		t.Fatalf("status %s: %s", got.Status, got.Message)
	}
	vs, total, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: 5})
	t.Log(total, err)
	for _, v := range vs {
		t.Logf("%+v", v)
	}
	p, _ := f.service.Insights(ctx, "ch")
	t.Logf("%+v", p)
	t.Log(f.events.names())
}
