package samevents

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

// The sample events are read from events/ by path, and each is an HTTP API (payload 2.0) request.
func TestLoadsTheSamples(t *testing.T) {
	names, err := Names()
	if err != nil || len(names) == 0 {
		t.Fatalf("names: %v, %v", names, err)
	}
	for _, name := range names {
		ev, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Version != "2.0" || ev.RouteKey == "" || ev.RequestContext.RequestID == "" {
			t.Errorf("%s: version %q, route %q, request id %q", name, ev.Version, ev.RouteKey, ev.RequestContext.RequestID)
		}
	}
	if _, err := Load("no-such-event.json"); err == nil {
		t.Error("a missing sample loaded")
	}
}

// Seed puts the sample key in a table with the ids the events name; seeding again is refused when they
// would differ, and is otherwise harmless.
func TestSeed(t *testing.T) {
	tb := memstore.New(t)
	if err := Seed(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	if err := Seed(context.Background(), tb); err != nil {
		t.Errorf("seeding again: %v", err)
	}
}
