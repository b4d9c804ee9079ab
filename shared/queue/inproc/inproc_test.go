package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
)

var t0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

func settle(t *testing.T, qs ...*inproc.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, q := range qs {
		if err := q.Settle(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func mustSend(t *testing.T, q *inproc.Queue, msgs ...queue.Outgoing) {
	t.Helper()
	if err := q.Send(t.Context(), msgs...); err != nil {
		t.Fatal(err)
	}
}

func mustOpen(t *testing.T, cfg inproc.Config) *inproc.Queue {
	t.Helper()
	q, err := inproc.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func mustClose(t *testing.T, qs ...*inproc.Queue) {
	t.Helper()
	for _, q := range qs {
		if err := q.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// collector records the deliveries a handler gets and answers with outcome.
type collector struct {
	mu      sync.Mutex
	got     []queue.Message
	outcome func(queue.Message) error
}

func (c *collector) handle(_ context.Context, m queue.Message) error {
	c.mu.Lock()
	c.got = append(c.got, m)
	c.mu.Unlock()
	if c.outcome != nil {
		return c.outcome(m)
	}
	return nil
}

func (c *collector) messages() []queue.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

func bodies(ms []queue.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.Body)
	}
	slices.Sort(out)
	return out
}

func TestConfigBounds(t *testing.T) {
	dlq := mustOpen(t, inproc.Config{Name: "dlq"})
	defer mustClose(t, dlq)
	tests := []struct {
		name string
		cfg  inproc.Config
		ok   bool
	}{
		{"defaults", inproc.Config{Name: "q"}, true},
		{"longest name", inproc.Config{Name: strings.Repeat("a", inproc.MaxNameLen)}, true},
		{"name too long", inproc.Config{Name: strings.Repeat("a", inproc.MaxNameLen+1)}, false},
		{"empty name", inproc.Config{}, false},
		{"name with a slash", inproc.Config{Name: "a/b"}, false},
		{"name with a dot", inproc.Config{Name: ".."}, false},
		{"name with - and _", inproc.Config{Name: "Gen-queue_1"}, true},
		{"visibility timeout at most", inproc.Config{Name: "q", VisibilityTimeout: inproc.MaxVisibilityTimeout}, true},
		{"visibility timeout over", inproc.Config{Name: "q", VisibilityTimeout: inproc.MaxVisibilityTimeout + 1}, false},
		{"negative visibility timeout", inproc.Config{Name: "q", VisibilityTimeout: -1}, false},
		{"shortest retention", inproc.Config{Name: "q", Retention: inproc.MinRetention}, true},
		{"retention too short", inproc.Config{Name: "q", Retention: inproc.MinRetention - 1}, false},
		{"longest retention", inproc.Config{Name: "q", Retention: inproc.MaxRetention}, true},
		{"retention too long", inproc.Config{Name: "q", Retention: inproc.MaxRetention + 1}, false},
		{"max receives without a DLQ", inproc.Config{Name: "q", MaxReceiveCount: 3}, false},
		{"DLQ without max receives", inproc.Config{Name: "q", DeadLetter: dlq}, false},
		{"DLQ, max receives 1", inproc.Config{Name: "q1", DeadLetter: dlq, MaxReceiveCount: 1}, true},
		{"DLQ, max receives 1000", inproc.Config{Name: "q2", DeadLetter: dlq, MaxReceiveCount: inproc.MaxMaxReceiveCount}, true},
		{"DLQ, max receives 1001", inproc.Config{Name: "q3", DeadLetter: dlq, MaxReceiveCount: inproc.MaxMaxReceiveCount + 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := inproc.Open(tc.cfg)
			if (err == nil) != tc.ok {
				t.Fatalf("Open: %v; want ok=%v", err, tc.ok)
			}
			if q != nil {
				mustClose(t, q)
			}
		})
	}
}

func TestStartBounds(t *testing.T) {
	q := mustOpen(t, inproc.Config{Name: "q"})
	h := func(context.Context, queue.Message) error { return nil }
	if err := q.Start(nil, 1); err == nil {
		t.Error("Start without a handler succeeded")
	}
	if err := q.Start(h, 0); err == nil {
		t.Error("Start with 0 workers succeeded")
	}
	if err := q.Start(h, 1); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(h, 1); err == nil {
		t.Error("second Start succeeded")
	}
	mustClose(t, q)
	if err := q.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := q.Send(t.Context(), queue.Outgoing{Body: []byte("x")}); !errors.Is(err, inproc.ErrClosed) {
		t.Errorf("Send after Close: %v; want ErrClosed", err)
	}
	if err := q.Start(h, 1); !errors.Is(err, inproc.ErrClosed) {
		t.Errorf("Start after Close: %v; want ErrClosed", err)
	}
}

func TestSendHonoursContext(t *testing.T) {
	q := mustOpen(t, inproc.Config{Name: "q"})
	defer mustClose(t, q)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := q.Send(ctx, queue.Outgoing{Body: []byte("x")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Send with a canceled context: %v", err)
	}
	if got := q.Stats(); got != (inproc.Stats{}) {
		t.Errorf("stats %+v after a refused Send", got)
	}
}

// The handler may keep or change what it is given, and so may the sender: the queue's copy is its own.
func TestMessagesNotAliased(t *testing.T) {
	clock := inproc.NewManualClock(t0)
	q := mustOpen(t, inproc.Config{Name: "q", Clock: clock, VisibilityTimeout: time.Second})
	defer mustClose(t, q)
	body, attrs := []byte("original"), map[string]string{"k": "v"}
	var mu sync.Mutex
	var seen []string
	handler := func(_ context.Context, m queue.Message) error {
		mu.Lock()
		seen = append(seen, string(m.Body)+" "+m.Attributes["k"])
		mu.Unlock()
		m.Body[0] = 'X'
		m.Attributes["k"] = "changed"
		if m.Attempt == 1 {
			return errors.New("again")
		}
		return nil
	}
	mustSend(t, q, queue.Outgoing{Body: body, Attributes: attrs})
	body[0], attrs["k"] = 'Y', "sender changed"
	if err := q.Start(handler, 1); err != nil {
		t.Fatal(err)
	}
	settle(t, q)
	clock.Advance(time.Second)
	settle(t, q)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"original v", "original v"}; !slices.Equal(seen, want) {
		t.Errorf("deliveries %q; want %q", seen, want)
	}
}

// A handler that panics fails its message, which comes back; the workers keep going.
func TestHandlerPanic(t *testing.T) {
	clock := inproc.NewManualClock(t0)
	q := mustOpen(t, inproc.Config{Name: "q", Clock: clock, VisibilityTimeout: time.Second})
	defer mustClose(t, q)
	c := &collector{outcome: func(m queue.Message) error {
		if m.Attempt == 1 {
			panic("boom")
		}
		return nil
	}}
	if err := q.Start(c.handle, 1); err != nil {
		t.Fatal(err)
	}
	mustSend(t, q, queue.Outgoing{Body: []byte("a")})
	settle(t, q)
	clock.Advance(time.Second)
	settle(t, q)
	got := c.messages()
	if len(got) != 2 || got[1].Attempt != 2 {
		t.Fatalf("deliveries %v; want attempts 1 and 2", got)
	}
	if s := q.Stats(); s != (inproc.Stats{}) {
		t.Errorf("stats %+v; want empty", s)
	}
}

// A handler still running when its visibility timeout ends no longer owns the message: SQS delivers it again,
// and the late handler's failure does not change the new receive's visibility.
func TestStaleReceipt(t *testing.T) {
	clock := inproc.NewManualClock(t0)
	q := mustOpen(t, inproc.Config{Name: "q", Clock: clock, VisibilityTimeout: time.Second})
	defer mustClose(t, q)
	release := make(chan struct{})
	started := make(chan int, 3)
	if err := q.Start(func(_ context.Context, m queue.Message) error {
		started <- m.Attempt
		switch m.Attempt {
		case 1:
			<-release
			return errors.New("late failure")
		case 2:
			return queue.RetryAfter(10*time.Second, errors.New("not yet"))
		}
		return nil
	}, 2); err != nil {
		t.Fatal(err)
	}
	mustSend(t, q, queue.Outgoing{Body: []byte("slow")})
	if a := <-started; a != 1 {
		t.Fatalf("attempt %d; want 1", a)
	}
	clock.Advance(time.Second) // attempt 1 is still running
	if a := <-started; a != 2 {
		t.Fatalf("attempt %d; want 2", a)
	}
	close(release)
	settle(t, q)
	clock.Advance(9 * time.Second)
	settle(t, q)
	if s := q.Stats(); s != (inproc.Stats{InFlight: 1}) {
		t.Fatalf("stats %+v before the retry delay; want one in flight", s)
	}
	clock.Advance(time.Second)
	settle(t, q)
	if a := <-started; a != 3 {
		t.Fatalf("attempt %d; want 3", a)
	}
	if s := q.Stats(); s != (inproc.Stats{}) {
		t.Errorf("stats %+v; want empty", s)
	}
}

// Messages older than the retention period are dropped, never delivered.
func TestRetention(t *testing.T) {
	clock := inproc.NewManualClock(t0)
	q := mustOpen(t, inproc.Config{Name: "q", Clock: clock, Retention: time.Minute})
	defer mustClose(t, q)
	mustSend(t, q, queue.Outgoing{Body: []byte("old")})
	clock.Advance(30 * time.Second)
	mustSend(t, q, queue.Outgoing{Body: []byte("young")})
	clock.Advance(30 * time.Second)
	if got := bodies(q.List()); !slices.Equal(got, []string{"young"}) {
		t.Errorf("List %v; want only young", got)
	}
	c := &collector{}
	if err := q.Start(c.handle, 1); err != nil {
		t.Fatal(err)
	}
	settle(t, q)
	if got := bodies(c.messages()); !slices.Equal(got, []string{"young"}) {
		t.Errorf("delivered %v; want only young", got)
	}
}

func TestCloseWaitsForHandlers(t *testing.T) {
	q := mustOpen(t, inproc.Config{Name: "q"})
	release := make(chan struct{})
	started := make(chan struct{})
	var finished atomic.Bool
	if err := q.Start(func(context.Context, queue.Message) error {
		close(started)
		<-release
		finished.Store(true)
		return nil
	}, 1); err != nil {
		t.Fatal(err)
	}
	mustSend(t, q, queue.Outgoing{Body: []byte("a")}, queue.Outgoing{Body: []byte("b")})
	<-started
	closed := make(chan error)
	go func() {
		err := q.Close(context.Background())
		if !finished.Load() {
			err = errors.Join(err, errors.New("Close returned before the running handler"))
		}
		closed <- err
	}()
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	// The handler that was running finished its message; the other was never received.
	if got := q.List(); len(got) != 1 {
		t.Errorf("%d messages left; want 1 (Close stops receiving)", len(got))
	}
}

func TestCloseDeadlineCancelsHandlers(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, inproc.Config{Name: "q", Dir: dir})
	started := make(chan struct{})
	returned := make(chan struct{})
	if err := q.Start(func(ctx context.Context, _ queue.Message) error {
		close(started)
		<-ctx.Done()
		defer close(returned)
		return ctx.Err()
	}, 1); err != nil {
		t.Fatal(err)
	}
	mustSend(t, q, queue.Outgoing{Body: []byte("stuck")})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v; want context.Canceled", err)
	}
	<-returned
	// The unfinished message is still in the journal.
	q2 := mustOpen(t, inproc.Config{Name: "q", Dir: dir})
	defer mustClose(t, q2)
	got := q2.List()
	if len(got) != 1 || string(got[0].Body) != "stuck" || got[0].Attempt != 1 {
		t.Errorf("after reopening: %v; want stuck, received once", got)
	}
}

// Restart semantics of a durable queue: sent messages, delays, receive counts, retry delays and dead
// letters survive Close and Open; messages held by handlers are visible again at once.
func TestDurableRestart(t *testing.T) {
	dir := t.TempDir()
	clock := inproc.NewManualClock(t0)
	open := func() (*inproc.Queue, *inproc.Queue) {
		dlq := mustOpen(t, inproc.Config{Name: "jobs-dlq", Clock: clock, Dir: filepath.Join(dir, "jobs-dlq"), Retention: inproc.MaxRetention})
		q := mustOpen(t, inproc.Config{Name: "jobs", Clock: clock, Dir: filepath.Join(dir, "jobs"), DeadLetter: dlq,
			MaxReceiveCount: 2, VisibilityTimeout: time.Minute})
		return q, dlq
	}
	q, dlq := open()
	held := make(chan struct{})
	if err := q.Start(func(ctx context.Context, m queue.Message) error {
		switch string(m.Body) {
		case "done":
			return nil
		case "retry":
			return queue.RetryAfter(time.Hour, errors.New("later"))
		case "dead":
			return errors.New("always")
		case "held":
			close(held)
			<-ctx.Done()
			return ctx.Err()
		}
		return fmt.Errorf("unexpected %s", m.Body)
	}, 4); err != nil {
		t.Fatal(err)
	}
	mustSend(t, q,
		queue.Outgoing{Body: []byte("done")},
		queue.Outgoing{Body: []byte("retry"), Attributes: map[string]string{"k": "v"}},
		queue.Outgoing{Body: []byte("dead")},
		queue.Outgoing{Body: []byte("delayed"), Delay: 10 * time.Minute},
	)
	settle(t, q, dlq)
	clock.Advance(time.Minute)
	settle(t, q, dlq)
	clock.Advance(time.Minute) // "dead" had its 2 receives: the next one moves it
	settle(t, q, dlq)
	mustSend(t, q, queue.Outgoing{Body: []byte("held")})
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // do not wait for "held"
	q.Close(ctx)
	mustClose(t, dlq)

	q, dlq = open()
	defer mustClose(t, q, dlq)
	byBody := map[string]queue.Message{}
	for _, m := range q.List() {
		byBody[string(m.Body)] = m
	}
	if got := bodies(q.List()); !slices.Equal(got, []string{"delayed", "held", "retry"}) {
		t.Fatalf("after restart the queue holds %v; want delayed, held, retry", got)
	}
	if got := bodies(dlq.List()); !slices.Equal(got, []string{"dead"}) {
		t.Fatalf("after restart the dead-letter queue holds %v; want dead", got)
	}
	if m := byBody["retry"]; m.Attempt != 1 || m.Attributes["k"] != "v" {
		t.Errorf("retry: %+v; want its one receive and its attributes", m)
	}
	// held is visible at once, retry waits for its hour, delayed for its 10 minutes (8 are left).
	if s := q.Stats(); s != (inproc.Stats{Visible: 1, InFlight: 1, Delayed: 1}) {
		t.Errorf("stats after restart %+v; want held visible, retry in flight, delayed delayed", s)
	}
	clock.Advance(8 * time.Minute)
	if s := q.Stats(); s != (inproc.Stats{Visible: 2, InFlight: 1}) {
		t.Errorf("stats 8 minutes later %+v; want delayed visible too", s)
	}
}

func TestDurableFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "queues", "jobs")
	q := mustOpen(t, inproc.Config{Name: "jobs", Dir: dir})
	mustSend(t, q, queue.Outgoing{Body: []byte("x")})
	if _, err := inproc.Open(inproc.Config{Name: "jobs", Dir: dir}); err == nil {
		t.Error("a second Open of the same directory succeeded")
	}
	mustClose(t, q)
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o700 {
		t.Errorf("directory mode %o; want 700", perm)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s mode %o; want 600", e.Name(), perm)
		}
	}
	if len(entries) == 0 {
		t.Error("no files written")
	}
}

// A journal cut short or damaged at its end (a write torn by a crash) opens with the records before it.
func TestJournalTornTail(t *testing.T) {
	for _, tail := range []struct {
		name string
		mess func(path string) error
	}{
		{"partial header", func(p string) error { return appendFile(p, []byte{0x10, 0x00}) }},
		{"partial record", func(p string) error { return appendFile(p, []byte{0x40, 0, 0, 0, 1, 2, 3, 4, '{', '"'}) }},
		{"bad checksum", func(p string) error {
			return appendFile(p, []byte{0x02, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, '{', '}'})
		}},
		{"absurd length", func(p string) error { return appendFile(p, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}) }},
		{"last record truncated", func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()-3)
		}},
	} {
		t.Run(tail.name, func(t *testing.T) {
			dir := t.TempDir()
			q := mustOpen(t, inproc.Config{Name: "q", Dir: dir})
			mustSend(t, q, queue.Outgoing{Body: []byte("one")})
			mustSend(t, q, queue.Outgoing{Body: []byte("two")})
			mustSend(t, q, queue.Outgoing{Body: []byte("three")})
			mustClose(t, q)
			path := filepath.Join(dir, "journal")
			if err := tail.mess(path); err != nil {
				t.Fatal(err)
			}
			want := []string{"one", "three", "two"}
			if tail.name == "last record truncated" {
				want = []string{"one", "two"}
			}
			for range 2 { // and again, from the rewritten file
				q = mustOpen(t, inproc.Config{Name: "q", Dir: dir})
				if got := bodies(q.List()); !slices.Equal(got, want) {
					t.Errorf("reopened: %v; want %v", got, want)
				}
				mustClose(t, q)
			}
		})
	}
}

func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The journal is rewritten once handled messages make up most of it, and still replays to the live state.
func TestJournalCompaction(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, inproc.Config{Name: "q", Dir: dir})
	c := &collector{}
	if err := q.Start(c.handle, 2); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 64<<10)
	// About 8.7 MB of journal without compaction (bodies are base64 in the journal); the journal is
	// rewritten whenever it passes 4 MiB with little of it live.
	const n = 100
	for i := range n {
		mustSend(t, q, queue.Outgoing{Body: []byte(fmt.Sprintf("%03d %s", i, big))})
	}
	settle(t, q)
	mustClose(t, q)
	if got := len(c.messages()); got != n {
		t.Fatalf("%d handled; want %d", got, n)
	}
	st, err := os.Stat(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() >= 5<<20 {
		t.Errorf("journal of %d bytes after every message was handled; want it compacted", st.Size())
	}
	q = mustOpen(t, inproc.Config{Name: "q", Dir: dir})
	defer mustClose(t, q)
	if got := q.List(); len(got) != 0 {
		t.Errorf("%d messages after reopening; want 0", len(got))
	}
}

func TestManualClock(t *testing.T) {
	c := inproc.NewManualClock(t0)
	fired := make(chan string, 3)
	c.At(t0.Add(2*time.Second), func() { fired <- "2s" })
	stop := c.At(t0.Add(time.Second), func() { fired <- "1s (stopped)" })
	c.At(t0, func() { fired <- "now" })
	if got := <-fired; got != "now" {
		t.Fatalf("fired %q; want now", got)
	}
	if !stop() {
		t.Error("stop of a pending timer returned false")
	}
	c.Advance(1999 * time.Millisecond)
	if !c.Now().Equal(t0.Add(1999 * time.Millisecond)) {
		t.Errorf("Now %s", c.Now())
	}
	c.Advance(time.Millisecond)
	if got := <-fired; got != "2s" {
		t.Errorf("fired %q; want 2s", got)
	}
	if stop() {
		t.Error("second stop returned true")
	}
	select {
	case got := <-fired:
		t.Errorf("fired %q too", got)
	default:
	}
}

// OpenSpec opens each of the service's queues as queue.Specs describes it, durable under Dir.
func TestOpenSpec(t *testing.T) {
	dir := t.TempDir()
	clock := inproc.NewManualClock(t0)
	for _, spec := range queue.Specs() {
		t.Run(spec.Name, func(t *testing.T) {
			q, err := inproc.OpenSpec(spec, inproc.Options{Dir: dir, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			dlq := q.DeadLetter()
			if q.Name() != spec.Name || dlq == nil || dlq.Name() != queue.DeadLetterName(spec.Name) {
				t.Fatalf("queues %s and %v", q.Name(), dlq)
			}
			fails := 0
			if err := q.Start(func(context.Context, queue.Message) error { fails++; return errors.New("no") }, 1); err != nil {
				t.Fatal(err)
			}
			mustSend(t, q, queue.Outgoing{Body: []byte("job")})
			// It takes the spec's visibility timeout to come back, and MaxReceiveCount attempts to die.
			for range spec.MaxReceiveCount {
				settle(t, q, dlq)
				clock.Advance(spec.VisibilityTimeout - time.Nanosecond)
				settle(t, q, dlq)
				if s := q.Stats(); s.InFlight != 1 {
					t.Fatalf("stats %+v just before the visibility timeout", s)
				}
				clock.Advance(time.Nanosecond)
			}
			settle(t, q, dlq)
			if fails != spec.MaxReceiveCount || len(dlq.List()) != 1 {
				t.Errorf("%d attempts, %d dead letters; want %d and 1", fails, len(dlq.List()), spec.MaxReceiveCount)
			}
			mustClose(t, q)
			if err := dlq.Send(t.Context(), queue.Outgoing{Body: []byte("x")}); !errors.Is(err, inproc.ErrClosed) {
				t.Errorf("the dead-letter queue is still open after Close: %v", err)
			}
			for _, name := range []string{spec.Name, queue.DeadLetterName(spec.Name)} {
				if _, err := os.Stat(filepath.Join(dir, name, "journal")); err != nil {
					t.Errorf("journal of %s: %v", name, err)
				}
			}
		})
	}
}

// jumpyClock is a ManualClock that a test moves on by stride right after every reading, the way a test's
// Advance lands between a queue's reading of the clock and the arming of its timer.
type jumpyClock struct {
	*inproc.ManualClock
	stride atomic.Int64
	mu     sync.Mutex
	armed  []time.Time
}

func (c *jumpyClock) Now() time.Time {
	now := c.ManualClock.Now()
	if d := c.stride.Load(); d > 0 {
		c.Advance(time.Duration(d))
	}
	return now
}

func (c *jumpyClock) At(t time.Time, f func()) func() bool {
	c.mu.Lock()
	c.armed = append(c.armed, t)
	c.mu.Unlock()
	return c.ManualClock.At(t, f)
}

// TestTimerKeepsItsInstant: the wake-up of a delayed message is set for the instant the message becomes
// visible, however the clock moves between the queue's reading and the arming. (A timer armed for a
// duration counted from that reading came due late, and the workers slept past the visible message:
// TestRedelivery's rare 30 s settle.)
func TestTimerKeepsItsInstant(t *testing.T) {
	clock := &jumpyClock{ManualClock: inproc.NewManualClock(t0)}
	q := mustOpen(t, inproc.Config{Name: "q", Clock: clock})
	defer mustClose(t, q)
	var c collector
	if err := q.Start(c.handle, 1); err != nil {
		t.Fatal(err)
	}
	clock.stride.Store(int64(10 * time.Second))
	if err := q.Send(t.Context(), queue.Outgoing{Body: []byte("delayed"), Delay: time.Minute}); err != nil {
		t.Fatal(err)
	}
	clock.stride.Store(0)
	// Send stamps the message with its one reading of the clock (however often the worker read it first).
	listed := q.List()
	if len(listed) != 1 {
		t.Fatalf("%d messages queued; want 1", len(listed))
	}
	visible := listed[0].SentAt.Add(time.Minute)
	clock.mu.Lock()
	armed := slices.Clone(clock.armed) // before the message is received (its receive arms its visibility timeout's end)
	clock.mu.Unlock()
	if now := clock.Now(); now.Before(visible) {
		clock.Advance(visible.Sub(now))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := q.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if got := bodies(c.messages()); !slices.Equal(got, []string{"delayed"}) {
		t.Errorf("delivered %q; want the delayed message once", got)
	}
	for _, at := range armed {
		if !at.Equal(visible) {
			t.Errorf("a wake-up armed for %s; the only instant to wake at is %s", at.Format(time.RFC3339), visible.Format(time.RFC3339))
		}
	}
	if len(armed) == 0 {
		t.Error("no wake-up armed for the delayed message")
	}
}
