package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/videos"
)

const v1 = "/api/v1"

// samplePath fills an operation's path parameters with a well-formed id.
func samplePath(op *contract.Operation) string {
	return strings.ReplaceAll(op.Path, "{id}", "0193f3a0-0000-7000-8000-000000000001")
}

func TestEveryOperationNeedsCredentials(t *testing.T) {
	e := newEnv(t)
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range c.Operations {
		r := e.do(req{method: op.Method, path: samplePath(op)})
		if op.Public {
			if op.ID == "completeYouTubeConnection" || op.ID == "beginYouTubeConnection" {
				// No credential asked: this deployment has no OAuth client, which it says (503).
				r.must(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
				continue
			}
			r.must(t, http.StatusOK)
			continue
		}
		if r.status != http.StatusUnauthorized || r.json["code"] != "UNAUTHORIZED" {
			t.Errorf("%s %s without credentials: %d %s", op.Method, op.Path, r.status, clip(r.raw))
		}
		if r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without WWW-Authenticate", op.Method, op.Path)
		}
	}
}

func TestBadCredentials(t *testing.T) {
	e := newEnv(t)
	for name, header := range map[string]string{
		"malformed key":         "Bearer sk-css-xyz",
		"unknown key":           "Bearer sk-css-0123456789abcdef0123456789abcdef",
		"upper-case hex":        "Bearer " + strings.ToUpper(e.keyA),
		"wrong scheme":          "Basic " + e.keyA,
		"no credential":         "Bearer ",
		"bad token":             "Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2ln",
		"token of wrong secret": "Bearer " + mintWith(t, "another-secret-0123456789abcdef0123", e.accountA),
	} {
		r := e.do(req{method: "GET", path: v1 + "/my-videos", header: map[string]string{"Authorization": header}})
		if r.status != http.StatusUnauthorized || r.json["code"] != "UNAUTHORIZED" {
			t.Errorf("%s: %d %s", name, r.status, clip(r.raw))
		}
		if strings.Contains(string(r.raw), e.keyA) {
			t.Errorf("%s: the credential is echoed", name)
		}
	}
}

func TestAuthBeforeRouting(t *testing.T) {
	e := newEnv(t)
	e.do(req{method: "GET", path: "/api/v1/nope"}).must(t, 401, "UNAUTHORIZED")
	e.do(req{method: "GET", path: "/api/v1/nope", cred: e.keyA}).must(t, 404, "NOT_FOUND")
	r := e.do(req{method: "DELETE", path: v1 + "/my-videos", cred: e.keyA}).must(t, 405, "VALIDATION_ERROR")
	if r.header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	e.do(req{method: "GET", path: v1 + "/health"}).must(t, 200)
	doc := e.do(req{method: "GET", path: v1 + "/openapi.json"}).must(t, 200)
	if doc.json["openapi"] == nil || doc.json["paths"] == nil {
		t.Errorf("openapi.json: %s", clip(doc.raw))
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", path: v1 + "/health"}).must(t, 200)
	services, _ := r.json["services"].(map[string]any)
	if services["database"] != "ok" || services["api"] != "ok" || r.str("version") != "test" {
		t.Errorf("health: %s", r.raw)
	}
}

func TestMalformedRequests(t *testing.T) {
	e := newEnv(t)
	note := v1 + "/notes"
	e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general",`}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "POST", path: note, cred: e.keyA, body: `[]`}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general","content":"x"} {}`}).must(t, 400, "VALIDATION_ERROR")
	// Only application/json (decision 8), with parameters such as charset; any other type, another +json
	// one too, is 415 and stores nothing.
	for _, ct := range []string{"application/vnd.evil+json", "text/plain", "application/problem+json", "application/json-seq", "json"} {
		r := e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general","content":"x"}`,
			header: map[string]string{"Content-Type": ct}}).must(t, 415, "VALIDATION_ERROR")
		if !strings.Contains(r.str("error"), "Content-Type") {
			t.Errorf("Content-Type %s: the message does not name the header: %s", ct, r.raw)
		}
	}
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON;charset=UTF-8"} {
		e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general","content":"typed"}`,
			header: map[string]string{"Content-Type": ct}}).must(t, 201)
	}
	big := `{"category":"general","content":"` + repeat("a", 1<<20) + `"}`
	e.do(req{method: "POST", path: note, cred: e.keyA, body: big}).must(t, 413, "VALIDATION_ERROR")
	e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general"}`}).must(t, 400, "VALIDATION_ERROR")
	r := e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"diary","content":"x"}`}).must(t, 400, "VALIDATION_ERROR")
	if !strings.Contains(r.str("error"), "category") {
		t.Errorf("message does not name the field: %s", r.raw)
	}
	e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general","content":7}`}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "DELETE", path: note + "/not-a-uuid", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
	// Unknown fields are ignored (decision 8).
	e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general","content":"x","mood":"happy"}`}).must(t, 201)
	// Nothing was stored by the rejected requests: the notes are the two sent with a charset and this one.
	if n := e.do(req{method: "GET", path: note, cred: e.keyA}).must(t, 200).num("total"); n != 3 {
		t.Errorf("%v notes stored, want 3", n)
	}
}

// A path that is not in its clean form (dot segments, "//") names no operation: 404 in the Error shape
// (401 without a credential, as any path), never net/http's redirect to the cleaned path with an HTML
// body (issue 32 item 7: curl --path-as-is $API/generations/../../keys).
func TestUncleanPathsAreNotFound(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{v1 + "/generations/../../keys", v1 + "/generations/../keys", v1 + "/notes/..",
		v1 + "/./notes", "/api//v1/notes", v1 + "/notes/%2e%2e/notes", v1 + "/notes/."} {
		for _, method := range []string{"GET", "POST"} {
			r := e.do(req{method: method, path: path, cred: e.keyA}).must(t, 404, "NOT_FOUND")
			if loc := r.header.Get("Location"); loc != "" {
				t.Errorf("%s %s: redirected to %s", method, path, loc)
			}
			e.do(req{method: method, path: path}).must(t, 401, "UNAUTHORIZED")
		}
	}
}

func TestBoundsAtTheirEdges(t *testing.T) {
	e := newEnv(t)
	post := func(path string, body any) resp {
		return e.do(req{method: "POST", path: v1 + path, cred: e.keyA, body: body})
	}
	video := func(title string) map[string]any {
		return map[string]any{"title": title, "contentType": "Long", "formulaType": "listicle"}
	}
	post("/my-videos", video(repeat("é", 200))).must(t, 200)
	post("/my-videos", video(repeat("é", 201))).must(t, 400, "VALIDATION_ERROR")
	post("/my-videos", video("")).must(t, 400, "VALIDATION_ERROR")
	post("/notes", map[string]any{"category": "style", "content": repeat("n", 2000)}).must(t, 201)
	post("/notes", map[string]any{"category": "style", "content": repeat("n", 2001)}).must(t, 400, "VALIDATION_ERROR")
	post("/notes", map[string]any{"category": "style", "content": ""}).must(t, 400, "VALIDATION_ERROR")
	series := func(name, desc, formula string) map[string]any {
		return map[string]any{"name": name, "description": desc, "scriptFormula": formula}
	}
	post("/series", series(repeat("s", 200), repeat("d", 2000), repeat("f", 5000))).must(t, 201)
	post("/series", series(repeat("s", 201), "d", "f")).must(t, 400, "VALIDATION_ERROR")
	post("/series", series("", "d", "f")).must(t, 400, "VALIDATION_ERROR")
	post("/series", series("s", repeat("d", 2001), "f")).must(t, 400, "VALIDATION_ERROR")
	post("/series", series("s", "d", repeat("f", 5001))).must(t, 400, "VALIDATION_ERROR")
	for _, q := range []string{"limit=1", "limit=100", "offset=0", "limit=20&offset=5"} {
		e.do(req{method: "GET", path: v1 + "/video-ideas?" + q, cred: e.keyA}).must(t, 200)
		e.do(req{method: "GET", path: v1 + "/history?" + q, cred: e.keyA}).must(t, 200)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=-1", "limit=abc", "offset=-1", "limit=1.5"} {
		e.do(req{method: "GET", path: v1 + "/video-ideas?" + q, cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
		e.do(req{method: "GET", path: v1 + "/history?" + q, cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
	}
	e.do(req{method: "GET", path: v1 + "/history?tool=poems", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "GET", path: v1 + "/my-videos?status=drafted", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "GET", path: v1 + "/my-videos?contentType=Reel", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
	profile := func(kw ...string) map[string]any { return map[string]any{"keywords": kw} }
	put := func(body any) resp {
		return e.do(req{method: "PUT", path: v1 + "/niche-profile", cred: e.keyA, body: body})
	}
	put(profile("a", "b", "c", "d")).must(t, 200)
	put(profile("a", "b", "c")).must(t, 400, "VALIDATION_ERROR")
	put(profile("a", "b", "c", "d", "e")).must(t, 400, "VALIDATION_ERROR")
	put(map[string]any{"contentLanguage": "klingon"}).must(t, 400, "VALIDATION_ERROR")
	slot := func(day any, tm string) map[string]any {
		return map[string]any{"dayOfWeek": day, "slotType": "publish", "contentType": "Short", "publishTime": tm}
	}
	post("/schedule", slot(0, "00:00")).must(t, 200)
	post("/schedule", slot(6, "23:59")).must(t, 200)
	post("/schedule", slot(-1, "10:00")).must(t, 400, "VALIDATION_ERROR")
	post("/schedule", slot(7, "10:00")).must(t, 400, "VALIDATION_ERROR")
	post("/schedule", slot(1.5, "10:00")).must(t, 400, "VALIDATION_ERROR")
	post("/schedule", slot(1, "24:00")).must(t, 400, "VALIDATION_ERROR")
	post("/schedule", slot(1, "9:00")).must(t, 400, "VALIDATION_ERROR")
	post("/schedule", map[string]any{"dayOfWeek": 1, "slotType": "nap"}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "GET", path: v1 + "/schedule?weekStart=2026-02-30", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
}

func TestNotesLimit(t *testing.T) {
	e := newEnv(t)
	var last string
	for i := 0; i < 500; i++ {
		r := e.do(req{method: "POST", path: v1 + "/notes", cred: e.keyA, body: map[string]any{"category": "general", "content": fmt.Sprint(i)}})
		r.must(t, 201)
		last = r.str("id")
	}
	r := e.do(req{method: "POST", path: v1 + "/notes", cred: e.keyA, body: map[string]any{"category": "general", "content": "501"}}).must(t, 400, "VALIDATION_ERROR")
	if !strings.Contains(r.str("error"), "500") {
		t.Errorf("message: %s", r.raw)
	}
	// Another channel is not affected, and a deletion frees a place.
	e.do(req{method: "POST", path: v1 + "/notes", cred: e.keyB, body: map[string]any{"category": "general", "content": "b"}}).must(t, 201)
	e.do(req{method: "DELETE", path: v1 + "/notes/" + last, cred: e.keyA}).must(t, 204)
	e.do(req{method: "DELETE", path: v1 + "/notes/" + last, cred: e.keyA}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "POST", path: v1 + "/notes", cred: e.keyA, body: map[string]any{"category": "general", "content": "again"}}).must(t, 201)
	list := e.do(req{method: "GET", path: v1 + "/notes?category=general", cred: e.keyA}).must(t, 200)
	if list.num("total") != 500 || list.list("notes")[0].(map[string]any)["content"] != "again" {
		t.Errorf("total %v, first %v", list.num("total"), list.list("notes")[0])
	}
	if n := e.do(req{method: "GET", path: v1 + "/notes?category=style", cred: e.keyA}).must(t, 200).num("total"); n != 0 {
		t.Errorf("category filter: %v", n)
	}
}

func TestConcurrentSeriesStopAtTen(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	statuses := make([]int, 30)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do(req{method: "POST", path: v1 + "/series", cred: e.keyA,
				body: map[string]any{"name": fmt.Sprint("s", i), "description": "", "scriptFormula": ""}})
			statuses[i] = r.status
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 400:
		default:
			t.Errorf("unexpected status %d", s)
		}
	}
	list := e.do(req{method: "GET", path: v1 + "/series", cred: e.keyA}).must(t, 200)
	if created != 10 || list.num("total") != 10 {
		t.Fatalf("created %d, listed %v; want 10", created, list.num("total"))
	}
}

func TestSeriesLifecycle(t *testing.T) {
	e := newEnv(t)
	s := e.do(req{method: "POST", path: v1 + "/series", cred: e.keyA,
		body: map[string]any{"name": "Tips", "description": "d", "scriptFormula": "hook, tip, cta"}}).must(t, 201)
	id := s.str("id")
	if s.json["isActive"] != true || s.num("videoCount") != 0 {
		t.Errorf("defaults: %s", s.raw)
	}
	p := e.do(req{method: "PATCH", path: v1 + "/series/" + id, cred: e.keyA, body: map[string]any{"isActive": false, "name": "Tricks"}}).must(t, 200)
	if p.json["isActive"] != false || p.str("name") != "Tricks" || p.str("scriptFormula") != "hook, tip, cta" {
		t.Errorf("patch: %s", p.raw)
	}
	e.do(req{method: "PATCH", path: v1 + "/series/" + id, cred: e.keyA, body: map[string]any{}}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "PATCH", path: v1 + "/series/" + id, cred: e.keyA, body: map[string]any{"name": repeat("x", 201)}}).must(t, 400, "VALIDATION_ERROR")
	for i := 0; i < 2; i++ {
		e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA,
			body: map[string]any{"title": "t", "contentType": "Short", "formulaType": "f", "seriesId": id}}).must(t, 200)
	}
	list := e.do(req{method: "GET", path: v1 + "/series", cred: e.keyA}).must(t, 200)
	if got := list.list("series")[0].(map[string]any)["videoCount"]; got != 2.0 {
		t.Errorf("videoCount %v, want 2", got)
	}
	e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA,
		body: map[string]any{"title": "t", "contentType": "Short", "formulaType": "f", "seriesId": e.store.NewID()}}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "DELETE", path: v1 + "/series/" + id, cred: e.keyA}).must(t, 204)
	e.do(req{method: "DELETE", path: v1 + "/series/" + id, cred: e.keyA}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "PATCH", path: v1 + "/series/" + id, cred: e.keyA, body: map[string]any{"name": "x"}}).must(t, 404, "NOT_FOUND")
}

func (e *env) seedIdea(channel, title, contentType string) string {
	e.t.Helper()
	id := e.store.NewID()
	views := 1234.0
	inspired := "https://example.com/watch?v=1"
	if err := e.store.PutIdea(context.Background(), channel, videos.Idea{
		ID: id, Title: title, ContentType: contentType, FormulaType: "story", InspiredBy: &inspired,
		ViewCount: &views, CreatedAt: e.now.Load().UTC(),
	}); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func TestVideoPipeline(t *testing.T) {
	e := newEnv(t)
	v := e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA,
		body: map[string]any{"title": "My first", "contentType": "Long", "formulaType": "how-to"}}).must(t, 200)
	id := v.str("id")
	if v.str("status") != "planned" || v.json["seriesId"] != nil {
		t.Errorf("new video: %s", v.raw)
	}
	status := func(s string) resp {
		return e.do(req{method: "POST", path: v1 + "/my-videos/status", cred: e.keyA, body: map[string]any{"videoId": id, "status": s}})
	}
	status("published").must(t, 200) // any status from any status (decision 11)
	status("scripted").must(t, 200)
	r := status("scripted").must(t, 200) // no-op
	hist, _ := r.json["statusHistory"].([]any)
	if len(hist) != 3 {
		t.Errorf("history %v, want planned, published, scripted", hist)
	}
	status("drafted").must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "POST", path: v1 + "/my-videos/status", cred: e.keyA,
		body: map[string]any{"videoId": e.store.NewID(), "status": "filmed"}}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "POST", path: v1 + "/my-videos/status", cred: e.keyA, body: map[string]any{"status": "filmed"}}).must(t, 400, "VALIDATION_ERROR")

	idea := e.seedIdea(e.channelA, "From research", "Short")
	e.seedIdea(e.channelA, "Another", "Long")
	ideas := e.do(req{method: "GET", path: v1 + "/video-ideas?contentType=Short", cred: e.keyA}).must(t, 200)
	if ideas.num("total") != 1 {
		t.Errorf("ideas filter: %s", ideas.raw)
	}
	c := e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA, body: map[string]any{"ideaId": idea}}).must(t, 200)
	if c.str("title") != "From research" || c.str("contentType") != "Short" || c.str("status") != "planned" {
		t.Errorf("committed: %s", c.raw)
	}
	e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA, body: map[string]any{"ideaId": idea}}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "DELETE", path: v1 + "/video-ideas/" + idea, cred: e.keyA}).must(t, 404, "NOT_FOUND")
	if n := e.do(req{method: "GET", path: v1 + "/video-ideas", cred: e.keyA}).must(t, 200).num("total"); n != 1 {
		t.Errorf("ideas left: %v", n)
	}
	e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA, body: map[string]any{"formulaType": "x"}}).must(t, 400, "VALIDATION_ERROR")

	list := e.do(req{method: "GET", path: v1 + "/my-videos", cred: e.keyA}).must(t, 200)
	if list.num("total") != 2 || list.list("videos")[0].(map[string]any)["id"] != c.str("id") {
		t.Errorf("list (newest first): %s", clip(list.raw))
	}
	if n := e.do(req{method: "GET", path: v1 + "/my-videos?status=scripted&contentType=Long", cred: e.keyA}).must(t, 200).num("total"); n != 1 {
		t.Errorf("filters: %v", n)
	}
	legacy := e.do(req{method: "GET", path: "/api/my-videos?projectId=" + e.channelA, cred: e.keyA}).must(t, 200)
	first, _ := legacy.list("videos")[0].(map[string]any)
	if first["video_type"] == nil || first["formula_type"] == nil || first["created_at"] == nil {
		t.Errorf("legacy shape: %s", clip(legacy.raw))
	}
	e.do(req{method: "GET", path: "/api/my-videos?projectId=" + e.channelB, cred: e.keyA}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "GET", path: "/api/my-videos", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
}

func TestCommitIdeaConcurrently(t *testing.T) {
	e := newEnv(t)
	idea := e.seedIdea(e.channelA, "Only once", "Long")
	var wg sync.WaitGroup
	statuses := make([]int, 10)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA, body: map[string]any{"ideaId": idea}}).status
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		if s == 200 {
			ok++
		} else if s != 404 {
			t.Errorf("status %d", s)
		}
	}
	if n := e.do(req{method: "GET", path: v1 + "/my-videos", cred: e.keyA}).must(t, 200).num("total"); ok != 1 || n != 1 {
		t.Errorf("%d commits succeeded, %v videos; want 1 and 1", ok, n)
	}
}

func TestSchedule(t *testing.T) {
	e := newEnv(t)
	post := func(body map[string]any) resp {
		return e.do(req{method: "POST", path: v1 + "/schedule", cred: e.keyA, body: body})
	}
	post(map[string]any{"dayOfWeek": 2, "slotType": "publish", "contentType": "Long"}).must(t, 400, "VALIDATION_ERROR")
	post(map[string]any{"dayOfWeek": 2, "slotType": "publish", "publishTime": "10:00"}).must(t, 400, "VALIDATION_ERROR")
	post(map[string]any{"dayOfWeek": 2, "slotType": "rest", "publishTime": "10:00"}).must(t, 400, "VALIDATION_ERROR")
	post(map[string]any{"dayOfWeek": 2, "slotType": "edit"}).must(t, 200)
	post(map[string]any{"dayOfWeek": 2, "slotType": "edit"}).must(t, 200) // same identity: updated, not added
	post(map[string]any{"dayOfWeek": 3, "slotType": "publish", "contentType": "Long", "publishTime": "15:00"}).must(t, 200)
	post(map[string]any{"dayOfWeek": 3, "slotType": "publish", "contentType": "Short", "publishTime": "15:00"}).must(t, 200)
	v := e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA,
		body: map[string]any{"title": "Scheduled", "contentType": "Short", "formulaType": "f"}}).must(t, 200)
	a := post(map[string]any{"dayOfWeek": 3, "slotType": "publish", "contentType": "Short", "publishTime": "15:00",
		"assignedVideoId": v.str("id"), "weekStart": "2026-11-25"}).must(t, 200)
	if a.str("assignedVideoId") != v.str("id") {
		t.Errorf("assignment: %s", a.raw)
	}
	post(map[string]any{"dayOfWeek": 3, "slotType": "publish", "contentType": "Short", "publishTime": "15:00",
		"assignedVideoId": e.store.NewID(), "weekStart": "2026-11-25"}).must(t, 404, "NOT_FOUND")
	post(map[string]any{"dayOfWeek": 2, "slotType": "edit", "assignedVideoId": v.str("id")}).must(t, 400, "VALIDATION_ERROR")

	week := e.do(req{method: "GET", path: v1 + "/schedule?weekStart=2026-11-26", cred: e.keyA}).must(t, 200)
	if week.str("weekStart") != "2026-11-22" || len(week.list("slots")) != 2 || len(week.list("weeklyVideos")) != 1 {
		t.Fatalf("week of the 26th: %s", week.raw)
	}
	current := e.do(req{method: "GET", path: v1 + "/schedule", cred: e.keyA}).must(t, 200)
	if current.str("weekStart") != "2026-11-15" || len(current.list("weeklyVideos")) != 0 {
		t.Errorf("current week (the clock says Wed 2026-11-18): %s", current.raw)
	}
	post(map[string]any{"dayOfWeek": 3, "slotType": "publish", "contentType": "Short", "publishTime": "15:00",
		"assignedVideoId": nil, "weekStart": "2026-11-22"}).must(t, 200)
	if n := len(e.do(req{method: "GET", path: v1 + "/schedule?weekStart=2026-11-22", cred: e.keyA}).must(t, 200).list("weeklyVideos")); n != 0 {
		t.Errorf("after clearing, %d weekly videos", n)
	}
	e.do(req{method: "DELETE", path: v1 + "/schedule?dayOfWeek=3&slotType=publish&publishTime=15:00", cred: e.keyA}).must(t, 204)
	e.do(req{method: "DELETE", path: v1 + "/schedule?dayOfWeek=3&slotType=publish&publishTime=15:00", cred: e.keyA}).must(t, 404, "NOT_FOUND")
	e.do(req{method: "DELETE", path: v1 + "/schedule?dayOfWeek=2&slotType=edit", cred: e.keyA}).must(t, 204)
	e.do(req{method: "DELETE", path: v1 + "/schedule?slotType=edit", cred: e.keyA}).must(t, 400, "VALIDATION_ERROR")
	if n := len(e.do(req{method: "GET", path: v1 + "/schedule", cred: e.keyA}).must(t, 200).list("slots")); n != 0 {
		t.Errorf("%d slots left", n)
	}
}

func TestProfileAndInsights(t *testing.T) {
	e := newEnv(t)
	p := e.do(req{method: "GET", path: v1 + "/niche-profile", cred: e.keyA}).must(t, 200)
	if p.str("contentLanguage") != "english" {
		t.Errorf("default profile: %s", p.raw)
	}
	e.do(req{method: "PUT", path: v1 + "/niche-profile", cred: e.keyA,
		body: map[string]any{"broadNiche": "cooking", "contentLanguage": "spanish", "keywords": []string{"a", "b", "c", "d"}}}).must(t, 200)
	e.do(req{method: "PUT", path: v1 + "/niche-profile", cred: e.keyA, body: map[string]any{"focusedNiche": "vegan"}}).must(t, 200)
	p = e.do(req{method: "GET", path: v1 + "/niche-profile", cred: e.keyA}).must(t, 200)
	if p.str("focusedNiche") != "vegan" || p.json["broadNiche"] != nil || p.str("contentLanguage") != "english" {
		t.Errorf("PUT is a full replace: %s", p.raw)
	}
	if r := e.do(req{method: "GET", path: v1 + "/research-insights", cred: e.keyA}).must(t, 200); len(r.json) != 1 || r.json["derivedMetrics"] == nil {
		t.Errorf("insights before research (only derivedMetrics): %s", r.raw)
	}
}

func TestHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	base := *e.now.Load()
	for i, run := range []struct{ tool, input, output string }{
		{"titles", `{"title":"Sourdough Basics"}`, `{"titles":[{"title":"Bread 101"}]}`},
		{"hooks", `{"title":"Knife skills"}`, `{"hooks":[{"approach":"Curiosity"}]}`},
		{"titles", `{"title":"Pasta"}`, `{"titles":[{"title":"The SOURDOUGH secret"}]}`},
	} {
		tokens := 10
		model := "test-model"
		if err := e.store.CreateRun(ctx, e.channelA, generation.ToolRun{
			ID: e.store.NewID(), ToolName: run.tool, Status: generation.Success,
			Input: json.RawMessage(run.input), Output: json.RawMessage(run.output),
			InputTokens: &tokens, OutputTokens: &tokens, Model: &model, GeneratedAt: base.Add(time.Duration(i) * time.Minute),
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // uuidv7 ids order by millisecond
	}
	all := e.do(req{method: "GET", path: v1 + "/history", cred: e.keyA}).must(t, 200)
	h := all.list("history")
	if all.num("total") != 3 || h[0].(map[string]any)["toolName"] != "titles" || h[1].(map[string]any)["toolName"] != "hooks" {
		t.Errorf("history newest first: %s", clip(all.raw))
	}
	if n := e.do(req{method: "GET", path: v1 + "/history?tool=titles", cred: e.keyA}).must(t, 200).num("total"); n != 2 {
		t.Errorf("tool filter: %v", n)
	}
	if n := e.do(req{method: "GET", path: v1 + "/history?tool=all&search=sourDOUGH", cred: e.keyA}).must(t, 200).num("total"); n != 2 {
		t.Errorf("search over input and output, case-insensitive: %v", n)
	}
	if n := e.do(req{method: "GET", path: v1 + "/history?search=HOOKS", cred: e.keyA}).must(t, 200).num("total"); n != 1 {
		t.Errorf("search over the tool name: %v", n)
	}
	page := e.do(req{method: "GET", path: v1 + "/history?limit=1&offset=2", cred: e.keyA}).must(t, 200)
	if page.num("total") != 3 || len(page.list("history")) != 1 {
		t.Errorf("paging: %s", clip(page.raw))
	}
	if n := e.do(req{method: "GET", path: v1 + "/history", cred: e.keyB}).must(t, 200).num("total"); n != 0 {
		t.Errorf("another channel sees %v runs", n)
	}
}

func TestNotImplementedOperations(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "POST", path: v1 + "/generate/titles", cred: e.keyA, body: map[string]any{"title": "t", "type": "question"}})
	r.must(t, 501, "NOT_IMPLEMENTED")
	// Validation still comes first.
	e.do(req{method: "POST", path: v1 + "/generate/titles", cred: e.keyA, body: map[string]any{"type": "question"}}).must(t, 400, "VALIDATION_ERROR")
}

func mintWith(t *testing.T, secret, account string) string {
	t.Helper()
	tok, err := auth.MintHS256(secret, account, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestBadInputChangesNothing: each input that a lenient server would take answers 400 VALIDATION_ERROR
// whose message names the field, and nothing is stored.
func TestBadInputChangesNothing(t *testing.T) {
	e := newEnv(t)
	note := v1 + "/notes"
	json := map[string]string{"Content-Type": "application/json"}
	with := func(k, v string) map[string]string {
		return map[string]string{"Content-Type": "application/json", k: v}
	}
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		header map[string]string
		field  string
	}{
		{"invalid UTF-8", "POST", note, "{\"category\":\"general\",\"content\":\"a\xffb\"}", json, "content"},
		{"lone surrogate escape", "POST", note, `{"category":"general","content":"a\ud800"}`, json, "content"},
		{"duplicate member hiding a bad enum", "POST", note, `{"category":"diary","category":"general","content":"x"}`, json, "category"},
		{"charset other than utf-8", "POST", note, `{"category":"general","content":"x"}`,
			map[string]string{"Content-Type": "application/json; charset=iso-8859-1"}, "Content-Type"},
		{"content encoding", "POST", note, `{"category":"general","content":"x"}`, with("Content-Encoding", "gzip"), "Content-Encoding"},
		{"integer with a fraction", "POST", v1 + "/schedule", `{"dayOfWeek":1.0,"slotType":"publish"}`, json, "dayOfWeek"},
		{"integer with an exponent", "POST", v1 + "/schedule", `{"dayOfWeek":1e0,"slotType":"publish"}`, json, "dayOfWeek"},
		{"date before the range", "GET", v1 + "/schedule?weekStart=0000-01-01", "", nil, "weekStart"},
		{"date after the range", "GET", v1 + "/schedule?weekStart=9999-12-31", "", nil, "weekStart"},
		{"empty limit", "GET", v1 + "/video-ideas?limit=", "", nil, "limit"},
		{"empty offset", "GET", v1 + "/history?offset=", "", nil, "offset"},
		{"offset past 64 bits", "GET", v1 + "/video-ideas?offset=99999999999999999999", "", nil, "offset"},
		{"offset over its maximum", "GET", v1 + "/video-ideas?offset=100001", "", nil, "offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(req{method: tt.method, path: tt.path, cred: e.keyA, body: tt.body, header: tt.header}).must(t, 400, "VALIDATION_ERROR")
			if msg := r.str("error"); !strings.HasPrefix(msg, tt.field+":") {
				t.Errorf("message %q does not start with the field %s", msg, tt.field)
			}
		})
	}
	if n := e.do(req{method: "GET", path: note, cred: e.keyA}).must(t, 200).num("total"); n != 0 {
		t.Errorf("%v notes stored, want 0", n)
	}
	if n := len(e.do(req{method: "GET", path: v1 + "/schedule", cred: e.keyA}).must(t, 200).json["slots"].([]any)); n != 0 {
		t.Errorf("%d slots stored, want 0", n)
	}
	// At the edges: the largest offset and the last date of the range are accepted.
	e.do(req{method: "GET", path: v1 + "/video-ideas?offset=100000", cred: e.keyA}).must(t, 200)
	e.do(req{method: "GET", path: v1 + "/schedule?weekStart=9999-12-24", cred: e.keyA}).must(t, 200)
	e.do(req{method: "POST", path: note, cred: e.keyA, body: `{"category":"general","content":"x"}`,
		header: map[string]string{"Content-Type": "application/json; charset=UTF-8", "Content-Encoding": "identity"}}).must(t, 201)
}

// TestUUIDsAreCaseInsensitive: a record created with a lower-case id is found by the same id in upper case
// (RFC 9562), in a path and in a body.
func TestUUIDsAreCaseInsensitive(t *testing.T) {
	e := newEnv(t)
	v := e.do(req{method: "POST", path: v1 + "/my-videos", cred: e.keyA,
		body: `{"title":"t","contentType":"Long","formulaType":"listicle"}`}).must(t, 200)
	id := v.str("id")
	upper := strings.ToUpper(id)
	got := e.do(req{method: "POST", path: v1 + "/my-videos/status", cred: e.keyA,
		body: `{"videoId":"` + upper + `","status":"scripted"}`}).must(t, 200)
	if got.str("id") != id {
		t.Errorf("status change answered id %q, want %q", got.str("id"), id)
	}
	n := e.do(req{method: "POST", path: v1 + "/notes", cred: e.keyA, body: `{"category":"general","content":"x"}`}).must(t, 201)
	e.do(req{method: "DELETE", path: v1 + "/notes/" + strings.ToUpper(n.str("id")), cred: e.keyA}).must(t, 204)
}
