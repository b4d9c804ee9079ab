package webhooks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// outboxLen counts what waits in the outbox (messages of any age).
func (h *harness) outboxLen() int {
	h.t.Helper()
	msgs, err := h.st.OldOutbox(context.Background(), h.clock.Now().Add(time.Hour), 1000)
	if err != nil {
		h.t.Fatal(err)
	}
	return len(msgs)
}

func TestEmitterEveryEventType(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	h.register(chA, rec, webhooks.Subscribable...)
	for _, typ := range webhooks.Subscribable {
		h.emit(chA, typ)
	}
	r := rec.Requests()
	checkSigned(t, r)
	if len(r) != len(webhooks.Subscribable) {
		t.Fatalf("%d deliveries, want %d", len(r), len(webhooks.Subscribable))
	}
	for i, typ := range webhooks.Subscribable {
		env := r[i].Envelope
		if env.Type != typ || env.ChannelID != chA || !env.Timestamp.Equal(t0) || len(env.Data) == 0 {
			t.Errorf("%s: envelope %+v", typ, env)
		}
		// The body is exactly the envelope of decision 23 plus channelId.
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(r[i].Body, &keys); err != nil || len(keys) != 4 {
			t.Errorf("%s: body %s", typ, r[i].Body)
		}
		if _, err := contract.ValidateJSON("WebhookEvent", r[i].Body); err != nil {
			t.Errorf("%s: body does not match WebhookEvent: %v", typ, err)
		}
	}
	if n := h.outboxLen(); n != 0 {
		t.Errorf("%d messages left in the outbox after publishing", n)
	}
}

func TestEmitterRefusesWhatTheContractDoesNotDocument(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	tests := []struct {
		name, event string
		data        any
		want        string
	}{
		{"unknown event", "video.deleted", map[string]any{}, `"video.deleted" is not one of`},
		{"test event", webhooks.Test, map[string]any{"webhookId": newID()}, `"webhook.test" is not one of`},
		{"titles without titles", webhooks.TitlesGenerated, map[string]any{"generationId": newID(), "toolName": "titles", "output": 1, "title": "t"}, "titles"},
		{"generation without id", webhooks.ScriptGenerated, map[string]any{"toolName": "long_scripts", "output": "s"}, "generationId"},
		{"video without status", webhooks.VideoCommitted, map[string]any{"id": newID(), "title": "t", "contentType": "Long", "formulaType": "f", "createdAt": t0}, "status"},
		{"not an object", webhooks.ResearchStep, []int{1}, "object"},
		{"unencodable", webhooks.ContentGenerated, map[string]any{"f": func() {}}, "encode"},
		{"too big", webhooks.ContentGenerated, map[string]any{"generationId": newID(), "toolName": "x", "output": strings.Repeat("a", webhooks.MaxDataBytes)}, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := h.emitter.Emit(ctx, chA, tt.event, tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%v, want an error saying %q", err, tt.want)
			}
		})
	}
	if err := h.emitter.Emit(ctx, "", webhooks.ContentGenerated, sampleData(webhooks.ContentGenerated)); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("no channel: %v", err)
	}
	if n := h.outboxLen(); n != 0 {
		t.Errorf("refused events reached the outbox: %d", n)
	}
}

func TestAnEventKeyMakesReEmissionIdempotent(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	h.register(chA, rec, webhooks.TitlesGenerated, webhooks.ContentGenerated)
	data := sampleData(webhooks.TitlesGenerated)
	ctx := webhooks.WithEventKey(context.Background(), "generation-42")
	// A worker redoing its message emits the same events again.
	for range 3 {
		if err := h.emitter.Emit(ctx, chA, webhooks.TitlesGenerated, data); err != nil {
			t.Fatal(err)
		}
		if err := h.emitter.Emit(ctx, chA, webhooks.ContentGenerated, sampleData(webhooks.ContentGenerated)); err != nil {
			t.Fatal(err)
		}
		h.settle()
	}
	s := rec.Successes()
	if len(s) != 2 {
		t.Fatalf("successes %v: want one per event type", s)
	}
	for id, n := range s {
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
	// Without a key, each emission is an event of its own.
	for range 2 {
		if err := h.emitter.Emit(context.Background(), chA, webhooks.TitlesGenerated, data); err != nil {
			t.Fatal(err)
		}
	}
	h.settle()
	if n := len(rec.Successes()); n != 4 {
		t.Errorf("%d distinct events, want 4", n)
	}
}

func TestTheSweepSendsWhatTheFastPathCouldNot(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	h.register(chA, rec, webhooks.VideoCommitted)
	h.eventsOut.fail.Store(1) // the events queue is down for the fast path
	if err := h.emitter.Emit(context.Background(), chA, webhooks.VideoCommitted, sampleData(webhooks.VideoCommitted)); err != nil {
		t.Fatalf("Emit failed although the event is in the outbox: %v", err)
	}
	h.settle()
	if len(rec.Requests()) != 0 || h.outboxLen() != 1 {
		t.Fatalf("%d deliveries, %d in the outbox; want 0 and 1", len(rec.Requests()), h.outboxLen())
	}
	ctx := context.Background()
	// Younger than SweepAge: left to a fast path that may still be under way.
	if n, err := h.relay.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("early sweep sent %d, %v", n, err)
	}
	h.advance(webhooks.SweepAge)
	if n, err := h.relay.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep sent %d, %v; want 1", n, err)
	}
	h.settle()
	if len(rec.Successes()) != 1 || h.outboxLen() != 0 {
		t.Fatalf("after the sweep: %v, %d in the outbox", rec.Successes(), h.outboxLen())
	}
}

func TestTheSweepGoesOnUntilTheOutboxIsEmpty(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	h.register(chA, rec, webhooks.VideoCommitted)
	h.register(chB, rec, webhooks.VideoCommitted)
	ctx := context.Background()
	const n = 250 // more than one sweep batch, over several outbox partitions
	for i := range n {
		ch := []string{chA, chB}[i%2]
		ev, err := webhooks.NewEvent(newID(), webhooks.VideoCommitted, ch, h.clock.Now(), sampleData(webhooks.VideoCommitted))
		if err != nil {
			t.Fatal(err)
		}
		m, _ := ev.Message()
		if err := h.st.PutOutbox(ctx, m); err != nil { // written by operations whose process then died
			t.Fatal(err)
		}
		h.clock.Advance(time.Millisecond)
	}
	h.clock.Advance(webhooks.SweepAge)
	sent, err := h.relay.Sweep(ctx)
	if err != nil || sent != n {
		t.Fatalf("sweep sent %d, %v; want %d", sent, err, n)
	}
	h.settle()
	if got := len(rec.Successes()); got != n || h.outboxLen() != 0 {
		t.Fatalf("%d delivered, %d left in the outbox", got, h.outboxLen())
	}
}

// The operations that exist emit in their own transaction; the relay publishes after the commit.
func TestOperationsEmitTheirEvents(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	h.register(chA, rec, webhooks.VideoCommitted, webhooks.VideoStatusChanged, webhooks.ScheduleUpdated)
	ctx := context.Background()
	vs := videos.NewService(h.st, h.clock.Now, videos.WithPublisher(h.relay))
	sched := planning.NewSchedule(h.st, h.clock.Now, planning.WithPublisher(h.relay))

	v, err := vs.CommitVideo(ctx, chA, contract.CommitVideoRequest{Title: contract.Ptr("Tofu 3 ways"),
		ContentType: contract.Ptr(contract.ContentType("Short")), FormulaType: contract.Ptr("listicle")})
	if err != nil {
		t.Fatal(err)
	}
	h.settle() // one at a time: deliveries run in parallel and may arrive in any order
	if _, _, err := vs.SetStatus(ctx, chA, contract.VideoStatusUpdate{VideoID: v.ID, Status: "scripted"}); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if _, _, err := vs.SetStatus(ctx, chA, contract.VideoStatusUpdate{VideoID: v.ID, Status: "scripted"}); err != nil {
		t.Fatal(err) // the same status again: emits nothing (decision 11)
	}
	idea := videos.Idea{ID: newID(), Title: "Idea", ContentType: "Long", FormulaType: "story", CreatedAt: t0}
	if err := h.st.PutIdea(ctx, chA, idea); err != nil {
		t.Fatal(err)
	}
	fromIdea, err := vs.CommitVideo(ctx, chA, contract.CommitVideoRequest{IdeaID: &idea.ID})
	if err != nil {
		t.Fatal(err)
	}
	h.settle()
	slot := contract.ScheduleSlotInput{DayOfWeek: 2, SlotType: "publish", ContentType: contract.Ptr(contract.ContentType("Short")),
		PublishTime: contract.Some("15:00"), AssignedVideoID: contract.Some(v.ID), WeekStart: contract.Ptr("2026-11-25")}
	if _, err := sched.Upsert(ctx, chA, slot); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if err := sched.Delete(ctx, chA, 2, planning.Publish, contract.Ptr("15:00")); err != nil {
		t.Fatal(err)
	}
	// A refused operation writes nothing and emits nothing.
	if _, err := sched.Upsert(ctx, chA, contract.ScheduleSlotInput{DayOfWeek: 3, SlotType: "publish",
		ContentType: contract.Ptr(contract.ContentType("Long")), PublishTime: contract.Some("10:00"),
		AssignedVideoID: contract.Some(newID())}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("assigning an unknown video: %v", err)
	}
	h.settle()

	r := rec.Requests()
	checkSigned(t, r)
	var types []string
	for _, q := range r {
		types = append(types, q.Envelope.Type)
	}
	want := []string{webhooks.VideoCommitted, webhooks.VideoStatusChanged, webhooks.VideoCommitted, webhooks.ScheduleUpdated,
		webhooks.ScheduleUpdated}
	if !equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	committed := decode[videos.Video](t, r[0].Envelope.Data)
	if committed.ID != v.ID || committed.Status != videos.Planned || committed.Title != "Tofu 3 ways" {
		t.Errorf("video.committed data %s", r[0].Envelope.Data)
	}
	changed := decode[struct {
		videos.Video
		PreviousStatus string `json:"previousStatus"`
	}](t, r[1].Envelope.Data)
	if changed.ID != v.ID || changed.Status != "scripted" || changed.PreviousStatus != "planned" || len(changed.StatusHistory) != 2 {
		t.Errorf("video.status_changed data %s", r[1].Envelope.Data)
	}
	if decode[videos.Video](t, r[2].Envelope.Data).ID != fromIdea.ID {
		t.Errorf("video.committed of the idea: %s", r[2].Envelope.Data)
	}
	saved := decode[map[string]any](t, r[3].Envelope.Data)
	s := saved["slot"].(map[string]any)
	if saved["change"] != "slot_saved" || saved["weekStart"] != "2026-11-22" || saved["assignmentChanged"] != true ||
		s["assignedVideoId"] != v.ID || s["publishTime"] != "15:00" {
		t.Errorf("schedule.updated (saved) data %s", r[3].Envelope.Data)
	}
	deleted := decode[map[string]any](t, r[4].Envelope.Data)
	if deleted["change"] != "slot_deleted" || deleted["weekStart"] != nil || deleted["slot"].(map[string]any)["dayOfWeek"] != 2.0 {
		t.Errorf("schedule.updated (deleted) data %s", r[4].Envelope.Data)
	}
	for i, q := range r {
		if !q.Envelope.Timestamp.Equal(t0) {
			t.Errorf("event %d timestamp %s", i, q.Envelope.Timestamp)
		}
	}
	if n := h.outboxLen(); n != 0 {
		t.Errorf("%d left in the outbox", n)
	}
}

// Without a publisher (the process died between commit and publish), the events wait in the outbox and
// the sweep delivers them.
func TestOperationEventsSurviveALostPublish(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	h.register(chA, rec, webhooks.VideoCommitted)
	vs := videos.NewService(h.st, h.clock.Now) // no publisher
	ctx := context.Background()
	if _, err := vs.CommitVideo(ctx, chA, contract.CommitVideoRequest{Title: contract.Ptr("T"),
		ContentType: contract.Ptr(contract.ContentType("Long")), FormulaType: contract.Ptr("f")}); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if len(rec.Requests()) != 0 || h.outboxLen() != 1 {
		t.Fatalf("before the sweep: %d deliveries, %d in the outbox", len(rec.Requests()), h.outboxLen())
	}
	h.advance(webhooks.SweepAge)
	if _, err := h.relay.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if len(rec.Successes()) != 1 {
		t.Fatalf("after the sweep: %v", rec.Successes())
	}
}
