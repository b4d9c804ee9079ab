package ratelimit

import (
	"context"
	"time"
)

// Leased calls (issue 21). Counting every call with a conditional write costs a table write per request. An
// instance instead leases a block of calls from the subject's window with one conditional add, which the
// table refuses when the window would then hold more than the limit, and spends the block locally. So:
//   - the sum of all instances' leases in a window never exceeds the limit, and no call is served without a
//     leased token: the limit is never exceeded, however many instances serve a key;
//   - a lease is never returned, and unspent calls lapse with their window. A key served by k instances
//     may therefore be refused early, by at most the other instances' unspent leases: (k-1)*(MaxBlock-1)
//     calls in a window, 49 per other instance (an instance holds one lease at a time: concurrent callers
//     wait for the lease in flight rather than each taking one);
//   - the block adapts to the subject's recent rate at this instance: 1 call for a key that calls rarely
//     (nothing is held that it may not use), 10, then MaxBlock for a busy one, sized to last about
//     leaseHorizon and never more than what is left of the window's time at that rate, nor more than this
//     instance last saw unleased. A block the table refuses is asked again as 1 call (the window may hold
//     fewer than the block); when that is refused too the window is used up, and the instance refuses the
//     subject's calls until the window ends without asking the table again.
//
// At 10 calls/s a warm key costs one table write per 50 calls; a key at its limit costs none once its
// window is known to be used up.

// blockSizes are the sizes a lease can take, smallest first; MaxBlock is the largest.
var blockSizes = [...]int64{1, 10, MaxBlock}

// MaxBlock is the most calls one lease takes.
const MaxBlock = 50

// leaseHorizon is how long a lease should last at the subject's recent rate.
const leaseHorizon = 10 * time.Second

type leaseKey struct{ subject, group string }

// lease is this instance's standing in one subject's group: its current window's lease, and the size and
// time of its last lease, from which the next block is sized.
type lease struct {
	start   time.Time // the window unspent, count and full belong to
	unspent int64
	// count is the window's count (every instance's leases) after this instance's last lease.
	count int64
	// full: a lease of one call was refused, so the window is used up.
	full bool
	// size and takenAt describe the last lease taken, in any window; size 0 before the first.
	size    int64
	takenAt time.Time
	// inflight is closed when the lease being taken is stored; nil when none is being taken.
	inflight chan struct{}
}

// TakeFunc leases n calls of w unless w would then hold more than limit, as Counter.TakeCalls does.
type TakeFunc func(ctx context.Context, w Window, n, limit int64) (count int64, ok bool, err error)

// spend takes one call of w for this instance: from its lease, else from a new one, leased with take. It
// returns what is left as this instance knows it, and false when the window is used up. With keep it
// spends nothing: it only makes sure the instance holds a lease (or knows the window used up), taking one
// when it holds none unspent.
func (l *Limiter) spend(ctx context.Context, w Window, limit int64, now time.Time, take TakeFunc, keep bool) (int64, bool, error) {
	k := leaseKey{w.Subject, w.Group}
	l.mu.Lock()
	l.sweep(w.Start)
	e := l.leases[k]
	if e == nil {
		e = &lease{}
		l.leases[k] = e
	}
	for {
		if !e.start.Equal(w.Start) && !e.start.After(w.Start) {
			e.start, e.unspent, e.count, e.full = w.Start, 0, 0, false
		}
		if e.start.After(w.Start) {
			// A caller already moved this lease to the next window (this one's clock read lags): count
			// this call there, as the table would only hold its own window's count anyway.
			w = Window{Subject: w.Subject, Group: w.Group, Start: e.start, End: e.start.Add(WindowLength)}
		}
		if e.unspent > 0 && keep {
			l.mu.Unlock()
			return limit - e.count + e.unspent, true, nil
		}
		if e.unspent > 0 {
			e.unspent--
			rem := limit - e.count + e.unspent
			l.mu.Unlock()
			return rem, true, nil
		}
		if e.full {
			l.mu.Unlock()
			return 0, false, nil
		}
		if e.inflight == nil {
			break
		}
		ch := e.inflight
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, false, ctx.Err()
		}
		l.mu.Lock()
	}
	n := e.block(limit, w, now)
	done := make(chan struct{})
	e.inflight = done
	l.mu.Unlock()

	count, ok, err := take(ctx, w, n, limit)
	if err == nil && !ok && n > 1 {
		n = 1
		count, ok, err = take(ctx, w, n, limit)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	e.inflight = nil
	close(done)
	switch {
	case err != nil:
		return 0, false, err
	case !e.start.Equal(w.Start):
		// The lease moved on to a later window while this one was taken: this call is served (or refused)
		// by what the table answered, and the rest of its block lapses with its window (kept: all of it).
		if !ok {
			return 0, false, nil
		}
		return limit - count, true, nil
	case !ok:
		e.full = true
		return 0, false, nil
	}
	e.count, e.unspent, e.size, e.takenAt = count, n-1, n, now
	if keep {
		e.unspent = n
	}
	return limit - e.count + e.unspent, true, nil
}

// block sizes the next lease: the calls the subject's recent rate would make in leaseHorizon (or the time
// left in the window, when shorter), rounded down to a block size, at most what was unleased when this
// instance last looked.
func (e *lease) block(limit int64, w Window, now time.Time) int64 {
	if e.size == 0 {
		return 1
	}
	elapsed := max(now.Sub(e.takenAt).Seconds(), 1e-3)
	want := float64(e.size) / elapsed * min(leaseHorizon, w.End.Sub(now)).Seconds()
	n := int64(1)
	for _, s := range blockSizes {
		if float64(s) <= want {
			n = s
		}
	}
	return max(1, min(n, limit-e.count))
}

// sweep drops the leases of windows before the previous one (the previous one's last lease still sizes
// the next block) once a later window starts. l.mu is held.
func (l *Limiter) sweep(start time.Time) {
	if !start.After(l.current) {
		return
	}
	l.current = start
	for k, e := range l.leases {
		if e.inflight == nil && e.start.Before(start.Add(-WindowLength)) {
			delete(l.leases, k)
		}
	}
}

// unspent returns what this instance holds of w, unspent.
func (l *Limiter) unspent(w Window) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.leases[leaseKey{w.Subject, w.Group}]; e != nil && e.start.Equal(w.Start) {
		return e.unspent
	}
	return 0
}
