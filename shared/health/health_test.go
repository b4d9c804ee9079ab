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
