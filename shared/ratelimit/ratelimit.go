// Package ratelimit enforces the per-credential request rates of decisions 6-7: a number of calls per
// minute for each rate group ("generation", "other"), counted in fixed one-minute windows. The counts live
// behind Counter (the table, in production), so every Lambda instance shares them. An instance does not
// count each call there: it leases a block of calls from the window with one conditional add (see lease.go)
// and spends the block locally, so a warm key costs a table write per block, not per call. The REST edge
// calls Take after authentication; the MCP server and the workers call it the same way. Where a lease can
// be taken with another read in one table call (an API key's, see README.md), Lease takes it with that call.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
)

// WindowLength is the length of a counting window. Fixed windows, aligned to the minute: a caller can
// make up to twice the limit across a window boundary, the usual price of one counter item per window.
const WindowLength = time.Minute

// Window is one counting window of one subject's calls in one group.
type Window struct {
	Subject string
	Group   string
	// Start and End bound the window: [Start, End).
	Start, End time.Time
}

// Counter keeps the windows' counts; *store.Store implements it.
type Counter interface {
	// TakeCalls leases n calls of w unless w would then hold more than limit: one conditional add. It
	// returns the window's count after the lease (every instance's leases), and false when refused (nothing
	// taken; the count is then unknown and returned as limit).
	TakeCalls(ctx context.Context, w Window, n, limit int64) (count int64, ok bool, err error)
	// CallCount returns how many calls w holds (leased, spent or not), taking none.
	CallCount(ctx context.Context, w Window) (int64, error)
}

// Status is where a subject stands in one group's current window.
type Status struct {
	Group     string
	Limit     int64
	Remaining int64
	// Reset is when the window ends and the full limit is available again; ResetAfter is the whole
	// seconds until then, rounded up, at least 1 (what Retry-After and X-RateLimit-Reset carry).
	Reset      time.Time
	ResetAfter int
}

func newStatus(group string, limit, remaining int64, w Window, now time.Time) Status {
	return Status{Group: group, Limit: limit, Remaining: min(limit, max(0, remaining)), Reset: w.End,
		ResetAfter: max(1, int(math.Ceil(w.End.Sub(now).Seconds())))}
}

// Limiter applies per-group limits over a Counter, leasing blocks of calls (one Limiter per process: its
// leases are this instance's). Safe for concurrent use.
type Limiter struct {
	counter Counter
	limits  map[string]int64
	now     func() time.Time

	mu     sync.Mutex
	leases map[leaseKey]*lease
	// current is the latest window start seen; leases of earlier windows are dropped when it moves.
	current time.Time
}

// New returns a limiter with limits (calls per window, by group; each at least 1) over counter. now is the
// clock (nil: time.Now).
func New(counter Counter, limits map[string]int64, now func() time.Time) (*Limiter, error) {
	for group, n := range limits {
		if n < 1 {
			return nil, fmt.Errorf("ratelimit: the limit of group %q must be at least 1, not %d", group, n)
		}
	}
	if now == nil {
		now = time.Now
	}
	return &Limiter{counter: counter, limits: limits, now: now, leases: map[leaseKey]*lease{}}, nil
}

// Subject is whose budget a call spends: an API key's own, named by the key's hash (known before the key
// is read, so the key's read and its lease can be one table call: the store keeps a key's windows on its
// lookup item), or, for a session token (which carries no key), its account's, whichever channel it
// names, so switching X-Channel-Id does not multiply the budget (the store keeps those on the account's
// item, read with the lease likewise).
func Subject(keyHash, accountID string) string {
	if keyHash != "" {
		return keySubject + keyHash
	}
	return accountSubject + accountID
}

const (
	keySubject     = "key:"
	accountSubject = "account:"
)

// AccountOf returns the account a session's subject names (Subject), and false for any other subject.
func AccountOf(subject string) (string, bool) {
	account, ok := strings.CutPrefix(subject, accountSubject)
	return account, ok && account != ""
}

// KeyHashOf returns the key hash a subject of an API key names (Subject), and false for any other subject.
func KeyHashOf(subject string) (string, bool) {
	hash, ok := strings.CutPrefix(subject, keySubject)
	return hash, ok && hash != ""
}

// Limit returns the limit of group, or 0 when the group is not limited.
func (l *Limiter) Limit(group string) int64 { return l.limits[group] }

// CurrentWindow returns the current window of subject in group.
func (l *Limiter) CurrentWindow(subject, group string) Window {
	w, _ := l.window(subject, group)
	return w
}

// window returns the current window of subject in group.
func (l *Limiter) window(subject, group string) (Window, time.Time) {
	now := l.now()
	start := now.UTC().Truncate(WindowLength)
	return Window{Subject: subject, Group: group, Start: start, End: start.Add(WindowLength)}, now
}

// Take counts one call of subject in group, from this instance's lease when it has one (no table call),
// else from a new lease. Over the limit it answers a RATE_LIMIT *apperr.Error whose RetryAfter is the
// seconds until the window ends; the Status is returned either way (Remaining 0 when refused). Remaining is
// what this instance knows: the window's calls not leased by anyone when it last leased, plus its own
// unspent lease (other instances' unspent leases look spent). A group without a limit is a programming
// error.
func (l *Limiter) Take(ctx context.Context, subject, group string) (Status, error) {
	limit, ok := l.limits[group]
	if !ok {
		return Status{}, fmt.Errorf("ratelimit: no limit configured for group %q", group)
	}
	w, now := l.window(subject, group)
	remaining, allowed, err := l.spend(ctx, w, limit, now, l.counter.TakeCalls, false)
	if err != nil {
		return Status{}, fmt.Errorf("ratelimit: count a call: %w", err)
	}
	st := newStatus(group, limit, remaining, w, now)
	if !allowed {
		st.Remaining = 0
		return st, &apperr.Error{Code: apperr.RateLimit, RetryAfter: st.ResetAfter, Message: fmt.Sprintf(
			"rate limit reached: %d %s calls per minute; retry in %d s (at %s)",
			limit, group, st.ResetAfter, w.End.Format(time.RFC3339))}
	}
	return st, nil
}

// Lease makes sure this instance holds a lease of subject's calls in group's current window, spending
// none: when it holds none unspent and does not know the window used up, it leases a block with take
// instead of the Counter (the same lease logic: block size, one lease in flight). The next Take of subject
// in group then spends from that lease, or refuses, without a table call. So a caller that reads something
// with the lease in one table call (an API key's lookup item, see the REST edge) passes that call as take;
// take may be called twice (a refused block is asked again as one call), or not at all.
func (l *Limiter) Lease(ctx context.Context, subject, group string, take TakeFunc) error {
	limit, ok := l.limits[group]
	if !ok {
		return fmt.Errorf("ratelimit: no limit configured for group %q", group)
	}
	w, now := l.window(subject, group)
	if _, _, err := l.spend(ctx, w, limit, now, take, true); err != nil {
		return fmt.Errorf("ratelimit: lease calls: %w", err)
	}
	return nil
}

// Peek returns the status of subject in group without counting a call: one read of the window's count,
// plus what this instance holds unspent.
func (l *Limiter) Peek(ctx context.Context, subject, group string) (Status, error) {
	limit, ok := l.limits[group]
	if !ok {
		return Status{}, fmt.Errorf("ratelimit: no limit configured for group %q", group)
	}
	w, now := l.window(subject, group)
	count, err := l.counter.CallCount(ctx, w)
	if err != nil {
		return Status{}, fmt.Errorf("ratelimit: read a count: %w", err)
	}
	return newStatus(group, limit, limit-count+l.unspent(w), w, now), nil
}
