package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
)

// waitFor polls cond until it holds or the deadline passes (the local stack runs on the wall clock).
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func decodeJSON(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return m
}

// TestWebhooksEndToEnd drives the local stack as a user would: registrations over the API, operations
// that emit, receivers on loopback that verify every signature with the standard-webhooks library (the
// timestamp too), retries on a short schedule, the delivery log, and a restart with deliveries pending.
func TestWebhooksEndToEnd(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"CSS_DATA_DIR": data, "CSS_DEV_API_KEYS": devKey,
		// Decision 24's schedule, shortened: the schedule is configuration.
		"CSS_WEBHOOK_RETRY_SCHEDULE": "300ms,300ms,300ms"}
	base, _, stop := start(t, env)
	defer stop()
	api := base + "/api/v1"

	healthy, flaky, down := webhookstest.StartReceiver(t), webhookstest.StartReceiver(t), webhookstest.StartReceiver(t)
	for _, r := range []*webhookstest.Receiver{healthy, flaky, down} {
		r.CheckTimestamp = true
	}
	flaky.Respond(func(r *webhookstest.Request) int {
		if r.Attempt <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	down.Respond(func(*webhookstest.Request) int { return http.StatusBadGateway })
	register := func(rec *webhookstest.Receiver, events ...string) string {
		t.Helper()
		status, body := call(t, "POST", base+"/api/webhooks", devKey,
			fmt.Sprintf(`{"url":%q,"events":["%s"]}`, rec.URL(), strings.Join(events, `","`)))
		if status != 201 {
			t.Fatalf("register: %d %s", status, body)
		}
		m := decodeJSON(t, body)
		rec.Trust(m["secret"].(string))
		return m["id"].(string)
	}
	hid := register(healthy, "video.committed", "video.status_changed", "schedule.updated")
	fid := register(flaky, "video.committed")
	did := register(down, "video.committed")

	status, body := call(t, "POST", api+"/my-videos", devKey, `{"title":"Tofu 3 ways","contentType":"Short","formulaType":"listicle"}`)
	if status != 200 {
		t.Fatalf("commit: %d %s", status, body)
	}
	video := decodeJSON(t, body)["id"].(string)
	call(t, "POST", api+"/my-videos/status", devKey, fmt.Sprintf(`{"videoId":%q,"status":"scripted"}`, video))
	call(t, "POST", api+"/schedule", devKey, fmt.Sprintf(`{"dayOfWeek":2,"slotType":"publish","contentType":"Short","publishTime":"15:00","assignedVideoId":%q}`, video))

	waitFor(t, "the healthy receiver's 3 events", 10*time.Second, func() bool { return len(healthy.Requests()) == 3 })
	waitFor(t, "the flaky receiver's success", 10*time.Second, func() bool { return len(flaky.Successes()) == 1 })
	waitFor(t, "the down receiver's 4 attempts", 10*time.Second, func() bool { return len(down.Requests()) == 4 })
	for name, rec := range map[string]*webhookstest.Receiver{"healthy": healthy, "flaky": flaky, "down": down} {
		for i, r := range rec.Requests() {
			if r.VerifyErr != nil {
				t.Errorf("%s request %d: %v", name, i, r.VerifyErr)
			}
		}
	}
	// Deliveries run in parallel: the set of types matters, not their order.
	seen := map[string]bool{}
	for _, r := range healthy.Requests() {
		seen[r.Envelope.Type] = true
	}
	if !seen["video.committed"] || !seen["video.status_changed"] || !seen["schedule.updated"] {
		t.Errorf("healthy receiver got %v", seen)
	}
	if n := len(flaky.Requests()); n != 3 {
		t.Errorf("flaky receiver: %d attempts, want 3", n)
	}

	deliveries := func(id string) []any {
		status, body := call(t, "GET", base+"/api/webhooks/"+id+"/deliveries", devKey, "")
		if status != 200 {
			t.Fatalf("deliveries: %d %s", status, body)
		}
		return decodeJSON(t, body)["deliveries"].([]any)
	}
	waitFor(t, "the down receiver's delivery failed", 5*time.Second, func() bool {
		d := deliveries(did)
		return len(d) == 1 && d[0].(map[string]any)["status"] == "failed"
	})
	if d := deliveries(fid)[0].(map[string]any); d["status"] != "succeeded" || d["attempts"] != 3.0 {
		t.Errorf("flaky log: %v", d)
	}
	if d := deliveries(hid); len(d) != 3 {
		t.Errorf("healthy log: %d deliveries", len(d))
	}

	// A test delivery, and a redelivery of the failed one once the receiver is back.
	var up atomic.Bool
	down.Respond(func(*webhookstest.Request) int {
		if up.Load() {
			return http.StatusNoContent
		}
		return http.StatusBadGateway
	})
	up.Store(true)
	failed := deliveries(did)[0].(map[string]any)["id"].(string)
	if status, body := call(t, "POST", base+"/api/webhooks/"+did+"/deliveries/"+failed+"/redeliver", devKey, ""); status != 202 {
		t.Fatalf("redeliver: %d %s", status, body)
	}
	if status, body := call(t, "POST", base+"/api/webhooks/"+hid+"/test", devKey, ""); status != 202 {
		t.Fatalf("test: %d %s", status, body)
	}
	waitFor(t, "the redelivery", 5*time.Second, func() bool { return len(down.Successes()) == 1 })
	waitFor(t, "the test delivery", 5*time.Second, func() bool { return len(healthy.Requests()) == 4 })
	if last := healthy.Requests()[3]; last.Envelope.Type != "webhook.test" || last.VerifyErr != nil {
		t.Errorf("test delivery: %+v", last)
	}

	// Restart with a delivery waiting for its retry: the durable queue keeps it.
	up.Store(false)
	call(t, "POST", api+"/my-videos", devKey, `{"title":"Second","contentType":"Long","formulaType":"f"}`)
	waitFor(t, "the first attempt", 5*time.Second, func() bool { return len(down.Requests()) == 6 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	up.Store(true)
	_, _, stop2 := start(t, env)
	defer stop2()
	waitFor(t, "the retry after the restart", 10*time.Second, func() bool { return len(down.Successes()) == 2 })
}
