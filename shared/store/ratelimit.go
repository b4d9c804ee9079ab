package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/creatorstrategy/css/shared/ratelimit"
)

// Rate-limit windows (ratelimit.Counter), PK = "RATE#<subject>", SK = "<group>#<window start, Unix s>":
// one counter item per subject, group and minute, created by its first call and left to expire. A new
// window is a new item, so no call ever has to reset a counter; the old items expire (TTL) a window
// after their end, which leaves room for Lambda instances whose clocks lag a little.

func rateWindowKey(w ratelimit.Window) Key {
	return Key{PK: "RATE#" + w.Subject, SK: w.Group + "#" + strconv.FormatInt(w.Start.Unix(), 10)}
}

func rateWindowExpiry(w ratelimit.Window) int64 { return w.End.Add(w.End.Sub(w.Start)).Unix() }

// TakeCalls leases n calls of w unless w would then hold more than limit: one conditional add (DynamoDB:
// one UpdateItem, ADD under a condition).
func (s *Store) TakeCalls(ctx context.Context, w ratelimit.Window, n, limit int64) (int64, bool, error) {
	if n < 1 {
		return 0, false, fmt.Errorf("store: a lease of %d calls", n)
	}
	count, err := s.t.Increment(ctx, IncrUntil(rateWindowKey(w), n, limit, rateWindowExpiry(w)))
	if errors.Is(err, ErrConditionFailed) {
		return limit, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return count, true, nil
}

// CallCount returns the calls w holds (0 before its first).
func (s *Store) CallCount(ctx context.Context, w ratelimit.Window) (int64, error) {
	it, err := s.t.Get(ctx, rateWindowKey(w))
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return it.Count, err
}
