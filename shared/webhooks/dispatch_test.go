package webhooks_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// timestamps returns the webhook-timestamp of each request.
func timestamps(t *testing.T, reqs []webhookstest.Request) []time.Time {
	t.Helper()
	out := make([]time.Time, len(reqs))
	for i, r := range reqs {
		n, err := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
		if err != nil {
			t.Fatalf("request %d: webhook-timestamp %q", i, r.Header.Get("webhook-timestamp"))
		}
		out[i] = time.Unix(n, 0).UTC()
	}
	return out
}

func wantTimes(t *testing.T, what string, got []time.Time, want ...time.Duration) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d attempts at %v, want %d", what, len(got), got, len(want))
	}
	for i := range got {
		if !got[i].Equal(t0.Add(want[i])) {
			t.Errorf("%s: attempt %d at %s, want t0+%s", what, i+1, got[i].Format(time.TimeOnly), want[i])
		}
	}
}

// checkSigned holds every request to the Standard Webhooks rules, as the independent library verifies them.
func checkSigned(t *testing.T, reqs []webhookstest.Request) {
	t.Helper()
	for i, r := range reqs {
		if r.VerifyErr != nil {
			t.Errorf("request %d: signature does not verify: %v", i, r.VerifyErr)
		}
		if ct := r.Header.Get("content-type"); ct != "application/json" {
			t.Errorf("request %d: content-type %q", i, ct)
		}
		if ua := r.Header.Get("user-agent"); ua == "" || ua == "Go-http-client/1.1" {
			t.Errorf("request %d: user-agent %q does not name the service", i, ua)
		}
	}
}

func TestRetriesFollowTheScheduleAndAHealthyReceiverIsUndisturbed(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	flaky, healthy := webhookstest.StartReceiver(t), webhookstest.StartReceiver(t)
	flaky.Respond(func(r *webhookstest.Request) int {
		if r.Attempt <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	fw := h.register(chA, flaky, webhooks.VideoCommitted)
	hw := h.register(chA, healthy, webhooks.VideoCommitted)

	h.emit(chA, webhooks.VideoCommitted)
	if n := len(healthy.Requests()); n != 1 {
		t.Fatalf("healthy receiver: %d requests at once, want 1", n)
	}
	h.walk(2 * time.Hour)

	got := flaky.Requests()
	wantTimes(t, "flaky", timestamps(t, got), 0, 5*time.Minute, 20*time.Minute)
	checkSigned(t, got)
	for i, r := range got {
		if r.Header.Get("webhook-id") != got[0].Header.Get("webhook-id") || !bytes.Equal(r.Body, got[0].Body) {
			t.Errorf("attempt %d: webhook-id or body differ from the first attempt's", i+1)
		}
	}
	if s := flaky.Successes(); len(s) != 1 || s[got[0].Header.Get("webhook-id")] != 1 {
		t.Errorf("flaky successes %v, want one", s)
	}
	hreqs := healthy.Requests()
	wantTimes(t, "healthy", timestamps(t, hreqs), 0)
	checkSigned(t, hreqs)
	if hreqs[0].Header.Get("webhook-id") != got[0].Header.Get("webhook-id") {
		t.Error("the two receivers got different webhook-ids for one event")
	}

	log := h.log(chA, fw.ID)
	if len(log) != 1 || log[0].Status != webhooks.Succeeded || log[0].Attempts != 3 || *log[0].LastStatusCode != 200 ||
		log[0].LastError != nil || log[0].NextAttemptAt != nil || !log[0].CompletedAt.Equal(t0.Add(20*time.Minute)) {
		t.Fatalf("flaky log = %+v", log)
	}
	for i, a := range log[0].AttemptLog {
		wantStatus := []int{500, 500, 200}[i]
		if *a.StatusCode != wantStatus || (a.Error == nil) != (wantStatus == 200) || a.DurationMs < 0 {
			t.Errorf("attempt %d = %+v", i+1, a)
		}
	}
	if hl := h.log(chA, hw.ID); len(hl) != 1 || hl[0].Status != webhooks.Succeeded || hl[0].Attempts != 1 {
		t.Errorf("healthy log = %+v", hl)
	}
	if n := len(h.dlq.List()); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}
}

func TestAReceiverThatAlwaysFailsIsDeadLettered(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	down := webhookstest.StartReceiver(t)
	down.Respond(func(*webhookstest.Request) int { return http.StatusServiceUnavailable })
	w := h.register(chA, down, webhooks.VideoCommitted)

	h.emit(chA, webhooks.VideoCommitted)
	log := h.log(chA, w.ID)
	if len(log) != 1 || log[0].Status != webhooks.Pending || !log[0].NextAttemptAt.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("after the first attempt: %+v", log)
	}
	h.walk(2 * time.Hour)
	got := down.Requests()
	wantTimes(t, "down", timestamps(t, got), 0, 5*time.Minute, 20*time.Minute, 60*time.Minute)
	checkSigned(t, got)
	log = h.log(chA, w.ID)
	if len(log) != 1 || log[0].Status != webhooks.Failed || log[0].Attempts != 4 || *log[0].LastStatusCode != 503 ||
		*log[0].LastError != "the receiver answered HTTP 503" || !log[0].CompletedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("log = %+v", log)
	}
	dead := h.dlq.List()
	if len(dead) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dead))
	}
	ref := decode[webhooks.DeliveryRef](t, dead[0].Body)
	if ref.DeliveryID != log[0].ID || ref.WebhookID != w.ID {
		t.Errorf("dead letter %+v is not the delivery %s", ref, log[0].ID)
	}
}

func TestEachRegistrationGetsItsTypesOfItsChannel(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	a1, a2, both, b := webhookstest.StartReceiver(t), webhookstest.StartReceiver(t), webhookstest.StartReceiver(t),
		webhookstest.StartReceiver(t)
	h.register(chA, a1, webhooks.VideoCommitted)
	h.register(chA, a2, webhooks.ScheduleUpdated, webhooks.TitlesGenerated)
	h.register(chA, both, webhooks.VideoCommitted, webhooks.ScheduleUpdated)
	h.register(chB, b, webhooks.VideoCommitted, webhooks.ScheduleUpdated, webhooks.VideoStatusChanged)

	h.emit(chA, webhooks.VideoCommitted)
	h.emit(chA, webhooks.ScheduleUpdated)
	h.emit(chA, webhooks.VideoStatusChanged) // nobody in ch-a asked for it
	h.emit(chB, webhooks.VideoStatusChanged)
	h.emit(chB, webhooks.ContentGenerated) // nobody asked for it

	tests := []struct {
		name    string
		rec     *webhookstest.Receiver
		channel string
		types   []string
	}{
		{"a1", a1, chA, []string{webhooks.VideoCommitted}},
		{"a2", a2, chA, []string{webhooks.ScheduleUpdated}},
		{"both", both, chA, []string{webhooks.VideoCommitted, webhooks.ScheduleUpdated}},
		{"b", b, chB, []string{webhooks.VideoStatusChanged}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := tt.rec.Requests()
			checkSigned(t, reqs)
			var types []string
			for _, r := range reqs {
				types = append(types, r.Envelope.Type)
				if r.Envelope.ChannelID != tt.channel {
					t.Errorf("%s got an event of channel %s", tt.name, r.Envelope.ChannelID)
				}
			}
			if !equal(types, tt.types) {
				t.Errorf("%s got %v, want %v", tt.name, types, tt.types)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestACopyOfAnEventIsDeliveredOnce(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	h.register(chA, rec, webhooks.VideoCommitted)
	ev, err := webhooks.NewEvent(newID(), webhooks.VideoCommitted, chA, t0, sampleData(webhooks.VideoCommitted))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ev.Message()
	if err != nil {
		t.Fatal(err)
	}
	// The fast path and the sweep both sent it (the process died before deleting it from the outbox).
	for range 3 {
		if err := h.events.Send(context.Background(), queue.Outgoing{Body: m.Body}); err != nil {
			t.Fatal(err)
		}
		h.settle()
	}
	if s := rec.Successes(); len(s) != 1 || s[ev.ID] != 1 {
		t.Fatalf("successes %v, want exactly one for %s", s, ev.ID)
	}
}

func TestAnInterruptedFanOutResumes(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	r1, r2 := webhookstest.StartReceiver(t), webhookstest.StartReceiver(t)
	h.register(chA, r1, webhooks.VideoCommitted)
	h.register(chA, r2, webhooks.VideoCommitted)
	h.deliveriesOut.fail.Store(1) // the deliveries queue refuses the fan-out's send once
	h.emit(chA, webhooks.VideoCommitted)
	if n := len(r1.Requests()) + len(r2.Requests()); n != 0 {
		t.Fatalf("%d deliveries although their messages were not sent", n)
	}
	h.advance(time.Minute) // the event's visibility timeout: it comes back, and the fan-out resumes
	for name, rec := range map[string]*webhookstest.Receiver{"r1": r1, "r2": r2} {
		if n := len(rec.Requests()); n != 1 {
			t.Errorf("%s: %d deliveries after the resumed fan-out, want 1", name, n)
		}
	}
	h.advance(time.Hour)
	if n := len(r1.Requests()) + len(r2.Requests()); n != 2 {
		t.Errorf("%d deliveries in all, want 2", n)
	}
}

func TestPausedOrRemovedRegistrationsGetNoMoreAttempts(t *testing.T) {
	for _, how := range []string{"paused", "removed"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			rec := webhookstest.StartReceiver(t)
			rec.Respond(func(*webhookstest.Request) int { return http.StatusBadGateway })
			w := h.register(chA, rec, webhooks.VideoCommitted)
			h.emit(chA, webhooks.VideoCommitted)
			ctx := context.Background()
			if how == "paused" {
				if _, err := h.svc.Update(ctx, chA, w.ID, contract.WebhookUpdate{Active: contract.Ptr(false)}); err != nil {
					t.Fatal(err)
				}
			} else if err := h.svc.Delete(ctx, chA, w.ID); err != nil {
				t.Fatal(err)
			}
			h.advance(2 * time.Hour)
			if n := len(rec.Requests()); n != 1 {
				t.Fatalf("%d requests, want only the one before it was %s", n, how)
			}
			if n := len(h.dlq.List()); n != 0 {
				t.Errorf("%d dead letters: a dropped delivery is not a receiver's failure", n)
			}
			if how == "paused" {
				log := h.log(chA, w.ID)
				if len(log) != 1 || log[0].Status != webhooks.Failed || *log[0].LastError != "not delivered: the registration is paused" {
					t.Errorf("log = %+v", log)
				}
				h.emit(chA, webhooks.VideoCommitted)
				if n := len(rec.Requests()); n != 1 {
					t.Errorf("a paused registration got a new event")
				}
			}
		})
	}
}

func TestARegistrationFailingForFiveDaysIsSwitchedOff(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	var up atomic.Bool // read by the receiver's goroutines
	rec.Respond(func(*webhookstest.Request) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusInternalServerError
	})
	w := h.register(chA, rec, webhooks.VideoCommitted)
	ctx := context.Background()
	// One event a day; every attempt fails. Four days and 23 hours after the first failure, it is still on.
	h.emit(chA, webhooks.VideoCommitted)
	for day := 1; day <= 4; day++ {
		h.advance(24 * time.Hour)
		h.emit(chA, webhooks.VideoCommitted)
	}
	h.advance(23 * time.Hour)
	h.emit(chA, webhooks.VideoCommitted)
	if v, _ := h.svc.Get(ctx, chA, w.ID); !v.Active || v.DisabledAt != nil {
		t.Fatalf("switched off before 5 days: %+v", v)
	}
	// The retry an hour later is 5 days after the first failure.
	h.advance(time.Hour)
	v, err := h.svc.Get(ctx, chA, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Active || v.DisabledAt == nil || v.DisabledReason == nil || !v.DisabledAt.Equal(t0.Add(5*24*time.Hour)) {
		t.Fatalf("after 5 days of failures: %+v", v)
	}
	before := len(rec.Requests())
	h.advance(2 * time.Hour) // the pending retries find it switched off
	h.emit(chA, webhooks.VideoCommitted)
	if n := len(rec.Requests()); n != before {
		t.Fatalf("%d more requests to a switched-off registration", n-before)
	}
	// The user switches it back on; the receiver is fixed.
	up.Store(true)
	v, err = h.svc.Update(ctx, chA, w.ID, contract.WebhookUpdate{Active: contract.Ptr(true)})
	if err != nil || !v.Active || v.DisabledAt != nil || v.DisabledReason != nil {
		t.Fatalf("PATCH active true = %+v, %v", v, err)
	}
	h.emit(chA, webhooks.VideoCommitted)
	if s := rec.Successes(); len(s) != 1 {
		t.Fatalf("after switching it on: %v successes, want 1", s)
	}
}

func TestASuccessEndsTheFailureStreak(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	var day atomic.Int32
	rec.Respond(func(*webhookstest.Request) int {
		if day.Load() == 3 {
			return http.StatusOK
		}
		return http.StatusInternalServerError
	})
	w := h.register(chA, rec, webhooks.VideoCommitted)
	for ; day.Load() <= 7; day.Add(1) {
		h.emit(chA, webhooks.VideoCommitted)
		h.advance(24 * time.Hour)
	}
	// Failing from day 0 to 2, one success on day 3, failing again from day 4: never 5 days in a row.
	if v, _ := h.svc.Get(context.Background(), chA, w.ID); !v.Active || v.DisabledAt != nil {
		t.Fatalf("switched off although a delivery succeeded within 5 days: %+v", v)
	}
}
