package rest_test

import (
	"fmt"
	"strings"
	"testing"
)

const hooks = "/api/webhooks"

// A public address literal: registration checks it without a name lookup.
const receiver = "https://93.184.216.34/hooks/css?token=t"

func TestWebhookOperations(t *testing.T) {
	e := newEnv(t)
	a := func(method, path string, body any) resp {
		return e.do(req{method: method, path: path, cred: e.keyA, body: body})
	}
	created := a("POST", hooks, map[string]any{"url": receiver, "events": []string{"video.committed", "titles.generated"},
		"description": "zapier"}).must(t, 201)
	id := created.str("id")
	if !strings.HasPrefix(created.str("secret"), "whsec_") || created.json["active"] != true || created.json["disabledAt"] != nil {
		t.Fatalf("created: %s", created.raw)
	}
	for _, r := range []resp{a("GET", hooks+"/"+id, nil).must(t, 200), a("GET", hooks, nil).must(t, 200)} {
		if strings.Contains(string(r.raw), "secret") || strings.Contains(string(r.raw), created.str("secret")[6:]) {
			t.Errorf("a read shows the secret: %s", r.raw)
		}
	}
	if l := a("GET", hooks, nil).must(t, 200); l.num("total") != 1 || len(l.list("webhooks")) != 1 {
		t.Errorf("list: %s", l.raw)
	}
	if p := a("PATCH", hooks+"/"+id, map[string]any{"active": false}).must(t, 200); p.json["active"] != false || p.str("url") != receiver {
		t.Errorf("patch: %s", p.raw)
	}
	rot := a("POST", hooks+"/"+id+"/rotate-secret", nil).must(t, 200)
	if !strings.HasPrefix(rot.str("secret"), "whsec_") || rot.str("secret") == created.str("secret") || rot.str("previousSecretExpiresAt") == "" {
		t.Errorf("rotate: %s", rot.raw)
	}
	test := a("POST", hooks+"/"+id+"/test", nil).must(t, 202)
	log := a("GET", hooks+"/"+id+"/deliveries?limit=10", nil).must(t, 200)
	ds := log.list("deliveries")
	if log.num("total") != 1 || len(ds) != 1 || ds[0].(map[string]any)["id"] != test.str("deliveryId") ||
		ds[0].(map[string]any)["event"] != "webhook.test" || ds[0].(map[string]any)["status"] != "pending" {
		t.Fatalf("deliveries: %s", log.raw)
	}
	a("POST", hooks+"/"+id+"/deliveries/"+test.str("deliveryId")+"/redeliver", nil).must(t, 409, "CONFLICT")
	a("POST", hooks+"/"+id+"/deliveries/"+e.store.NewID()+"/redeliver", nil).must(t, 404, "NOT_FOUND")

	// Another channel sees none of it.
	b := func(method, path string, body any) resp {
		return e.do(req{method: method, path: path, cred: e.keyB, body: body})
	}
	b("GET", hooks+"/"+id, nil).must(t, 404, "NOT_FOUND")
	b("PATCH", hooks+"/"+id, map[string]any{"active": true}).must(t, 404, "NOT_FOUND")
	b("POST", hooks+"/"+id+"/test", nil).must(t, 404, "NOT_FOUND")
	b("POST", hooks+"/"+id+"/rotate-secret", nil).must(t, 404, "NOT_FOUND")
	b("GET", hooks+"/"+id+"/deliveries", nil).must(t, 404, "NOT_FOUND")
	b("DELETE", hooks+"/"+id, nil).must(t, 404, "NOT_FOUND")
	if l := b("GET", hooks, nil).must(t, 200); l.num("total") != 0 {
		t.Errorf("channel B lists %s", l.raw)
	}

	a("DELETE", hooks+"/"+id, nil).must(t, 204)
	a("GET", hooks+"/"+id, nil).must(t, 404, "NOT_FOUND")
	a("GET", hooks+"/"+id+"/deliveries", nil).must(t, 404, "NOT_FOUND")
}

func TestWebhookRegistrationIsChecked(t *testing.T) {
	e := newEnv(t)
	post := func(body map[string]any) resp {
		return e.do(req{method: "POST", path: hooks, cred: e.keyA, body: body})
	}
	events := []string{"video.committed"}
	tests := []struct {
		name string
		body map[string]any
		says string
	}{
		{"unknown event", map[string]any{"url": receiver, "events": []string{"video.committed", "video.exploded"}}, `events[1]: "video.exploded" is not one of`},
		{"no events", map[string]any{"url": receiver, "events": []string{}}, "events"},
		{"no url", map[string]any{"events": events}, "url"},
		{"loopback", map[string]any{"url": "https://127.0.0.1/h", "events": events}, "loopback"},
		{"private", map[string]any{"url": "https://10.0.0.1/h", "events": events}, "private"},
		{"metadata", map[string]any{"url": "http://169.254.169.254/latest/meta-data/", "events": events}, "metadata"},
		{"mapped loopback", map[string]any{"url": "https://[::ffff:127.0.0.1]/h", "events": events}, "loopback"},
		{"user info", map[string]any{"url": "https://a:b@93.184.216.34/h", "events": events}, "user information"},
		{"too long", map[string]any{"url": receiver + strings.Repeat("x", 2048), "events": events}, "url"},
		{"not http", map[string]any{"url": "ftp://93.184.216.34/h", "events": events}, "url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(tt.body).must(t, 400, "VALIDATION_ERROR")
			if !strings.Contains(r.str("error"), tt.says) {
				t.Errorf("error %q does not say %q", r.str("error"), tt.says)
			}
		})
	}
	for i := range 20 {
		// One URL once a channel (issue 19 item 16): twenty receivers.
		post(map[string]any{"url": fmt.Sprintf("%s&n=%d", receiver, i), "events": events}).must(t, 201)
	}
	post(map[string]any{"url": receiver + "&n=0", "events": events}).must(t, 409, "CONFLICT")
	r := post(map[string]any{"url": receiver + "&n=20", "events": events}).must(t, 400, "VALIDATION_ERROR")
	if !strings.Contains(r.str("error"), "20") {
		t.Errorf("21st: %s", r.raw)
	}
	if l := e.do(req{method: "GET", path: hooks, cred: e.keyA}).must(t, 200); l.num("total") != 20 {
		t.Errorf("%v registrations stored, want 20", l.num("total"))
	}
}
