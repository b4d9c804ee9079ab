package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

// countingTable counts the calls made to a table.
type countingTable struct {
	store.Table
	calls int
}

func (c *countingTable) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.calls++
	return c.Table.Get(ctx, k)
}

func (c *countingTable) GetMany(ctx context.Context, k []store.Key) ([]store.Item, error) {
	c.calls++
	return c.Table.GetMany(ctx, k)
}

func (c *countingTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	c.calls++
	return c.Table.Query(ctx, q)
}

func (c *countingTable) Write(ctx context.Context, ops ...store.Op) error {
	c.calls++
	return c.Table.Write(ctx, ops...)
}

// sequentialIDs returns ids that sort in creation order, like uuidv7s, without waiting on the clock.
func sequentialIDs() func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("01900000-0000-7000-8000-%012d", n)
	}
}

var tools = []string{"titles", "hooks", "long_scripts", "descriptions"}

// seedRuns creates n runs (tools in turn) through CreateRun; run i's input names "topic <i>" and, for
// long_scripts, its output holds a script of scriptBytes bytes.
func seedRuns(t testing.TB, s *store.Store, channelID string, n, scriptBytes int) []generation.ToolRun {
	t.Helper()
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	runs := make([]generation.ToolRun, n)
	for i := range runs {
		tool := tools[i%len(tools)]
		output := fmt.Sprintf(`{"titles":[{"title":"Result %d"}]}`, i)
		if tool == "long_scripts" {
			output = fmt.Sprintf(`{"script":%q}`, fmt.Sprintf("Script %d. ", i)+strings.Repeat("word ", scriptBytes/5))
		}
		runs[i] = generation.ToolRun{
			ID: s.NewID(), ToolName: tool, Status: generation.Success,
			Input:       json.RawMessage(fmt.Sprintf(`{"topic":"Topic %d","count":%d}`, i, i%7)),
			Output:      json.RawMessage(output),
			GeneratedAt: at.Add(time.Duration(i) * time.Second),
		}
		if err := s.CreateRun(context.Background(), channelID, runs[i]); err != nil {
			t.Fatalf("CreateRun %d: %v", i, err)
		}
	}
	return runs
}

func ids(t *testing.T, page []generation.Stored) []string {
	t.Helper()
	out := make([]string, len(page))
	for i, raw := range page {
		var r generation.ToolRun
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("run %d: %v: %s", i, err, raw)
		}
		out[i] = r.ID
	}
	return out
}

func TestHistoryPages(t *testing.T) {
	backends(t, func(t *testing.T, s *store.Store) {
		s = store.New(s.Table(), store.WithIDs(sequentialIDs()))
		ctx := context.Background()
		h := generation.NewHistory(s)
		runs := seedRuns(t, s, "ch1", 30, 2000)
		seedRuns(t, s, "ch2", 3, 10)
		newest := func(filter func(generation.ToolRun) bool) []string {
			var out []string
			for i := len(runs) - 1; i >= 0; i-- {
				if filter(runs[i]) {
					out = append(out, runs[i].ID)
				}
			}
			return out
		}
		all := newest(func(generation.ToolRun) bool { return true })
		hooks := newest(func(r generation.ToolRun) bool { return r.ToolName == "hooks" })
		for _, c := range []struct {
			name      string
			q         generation.HistoryQuery
			want      []string
			wantTotal int // -1: len(want)
		}{
			{"first page", generation.HistoryQuery{Limit: 5}, all[:5], 30},
			{"tool all", generation.HistoryQuery{Tool: "all", Limit: 5, Offset: 5}, all[5:10], 30},
			{"last partial page", generation.HistoryQuery{Limit: 20, Offset: 20}, all[20:], 30},
			{"past the end", generation.HistoryQuery{Limit: 20, Offset: 30}, nil, 30},
			{"huge offset", generation.HistoryQuery{Limit: 20, Offset: 1 << 62}, nil, 30},
			{"one tool", generation.HistoryQuery{Tool: "hooks", Limit: 3, Offset: 1}, hooks[1:4], len(hooks)},
			{"a tool never run", generation.HistoryQuery{Tool: "clips", Limit: 3}, nil, 0},
			{"search in input, any case", generation.HistoryQuery{Search: "TOPIC 1", Limit: 100},
				newest(func(r generation.ToolRun) bool { return strings.Contains(string(r.Input), "Topic 1") }), -1},
			{"search in output", generation.HistoryQuery{Search: "result 2", Limit: 100},
				newest(func(r generation.ToolRun) bool { return strings.Contains(string(r.Output), "Result 2") }), -1},
			{"search the tool name", generation.HistoryQuery{Search: "Hook", Limit: 2, Offset: 1}, hooks[1:3], len(hooks)},
			{"search with a tool", generation.HistoryQuery{Tool: "long_scripts", Search: "script 2", Limit: 100},
				newest(func(r generation.ToolRun) bool {
					return r.ToolName == "long_scripts" && strings.Contains(string(r.Output), "Script 2")
				}), -1},
			{"search past the output bound", generation.HistoryQuery{Search: "word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word", Limit: 10}, nil, 0},
			{"field names are not searched", generation.HistoryQuery{Search: "topic\"", Limit: 10}, nil, 0},
		} {
			if c.wantTotal < 0 { // a search whose matches all fit the page
				c.wantTotal = len(c.want)
			}
			t.Run(c.name, func(t *testing.T) {
				page, total, err := h.List(ctx, "ch1", c.q)
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(t, page); total != c.wantTotal || strings.Join(got, ",") != strings.Join(c.want, ",") {
					t.Fatalf("page %v total %d; want %v total %d", got, total, c.want, c.wantTotal)
				}
			})
		}
	})
}

func TestRunLifecycle(t *testing.T) {
	backends(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		model, tokens := "m-1", 42
		pending := generation.ToolRun{
			ID: s.NewID(), ToolName: "titles", Status: generation.Pending,
			Input: json.RawMessage(`{"topic":"Sourdough"}`), GeneratedAt: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC),
		}
		if err := s.CreateRun(ctx, "ch", pending); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.CreateRun(ctx, "ch", pending), apperr.Conflict)
		if err := s.CreateRun(ctx, "ch", generation.ToolRun{ID: s.NewID(), ToolName: "bad#tool"}); err == nil {
			t.Fatal("a tool name with '#' was accepted")
		}
		search := func(needle string) int {
			_, total, err := generation.NewHistory(s).List(ctx, "ch", generation.HistoryQuery{Search: needle, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			return total
		}
		if search("sourdough") != 1 || search("crumb") != 0 {
			t.Fatal("a pending run is searched by its input")
		}
		got, version, err := s.GetRun(ctx, "ch", pending.ID)
		if err != nil || got.Status != generation.Pending || version != 1 {
			t.Fatalf("GetRun = %+v v%d, %v", got, version, err)
		}
		done, err := got.Complete(generation.Completion{
			Status: generation.Success, Output: json.RawMessage(`{"titles":[{"title":"The crumb"}]}`),
			InputTokens: &tokens, OutputTokens: &tokens, Model: &model,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateRun(ctx, "ch", done, version); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.UpdateRun(ctx, "ch", done, version), apperr.Conflict) // a stale version
		moved := done
		moved.ToolName = "hooks"
		if err := s.UpdateRun(ctx, "ch", moved, version+1); err == nil {
			t.Fatal("a run's tool changed")
		}
		if search("crumb") != 1 {
			t.Fatal("the completed run's output is not searched: its summary was not rewritten with it")
		}
		page, total, err := generation.NewHistory(s).List(ctx, "ch", generation.HistoryQuery{Tool: "titles", Limit: 10})
		if err != nil || total != 1 || len(page) != 1 {
			t.Fatalf("page %s total %d, %v", page, total, err)
		}
		var served generation.ToolRun
		if err := json.Unmarshal(page[0], &served); err != nil || served.Status != generation.Success ||
			*served.Model != model || *served.OutputTokens != tokens || string(served.Output) != string(done.Output) {
			t.Fatalf("served %s, %v", page[0], err)
		}
		wantCode(t, func() error { _, _, err := s.GetRun(ctx, "other", pending.ID); return err }(), apperr.NotFound)
	})
}

// TestHistoryPageTableCalls: with 5,000 runs a page costs two table calls (the index Query and one
// GetMany of the runs and the counter), at any offset whose entries fit one Query page.
func TestHistoryPageTableCalls(t *testing.T) {
	tbl := &countingTable{Table: memstore.New(t)}
	s := store.New(tbl, store.WithIDs(sequentialIDs()))
	seedRuns(t, s, "ch", 5000, 15000)
	h := generation.NewHistory(s)
	for _, q := range []generation.HistoryQuery{
		{Limit: 20}, {Limit: 20, Offset: 4980}, {Tool: "hooks", Limit: 20}, {Tool: "hooks", Limit: 20, Offset: 1230},
		{Limit: 99}, {Limit: 20, Offset: 5000},
	} {
		tbl.calls = 0
		page, total, err := h.List(context.Background(), "ch", q)
		if err != nil {
			t.Fatal(err)
		}
		if tbl.calls > 2 {
			t.Errorf("%+v: %d table calls; want at most 2", q, tbl.calls)
		}
		if want := map[string]int{"": 5000, "hooks": 1250}[q.Tool]; total != want || len(page) != min(q.Limit, max(0, want-q.Offset)) {
			t.Errorf("%+v: %d runs, total %d", q, len(page), total)
		}
	}
	// A search reads every summary (one Query per ~1 MB of them) and then the page's runs.
	tbl.calls = 0
	_, total, err := h.List(context.Background(), "ch", generation.HistoryQuery{Search: "topic 49", Limit: 20})
	if err != nil || total != 111 {
		t.Fatalf("search: total %d, %v", total, err)
	}
	t.Logf("a search over 5,000 runs: %d table calls", tbl.calls)
}

func BenchmarkHistoryPage(b *testing.B) {
	s := store.New(memstore.New(b), store.WithIDs(sequentialIDs()))
	seedRuns(b, s, "ch", 5000, 15000)
	h := generation.NewHistory(s)
	for _, c := range []struct {
		name string
		q    generation.HistoryQuery
	}{
		{"first page", generation.HistoryQuery{Limit: 20}},
		{"last page", generation.HistoryQuery{Limit: 20, Offset: 4980}},
		{"one tool", generation.HistoryQuery{Tool: "long_scripts", Limit: 20}},
		{"search", generation.HistoryQuery{Search: "topic 49", Limit: 20}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := h.List(context.Background(), "ch", c.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
