package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
)

func TestCheckLoopbackURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080/api/v1/my-videos", true},
		{"http://127.10.0.3:80/", true},
		{"http://[::1]:8080/x", true},
		{"http://localhost:8080/x", true},
		{"https://127.0.0.1:8443/x", false},
		{"http://10.0.0.1:8080/x", false},
		{"http://example.com/x", false},
		{"http://0.0.0.0:8080/x", false},
		{"ftp://127.0.0.1/x", false},
		{"://bad", false},
	}
	for _, tt := range tests {
		if _, err := checkLoopbackURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
}

func TestCheckLoopbackAddr(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:80", true},
		{"[::1]:80", true},
		{"127.0.0.1:0", true},
		{"0.0.0.0:80", false},
		{"192.168.1.2:80", false},
		{"localhost:80", false}, // the dialer sees resolved addresses; a name here is refused
		{"127.0.0.1", false},
	}
	for _, tt := range tests {
		if err := checkLoopbackAddr(tt.addr); (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok=%v", tt.addr, err, tt.ok)
		}
	}
}

func TestClientDialsOnlyLoopback(t *testing.T) {
	// The dialer's check runs before connect, so this never leaves the machine.
	_, err := newClient(1).Get("http://192.0.2.1:9/")
	if err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("GET to a non-loopback address: err %v, want a refusal", err)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBareHandlerServesTheCapturedBytes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "videos.json", `{"videos":[],"total":0}`)
	writeFile(t, dir, "note.json", `{"id":"n1"}`)
	fixtures := writeFile(t, dir, "fixtures.json", `[
		{"method":"GET","path":"/api/v1/my-videos","status":200,"contentType":"application/json","bodyFile":"videos.json"},
		{"method":"POST","path":"/api/v1/notes","status":201,"contentType":"application/json; charset=utf-8","bodyFile":"note.json","write":true}]`)
	table, err := pebble.Open(filepath.Join(dir, "table"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	h, err := bareHandler(fixtures, table)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path, body string
		status             int
		contentType, want  string
	}{
		{"GET", "/api/v1/my-videos", "", 200, "application/json", `{"videos":[],"total":0}`},
		{"POST", "/api/v1/notes", `{"category":"general","content":"x"}`, 201, "application/json; charset=utf-8", `{"id":"n1"}`},
		{"GET", "/api/v1/notes", "", 405, "", ""},
		{"GET", "/elsewhere", "", 404, "", ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
		if rec.Code != tt.status {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, rec.Code, tt.status)
			continue
		}
		if tt.want != "" && (rec.Body.String() != tt.want || rec.Header().Get("Content-Type") != tt.contentType) {
			t.Errorf("%s %s: %q %q", tt.method, tt.path, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}

	// The write fixture stored each POST's body durably, with the partition's counter beside it.
	page, err := table.Query(t.Context(), store.Query{PK: "CH#bare", Prefix: "NOTE#"})
	if err != nil || len(page.Items) != 1 || string(page.Items[0].Data) != `{"category":"general","content":"x"}` {
		t.Fatalf("stored writes: %+v, %v", page.Items, err)
	}
	if c, err := table.Get(t.Context(), store.Key{PK: "CH#bare", SK: "COUNT#notes"}); err != nil || c.Count != 1 {
		t.Fatalf("counter: %+v, %v", c, err)
	}

	bad := writeFile(t, dir, "bad.json", `[{"method":"GET","path":"/x","status":200,"bodyFile":"missing.json"}]`)
	if _, err := bareHandler(bad, nil); err == nil {
		t.Error("a fixture whose body file is missing was accepted")
	}
}

// notesService stands in for the service's notes: at most limit per key, listed and deleted by id.
type notesService struct {
	limit int

	mu      sync.Mutex
	notes   map[string][]string // key -> note ids
	created int
	deleted int
	over    int // creations refused for the limit
	nextID  int
}

func (s *notesService) handler() http.Handler {
	key := func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }
	mux := http.NewServeMux()
	mux.HandleFunc("POST /notes", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		k := key(r)
		if len(s.notes[k]) >= s.limit {
			s.over++
			http.Error(w, `{"error":{"code":"VALIDATION_ERROR"}}`, http.StatusBadRequest)
			return
		}
		s.nextID++
		s.notes[k] = append(s.notes[k], strconv.Itoa(s.nextID))
		s.created++
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("GET /notes", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var list []map[string]string
		for _, id := range s.notes[key(r)] {
			list = append(list, map[string]string{"id": id})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"notes": list, "total": len(list)})
	})
	mux.HandleFunc("DELETE /notes/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		k, id := key(r), r.PathValue("id")
		for i, n := range s.notes[k] {
			if n == id {
				s.notes[k] = append(s.notes[k][:i], s.notes[k][i+1:]...)
				s.deleted++
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		http.NotFound(w, r)
	})
	return mux
}

func TestRunStaysUnderAPerKeyLimitWithResets(t *testing.T) {
	svc := &notesService{limit: 3, notes: map[string][]string{}}
	srv := httptest.NewServer(svc.handler())
	defer srv.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	}))
	defer bare.Close()

	plan := fmt.Sprintf(`{"targets":[
		{"name":"notes","method":"POST","url":%q,"body":"{}","status":201,"baseline":"bare","keys":["k1","k2"],"perKey":3,
		 "reset":{"list":%q,"field":"notes","delete":%q}},
		{"name":"bare","method":"POST","url":%q,"body":"{}","status":201}]}`,
		srv.URL+"/notes", srv.URL+"/notes", srv.URL+"/notes/{id}", bare.URL+"/notes")
	path := writeFile(t, t.TempDir(), "plan.json", plan)

	var out bytes.Buffer
	// Each round fills both keys exactly (2 x 3); without the resets the second round would hit the limit.
	args := []string{"run", "-targets", path, "-requests", "6", "-rounds", "3", "-concurrency", "2"}
	if err := dispatch(context.Background(), args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if svc.over != 0 || svc.created != 18 || svc.deleted != 18 {
		t.Errorf("service saw %d created, %d deleted, %d over the limit; want 18, 18, 0", svc.created, svc.deleted, svc.over)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); f[0] != "notes" || f[1] != "18" || f[2] != "0" || !strings.Contains(lines[1], "% of bare") {
		t.Errorf("notes row %q", lines[1])
	}
}

func TestRunFailsOnErrorsAndExhaustion(t *testing.T) {
	svc := &notesService{limit: 2, notes: map[string][]string{}}
	srv := httptest.NewServer(svc.handler())
	defer srv.Close()
	dir := t.TempDir()

	// The service refuses past 2 notes per key while the plan claims 3: the refusals are errors.
	over := writeFile(t, dir, "over.json", fmt.Sprintf(`{"targets":[
		{"name":"notes","method":"POST","url":%q,"status":201,"keys":["k1"],"perKey":3}]}`, srv.URL+"/notes"))
	var out bytes.Buffer
	err := dispatch(context.Background(), []string{"run", "-targets", over, "-requests", "3"}, &out)
	if err == nil || !strings.Contains(out.String(), "FAIL notes: 1 errors") {
		t.Errorf("errors not reported: %v\n%s", err, out.String())
	}

	// A duration-bound round stops when the keys' budget is used up, and says so.
	svc.notes = map[string][]string{}
	short := writeFile(t, dir, "short.json", fmt.Sprintf(`{"targets":[
		{"name":"notes","method":"POST","url":%q,"status":201,"keys":["k1"],"perKey":2}]}`, srv.URL+"/notes"))
	out.Reset()
	err = dispatch(context.Background(), []string{"run", "-targets", short, "-duration", "1m"}, &out)
	if err == nil || !strings.Contains(out.String(), "budget ran out") {
		t.Errorf("exhaustion not reported: %v\n%s", err, out.String())
	}
}

func TestValidate(t *testing.T) {
	ok := func() *target { return &target{Name: "a", URL: "http://127.0.0.1:1/x"} }
	b := bounds{requests: 10, rounds: 2, conc: 2}
	tests := []struct {
		name    string
		targets []*target
		b       bounds
		wantErr string
	}{
		{"fine", []*target{ok()}, b, ""},
		{"no targets", nil, b, "no targets"},
		{"both bounds", []*target{ok()}, bounds{requests: 1, duration: time.Second, rounds: 1, conc: 1}, "one of them"},
		{"no bound", []*target{ok()}, bounds{rounds: 1, conc: 1}, "one of them"},
		{"remote", []*target{{Name: "a", URL: "http://203.0.113.9/x"}}, b, "not a loopback"},
		{"duplicate", []*target{ok(), ok()}, b, "unique"},
		{"baseline", []*target{{Name: "a", URL: "http://127.0.0.1:1/x", Baseline: "b"}}, b, "baseline"},
		{"keys without perKey", []*target{{Name: "a", URL: "http://127.0.0.1:1/x", Keys: []string{"k"}}}, b, "perKey"},
		{"over budget without reset", []*target{{Name: "a", URL: "http://127.0.0.1:1/x", Keys: []string{"k"}, PerKey: 15}}, b,
			"exceed the key budget"},
		{"reset elsewhere", []*target{{Name: "a", URL: "http://127.0.0.1:1/x", Keys: []string{"k"}, PerKey: 15,
			Reset: &reset{List: "http://10.1.1.1/x", Field: "notes", Delete: "http://127.0.0.1:1/x/{id}"}}}, b, "not a loopback"},
		{"reset fits", []*target{{Name: "a", URL: "http://127.0.0.1:1/x", Keys: []string{"k"}, PerKey: 10,
			Reset: &reset{List: "http://127.0.0.1:1/x", Field: "notes", Delete: "http://127.0.0.1:1/x/{id}"}}}, b, ""},
	}
	for _, tt := range tests {
		err := (&plan{Targets: tt.targets}).validate(tt.b)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestReportComparesWithTheBaseline(t *testing.T) {
	lat := []time.Duration{3 * time.Millisecond, 1 * time.Millisecond, 2 * time.Millisecond}
	results := []*result{
		{name: "stack", baseline: "bare", requests: 300, elapsed: time.Second, latencies: lat},
		{name: "bare", requests: 1000, elapsed: time.Second, latencies: lat},
	}
	var out bytes.Buffer
	failures := report(&out, results, 0.4)
	if len(failures) != 1 || !strings.Contains(failures[0], "30% of bare") {
		t.Errorf("failures %q, want one for 30%% < 40%%", failures)
	}
	if !strings.Contains(out.String(), "2.00 ms") || !strings.Contains(out.String(), "3.00 ms") {
		t.Errorf("p50/p99 missing:\n%s", out.String())
	}
	if failures := report(io.Discard, results, 0.25); len(failures) != 0 {
		t.Errorf("failures %q at 25%%", failures)
	}
}

func TestDispatch(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(context.Background(), []string{"freeport"}, &out); err != nil {
		t.Fatal(err)
	}
	if p, err := strconv.Atoi(strings.TrimSpace(out.String())); err != nil || p < 1 || p > 65535 {
		t.Errorf("freeport printed %q", out.String())
	}
	for _, args := range [][]string{{}, {"nope"}, {"run"}, {"bare", "-addr", "0.0.0.0:0", "-fixtures", "x"}} {
		if err := dispatch(context.Background(), args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
