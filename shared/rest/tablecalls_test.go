package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/wire"
)

// meteredTable counts table calls, and apart the writes among them (Write, Increment) and the items
// those write. It also estimates the DynamoDB capacity units each call would consume (logged, for the cost
// table in infra/bench/README.md; not asserted): strongly consistent reads, 1 RRU per 4 KB of each item
// read (a Query: of all it read), 1 WRU per 1 KB of each item written, twice that inside a transaction.
// An item's size is taken as its keys, its data and 40 bytes of attribute names and numbers.
type meteredTable struct {
	store.Table
	mu                  sync.Mutex
	calls, writes, rows int
	rru, wru            int
	byKind              map[string]int
}

func (m *meteredTable) count(kind string, writes, rows, rru, wru int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	m.writes += writes
	m.rows += rows
	m.rru += rru
	m.wru += wru
	m.byKind[kind]++
}

func itemSize(it store.Item) int {
	size := len(it.PK) + len(it.SK) + len(it.Data) + 40
	for name := range it.Counters {
		size += len(name) + 2 + 8 // the attribute name (c#<name>) and a number
	}
	return size
}

func units(size, per int) int { return max(1, (size+per-1)/per) }

func (m *meteredTable) Get(ctx context.Context, k store.Key) (store.Item, error) {
	it, err := m.Table.Get(ctx, k)
	m.count("Get", 0, 0, units(itemSize(it), 4096), 0)
	return it, err
}

func (m *meteredTable) GetMany(ctx context.Context, k []store.Key) ([]store.Item, error) {
	items, err := m.Table.GetMany(ctx, k)
	rru := 0
	for _, it := range items {
		rru += units(itemSize(it), 4096)
	}
	m.count("GetMany", 0, 0, max(1, rru), 0)
	return items, err
}

func (m *meteredTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	p, err := m.Table.Query(ctx, q)
	size := 0
	for _, it := range p.Items {
		size += itemSize(it)
	}
	m.count("Query", 0, 0, units(size, 4096), 0)
	return p, err
}

func (m *meteredTable) Write(ctx context.Context, ops ...store.Op) error {
	wru := 0
	for _, op := range ops {
		wru += units(itemSize(op.Item), 1024)
	}
	if len(ops) > 1 {
		wru *= 2
	}
	m.count("Write", 1, len(ops), 0, wru)
	return m.Table.Write(ctx, ops...)
}

func (m *meteredTable) Increment(ctx context.Context, op store.Op) (int64, error) {
	m.count("Increment", 1, 1, 0, 1)
	return m.Table.Increment(ctx, op)
}

// AddCounter is one UpdateItem: a write of one item, billed on the item's size (its record and counters).
func (m *meteredTable) AddCounter(ctx context.Context, k store.Key, name string, delta, max int64, drop []string) (store.Item, error) {
	it, err := m.Table.AddCounter(ctx, k, name, delta, max, drop)
	m.count("AddCounter", 1, 1, 0, units(itemSize(it), 1024))
	return it, err
}

type meter struct{ calls, writes, rows int }

func (m *meteredTable) snapshot() (meter, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kinds := []string{fmt.Sprintf("~%d RRU, ~%d WRU", m.rru, m.wru)}
	for _, k := range []string{"Get", "GetMany", "Query", "Write", "Increment", "AddCounter"} {
		if m.byKind[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, m.byKind[k]))
		}
	}
	return meter{m.calls, m.writes, m.rows}, strings.Join(kinds, ", ")
}

func (m *meteredTable) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls, m.writes, m.rows, m.rru, m.wru, m.byKind = 0, 0, 0, 0, 0, map[string]int{}
}

// TestTableCallsPerRequestKind (issue 21) pins the table calls and writes of each kind of request, on a
// cold instance (its credential cache and rate leases empty: a new Lambda instance) and a warm one, so
// that a change cannot add one silently. A cold authenticated request makes one table call before its
// operation's own work: an UpdateItem on the key's lookup item, which carries what authentication needs of
// the account and the key's rate windows, that leases the key's calls and returns the key; a warm one makes
// none (the credential is cached, the lease has calls left). The generation
// counts include the worker's calls (the offline pipeline runs in process; the in-process queue makes no
// table call). infra/bench/README.md turns these counts into the cost per million requests.
func TestTableCallsPerRequestKind(t *testing.T) {
	const sessionSecret = "table-calls-session-secret-0123456789"
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	pb, err := pebble.Open(filepath.Join(t.TempDir(), "table"), pebble.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pb.Close() })
	tbl := &meteredTable{Table: pb, byKind: map[string]int{}}
	st := store.New(tbl, store.WithClock(clock))
	acc := accounts.NewService(st, clock)
	ctx := context.Background()
	if _, err := acc.CreateAccount(ctx, "acct-calls", now.AddDate(1, 0, 0)); err != nil {
		t.Fatal(err)
	}
	ch, err := acc.CreateChannel(ctx, "acct-calls", "main")
	if err != nil {
		t.Fatal(err)
	}
	key, err := acc.CreateKey(ctx, "acct-calls", ch.ID, "calls")
	if err != nil {
		t.Fatal(err)
	}

	q, err := inproc.Open(inproc.Config{Name: "generation"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := research.NewService(st, nil, research.DefaultConfig(research.SourceOffline), clock)
	if err != nil {
		t.Fatal(err)
	}
	gen := generation.New(generation.Config{
		Runs: st, Data: st, Idempotency: st, Quota: st, Backlog: st, Queue: q,
		Outliers: generation.ResearchOutliers{Research: res},
		Models:   generation.Models{Writer: &titleModel{}, Grader: &titleModel{}}, Answers: schemacheck.New(),
		MonthlyQuota: 100, Wait: 10 * time.Second, Now: clock, NewID: st.NewID,
	})
	if err := q.Start(gen.Handle, 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close(context.Background()) })

	// instance is what one Lambda instance holds: its own credential cache and rate leases.
	instance := func() http.Handler {
		authn := rest.BearerAuth(auth.NewAuthenticator(st, auth.NewHS256Verifier(sessionSecret), 20*time.Second, auth.WithClock(clock)))
		api, err := wire.NewAPI(wire.APIConfig{
			Config: config.Config{Mode: config.Development, Version: "test"}, Store: st,
			Log: slog.New(slog.DiscardHandler), Now: clock, Auth: authn, Generation: gen,
		})
		if err != nil {
			t.Fatal(err)
		}
		assistant, err := mcp.ForAPI(api, authn, clock, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle(mcp.Path, assistant)
		mux.Handle("/", api)
		return mux
	}
	session, err := auth.MintHS256(sessionSecret, "acct-calls", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	type request struct {
		kind, method, path, body string
		status                   int
		async                    bool
		session                  bool // a session token (and X-Channel-Id) instead of the API key
	}
	requests := []request{
		{"read", "GET", "/api/v1/notes", "", 200, false, false},
		{"write", "POST", "/api/v1/notes", `{"category":"general","content":"a note"}`, 201, false, false},
		{"generation", "POST", "/api/v1/generate/titles", `{"title":"planning videos","type":"how-to","videoType":"Long"}`, 202, true, false},
		{"mcp tool call", "POST", mcp.Path, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_my_videos","arguments":{}}}`, 200, false, false},
		{"mcp tool list", "POST", mcp.Path, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 200, false, false},
		{"session read", "GET", "/api/v1/notes", "", 200, false, true},
		{"key management", "GET", "/api/v1/keys", "", 200, false, true},
	}
	serve := func(h http.Handler, r request) (meter, string) {
		t.Helper()
		tbl.reset()
		hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
		hr.Header.Set("Authorization", "Bearer "+key.Key)
		if r.session {
			hr.Header.Set("Authorization", "Bearer "+session)
			hr.Header.Set(auth.ChannelHeader, ch.ID)
		}
		if r.body != "" {
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Accept", "application/json, text/event-stream")
		}
		if r.async {
			// Answered at once; the worker's calls are counted until the run is done. (A synchronous
			// generation also reads the run while it waits for the worker: one GetItem per poll, as many
			// as the model's latency makes.)
			hr.Header.Set("Prefer", "respond-async")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		if w.Code != r.status || strings.Contains(w.Body.String(), `"isError":true`) {
			t.Fatalf("%s %s: %d %s", r.method, r.path, w.Code, w.Body.String())
		}
		if r.async {
			var out struct{ GenerationID string }
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.GenerationID == "" {
				t.Fatalf("202 without a generationId: %s", w.Body.String())
			}
			unmetered := store.New(pb)
			waitFor(t, func() bool {
				run, _, err := unmetered.GetRun(ctx, ch.ID, out.GenerationID)
				return err == nil && (run.Status == generation.Success || run.Status == generation.Failed)
			})
		}
		return tbl.snapshot()
	}
	// want: table calls and writes, cold and warm. Cold: one UpdateItem on the key's lookup item (a
	// session: on its account's item) that reads the credential's record and leases its calls, then the
	// operation's own calls; warm: the operation's own calls only.
	want := map[string]struct{ cold, warm meter }{
		"read":          {meter{2, 1, 1}, meter{1, 0, 0}},
		"write":         {meter{2, 2, 3}, meter{1, 1, 2}},
		"generation":    {meter{18, 4, 11}, meter{17, 3, 10}},
		"mcp tool call": {meter{2, 1, 1}, meter{1, 0, 0}},
		// Counted as a read (issue 32 item 4), from the lease the key is read with: no call of its own.
		"mcp tool list":  {meter{1, 1, 1}, meter{0, 0, 0}},
		"session read":   {meter{2, 1, 1}, meter{1, 0, 0}},
		"key management": {meter{2, 1, 1}, meter{1, 0, 0}},
	}
	for _, r := range requests {
		cold, coldKinds := serve(instance(), r)
		warmInstance := instance()
		serve(warmInstance, r)
		serve(warmInstance, r) // the second lease is sized to the key's rate; the third call spends it
		warm, warmKinds := serve(warmInstance, r)
		t.Logf("%-13s cold: %d calls, %d writes (%d items) [%s]; warm: %d calls, %d writes (%d items) [%s]",
			r.kind, cold.calls, cold.writes, cold.rows, coldKinds, warm.calls, warm.writes, warm.rows, warmKinds)
		if w := want[r.kind]; cold != w.cold || warm != w.warm {
			t.Errorf("%s: cold %+v, warm %+v; want cold %+v, warm %+v", r.kind, cold, warm, w.cold, w.warm)
		}
	}
}
