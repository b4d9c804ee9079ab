package health

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestReport(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
	ok := func(context.Context) error { return nil }
	broken := func(context.Context) error { return errors.New("connection refused") }
	hangs := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	for _, c := range []struct {
		name   string
		check  Checker
		status State
		db     State
	}{
		{"all ok", Checker{Database: ok, AI: OK, Images: OK}, OK, OK},
		{"store fails", Checker{Database: broken, AI: OK, Images: OK}, Degraded, Down},
		{"store hangs", Checker{Database: hangs, AI: OK, Images: OK, Timeout: time.Millisecond}, Degraded, Down},
		{"no ai configured", Checker{Database: ok, AI: Degraded, Images: OK}, Degraded, OK},
		{"images unset", Checker{Database: ok, AI: OK}, Degraded, OK},
	} {
		c.check.Now, c.check.Version = now, "1.2.3"
		got := c.check.Report(context.Background())
		if got.Status != c.status || got.Services.Database != c.db || got.Services.API != OK || got.Version != "1.2.3" {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}

func TestAIProbe(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	calls := 0
	answer := Probe{State: Down, Reason: "cannot reach the model server: connection refused"}
	cache := &ProbeCache{Now: func() time.Time { return now }, Probe: func(context.Context) Probe { calls++; return answer }}
	c := Checker{Database: func(context.Context) error { return nil }, AI: OK, Images: OK, Now: func() time.Time { return now },
		AIProbe: cache.Get}
	got := c.Report(context.Background())
	if got.Status != Degraded || got.Services.AI != Down || got.Services.AIReason != answer.Reason {
		t.Fatalf("%+v", got)
	}
	// Within 5 s: the cached result, no new probe.
	answer = Probe{State: OK}
	now = now.Add(DefaultProbeEvery - time.Millisecond)
	if got := c.Report(context.Background()); got.Services.AI != Down || calls != 1 {
		t.Fatalf("%+v after %d probes", got, calls)
	}
	now = now.Add(time.Millisecond)
	if got := c.Report(context.Background()); got.Services.AI != OK || got.Services.AIReason != "" || got.Status != OK || calls != 2 {
		t.Fatalf("%+v after %d probes", got, calls)
	}
	answer = Probe{State: Degraded, Reason: "the server does not serve model m"}
	now = now.Add(DefaultProbeEvery)
	if got := c.Report(context.Background()); got.Services.AI != Degraded || got.Services.AIReason != answer.Reason || calls != 3 {
		t.Fatalf("%+v after %d probes", got, calls)
	}
}
