package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
)

// Two channels.
const (
	chA = "0190a000-0000-7000-8000-00000000000a"
	chB = "0190a000-0000-7000-8000-00000000000b"
)

// t0 is when every harness starts.
var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// harness is the whole delivery path on a manual clock: an in-memory table, in-process events and
// deliveries queues with their dead-letter queues, the relay, the dispatcher posting over real HTTP to
// receivers on loopback, and the registration service.
type harness struct {
	t          *testing.T
	clock      *inproc.ManualClock
	st         *store.Store
	events     *inproc.Queue
	eventsDLQ  *inproc.Queue
	deliveries *inproc.Queue
	dlq        *inproc.Queue
	relay      *webhooks.Relay
	emitter    *webhooks.OutboxEmitter
	svc        *webhooks.Service
	disp       *webhooks.Dispatcher
	cipher     webhooks.Cipher
	// eventsOut and deliveriesOut are what the relay and the dispatcher send through; a test may make
	// them fail.
	eventsOut, deliveriesOut *flakySender
}

type harnessOptions struct {
	schedule webhooks.Schedule
	workers  int
}

// flakySender fails its next `fail` sends, then sends through.
type flakySender struct {
	queue.Sender
	fail atomic.Int32
}

func (f *flakySender) Send(ctx context.Context, msgs ...queue.Outgoing) error {
	if f.fail.Add(-1) >= 0 {
		return fmt.Errorf("queue unavailable")
	}
	f.fail.Store(0)
	return f.Sender.Send(ctx, msgs...)
}

var ids atomic.Int64

// newID returns UUIDv7-shaped ids that sort in creation order.
func newID() string {
	return fmt.Sprintf("01900000-0000-7000-8000-%012d", ids.Add(1))
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if o.schedule == nil {
		o.schedule = webhooks.DefaultSchedule
	}
	if o.workers == 0 {
		o.workers = 4
	}
	h := &harness{t: t, clock: inproc.NewManualClock(t0)}
	now := h.clock.Now
	h.st = store.New(memstore.New(t, pebble.WithClock(now)), store.WithClock(now), store.WithIDs(newID))
	open := func(cfg inproc.Config) *inproc.Queue {
		cfg.Clock = h.clock
		q, err := inproc.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close(context.Background()) })
		return q
	}
	h.eventsDLQ = open(inproc.Config{Name: "events-dlq", Retention: inproc.MaxRetention})
	h.events = open(inproc.Config{Name: "events", VisibilityTimeout: time.Minute, DeadLetter: h.eventsDLQ, MaxReceiveCount: 5})
	h.dlq = open(inproc.Config{Name: "deliveries-dlq", Retention: inproc.MaxRetention})
	h.deliveries = open(inproc.Config{Name: "deliveries", VisibilityTimeout: time.Minute, DeadLetter: h.dlq,
		MaxReceiveCount: o.schedule.Attempts()})
	h.eventsOut = &flakySender{Sender: h.events}
	h.deliveriesOut = &flakySender{Sender: h.deliveries}
	key, _ := webhooks.DeriveKey("a test key of at least thirty-two characters")
	c, err := webhooks.NewAESGCM(key)
	if err != nil {
		t.Fatal(err)
	}
	h.cipher = c
	h.relay = webhooks.NewRelay(h.st, h.eventsOut, h.deliveriesOut, now, nil)
	h.emitter = webhooks.NewEmitter(h.st, h.relay, now, h.st.NewID)
	h.svc = webhooks.NewService(webhooks.Config{Store: h.st, Cipher: h.cipher, Relay: h.relay, Now: now,
		Rules: webhooks.URLRules{AllowHTTP: true, Policy: webhooks.AddressPolicy{AllowLoopback: true}}})
	h.disp, err = webhooks.NewDispatcher(webhooks.DispatcherConfig{
		Store: h.st, Deliveries: h.deliveriesOut, Cipher: h.cipher, Schedule: o.schedule, Now: now,
		Poster: httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: true}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.events.Start(h.disp.HandleEvent, 2); err != nil {
		t.Fatal(err)
	}
	if err := h.deliveries.Start(h.disp.HandleDelivery, o.workers); err != nil {
		t.Fatal(err)
	}
	return h
}

// settle waits until no queue has anything left to do at the clock's time.
func (h *harness) settle() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	qs := []*inproc.Queue{h.events, h.deliveries, h.eventsDLQ, h.dlq}
	for {
		for _, q := range qs {
			if err := q.Settle(ctx); err != nil {
				// Say where every queue stood, so a settle that never ends can be told apart from a slow one, and
				// where the service's goroutines were blocked (TestRedelivery once found a handler running 30 s).
				h.t.Logf("goroutines of the service and its queues:\n%s", serviceStacks())
				h.t.Fatalf("%v; queues (events, deliveries, events DLQ, DLQ): %+v %+v %+v %+v; clock %s", err,
					qs[0].Stats(), qs[1].Stats(), qs[2].Stats(), qs[3].Stats(), h.clock.Now().Format(time.RFC3339))
			}
		}
		busy := false
		for _, q := range qs[:2] {
			if s := q.Stats(); s.Visible > 0 {
				busy = true
			}
		}
		if !busy {
			return
		}
	}
}

// advance moves the clock and lets everything due run.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	h.settle()
}

// walk advances the clock by total in steps of one minute, letting everything due run at each step, so
// an attempt happens at the minute it is due, not at the end of a jump.
func (h *harness) walk(total time.Duration) {
	h.t.Helper()
	for elapsed := time.Duration(0); elapsed < total; elapsed += time.Minute {
		h.advance(time.Minute)
	}
}

// register registers url for events in channel and has rec trust its secret.
func (h *harness) register(channel string, rec *webhookstest.Receiver, events ...string) webhooks.Created {
	h.t.Helper()
	in := contract.WebhookCreate{URL: rec.URL()}
	for _, e := range events {
		in.Events = append(in.Events, contract.EventName(e))
	}
	c, err := h.svc.Create(context.Background(), channel, in)
	if err != nil {
		h.t.Fatal(err)
	}
	rec.Trust(c.Secret)
	return c
}

// emit emits one event of typ with valid data and settles.
func (h *harness) emit(channel, typ string) {
	h.t.Helper()
	if err := h.emitter.Emit(context.Background(), channel, typ, sampleData(typ)); err != nil {
		h.t.Fatal(err)
	}
	h.settle()
}

// deliveries returns a registration's delivery log.
func (h *harness) log(channel, webhookID string) []webhooks.DeliveryView {
	h.t.Helper()
	ds, _, err := h.svc.Deliveries(context.Background(), channel, webhookID, 100, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

var sampleMu sync.Mutex

// sampleData returns data of the shape the contract documents for typ.
func sampleData(typ string) any {
	sampleMu.Lock()
	defer sampleMu.Unlock()
	video := map[string]any{"id": newID(), "title": "5 vegan lunches", "contentType": "Long", "formulaType": "listicle",
		"status": "planned", "createdAt": t0}
	switch typ {
	case webhooks.VideoCommitted:
		return video
	case webhooks.VideoStatusChanged:
		video["status"], video["previousStatus"] = "scripted", "planned"
		return video
	case webhooks.VideoReviewed:
		review := map[string]any{"day": 7, "views": 1200, "ownOutlierScore": 1.4, "averageViewPercentage": 48.5,
			"subscribersGained": 12, "at": t0}
		video["status"], video["youtubeVideoId"], video["reviews"], video["review"] = "published", "dQw4w9WgXcQ", []any{review}, review
		return video
	case webhooks.ScheduleUpdated:
		return map[string]any{"change": "slot_saved", "slot": map[string]any{"dayOfWeek": 2, "slotType": "rest"},
			"weekStart": "2026-11-15", "assignmentChanged": false}
	case webhooks.TitlesGenerated:
		return map[string]any{"generationId": newID(), "toolName": "titles", "output": map[string]any{},
			"title": "vegan lunches", "titles": []any{map[string]any{"title": "I ate vegan for $3", "grade": "A"}}}
	case webhooks.ResearchStep:
		return map[string]any{"runId": newID(), "step": "search", "status": "succeeded", "counts": map[string]int{"videos": 40}}
	case webhooks.ResearchCompleted:
		return map[string]any{"runId": newID(), "status": "succeeded", "videoCount": 40}
	case webhooks.YouTubeConnected:
		return map[string]any{"youtubeChannelId": "UCaaaaaaaaaaaaaaaaaaaaaa", "youtubeChannelTitle": "Vegan Bites"}
	case webhooks.VideoUnderperforming, webhooks.VideoOutperforming:
		return map[string]any{"youtubeVideoId": "dQw4w9WgXcQ", "title": "5 vegan lunches", "url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
			"publishedAt": t0, "ageHours": 6.5, "views": 120, "percentile": 12.5, "baselineSize": 8, "baseline": "analytics daily views"}
	case webhooks.YouTubeDisconnected:
		return map[string]any{"youtubeChannelId": "UCaaaaaaaaaaaaaaaaaaaaaa", "reason": "refused"}
	default:
		return map[string]any{"generationId": newID(), "toolName": "descriptions", "output": map[string]any{"description": "d"}}
	}
}

// decode reads a JSON value into T.
func decode[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// serviceStacks returns the stacks of the goroutines running the webhooks package or the in-process queues.
func serviceStacks() string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "shared/webhooks.") || strings.Contains(g, "shared/queue/inproc.") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
