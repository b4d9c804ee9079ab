package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// The webhook and outbox access patterns of store.Store, run on each adapter: they lean on conditions,
// transactions, batch reads and partition order, where adapters could differ.

var whIDs atomic.Int64

// whID returns a UUID-shaped id that sorts after every earlier one.
func whID() string { return fmt.Sprintf("0190b000-0000-7000-8000-%012d", whIDs.Add(1)) }

const whChannel = "0190b000-0000-7000-8000-00000000c001"

func whStore(t *testing.T, s suite) *store.Store {
	return store.New(s.fresh(t), store.WithIDs(whID))
}

// whNow is the suite's time: the wall clock (items it writes expire 30 days on, so they stay live).
func whNow() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func whEvent(t *testing.T, channel string, at time.Time) webhooks.Event {
	t.Helper()
	ev, err := webhooks.NewEvent(whID(), webhooks.Test, channel, at, map[string]string{"webhookId": whID()})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func whRegistration(channel string) webhooks.Registration {
	now, id := whNow(), whID()
	return webhooks.Registration{ID: id, ChannelID: channel, URL: "https://example.com/h/" + id, Events: []string{webhooks.VideoCommitted},
		Active: true, Secret: []byte{1, 2, 3}, CreatedAt: now, UpdatedAt: now}
}

func testWebhookRegistrations(t *testing.T, s suite) {
	st, ctx := whStore(t, s), t.Context()
	r := whRegistration(whChannel)
	if err := st.CreateWebhook(ctx, whChannel, r, 2); err != nil {
		t.Fatal(err)
	}
	got, version, err := st.GetWebhook(ctx, whChannel, r.ID)
	if err != nil || got.ID != r.ID || got.ChannelID != whChannel || string(got.Secret) != string(r.Secret) || version != 1 {
		t.Fatalf("GetWebhook = %+v v%d, %v", got, version, err)
	}
	if err := st.CreateWebhook(ctx, whChannel, whRegistration(whChannel), 2); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateWebhook(ctx, whChannel, whRegistration(whChannel), 2); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("third of at most 2: %v", err)
	}
	list, err := st.ListWebhooks(ctx, whChannel)
	if err != nil || len(list) != 2 || list[0].ID != r.ID {
		t.Fatalf("ListWebhooks = %d, %v (oldest first)", len(list), err)
	}
	got.Active = false
	if err := st.UpdateWebhook(ctx, whChannel, got, version, got.URL); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateWebhook(ctx, whChannel, got, version, got.URL); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("update at a stale version: %v", err)
	}
	if err := st.SaveHealth(ctx, got, version); !errors.Is(err, webhooks.ErrStale) {
		t.Fatalf("health at a stale version: %v", err)
	}
	if err := st.DeleteWebhook(ctx, whChannel, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteWebhook(ctx, whChannel, r.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("delete twice: %v", err)
	}
	if err := st.CreateWebhook(ctx, whChannel, whRegistration(whChannel), 2); err != nil {
		t.Fatalf("the deleted one's place was not given back: %v", err)
	}
}

// A channel's receiver URL belongs to one registration, claimed in the write's transaction: of writes
// racing with one URL exactly one passes, a URL changed or deleted is free again, and the same resource
// spelled otherwise (case, default port) is the same URL.
func testWebhookURLClaims(t *testing.T, s suite) {
	st, ctx := whStore(t, s), t.Context()
	const url = "https://example.com/claimed"
	regs := make([]webhooks.Registration, 8)
	errs := make([]error, len(regs))
	var wg sync.WaitGroup
	for i := range regs {
		regs[i] = whRegistration(whChannel)
		regs[i].URL = url
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = st.CreateWebhook(ctx, whChannel, regs[i], 20) }()
	}
	wg.Wait()
	var owner webhooks.Registration
	for i, err := range errs {
		switch {
		case err == nil && owner.ID == "":
			owner = regs[i]
		case err == nil:
			t.Fatalf("two registrations of %s were stored: %s and %s", url, owner.ID, regs[i].ID)
		case apperr.CodeOf(err) != apperr.Conflict:
			t.Fatalf("a racing registration of a taken URL: %v, want CONFLICT", err)
		}
	}
	if owner.ID == "" {
		t.Fatal("no registration of the URL was stored")
	}
	other := whRegistration(whChannel)
	other.URL = "HTTPS://EXAMPLE.COM:443/claimed"
	if err := st.CreateWebhook(ctx, whChannel, other, 20); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("the same URL spelled otherwise: %v, want CONFLICT", err)
	}
	if err := st.CreateWebhook(ctx, "0190b000-0000-7000-8000-00000000c002", other, 20); err != nil {
		t.Fatalf("another channel's registration of the URL: %v", err)
	}
	// Moving the owner to another URL frees this one and claims that one.
	got, version, err := st.GetWebhook(ctx, whChannel, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.URL = "https://example.com/moved"
	if err := st.UpdateWebhook(ctx, whChannel, got, version, url); err != nil {
		t.Fatal(err)
	}
	second := whRegistration(whChannel)
	second.URL = url
	if err := st.CreateWebhook(ctx, whChannel, second, 20); err != nil {
		t.Fatalf("the URL the owner left: %v", err)
	}
	moved, mv, err := st.GetWebhook(ctx, whChannel, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	moved.URL = "https://example.com/moved"
	if err := st.UpdateWebhook(ctx, whChannel, moved, mv, url); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("an update onto a claimed URL: %v, want CONFLICT", err)
	}
	// Deleting the owner frees its URL.
	if err := st.DeleteWebhook(ctx, whChannel, owner.ID); err != nil {
		t.Fatal(err)
	}
	third := whRegistration(whChannel)
	third.URL = "https://example.com/moved"
	if err := st.CreateWebhook(ctx, whChannel, third, 20); err != nil {
		t.Fatalf("the URL of a deleted registration: %v", err)
	}
}

func testWebhookFanOut(t *testing.T, s suite) {
	st, ctx := whStore(t, s), t.Context()
	reg := whRegistration(whChannel)
	if err := st.CreateWebhook(ctx, whChannel, reg, 20); err != nil {
		t.Fatal(err)
	}
	ev := whEvent(t, whChannel, whNow())
	ds := make([]webhooks.Delivery, webhooks.MaxRegistrations)
	for i := range ds {
		ds[i] = webhooks.Delivery{ID: whID(), WebhookID: reg.ID, EventID: ev.ID, Event: ev.Type, Status: webhooks.Pending,
			CreatedAt: ev.Time}
	}
	if err := st.RecordFanOut(ctx, ev, ds); err != nil {
		t.Fatal(err)
	}
	again := []webhooks.Delivery{{ID: whID(), WebhookID: reg.ID, EventID: ev.ID, Status: webhooks.Pending, CreatedAt: ev.Time}}
	if err := st.RecordFanOut(ctx, ev, again); !errors.Is(err, webhooks.ErrFannedOut) {
		t.Fatalf("second fan-out: %v", err)
	}
	if all, _ := st.ListDeliveries(ctx, whChannel, reg.ID); len(all) != len(ds) || all[0].ID != ds[len(ds)-1].ID {
		t.Fatalf("ListDeliveries: %d, want %d newest first", len(all), len(ds))
	}
	// The log paged in the store (issue 19 item 18): the page's items, newest first, and the log's size.
	for _, c := range []struct{ limit, offset, want int }{{3, 0, 3}, {3, 18, 2}, {5, 20, 0}, {100, 0, len(ds)}} {
		p, total, err := st.DeliveryPage(ctx, whChannel, reg.ID, c.limit, c.offset)
		if err != nil || total != len(ds) || len(p) != c.want || (c.want > 0 && p[0].ID != ds[len(ds)-1-c.offset].ID) {
			t.Fatalf("DeliveryPage(%d, %d) = %d items of %d, %v", c.limit, c.offset, len(p), total, err)
		}
	}
	f, version, err := st.FanOutOf(ctx, whChannel, ev.ID)
	if err != nil || f.Sent || len(f.Deliveries) != len(ds) || string(f.Event.Data) != string(ev.Data) || !f.Event.Time.Equal(ev.Time) {
		t.Fatalf("FanOutOf = %+v, %v", f, err)
	}
	if err := st.MarkSent(ctx, f, version); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkSent(ctx, f, version); !errors.Is(err, webhooks.ErrStale) {
		t.Fatalf("mark sent at a stale version: %v", err)
	}
	got, err := st.Deliveries(ctx, whChannel, append(f.Deliveries, webhooks.FanOutDelivery{WebhookID: reg.ID, DeliveryID: whID()}))
	if err != nil || len(got) != len(ds) {
		t.Fatalf("Deliveries = %d, %v; want %d (the missing one left out)", len(got), err, len(ds))
	}

	ref := webhooks.DeliveryRef{ChannelID: whChannel, WebhookID: reg.ID, DeliveryID: ds[0].ID, EventID: ev.ID}
	state, err := st.LoadDelivery(ctx, ref)
	if err != nil || state.Delivery == nil || state.Webhook == nil || state.Event == nil || state.Event.ID != ev.ID ||
		state.DeliveryVersion != 1 || state.WebhookVersion != 1 {
		t.Fatalf("LoadDelivery = %+v, %v", state, err)
	}
	d := *state.Delivery
	code := 200
	d.Status, d.MessageID = webhooks.Succeeded, "m1"
	d.Attempts = []webhooks.Attempt{{At: whNow(), StatusCode: &code, DurationMs: 1.5}}
	if err := st.SaveDelivery(ctx, whChannel, d, state.DeliveryVersion); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveDelivery(ctx, whChannel, d, state.DeliveryVersion); !errors.Is(err, webhooks.ErrStale) {
		t.Fatalf("save at a stale version: %v", err)
	}
	saved, err := st.GetDelivery(ctx, whChannel, reg.ID, d.ID)
	if err != nil || saved.Status != webhooks.Succeeded || len(saved.Attempts) != 1 || *saved.Attempts[0].StatusCode != 200 ||
		saved.MessageID != "m1" {
		t.Fatalf("GetDelivery = %+v, %v", saved, err)
	}
	missing, err := st.LoadDelivery(ctx, webhooks.DeliveryRef{ChannelID: whChannel, WebhookID: whID(), DeliveryID: whID(), EventID: whID()})
	if err != nil || missing.Delivery != nil || missing.Webhook != nil || missing.Event != nil {
		t.Fatalf("LoadDelivery of nothing = %+v, %v", missing, err)
	}
	if _, err := st.GetEvent(ctx, whChannel, ev.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetEvent(ctx, "0190b000-0000-7000-8000-00000000c002", ev.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another channel's event: %v", err)
	}
}

func testWebhookManualDelivery(t *testing.T, s suite) {
	st, ctx := whStore(t, s), t.Context()
	ev := whEvent(t, whChannel, whNow())
	d := webhooks.Delivery{ID: whID(), WebhookID: whID(), EventID: ev.ID, Event: ev.Type, Status: webhooks.Pending, Manual: true,
		CreatedAt: ev.Time}
	m := webhooks.OutboxMessage{ID: d.ID, Queue: webhooks.DeliveriesQueue, ChannelID: whChannel, At: ev.Time, Body: []byte(`{"x":1}`)}
	if err := st.QueueDelivery(ctx, whChannel, &ev, d, m); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("queue for a missing registration: %v", err)
	}
	if _, err := st.GetEvent(ctx, whChannel, ev.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatal("a refused QueueDelivery stored its event")
	}
	if old, _ := st.OldOutbox(ctx, whNow().Add(time.Hour), 10); len(old) != 0 {
		t.Fatal("a refused QueueDelivery stored its outbox message")
	}
	reg := whRegistration(whChannel)
	reg.ID = d.WebhookID
	if err := st.CreateWebhook(ctx, whChannel, reg, 20); err != nil {
		t.Fatal(err)
	}
	if err := st.QueueDelivery(ctx, whChannel, &ev, d, m); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetDelivery(ctx, whChannel, reg.ID, d.ID)
	old, _ := st.OldOutbox(ctx, whNow().Add(time.Hour), 10)
	if err != nil || !got.Manual || len(old) != 1 || old[0].Queue != webhooks.DeliveriesQueue || string(old[0].Body) != `{"x":1}` {
		t.Fatalf("after QueueDelivery: %+v, %v, outbox %+v", got, err, old)
	}
}

func testOutbox(t *testing.T, s suite) {
	st, ctx := whStore(t, s), t.Context()
	base := whNow().Add(-time.Hour)
	var msgs []webhooks.OutboxMessage
	for i := range 40 { // over many channels, so over several partitions; more than one transaction of deletes
		ch := fmt.Sprintf("0190b000-0000-7000-8000-%012d", 9000+i)
		ev := whEvent(t, ch, base.Add(time.Duration(39-i)*time.Second)) // written newest first
		m, err := ev.Message()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if err := st.PutOutbox(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	if err := st.PutOutbox(ctx, msgs[0]); err != nil {
		t.Fatalf("putting a message twice: %v", err)
	}
	old, err := st.OldOutbox(ctx, base.Add(19*time.Second), 100)
	if err != nil || len(old) != 20 {
		t.Fatalf("OldOutbox up to +19s = %d, %v; want 20", len(old), err)
	}
	for i := 1; i < len(old); i++ {
		if old[i].At.Before(old[i-1].At) {
			t.Fatalf("not oldest first at %d", i)
		}
	}
	if !old[0].At.Equal(base) || old[0].ID != msgs[39].ID || old[0].Queue != webhooks.EventsQueue || string(old[0].Body) != string(msgs[39].Body) {
		t.Fatalf("oldest = %+v, want %+v", old[0], msgs[39])
	}
	if limited, _ := st.OldOutbox(ctx, base.Add(time.Hour), 7); len(limited) != 7 || !limited[0].At.Equal(base) {
		t.Fatalf("OldOutbox limit 7 = %d", len(limited))
	}
	if err := st.DeleteOutbox(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	if left, _ := st.OldOutbox(ctx, base.Add(time.Hour), 100); len(left) != 0 {
		t.Fatalf("%d left after deleting all", len(left))
	}
}

// Events go into the outbox with the operation's write, or not at all.
func testOutboxWithTheWrite(t *testing.T, s suite) {
	st, ctx := whStore(t, s), t.Context()
	outbox := func() int {
		t.Helper()
		old, err := st.OldOutbox(ctx, whNow().Add(time.Hour), 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(old)
	}
	now := whNow()
	v := videos.Video{ID: whID(), Title: "t", ContentType: "Long", FormulaType: "f", Status: videos.Planned, CreatedAt: now, UpdatedAt: now}
	ev := whEvent(t, whChannel, now)
	missing := whID()
	v.SeriesID = &missing
	if err := st.CreateVideo(ctx, whChannel, v, 1, videos.DefaultMaxVideos, ev); apperr.CodeOf(err) != apperr.NotFound || outbox() != 0 {
		t.Fatalf("a video of a missing series: %v, outbox %d", err, outbox())
	}
	v.SeriesID = nil
	if err := st.CreateVideo(ctx, whChannel, v, 1, videos.DefaultMaxVideos, ev); err != nil || outbox() != 1 {
		t.Fatalf("CreateVideo: %v, outbox %d", err, outbox())
	}
	ev2 := whEvent(t, whChannel, now)
	if err := st.UpdateVideo(ctx, whChannel, v, 7, ev2); apperr.CodeOf(err) != apperr.Conflict || outbox() != 1 {
		t.Fatalf("UpdateVideo at a stale version: %v, outbox %d", err, outbox())
	}
	_, version, err := st.GetVideo(ctx, whChannel, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateVideo(ctx, whChannel, v, version, ev2); err != nil || outbox() != 2 {
		t.Fatalf("UpdateVideo: %v, outbox %d", err, outbox())
	}
	ev3 := whEvent(t, whChannel, now)
	tmpl := planning.Template{Slots: []planning.Slot{{DayOfWeek: 1, SlotType: planning.Rest}}}
	if err := st.SaveSchedule(ctx, whChannel, tmpl, 0, nil, 0, whID(), ev3); apperr.CodeOf(err) != apperr.NotFound || outbox() != 2 {
		t.Fatalf("SaveSchedule assigning a missing video: %v, outbox %d", err, outbox())
	}
	if err := st.SaveSchedule(ctx, whChannel, tmpl, 0, nil, 0, v.ID, ev3); err != nil || outbox() != 3 {
		t.Fatalf("SaveSchedule: %v, outbox %d", err, outbox())
	}
}
