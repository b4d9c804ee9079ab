// Package inproc is the in-process adapter of the queue port, for the local stack and tests. It keeps the
// semantics of an SQS standard queue with a redrive policy, proven by the conformance suite that the SQS
// adapter runs too (queue/queuetest):
//
//   - a message sent with a delay becomes visible once the delay has passed;
//   - a worker's receive makes a message invisible for the visibility timeout and counts an attempt;
//   - a handler's nil deletes the message; its error leaves the message to come back when the visibility
//     timeout of that receive ends, or after the delay of a queue.RetryAfterError;
//   - a message already received MaxReceiveCount times is moved to the dead-letter queue (another Queue)
//     instead of being received again;
//   - a message older than the retention period is dropped.
//
// Time comes from a Clock, so tests move a ManualClock and call Settle instead of sleeping.
//
// With Config.Dir the queue is durable: every change is appended to a journal in that directory and Send
// returns only once its messages are on disk, so a message acknowledged to its sender is delivered after a
// kill -9 and a restart. Messages that handlers held when the process died are visible again at once on
// open (their handlers are gone); the receive count they reached is kept.
package inproc

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/queue"
)

// Defaults and bounds of a Config, those of SQS.
const (
	DefaultVisibilityTimeout = 30 * time.Second
	MaxVisibilityTimeout     = 12 * time.Hour
	DefaultRetention         = 4 * 24 * time.Hour
	MinRetention             = time.Minute
	MaxRetention             = 14 * 24 * time.Hour
	MaxMaxReceiveCount       = 1000
	MaxNameLen               = 80
)

// The journal is rewritten once it is at least compactMinSize and compactRatio times the live messages.
const (
	compactMinSize = 4 << 20
	compactRatio   = 4
)

// ErrClosed is returned by the operations of a closed queue.
var ErrClosed = errors.New("inproc: queue closed")

// errClosed is the journal's own: appended to after Close.
var errClosed = errors.New("inproc: journal closed")

// Config configures a queue. Only Name is required.
type Config struct {
	// Name identifies the queue in logs and errors, and to its dead-letter queue: 1..80 letters, digits,
	// '-' or '_' (an SQS queue name).
	Name string
	// VisibilityTimeout is how long a received message stays invisible (default 30 s, at most 12 h).
	VisibilityTimeout time.Duration
	// DeadLetter receives the messages received MaxReceiveCount times (1..1000) without being deleted.
	// Without it messages are retried until their retention ends, and MaxReceiveCount must be 0.
	DeadLetter      *Queue
	MaxReceiveCount int
	// Retention is how long a message may stay in the queue (default 4 days, 1 minute..14 days). A message
	// moved to a dead-letter queue keeps the start of its retention period, as in SQS, so a dead-letter
	// queue wants the longer one.
	Retention time.Duration
	// Dir, when set, makes the queue durable: its journal lives there (directory 0700, files 0600), e.g.
	// .data/queues/<name>. One process at a time may open a directory.
	Dir string
	// Clock is the time the queue runs on (default the wall clock).
	Clock Clock
	// Logger receives handler failures, dead-lettering and journal errors (default: discarded).
	Logger *slog.Logger
}

// Stats counts a queue's messages as SQS's ApproximateNumberOfMessages* attributes do.
type Stats struct {
	Visible  int // ready to be received
	InFlight int // received, neither deleted nor visible again yet
	Delayed  int // sent with a delay that has not passed
}

// Queue is an in-process queue. It is a queue.Sender; Start runs handlers on it.
type Queue struct {
	name        string
	vt          time.Duration
	maxReceives int
	dlq         *Queue
	ownsDLQ     bool // opened by OpenSpec: Close closes it too
	retention   time.Duration
	clock       Clock
	log         *slog.Logger

	mu        sync.Mutex
	cond      *sync.Cond // broadcast on every change a worker or Settle may wait for
	msgs      map[string]*entry
	ready     entryHeap // every message not being moved, by the time it is visible
	seq       uint64
	j         *journal // nil: memory only
	liveBytes int64    // journal bytes the live messages take, to decide when to compact
	logFailed bool     // a journal write has failed and been logged
	started   bool
	closing   bool // Close called: workers stop receiving
	closed    bool // Close done: nothing more is accepted
	running   int  // handlers running, plus moves to or from a dead-letter queue under way
	armedAt   time.Time
	stopTimer func() bool
	cancel    context.CancelFunc // cancels the handlers' context
	workers   sync.WaitGroup
}

type entry struct {
	id        string
	body      []byte
	attrs     map[string]string
	sent      time.Time
	enqueued  time.Time // start of the retention period
	visibleAt time.Time
	count     int    // receives so far
	held      bool   // received and not yet given back: a handler (perhaps of a dead process) has it
	receipt   uint64 // bumped on each receive; a stale delivery's error changes nothing
	seq       uint64 // order of arrival, to break ties
	index     int    // in ready; -1 while being moved
	size      int64  // bytes of its put record in the journal
}

// Open returns a queue, replaying its journal when cfg.Dir holds one.
func Open(cfg Config) (*Queue, error) {
	if err := validName(cfg.Name); err != nil {
		return nil, err
	}
	q := &Queue{
		name:        cfg.Name,
		vt:          cmp.Or(cfg.VisibilityTimeout, DefaultVisibilityTimeout),
		maxReceives: cfg.MaxReceiveCount,
		dlq:         cfg.DeadLetter,
		retention:   cmp.Or(cfg.Retention, DefaultRetention),
		clock:       cmp.Or[Clock](cfg.Clock, WallClock{}),
		log:         cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		msgs:        map[string]*entry{},
	}
	q.cond = sync.NewCond(&q.mu)
	q.log = q.log.With("queue", q.name)
	switch {
	case q.vt < 0 || q.vt > MaxVisibilityTimeout:
		return nil, fmt.Errorf("inproc: queue %s: visibility timeout %s outside 0..%s", q.name, q.vt, MaxVisibilityTimeout)
	case q.retention < MinRetention || q.retention > MaxRetention:
		return nil, fmt.Errorf("inproc: queue %s: retention %s outside %s..%s", q.name, q.retention, MinRetention, MaxRetention)
	case q.dlq != nil && (q.maxReceives < 1 || q.maxReceives > MaxMaxReceiveCount):
		return nil, fmt.Errorf("inproc: queue %s: max receive count %d outside 1..%d", q.name, q.maxReceives, MaxMaxReceiveCount)
	case q.dlq == nil && q.maxReceives != 0:
		return nil, fmt.Errorf("inproc: queue %s: a max receive count needs a dead-letter queue", q.name)
	}
	if cfg.Dir != "" {
		if err := q.replay(cfg.Dir); err != nil {
			return nil, err
		}
	}
	return q, nil
}

func validName(name string) error {
	if name == "" || len(name) > MaxNameLen || strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		return fmt.Errorf("inproc: queue name %q: want 1..%d letters, digits, '-' or '_'", name, MaxNameLen)
	}
	return nil
}

// replay opens the journal in dir, rebuilds the queue from it and rewrites it with the live messages.
func (q *Queue) replay(dir string) error {
	j, recs, err := openJournal(dir)
	if err != nil {
		return fmt.Errorf("inproc: open queue %s: %w", q.name, err)
	}
	for _, r := range recs {
		switch r.Op {
		case opPut:
			q.msgs[r.ID] = &entry{
				index: -1, id: r.ID, body: r.Body, attrs: r.Attrs, sent: unixNano(r.Sent), enqueued: unixNano(r.Enqueued),
				visibleAt: unixNano(r.Visible), count: r.Count, held: r.InFlight,
			}
		case opRecv, opVis:
			if e := q.msgs[r.ID]; e != nil {
				e.count, e.visibleAt, e.held = max(e.count, r.Count), unixNano(r.Visible), r.InFlight
			}
		case opDel:
			delete(q.msgs, r.ID)
		}
	}
	now := q.clock.Now()
	es := slices.SortedFunc(maps.Values(q.msgs), func(a, b *entry) int { return a.sent.Compare(b.sent) })
	for _, e := range es {
		if q.expired(e, now) {
			delete(q.msgs, e.id)
			continue
		}
		if e.held {
			// Its handler died with the process that ran it.
			e.held, e.visibleAt = false, now
		}
		q.seq++
		e.seq = q.seq
		heap.Push(&q.ready, e)
	}
	q.j = j
	if err := q.compact(); err != nil {
		j.close()
		return fmt.Errorf("inproc: open queue %s: %w", q.name, err)
	}
	return nil
}

func unixNano(n int64) time.Time { return time.Unix(0, n) }

func (e *entry) put() record {
	return record{
		Op: opPut, ID: e.id, Body: e.body, Attrs: e.attrs, Sent: e.sent.UnixNano(), Enqueued: e.enqueued.UnixNano(),
		Visible: e.visibleAt.UnixNano(), Count: e.count, InFlight: e.held,
	}
}

// compact rewrites the journal with the live messages. The caller holds q.mu (or owns q, in Open).
func (q *Queue) compact() error {
	recs := make([]record, 0, len(q.msgs))
	var live int64
	for _, e := range q.ready {
		r := e.put()
		e.size = int64(len(frame(r)))
		live += e.size
		recs = append(recs, r)
	}
	for _, e := range q.msgs {
		if e.index < 0 { // being moved: still ours until the move completes
			recs = append(recs, e.put())
			live += e.size
		}
	}
	if err := q.j.rewrite(recs); err != nil {
		return err
	}
	q.liveBytes = live
	return nil
}

// maybeCompact compacts a journal grown to several times the live messages. The caller holds q.mu.
func (q *Queue) maybeCompact() {
	if q.j == nil || q.closed {
		return
	}
	if size := q.j.sizeNow(); size < compactMinSize || size < compactRatio*q.liveBytes {
		return
	}
	if err := q.compact(); err != nil {
		q.journalFailed(err)
	}
}

// write appends recs to the journal, if any, and returns the sequence number to sync to.
func (q *Queue) write(recs ...record) (uint64, error) {
	if q.j == nil {
		return 0, nil
	}
	var buf []byte
	for _, r := range recs {
		buf = append(buf, frame(r)...)
	}
	return q.j.append(buf)
}

// note appends records whose loss only redelivers a message (receives, visibility changes, deletes).
func (q *Queue) note(recs ...record) {
	if _, err := q.write(recs...); err != nil {
		q.journalFailed(err)
	}
}

func (q *Queue) journalFailed(err error) {
	if !q.logFailed && !errors.Is(err, errClosed) {
		q.logFailed = true
		q.log.Error("queue journal failed; sends are refused from now on", "err", err)
	}
}

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// Send enqueues msgs, all or none: it checks them against the port's rules first (queue.Check). On a
// durable queue it returns once they are on disk.
func (q *Queue) Send(ctx context.Context, msgs ...queue.Outgoing) error {
	if err := queue.Check(msgs...); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	now := q.clock.Now()
	es := make([]*entry, len(msgs))
	for i, m := range msgs {
		es[i] = &entry{
			index: -1, id: uuid.NewString(), body: slices.Clone(m.Body), attrs: cloneAttrs(m.Attributes),
			sent: now, enqueued: now, visibleAt: now.Add(m.Delay),
		}
	}
	return q.put(es)
}

func cloneAttrs(a map[string]string) map[string]string {
	if len(a) == 0 {
		return nil
	}
	return maps.Clone(a)
}

// put adds es (sent, dead-lettered or redriven here) and waits for the journal to have them.
func (q *Queue) put(es []*entry) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return fmt.Errorf("inproc: send to %s: %w", q.name, ErrClosed)
	}
	recs := make([]record, len(es))
	for i, e := range es {
		recs[i] = e.put()
		e.size = int64(len(frame(recs[i])))
	}
	seq, err := q.write(recs...)
	if err != nil {
		q.mu.Unlock()
		return fmt.Errorf("inproc: send to %s: %w", q.name, err)
	}
	for _, e := range es {
		if old := q.msgs[e.id]; old != nil { // redriven twice: one copy is enough
			q.drop(old)
		}
		q.seq++
		e.seq = q.seq
		q.msgs[e.id] = e
		heap.Push(&q.ready, e)
		q.liveBytes += e.size
	}
	q.rearm(q.clock.Now())
	q.cond.Broadcast()
	j := q.j
	q.mu.Unlock()
	if j != nil {
		if err := j.sync(seq); err != nil {
			return fmt.Errorf("inproc: send to %s: %w", q.name, err)
		}
	}
	return nil
}

// drop forgets e, in memory only. The caller holds q.mu and journals the deletion if it must.
func (q *Queue) drop(e *entry) {
	if e.index >= 0 {
		heap.Remove(&q.ready, e.index)
	}
	delete(q.msgs, e.id)
	q.liveBytes -= e.size
}

func (q *Queue) expired(e *entry, now time.Time) bool { return now.Sub(e.enqueued) >= q.retention }

// Start runs h on workers goroutines (at least 1), each receiving one message at a time, until Close.
// A queue is started at most once.
func (q *Queue) Start(h queue.Handler, workers int) error {
	if h == nil || workers < 1 {
		return fmt.Errorf("inproc: start %s: want a handler and at least one worker", q.name)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closing {
		return fmt.Errorf("inproc: start %s: %w", q.name, ErrClosed)
	}
	if q.started {
		return fmt.Errorf("inproc: start %s: already started", q.name)
	}
	q.started = true
	ctx, cancel := context.WithCancel(context.Background())
	q.cancel = cancel
	for range workers {
		q.workers.Add(1)
		go q.work(ctx, h)
	}
	q.rearm(q.clock.Now())
	q.cond.Broadcast()
	return nil
}

type delivery struct {
	e       *entry
	receipt uint64
	msg     queue.Message
}

func (q *Queue) work(ctx context.Context, h queue.Handler) {
	defer q.workers.Done()
	for {
		d, ok := q.next()
		if !ok {
			return
		}
		q.finish(d, q.call(ctx, h, d.msg))
	}
}

// call runs h, turning a panic into an error so that one bad message cannot stop the process.
func (q *Queue) call(ctx context.Context, h queue.Handler, m queue.Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			q.log.Error("queue handler panicked", "id", m.ID, "attempt", m.Attempt, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("inproc: handler panicked: %v", r)
		}
	}()
	return h(ctx, m)
}

// next receives the first visible message, waiting for one; false once the queue is closing.
func (q *Queue) next() (delivery, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.closing {
			return delivery{}, false
		}
		now := q.clock.Now()
		if len(q.ready) == 0 || q.ready[0].visibleAt.After(now) {
			q.rearm(now)
			q.cond.Wait()
			continue
		}
		e := q.ready[0]
		if q.expired(e, now) {
			q.drop(e)
			q.note(record{Op: opDel, ID: e.id})
			q.log.Warn("queue message expired (retention period over)", "id", e.id, "attempts", e.count)
			continue
		}
		if q.maxReceives > 0 && e.count >= q.maxReceives {
			q.deadLetter(e)
			continue
		}
		e.count++
		e.receipt++
		e.held = true
		e.visibleAt = now.Add(q.vt)
		heap.Fix(&q.ready, e.index)
		q.note(record{Op: opRecv, ID: e.id, Count: e.count, Visible: e.visibleAt.UnixNano(), InFlight: true})
		q.running++
		q.rearm(now)
		return delivery{e: e, receipt: e.receipt, msg: queue.Message{
			ID: e.id, Body: slices.Clone(e.body), Attempt: e.count, Attributes: cloneAttrs(e.attrs), SentAt: e.sent,
		}}, true
	}
}

// deadLetter moves e to the dead-letter queue. The caller holds q.mu, which is released during the move
// (the dead-letter queue takes its own lock).
func (q *Queue) deadLetter(e *entry) {
	heap.Remove(&q.ready, e.index)
	e.index = -1
	moved := &entry{
		index: -1, id: e.id, body: e.body, attrs: e.attrs, sent: e.sent, enqueued: e.enqueued,
		visibleAt: q.clock.Now(), count: e.count,
	}
	q.running++
	q.mu.Unlock()
	err := q.dlq.put([]*entry{moved})
	q.mu.Lock()
	q.running--
	q.cond.Broadcast()
	if q.msgs[e.id] != e {
		return // deleted meanwhile by a late handler's success; the copy in the dead-letter queue stays
	}
	if err != nil {
		q.log.Error("queue could not dead-letter a message; it stays", "id", e.id, "dlq", q.dlq.name, "err", err)
		e.visibleAt = q.clock.Now().Add(q.vt)
		heap.Push(&q.ready, e)
		q.rearm(q.clock.Now())
		return
	}
	q.drop(e)
	q.note(record{Op: opDel, ID: e.id})
	q.log.Warn("queue message dead-lettered", "id", e.id, "attempts", e.count, "dlq", q.dlq.name)
	q.maybeCompact()
}

// finish applies a handler's result.
func (q *Queue) finish(d delivery, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	q.cond.Broadcast()
	e := q.msgs[d.e.id]
	if e != d.e || q.closed || e.index < 0 {
		return // deleted, replaced, being moved, or the queue is gone (the journal keeps it for next time)
	}
	if err == nil {
		q.drop(e)
		q.note(record{Op: opDel, ID: e.id})
		q.maybeCompact()
		return
	}
	q.log.Info("queue handler failed", "id", e.id, "attempt", d.msg.Attempt, "err", err)
	if e.receipt != d.receipt {
		return // received again since: the newer receive owns its visibility
	}
	if delay, ok := queue.RetryDelay(err); ok {
		now := q.clock.Now()
		e.visibleAt, e.held = now.Add(delay), false
		heap.Fix(&q.ready, e.index)
		q.note(record{Op: opVis, ID: e.id, Count: e.count, Visible: e.visibleAt.UnixNano()})
		q.rearm(now)
	}
	// Otherwise it comes back when the visibility timeout of its receive ends, as in SQS.
}

// rearm makes sure a timer wakes the workers when the first invisible message becomes visible. The caller
// holds q.mu.
func (q *Queue) rearm(now time.Time) {
	if !q.started || q.closing || len(q.ready) == 0 {
		return
	}
	next := q.ready[0].visibleAt
	if !next.After(now) || (!q.armedAt.IsZero() && !next.Before(q.armedAt)) {
		return
	}
	if q.stopTimer != nil {
		q.stopTimer()
	}
	q.armedAt = next
	q.stopTimer = q.clock.At(next, q.wake)
}

func (q *Queue) wake() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.armedAt, q.stopTimer = time.Time{}, nil
	q.rearm(q.clock.Now())
	q.cond.Broadcast()
}

// Settle waits until the queue has done everything it can at the clock's current time: no handler running,
// no move under way and, once started, no visible message left waiting for a worker. Tests on a
// ManualClock call it before and after Advance.
func (q *Queue) Settle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		busy := q.running > 0 ||
			(q.started && !q.closing && len(q.ready) > 0 && !q.ready[0].visibleAt.After(q.clock.Now()))
		if !busy {
			return nil
		}
		if err := ctx.Err(); err != nil {
			// Say what kept it busy: a settle that times out is a test's only clue.
			first := "none"
			if len(q.ready) > 0 {
				e := q.ready[0]
				first = fmt.Sprintf("%s visible at %s (count %d, held %t, index %d, known %t)", e.id,
					e.visibleAt.Format(time.RFC3339Nano), e.count, e.held, e.index, q.msgs[e.id] == e)
			}
			return fmt.Errorf("inproc: settle %s: %w (running %d, ready %d, first %s, clock %s)", q.name, err,
				q.running, len(q.ready), first, q.clock.Now().Format(time.RFC3339Nano))
		}
		q.cond.Wait()
	}
}

// Stats counts the queue's messages now.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	var s Stats
	for _, e := range q.msgs {
		switch {
		case q.expired(e, now):
		case e.index < 0 || e.visibleAt.After(now) && e.count > 0:
			s.InFlight++
		case e.visibleAt.After(now):
			s.Delayed++
		default:
			s.Visible++
		}
	}
	return s
}

// List returns the queue's messages, oldest first, without receiving them; Attempt is the number of
// receives so far (in a dead-letter queue, those of the queue it came from). It is how the local stack
// inspects a dead-letter queue.
func (q *Queue) List() []queue.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	es := slices.Collect(maps.Values(q.msgs))
	slices.SortFunc(es, func(a, b *entry) int { return cmp.Or(a.sent.Compare(b.sent), cmp.Compare(a.seq, b.seq)) })
	out := make([]queue.Message, 0, len(es))
	for _, e := range es {
		if !q.expired(e, now) {
			out = append(out, queue.Message{
				ID: e.id, Body: slices.Clone(e.body), Attempt: e.count, Attributes: cloneAttrs(e.attrs), SentAt: e.sent,
			})
		}
	}
	return out
}

// Close stops receiving, waits until the running handlers return or ctx ends (then cancels their context,
// waits for them to return, and returns ctx's error), and closes the journal. Messages whose handlers had not
// finished stay in the journal and are delivered after the next Open. Close a queue before its
// dead-letter queue (a queue from OpenSpec closes its own).
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	if q.closing {
		q.mu.Unlock()
		return nil
	}
	q.closing = true
	if q.stopTimer != nil {
		q.stopTimer()
		q.stopTimer = nil
	}
	q.cond.Broadcast()
	cancel := q.cancel
	q.mu.Unlock()

	done := make(chan struct{})
	go func() {
		q.workers.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("inproc: close %s: handlers still running: %w", q.name, ctx.Err())
	}
	if cancel != nil {
		cancel()
	}
	if err != nil {
		// Handlers honour their context: wait for them to return, so nothing they hold (a store) is
		// closed under them.
		<-done
	}
	q.mu.Lock()
	q.closed = true
	j := q.j
	q.cond.Broadcast()
	q.mu.Unlock()
	if j != nil {
		if cerr := j.close(); err == nil {
			err = cerr
		}
	}
	if q.ownsDLQ {
		if cerr := q.dlq.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}

// entryHeap orders messages by the time they become visible, then by arrival.
type entryHeap []*entry

func (h entryHeap) Len() int { return len(h) }
func (h entryHeap) Less(i, j int) bool {
	return cmp.Or(h[i].visibleAt.Compare(h[j].visibleAt), cmp.Compare(h[i].seq, h[j].seq)) < 0
}
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *entryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
