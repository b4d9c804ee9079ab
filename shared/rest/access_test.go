package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
)

func TestSessionTokensChooseTheChannel(t *testing.T) {
	e := newEnv(t)
	tok := e.session(e.accountA)
	e.do(req{method: "GET", path: v1 + "/my-videos", cred: tok}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "GET", path: v1 + "/my-videos", cred: tok, header: map[string]string{"X-Channel-Id": "nope"}}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "GET", path: v1 + "/my-videos", cred: tok, header: map[string]string{"X-Channel-Id": e.channelB}}).must(t, 404, "NOT_FOUND")
	in2 := map[string]string{"X-Channel-Id": e.channelA2}
	e.do(req{method: "POST", path: v1 + "/notes", cred: tok, header: in2, body: map[string]any{"category": "insight", "content": "second channel"}}).must(t, 201)
	if n := e.do(req{method: "GET", path: v1 + "/notes", cred: tok, header: in2}).must(t, 200).num("total"); n != 1 {
		t.Errorf("channel 2 notes: %v", n)
	}
	if n := e.do(req{method: "GET", path: v1 + "/notes", cred: e.keyA}).must(t, 200).num("total"); n != 0 {
		t.Errorf("the key's channel 1 sees %v notes of channel 2", n)
	}
	// An API key ignores X-Channel-Id: it acts on its own channel only.
	if n := e.do(req{method: "GET", path: v1 + "/notes", cred: e.keyA, header: in2}).must(t, 200).num("total"); n != 0 {
		t.Errorf("X-Channel-Id moved an API key to another channel")
	}
}

func TestAccessExpired(t *testing.T) {
	e := newEnv(t)
	later := e.now.Load().AddDate(2, 0, 0)
	e.now.Store(&later)
	for _, path := range []string{"/niche-profile", "/my-videos", "/notes", "/series"} {
		e.do(req{method: "GET", path: v1 + path, cred: e.keyA}).must(t, 403, "ACCESS_EXPIRED")
	}
	e.do(req{method: "GET", path: v1 + "/health"}).must(t, 200)
	e.do(req{method: "GET", path: v1 + "/openapi.json"}).must(t, 200)
}

func TestKeyManagement(t *testing.T) {
	e := newEnv(t)
	tok := e.session(e.accountA)
	e.do(req{method: "GET", path: v1 + "/keys", cred: e.keyA}).must(t, 401, "UNAUTHORIZED")
	e.do(req{method: "POST", path: v1 + "/keys", cred: e.keyA, body: map[string]any{"channelId": e.channelA}}).must(t, 401, "UNAUTHORIZED")
	list := e.do(req{method: "GET", path: v1 + "/keys", cred: tok}).must(t, 200)
	if list.num("total") != 1 || strings.Contains(string(list.raw), e.keyA) {
		t.Fatalf("list: %s", list.raw)
	}
	created := e.do(req{method: "POST", path: v1 + "/keys", cred: tok, body: map[string]any{"channelId": e.channelA2, "name": "zapier"}}).must(t, 201)
	key := created.str("key")
	if !strings.HasPrefix(key, "sk-css-") || len(key) != 39 || !strings.HasPrefix(key, created.str("prefix")) {
		t.Fatalf("created: %s", created.raw)
	}
	e.do(req{method: "POST", path: v1 + "/notes", cred: key, body: map[string]any{"category": "general", "content": "via new key"}}).must(t, 201)
	if n := e.do(req{method: "GET", path: v1 + "/notes", cred: tok, header: map[string]string{"X-Channel-Id": e.channelA2}}).must(t, 200).num("total"); n != 1 {
		t.Errorf("the new key does not act on its channel")
	}
	e.do(req{method: "POST", path: v1 + "/keys", cred: tok, body: map[string]any{"channelId": e.channelB}}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "POST", path: v1 + "/keys", cred: tok, body: map[string]any{}}).must(t, 400, "VALIDATION_ERROR")
	for i := 0; i < 3; i++ {
		e.do(req{method: "POST", path: v1 + "/keys", cred: tok, body: map[string]any{"channelId": e.channelA}}).must(t, 201)
	}
	e.do(req{method: "POST", path: v1 + "/keys", cred: tok, body: map[string]any{"channelId": e.channelA}}).must(t, 400, "VALIDATION_ERROR")

	// Revocation answers 401 at once (decision 2), frees a place, and is not repeatable.
	e.do(req{method: "GET", path: v1 + "/notes", cred: key}).must(t, 200)
	e.do(req{method: "DELETE", path: v1 + "/keys/" + created.str("id"), cred: tok}).must(t, 204)
	e.do(req{method: "GET", path: v1 + "/notes", cred: key}).must(t, 401, "UNAUTHORIZED")
	e.do(req{method: "DELETE", path: v1 + "/keys/" + created.str("id"), cred: tok}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "POST", path: v1 + "/keys", cred: tok, body: map[string]any{"channelId": e.channelA}}).must(t, 201)
	// Another account cannot see or revoke these keys.
	tokB := e.session(e.accountB)
	if n := e.do(req{method: "GET", path: v1 + "/keys", cred: tokB}).must(t, 200).num("total"); n != 1 {
		t.Errorf("account B sees %v keys", n)
	}
	first := e.do(req{method: "GET", path: v1 + "/keys", cred: tok}).must(t, 200).list("keys")[0].(map[string]any)["id"].(string)
	e.do(req{method: "DELETE", path: v1 + "/keys/" + first, cred: tokB}).must(t, 404, "NOT_FOUND")
}

func TestConcurrentKeyCreationStopsAtFive(t *testing.T) {
	e := newEnv(t)
	tok := e.session(e.accountA) // account A has one live key already
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do(req{method: "POST", path: v1 + "/keys", cred: tok, body: map[string]any{"channelId": e.channelA}})
			mu.Lock()
			defer mu.Unlock()
			if r.status == 201 {
				created++
			} else if r.status != 400 {
				t.Errorf("status %d: %s", r.status, r.raw)
			}
		}()
	}
	wg.Wait()
	if n := e.do(req{method: "GET", path: v1 + "/keys", cred: tok}).must(t, 200).num("total"); created != 4 || n != 5 {
		t.Errorf("created %d (want 4), live %v (want 5)", created, n)
	}
}

// TestTenantIsolation walks every id-taking operation with another channel's ids and every list with
// another channel's key.
func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	a := func(method, path string, body any) resp {
		return e.do(req{method: method, path: v1 + path, cred: e.keyA, body: body})
	}
	video := a("POST", "/my-videos", map[string]any{"title": "A's", "contentType": "Long", "formulaType": "f"}).must(t, 200).str("id")
	series := a("POST", "/series", map[string]any{"name": "A's", "description": "", "scriptFormula": ""}).must(t, 201).str("id")
	note := a("POST", "/notes", map[string]any{"category": "general", "content": "A's secret"}).must(t, 201).str("id")
	idea := e.seedIdea(e.channelA, "A's idea", "Long")
	a("POST", "/schedule", map[string]any{"dayOfWeek": 1, "slotType": "publish", "contentType": "Long", "publishTime": "09:00", "assignedVideoId": video}).must(t, 200)
	a("PUT", "/niche-profile", map[string]any{"broadNiche": "A's niche"}).must(t, 200)

	b := func(method, path string, body any) resp {
		return e.do(req{method: method, path: v1 + path, cred: e.keyB, body: body})
	}
	b("POST", "/my-videos/status", map[string]any{"videoId": video, "status": "filmed"}).must(t, 404, "NOT_FOUND")
	b("POST", "/my-videos", map[string]any{"ideaId": idea}).must(t, 404, "NOT_FOUND")
	b("POST", "/my-videos", map[string]any{"title": "x", "contentType": "Long", "formulaType": "f", "seriesId": series}).must(t, 404, "NOT_FOUND")
	b("DELETE", "/video-ideas/"+idea, nil).must(t, 404, "NOT_FOUND")
	b("PATCH", "/series/"+series, map[string]any{"name": "stolen"}).must(t, 404, "NOT_FOUND")
	b("DELETE", "/series/"+series, nil).must(t, 404, "NOT_FOUND")
	b("DELETE", "/notes/"+note, nil).must(t, 404, "NOT_FOUND")
	b("POST", "/schedule", map[string]any{"dayOfWeek": 1, "slotType": "publish", "contentType": "Long", "publishTime": "09:00", "assignedVideoId": video}).must(t, 404, "NOT_FOUND")
	b("DELETE", "/schedule?dayOfWeek=1&slotType=publish&publishTime=09:00", nil).must(t, 404, "NOT_FOUND")
	e.do(req{method: "GET", path: "/api/my-videos?projectId=" + e.channelA, cred: e.keyB}).must(t, 404, "NOT_FOUND")

	for _, path := range []string{"/my-videos", "/video-ideas", "/series", "/notes", "/history", "/schedule", "/niche-profile", "/research-insights"} {
		r := b("GET", path, nil).must(t, 200)
		for _, secret := range []string{video, series, note, idea, "A's"} {
			if strings.Contains(string(r.raw), secret) {
				t.Errorf("B's GET %s shows A's data %q: %s", path, secret, clip(r.raw))
			}
		}
	}
	// And A's data is all still there.
	if a("GET", "/notes", nil).must(t, 200).num("total") != 1 || a("GET", "/series", nil).must(t, 200).num("total") != 1 {
		t.Error("A's data changed")
	}
}

// TestStoreCallsPerRequest counts table calls (authentication is cached after the first request): every
// CRUD request makes at most 3, the rate lease included.
func TestStoreCallsPerRequest(t *testing.T) {
	e := newEnv(t)
	a := func(method, path string, body any) resp {
		return e.do(req{method: method, path: v1 + path, cred: e.keyA, body: body})
	}
	a("GET", "/health", nil)
	a("GET", "/notes", nil) // warms the credential cache
	series := a("POST", "/series", map[string]any{"name": "S", "description": "", "scriptFormula": ""}).must(t, 201).str("id")
	video := a("POST", "/my-videos", map[string]any{"title": "V", "contentType": "Long", "formulaType": "f"}).must(t, 200).str("id")
	for i := 0; i < 100; i++ {
		e.seedIdea(e.channelA, fmt.Sprint("idea ", i), "Long")
	}
	idea := e.seedIdea(e.channelA, "to commit", "Short")
	idea2 := e.seedIdea(e.channelA, "to delete", "Short")
	note := a("POST", "/notes", map[string]any{"category": "general", "content": "n"}).must(t, 201).str("id")
	cases := []struct {
		method, path string
		body         any
	}{
		{"GET", "/niche-profile", nil},
		{"PUT", "/niche-profile", map[string]any{"broadNiche": "x"}},
		{"GET", "/research-insights", nil},
		{"GET", "/history?limit=5", nil},
		{"GET", "/my-videos", nil},
		{"POST", "/my-videos", map[string]any{"title": "V2", "contentType": "Long", "formulaType": "f"}},
		{"POST", "/my-videos", map[string]any{"title": "V3", "contentType": "Long", "formulaType": "f", "seriesId": series}},
		{"POST", "/my-videos", map[string]any{"ideaId": idea, "seriesId": series}},
		{"POST", "/my-videos/status", map[string]any{"videoId": video, "status": "edited"}},
		{"GET", "/video-ideas?limit=100", nil},
		{"DELETE", "/video-ideas/" + idea2, nil},
		{"GET", "/schedule", nil},
		{"POST", "/schedule", map[string]any{"dayOfWeek": 1, "slotType": "publish", "contentType": "Long", "publishTime": "09:00", "assignedVideoId": video}},
		{"GET", "/schedule", nil},
		{"DELETE", "/schedule?dayOfWeek=1&slotType=publish&publishTime=09:00", nil},
		{"GET", "/series", nil},
		{"POST", "/series", map[string]any{"name": "S2", "description": "", "scriptFormula": ""}},
		{"PATCH", "/series/" + series, map[string]any{"name": "S1"}},
		{"DELETE", "/series/" + series, nil},
		{"GET", "/notes", nil},
		{"POST", "/notes", map[string]any{"category": "general", "content": "m"}},
		{"DELETE", "/notes/" + note, nil},
	}
	for _, c := range cases {
		before := e.table.calls.Load()
		r := a(c.method, c.path, c.body)
		if r.status >= 300 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.status, r.raw)
		}
		calls := e.table.calls.Load() - before
		t.Logf("%-6s %-60s %d table calls", c.method, c.path, calls)
		if calls > 3 {
			t.Errorf("%s %s made %d table calls, want at most 3", c.method, c.path, calls)
		}
	}
}

// TestServedDocumentIsTheContract: the document served is the embedded one, and every operation of it
// has a handler (no operation this issue owns answers 501).
func TestServedDocumentIsTheContract(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", path: v1 + "/openapi.json"}).must(t, 200)
	if string(r.raw) == "" || !strings.Contains(string(r.raw), `"1.0.0"`) {
		t.Fatalf("document: %s", clip(r.raw))
	}
	c, _ := contract.Load()
	later := map[string]bool{"Generation": true, "Intelligence": true, "Webhooks": true}
	for _, op := range c.Operations {
		if later[op.Tag] || op.ID == "scoreNiche" || op.ID == "generateLegacy" {
			continue
		}
		body := map[string]any{}
		rr := e.do(req{method: op.Method, path: samplePath(op) + "?projectId=" + e.channelA + "&dayOfWeek=1&slotType=edit",
			cred: credFor(e, op), body: bodyIf(op, body)})
		if rr.status == http.StatusNotImplemented {
			t.Errorf("%s answers 501", op.ID)
		}
	}
}

func credFor(e *env, op *contract.Operation) string {
	if op.Tag == "Keys" {
		return e.session(e.accountA)
	}
	return e.keyA
}

func bodyIf(op *contract.Operation, body any) any {
	if op.HasBody {
		return body
	}
	return nil
}
