package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
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

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

// errCrash stands for the process dying: the handler's work stops there and the queue delivers the
// message again.
var errCrash = errors.New("crash")

// crasher decides which side effect crashes: the point-th one (counting every store write, queue send and
// event emission), before it takes effect or after.
type crasher struct {
	mu    sync.Mutex
	point int // 0: never
	after bool
	n     int
}

// hit is called around a side effect: it returns errCrash when this one is the crash point, running the
// effect first when the crash comes after it.
func (c *crasher) hit(effect func() error) error {
	if c == nil {
		return effect()
	}
	c.mu.Lock()
	c.n++
	crash := c.n == c.point
	c.mu.Unlock()
	if crash && !c.after {
		return errCrash
	}
	if err := effect(); err != nil {
		return err
	}
	if crash {
		return errCrash
	}
	return nil
}

// crashingRepo is the store, crashing at the crasher's point.
type crashingRepo struct {
	research.Repository
	c *crasher
}

func (r crashingRepo) SaveResearchState(ctx context.Context, ch string, st research.State) error {
	return r.c.hit(func() error { return r.Repository.SaveResearchState(ctx, ch, st) })
}

func (r crashingRepo) StartResearchRun(ctx context.Context, st research.State, run research.Run, old *research.Run) error {
	return r.c.hit(func() error { return r.Repository.StartResearchRun(ctx, st, run, old) })
}

func (r crashingRepo) SaveResearchRun(ctx context.Context, run *research.Run, c *research.Commit) error {
	return r.c.hit(func() error { return r.Repository.SaveResearchRun(ctx, run, c) })
}

func (r crashingRepo) SaveResearchRunAndState(ctx context.Context, run *research.Run, st research.State) error {
	return r.c.hit(func() error { return r.Repository.SaveResearchRunAndState(ctx, run, st) })
}

func (r crashingRepo) DeleteChannelResearchVideos(ctx context.Context, ch, runID string) error {
	return r.c.hit(func() error { return r.Repository.DeleteChannelResearchVideos(ctx, ch, runID) })
}

func (r crashingRepo) MarkQuotaExhausted(ctx context.Context, day string, b quota.Bucket) error {
	return r.c.hit(func() error { return r.Repository.MarkQuotaExhausted(ctx, day, b) })
}

// mailbox records what is sent to the research queue, in order; the test hands the messages to the
// pipeline itself, so it decides when each is delivered, twice, or again after a failure.
type mailbox struct {
	mu    sync.Mutex
	sent  []queue.Message
	n     int
	crash *crasher
}

func (m *mailbox) Send(_ context.Context, msgs ...queue.Outgoing) error {
	return m.crash.hit(func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, o := range msgs {
			m.n++
			m.sent = append(m.sent, queue.Message{ID: fmt.Sprintf("m%d", m.n), Body: o.Body, Attempt: 1, Attributes: o.Attributes})
		}
		return nil
	})
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

// again puts a message back to be delivered once more, as the queue does after a failed attempt.
func (m *mailbox) again(msg queue.Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	msg.Attempt++
	m.sent = append(m.sent, msg)
}

func (m *mailbox) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// events records emitted events. With keyed set it is a OnceEmitter, as an outbox keyed by the event is:
// a key sent before is not sent again.
type events struct {
	mu    sync.Mutex
	list  []emitted
	crash *crasher
	keys  map[string]bool
}

// keyedEvents is a recorder that is a research.OnceEmitter.
type keyedEvents struct{ *events }

func (e keyedEvents) EmitOnce(ctx context.Context, channelID, event, key string, data any) error {
	e.mu.Lock()
	seen := e.keys[key]
	e.mu.Unlock()
	if seen {
		return nil
	}
	if err := e.Emit(ctx, channelID, event, data); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keys[key] = true
	return nil
}

type emitted struct {
	channel, name string
	data          any
}

func (e *events) Emit(_ context.Context, channelID, event string, data any) error {
	if e.crash != nil {
		// An emission crashes only before it happens: one that crashed after being sent would be sent
		// again, the at-least-once window the pipeline documents.
		e.crash.mu.Lock()
		e.crash.n++
		crash := e.crash.n == e.crash.point
		e.crash.mu.Unlock()
		if crash {
			return errCrash
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, emitted{channelID, event, data})
	return nil
}

// names lists the events as "event" or "research.step:<step>"; with runID set, only that run's.
func (e *events) names(runID ...string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []string{}
	for _, ev := range e.list {
		var d struct {
			RunID string `json:"runId"`
			Step  string `json:"step"`
		}
		if b, err := json.Marshal(ev.data); err == nil {
			_ = json.Unmarshal(b, &d)
		}
		if len(runID) > 0 && d.RunID != runID[0] {
			continue
		}
		name := ev.name
		if ev.name == research.EventStep {
			name += ":" + d.Step
		}
		out = append(out, name)
	}
	return out
}

// setup configures a fixture.
type setup struct {
	source func(now func() time.Time) research.Source // default: the offline sample
	config func(*research.Config)
	crash  *crasher
	table  store.Table
	keyed  bool // the emitter sends each event key once (research.OnceEmitter)
	// options are the pipeline's options beside its emitter.
	options []research.PipelineOption
}

// fixture is research over a table, a source, a mailbox for the queue and an event recorder.
type fixture struct {
	t        *testing.T
	clock    *clock
	store    *store.Store
	queue    *mailbox
	events   *events
	service  *research.Service
	pipeline *research.Pipeline
	cfg      research.Config
	source   research.Source
}

var start = time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC)

func newFixture(t *testing.T, s setup) *fixture {
	t.Helper()
	c := &clock{t: start}
	table := s.table
	if table == nil {
		table = memstore.New(t, pebble.WithClock(c.Now))
	}
	if s.source == nil {
		s.source = func(now func() time.Time) research.Source { return youtubesample.New(now) }
	}
	f := &fixture{t: t, clock: c, queue: &mailbox{crash: s.crash}, events: &events{crash: s.crash}, source: s.source(c.Now)}
	f.store = store.New(table, store.WithClock(c.Now))
	f.cfg = research.DefaultConfig(f.source.Label())
	if s.config != nil {
		s.config(&f.cfg)
	}
	var repo research.Repository = f.store
	if s.crash != nil {
		repo = crashingRepo{Repository: f.store, c: s.crash}
	}
	var err error
	if f.service, err = research.NewService(repo, f.queue, f.cfg, c.Now); err != nil {
		t.Fatal(err)
	}
	var emitter research.Emitter = f.events
	if s.keyed {
		f.events.keys = map[string]bool{}
		emitter = keyedEvents{f.events}
	}
	if f.pipeline, err = research.NewPipeline(repo, f.source, f.queue, f.cfg, c.Now, append(s.options, research.WithEmitter(emitter))...); err != nil {
		t.Fatal(err)
	}
	return f
}

var keywords = []string{"vegan", "meal prep", "budget", "protein"}

func (f *fixture) profile(channelID string, keywords ...string) {
	f.t.Helper()
	if err := f.store.PutProfile(context.Background(), channelID, profile.NicheProfile{
		FocusedNiche: "vegan meal prep", Keywords: keywords, ContentLanguage: "english"}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) start(channelID string) research.Run {
	f.t.Helper()
	run, err := f.service.Start(context.Background(), channelID, research.TriggerAPI)
	if err != nil {
		f.t.Fatal(err)
	}
	return run
}

// drain delivers messages until the queue is empty; a handler error puts the message back (at most
// maxFailures times in all).
func (f *fixture) drain(maxFailures int) {
	f.t.Helper()
	failures := 0
	for {
		m, ok := f.queue.take()
		if !ok {
			return
		}
		if err := f.pipeline.Handle(context.Background(), m); err != nil {
			if failures++; failures > maxFailures {
				f.t.Fatalf("handle %s: %v (failure %d)", m.Body, err, failures)
			}
			f.queue.again(m)
		}
	}
}

func (f *fixture) run(channelID, id string) research.Run {
	f.t.Helper()
	r, err := f.store.ResearchRun(context.Background(), channelID, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// outcome is what a run leaves behind, without what differs from run to run by design (ids, times).
type outcome struct {
	Status     research.Status
	Steps      []string
	UnitsSpent int
	Videos     []string // id and score of every video, by outlier
	Patterns   research.Patterns
	Ideas      []string
	Events     []string
}

// diff names the fields in which two outcomes differ.
func (o outcome) diff(want outcome) string {
	var d []string
	if o.Status != want.Status || o.UnitsSpent != want.UnitsSpent {
		d = append(d, fmt.Sprintf("status %s, %d units; want %s, %d", o.Status, o.UnitsSpent, want.Status, want.UnitsSpent))
	}
	for _, f := range []struct {
		name      string
		got, want []string
	}{{"steps", o.Steps, want.Steps}, {"videos", o.Videos, want.Videos}, {"ideas", o.Ideas, want.Ideas}, {"events", o.Events, want.Events}} {
		if !slices.Equal(f.got, f.want) {
			if len(f.got) > 10 || len(f.want) > 10 {
				d = append(d, fmt.Sprintf("%s: %d entries, want %d (first differences from %d)", f.name, len(f.got), len(f.want), firstDiff(f.got, f.want)))
			} else {
				d = append(d, fmt.Sprintf("%s: %q, want %q", f.name, f.got, f.want))
			}
		}
	}
	if !reflect.DeepEqual(o.Patterns, want.Patterns) {
		d = append(d, "patterns differ")
	}
	return strings.Join(d, "\n")
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func (f *fixture) outcome(channelID, runID string) outcome {
	f.t.Helper()
	ctx := context.Background()
	run := f.run(channelID, runID)
	o := outcome{Status: run.Status, UnitsSpent: run.Spent.Units, Events: f.events.names(runID)}
	for _, s := range run.Steps {
		counts := make([]string, 0, len(s.Counts))
		for k, v := range s.Counts {
			counts = append(counts, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(counts)
		o.Steps = append(o.Steps, fmt.Sprintf("%s %s %d %s", s.Name, s.Status, s.UnitsSpent, strings.Join(counts, ",")))
	}
	vs, _, err := f.service.Videos(ctx, channelID, research.VideoQuery{Limit: research.MaxVideos})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, v := range vs {
		o.Videos = append(o.Videos, fmt.Sprintf("%s %.2f", v.VideoID, v.OutlierScore))
	}
	if o.Patterns, err = f.service.Insights(ctx, channelID); err != nil {
		f.t.Fatal(err)
	}
	ideas, err := f.store.ListIdeas(ctx, channelID)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, i := range ideas {
		o.Ideas = append(o.Ideas, i.Title+" | "+i.FormulaType+" | "+*i.InspiredBy)
	}
	slices.Sort(o.Ideas)
	return o
}
