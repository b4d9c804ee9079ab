package research_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/offline"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/memtable"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// mailbox records what is sent to the research queue, in order; a test hands the messages to the pipeline
// itself, so it decides when each is delivered, twice, or lost.
type mailbox struct {
	mu   sync.Mutex
	sent []queue.Message
	n    int
	fail error // Send fails with it when set
}

func (m *mailbox) Send(_ context.Context, msgs ...queue.Outgoing) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	for _, o := range msgs {
		m.n++
		m.sent = append(m.sent, queue.Message{ID: fmt.Sprintf("m%d", m.n), Body: o.Body, Attempt: 1, Attributes: o.Attributes})
	}
	return nil
}

// take removes and returns the oldest message.
func (m *mailbox) take() (queue.Message, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		return queue.Message{}, false
	}
	msg := m.sent[0]
	m.sent = m.sent[1:]
	return msg, true
}

// events records emitted events.
type events struct {
	mu   sync.Mutex
	list []emitted
	fail error
}

type emitted struct {
	channel, name string
	data          any
}

func (e *events) Emit(_ context.Context, channelID, event string, data any) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail != nil {
		return e.fail
	}
	e.list = append(e.list, emitted{channelID, event, data})
	return nil
}

func (e *events) names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.list))
	for i, ev := range e.list {
		out[i] = ev.name
	}
	return out
}

// fixture is research over an in-memory table, the offline source and a mailbox.
type fixture struct {
	t        *testing.T
	clock    *clock
	store    *store.Store
	queue    *mailbox
	events   *events
	service  *research.Service
	pipeline *research.Pipeline
	cfg      research.Config
}

var start = time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC)

func newFixture(t *testing.T, src research.Source, table store.Table, opts ...research.PipelineOption) *fixture {
	t.Helper()
	c := &clock{t: start}
	if table == nil {
		table = memtable.New(memtable.WithClock(c.Now))
	}
	f := &fixture{t: t, clock: c, queue: &mailbox{}, events: &events{}}
	f.store = store.New(table, store.WithClock(c.Now))
	label := src.Label()
	f.cfg = research.DefaultConfig(label)
	var err error
	if f.service, err = research.NewService(f.store, f.queue, f.cfg, c.Now); err != nil {
		t.Fatal(err)
	}
	opts = append([]research.PipelineOption{research.WithEmitter(f.events)}, opts...)
	if f.pipeline, err = research.NewPipeline(f.store, src, f.queue, f.cfg, c.Now, opts...); err != nil {
		t.Fatal(err)
	}
	return f
}

func offlineSource(c func() time.Time) *offline.Source { return offline.New(c) }

func (f *fixture) profile(channelID string, keywords ...string) {
	f.t.Helper()
	if err := f.store.PutProfile(context.Background(), channelID, profile.NicheProfile{
		FocusedNiche: "vegan meal prep", Keywords: keywords, ContentLanguage: "english"}); err != nil {
		f.t.Fatal(err)
	}
}

// drain delivers messages until the queue is empty (at most max), failing the test on a handler error.
func (f *fixture) drain(max int) int {
	f.t.Helper()
	n := 0
	for ; n < max; n++ {
		m, ok := f.queue.take()
		if !ok {
			return n
		}
		if err := f.pipeline.Handle(context.Background(), m); err != nil {
			f.t.Fatalf("handle %s: %v", m.Body, err)
		}
	}
	f.t.Fatalf("the queue still has messages after %d", max)
	return n
}

func (f *fixture) run(channelID, id string) research.Run {
	f.t.Helper()
	r, err := f.store.ResearchRun(context.Background(), channelID, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}
