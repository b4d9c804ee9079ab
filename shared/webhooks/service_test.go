package webhooks_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
)

func wantCode(t *testing.T, what string, err error, code apperr.Code, says string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Code != code || !strings.Contains(e.Message, says) {
		t.Errorf("%s: %v, want %s saying %q", what, err, code, says)
	}
}

func TestRegistration(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	rec := webhookstest.StartReceiver(t)
	c, err := h.svc.Create(ctx, chA, contract.WebhookCreate{URL: rec.URL(),
		Events: []contract.EventName{"video.committed", "schedule.updated"}, Description: contract.Ptr("zapier")})
	if err != nil {
		t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(c.Secret, webhooks.SecretPrefix))
	if !strings.HasPrefix(c.Secret, webhooks.SecretPrefix) || err != nil || len(key) != 32 {
		t.Fatalf("secret %q: want whsec_ + base64 of 32 bytes", c.Secret)
	}
	if !c.Active || c.URL != rec.URL() || len(c.Events) != 2 || *c.Description != "zapier" || !c.CreatedAt.Equal(t0) {
		t.Errorf("created %+v", c.View)
	}
	// The secret is stored sealed: the stored bytes are not the key, and open only for this registration.
	stored, _, err := h.st.GetWebhook(ctx, chA, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored.Secret), string(key)) || strings.Contains(base64.StdEncoding.EncodeToString(stored.Secret), c.Secret[6:]) {
		t.Error("the stored secret holds the key in the clear")
	}
	if got, err := h.cipher.Open(ctx, stored.Secret, webhooks.SecretAAD(chA, c.ID)); err != nil || string(got) != string(key) {
		t.Errorf("the sealed secret does not open to the key: %v", err)
	}
	if _, err := h.cipher.Open(ctx, stored.Secret, webhooks.SecretAAD(chA, "another")); err == nil {
		t.Error("the sealed secret opens for another registration")
	}

	// Reading never shows the secret; other channels do not see it.
	if v, err := h.svc.Get(ctx, chA, c.ID); err != nil || v.ID != c.ID {
		t.Fatalf("Get = %+v, %v", v, err)
	}
	_, err = h.svc.Get(ctx, chB, c.ID)
	wantCode(t, "Get from another channel", err, apperr.NotFound, "not found")
	if l, _ := h.svc.List(ctx, chB); len(l) != 0 {
		t.Errorf("another channel lists %v", l)
	}

	// PATCH changes only what is given, with the same URL rules.
	v, err := h.svc.Update(ctx, chA, c.ID, contract.WebhookUpdate{Events: []contract.EventName{"titles.generated"}})
	if err != nil || len(v.Events) != 1 || v.Events[0] != "titles.generated" || v.URL != rec.URL() || *v.Description != "zapier" {
		t.Fatalf("Update events = %+v, %v", v, err)
	}
	_, err = h.svc.Update(ctx, chA, c.ID, contract.WebhookUpdate{URL: contract.Ptr("http://10.0.0.1/hook")})
	wantCode(t, "Update to a private URL", err, apperr.Validation, "private")
	_, err = h.svc.Update(ctx, chA, c.ID, contract.WebhookUpdate{})
	wantCode(t, "empty Update", err, apperr.Validation, "")

	if err := h.svc.Delete(ctx, chA, c.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "Delete twice", h.svc.Delete(ctx, chA, c.ID), apperr.NotFound, "not found")
}

func TestRegistrationInput(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	tests := []struct {
		name   string
		in     contract.WebhookCreate
		field  string
		saying string
	}{
		{"unknown event", contract.WebhookCreate{URL: "http://127.0.0.1/h", Events: []contract.EventName{"video.committed", "video.deleted"}}, "events[1]", `"video.deleted"`},
		{"the test event", contract.WebhookCreate{URL: "http://127.0.0.1/h", Events: []contract.EventName{"webhook.test"}}, "events[0]", `"webhook.test"`},
		{"no events", contract.WebhookCreate{URL: "http://127.0.0.1/h", Events: []contract.EventName{}}, "events", ""},
		{"an event twice", contract.WebhookCreate{URL: "http://127.0.0.1/h", Events: []contract.EventName{"video.committed", "video.committed"}}, "events", ""},
		{"not a URL", contract.WebhookCreate{URL: "not a url", Events: []contract.EventName{"video.committed"}}, "url", ""},
		{"private", contract.WebhookCreate{URL: "http://192.168.1.10/h", Events: []contract.EventName{"video.committed"}}, "url", "private"},
		{"user info", contract.WebhookCreate{URL: "http://u:p@127.0.0.1/h", Events: []contract.EventName{"video.committed"}}, "url", "user information"},
		{"too long", contract.WebhookCreate{URL: "http://127.0.0.1/" + strings.Repeat("x", 2048), Events: []contract.EventName{"video.committed"}}, "url", ""},
		{"long description", contract.WebhookCreate{URL: "http://127.0.0.1/h", Events: []contract.EventName{"video.committed"}, Description: contract.Ptr(strings.Repeat("d", 501))}, "description", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.svc.Create(ctx, chA, tt.in)
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.Validation || e.Field != tt.field || !strings.Contains(e.Message, tt.saying) {
				t.Fatalf("%v, want a VALIDATION_ERROR on %s saying %q", err, tt.field, tt.saying)
			}
		})
	}
	if l, _ := h.svc.List(ctx, chA); len(l) != 0 {
		t.Errorf("refused registrations were stored: %v", l)
	}
}

func TestTwentyRegistrationsPerChannel(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	in := contract.WebhookCreate{URL: "http://127.0.0.1:9/h", Events: []contract.EventName{"video.committed"}}
	var first string
	for i := range webhooks.MaxRegistrations {
		in.URL = fmt.Sprintf("http://127.0.0.1:9/h%d", i) // one URL once a channel (issue 19 item 16)
		c, err := h.svc.Create(ctx, chA, in)
		if err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
		if i == 0 {
			first = c.ID
		}
	}
	in.URL = "http://127.0.0.1:9/h-21st"
	_, err := h.svc.Create(ctx, chA, in)
	wantCode(t, "the 21st", err, apperr.Validation, "maximum of 20")
	if _, err := h.svc.Create(ctx, chB, in); err != nil {
		t.Errorf("another channel's first: %v", err)
	}
	if err := h.svc.Delete(ctx, chA, first); err != nil {
		t.Fatal(err)
	}
	in.URL = "http://127.0.0.1:9/h0" // the removed registration's URL is free again
	if _, err := h.svc.Create(ctx, chA, in); err != nil {
		t.Errorf("after removing one: %v", err)
	}
	if l, _ := h.svc.List(ctx, chA); len(l) != webhooks.MaxRegistrations {
		t.Errorf("%d registrations, want %d", len(l), webhooks.MaxRegistrations)
	}
}

func TestRotatedSecretsOverlapForADay(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	oldOnly, newOnly := webhookstest.StartReceiver(t), webhookstest.StartReceiver(t)
	// One registration; two receivers stand for the user's code before and after switching secrets.
	w := h.register(chA, oldOnly, webhooks.VideoCommitted)
	rot, err := h.svc.RotateSecret(ctx, chA, w.ID)
	if err != nil || rot.Secret == w.Secret || !rot.PreviousSecretExpiresAt.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("RotateSecret = %+v, %v", rot, err)
	}
	newOnly.Trust(rot.Secret)
	if _, err := h.svc.Update(ctx, chA, w.ID, contract.WebhookUpdate{URL: contract.Ptr(newOnly.URL())}); err != nil {
		t.Fatal(err)
	}
	h.emit(chA, webhooks.VideoCommitted)
	r := newOnly.Requests()
	if len(r) != 1 || r[0].VerifyErr != nil || len(strings.Fields(r[0].Header.Get("webhook-signature"))) != 2 {
		t.Fatalf("during the overlap: %+v", r)
	}
	// The old secret verifies the same delivery too.
	oldOnly.Respond(func(*webhookstest.Request) int { return http.StatusOK })
	if _, err := h.svc.Update(ctx, chA, w.ID, contract.WebhookUpdate{URL: contract.Ptr(oldOnly.URL())}); err != nil {
		t.Fatal(err)
	}
	h.emit(chA, webhooks.VideoCommitted)
	if r := oldOnly.Requests(); len(r) != 1 || r[0].VerifyErr != nil {
		t.Fatalf("the previous secret no longer verifies during the overlap: %+v", r)
	}
	// A day later only the new secret signs.
	h.advance(24 * time.Hour)
	h.emit(chA, webhooks.VideoCommitted)
	r = oldOnly.Requests()
	if len(r) != 2 || r[1].VerifyErr == nil || len(strings.Fields(r[1].Header.Get("webhook-signature"))) != 1 {
		t.Fatalf("after the overlap the old secret still verifies: %+v", r[len(r)-1])
	}
	_, err = h.svc.RotateSecret(ctx, chA, "01900000-0000-7000-8000-999999999999")
	wantCode(t, "rotate an unknown webhook", err, apperr.NotFound, "not found")
}

func TestTestDeliveries(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	rec := webhookstest.StartReceiver(t)
	w := h.register(chA, rec, webhooks.ScheduleUpdated)
	// Paused, and not subscribed to webhook.test: a test goes out all the same.
	if _, err := h.svc.Update(ctx, chA, w.ID, contract.WebhookUpdate{Active: contract.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	id, err := h.svc.Test(ctx, chA, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	h.settle()
	r := rec.Requests()
	if len(r) != 1 || r[0].Envelope.Type != webhooks.Test || r[0].VerifyErr != nil ||
		string(r[0].Envelope.Data) != `{"webhookId":"`+w.ID+`"}` || r[0].Envelope.ChannelID != chA {
		t.Fatalf("test delivery: %+v", r)
	}
	log := h.log(chA, w.ID)
	if len(log) != 1 || log[0].ID != id || log[0].Event != webhooks.Test || log[0].Status != webhooks.Succeeded {
		t.Fatalf("log = %+v", log)
	}
	_, err = h.svc.Test(ctx, chB, w.ID)
	wantCode(t, "test from another channel", err, apperr.NotFound, "not found")
}

func TestRedelivery(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	rec := webhookstest.StartReceiver(t)
	rec.Respond(func(*webhookstest.Request) int { return http.StatusInternalServerError })
	w := h.register(chA, rec, webhooks.VideoCommitted)
	h.emit(chA, webhooks.VideoCommitted)
	failed := h.log(chA, w.ID)[0]
	_, err := h.svc.Redeliver(ctx, chA, w.ID, failed.ID)
	wantCode(t, "redeliver a pending delivery", err, apperr.Conflict, "still being attempted")
	h.walk(2 * time.Hour)

	rec.Respond(func(*webhookstest.Request) int { return http.StatusAccepted })
	id, err := h.svc.Redeliver(ctx, chA, w.ID, failed.ID)
	if err != nil {
		t.Fatal(err)
	}
	h.settle()
	r := rec.Requests()
	last := r[len(r)-1]
	if len(r) != 5 || last.Status != http.StatusAccepted || last.VerifyErr != nil ||
		last.Header.Get("webhook-id") != r[0].Header.Get("webhook-id") || string(last.Body) != string(r[0].Body) {
		t.Fatalf("redelivery: %d requests, last %+v", len(r), last)
	}
	log := h.log(chA, w.ID)
	if len(log) != 2 || log[0].ID != id || log[0].Status != webhooks.Succeeded || *log[0].RedeliveryOf != failed.ID ||
		log[0].EventID != failed.EventID || log[1].Status != webhooks.Failed {
		t.Fatalf("log after redelivery = %+v", log)
	}
	_, err = h.svc.Redeliver(ctx, chA, w.ID, "01900000-0000-7000-8000-999999999999")
	wantCode(t, "redeliver an unknown delivery", err, apperr.NotFound, "not found")

	// Past the log's retention the event is gone.
	h.advance(webhooks.LogRetention)
	_, err = h.svc.Redeliver(ctx, chA, w.ID, failed.ID)
	wantCode(t, "redeliver a delivery past retention", err, apperr.NotFound, "not found")
}

func TestDeliveryLogPages(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	w := h.register(chA, rec, webhooks.VideoCommitted)
	for range 5 {
		h.emit(chA, webhooks.VideoCommitted)
		h.advance(time.Second)
	}
	ctx := context.Background()
	all, total, err := h.svc.Deliveries(ctx, chA, w.ID, 100, 0)
	if err != nil || total != 5 || len(all) != 5 {
		t.Fatalf("%d of %d, %v", len(all), total, err)
	}
	for i := 1; i < len(all); i++ {
		if !all[i-1].CreatedAt.After(all[i].CreatedAt) {
			t.Errorf("not newest first: %s then %s", all[i-1].CreatedAt, all[i].CreatedAt)
		}
	}
	p, total, err := h.svc.Deliveries(ctx, chA, w.ID, 2, 3)
	if err != nil || total != 5 || len(p) != 2 || p[0].ID != all[3].ID || p[1].ID != all[4].ID {
		t.Fatalf("page 2,3 = %d items of %d, %v", len(p), total, err)
	}
	_, _, err = h.svc.Deliveries(ctx, chB, w.ID, 10, 0)
	wantCode(t, "another channel's log", err, apperr.NotFound, "not found")
}
