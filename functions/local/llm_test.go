//go:build llm

package main

// make test-llm (not CI: it needs llama-cpp-python, compiled once by infra/tools/install-llm): every
// generation tool, a refinement, the niche score, ideas and a research run's pattern writers, through
// this stack, against a real OpenAI-compatible server on loopback (llama-cpp-python with
// SmolLM2-135M-Instruct). It prints one row per run: outcome, model calls, time. It fails on a
// protocol or capability mismatch, a run that outlives its deadline, or a success with empty content; a
// small model's poor writing (a run failing its schema after the repair) is reported, not failed.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const llmAlias = "smollm2"

type llmRow struct {
	name, outcome, reason string
	calls                 int64
	took                  time.Duration
	serverErrors          []string // the server's error answers during the run
	negotiated            int      // of which refusals of json_schema that the adapter fell back from
}

func TestLocalModelServer(t *testing.T) {
	python, model := os.Getenv("CSS_LLM_PYTHON"), os.Getenv("CSS_LLM_MODEL")
	if python == "" || model == "" {
		t.Fatal("CSS_LLM_PYTHON and CSS_LLM_MODEL are unset: run make test-llm")
	}
	port := os.Getenv("CSS_LLM_PORT")
	if port == "" {
		port = freePort(t)
	}
	deadline, err := time.ParseDuration(os.Getenv("CSS_GENERATION_DEADLINE"))
	if err != nil {
		deadline = 5 * time.Minute
	}
	threads := os.Getenv("CSS_LLM_THREADS")
	if threads == "" {
		threads = "2"
	}

	// The model server: OMP_WAIT_POLICY=PASSIVE keeps its idle threads from spinning on shared cores.
	server := exec.Command(python, "-m", "llama_cpp.server", "--model", model, "--model_alias", llmAlias,
		"--host", "127.0.0.1", "--port", port, "--n_threads", threads, "--n_ctx", "8192")
	server.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	logFile, err := os.Create(t.TempDir() + "/server.log")
	if err != nil {
		t.Fatal(err)
	}
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	serverURL := "http://127.0.0.1:" + port
	for start := time.Now(); ; time.Sleep(250 * time.Millisecond) {
		if r, err := http.Get(serverURL + "/v1/models"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		if time.Since(start) > 2*time.Minute {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("llama-cpp-python did not start:\n%s", log)
		}
	}

	// A counting proxy in front of it: the model calls of each run (they run one at a time).
	var calls atomic.Int64
	target, _ := url.Parse(serverURL)
	rp := httputil.NewSingleHostReverseProxy(target)
	// Every error answer of the server, for the table: a refusal of json_schema is the adapter's
	// negotiation (expected on the first calls only); anything else is a mismatch or a server fault.
	var errMu sync.Mutex
	var serverErrors []string
	rp.ModifyResponse = func(r *http.Response) error {
		if r.StatusCode >= 400 {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
			errMu.Lock()
			serverErrors = append(serverErrors, fmt.Sprintf("HTTP %d %.300s", r.StatusCode, body))
			errMu.Unlock()
		}
		return nil
	}
	errorsSince := func(n int) []string {
		errMu.Lock()
		defer errMu.Unlock()
		return append([]string(nil), serverErrors[n:]...)
	}
	errorCount := func() int { errMu.Lock(); defer errMu.Unlock(); return len(serverErrors) }
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			calls.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	base, _, stop := start(t, map[string]string{
		"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey, "CSS_RESEARCH_SCHEDULE_EVERY": "1h",
		"CSS_OPENAI_BASE_URL": proxy.URL + "/v1", "CSS_GENERATION_MODEL": llmAlias,
		// The server's window is 8,192 tokens (--n_ctx above): a 3,000-token prompt leaves room for the
		// 4,096-token answer, and the service is told the window (shared/ai/README.md).
		"CSS_PROMPT_TOKEN_BUDGET": "3000", "CSS_MODEL_CONTEXT_TOKENS": "8192", "CSS_GENERATION_DEADLINE": deadline.String(),
		// llama-cpp-python answers one call at a time: research's six pattern calls queue behind each other,
		// and a call's bound counts the wait.
		"CSS_MODEL_TIMEOUT": deadline.String(),
	})
	defer stop()
	_, health := call(t, "GET", base+"/api/v1/health", "", "")
	t.Logf("health: %s", health)
	if !strings.Contains(health, `"ai":"ok"`) {
		t.Errorf("health does not say ai ok with the server up: %s", health)
	}

	profile := `{"focusedNiche":"home espresso","keywords":["espresso","grinder","latte art","beans"],"targetAudience":"home baristas"}`
	if status, body := call(t, "PUT", base+"/api/v1/niche-profile", devKey, profile); status != 200 {
		t.Fatalf("PUT profile: %d %s", status, body)
	}

	var rows []llmRow
	// A research run: its pattern writers (six texts) and ideas run on the model.
	before, began, errsBefore := calls.Load(), time.Now(), errorCount()
	status, body := call(t, "POST", base+"/api/v1/research", devKey, "")
	var run map[string]any
	if err := json.Unmarshal([]byte(body), &run); err != nil || status != 202 {
		t.Fatalf("POST /research: %d %s", status, body)
	}
	researched := waitForRunWithin(t, base, run["id"].(string), deadline+time.Minute)
	row := llmRow{name: "research (pattern writers)", calls: calls.Load() - before, took: time.Since(began), outcome: fmt.Sprint(researched["status"])}
	if row.outcome != "succeeded" {
		row.reason = fmt.Sprint(researched["error"])
	}
	for _, e := range errorsSince(errsBefore) {
		if strings.Contains(e, "Input should be 'text' or 'json_object'") {
			row.negotiated++ // the first calls learn that json_schema is refused
		} else {
			row.serverErrors = append(row.serverErrors, e)
		}
	}
	rows = append(rows, row)

	transcript := strings.Repeat("Today we dial in a light roast on a flat burr grinder. First, weigh 18 grams. "+
		"Grind finer than you think, then pull a 1:2.5 ratio in about 30 seconds. Taste it: sour means grind finer. ", 8)
	tools := []struct{ name, path, body string }{
		{"titles", "/generate/titles", `{"title":"Dialing in espresso at home","type":"how-to","videoType":"Long"}`},
		{"long_script", "/generate/long-script", `{"title":"Dialing in espresso at home","type":"how-to"}`},
		{"short_script", "/generate/short-script", `{"title":"One grinder tip","type":"quick-tip"}`},
		{"description", "/generate/description", `{"title":"Dialing in espresso at home"}`},
		{"thumbnail", "/generate/thumbnail", `{"title":"Dialing in espresso at home","type":"focus"}`},
		{"hooks", "/generate/hooks", `{"title":"Dialing in espresso at home"}`},
		{"ctas", "/generate/ctas", `{}`},
		{"podcast_prep", "/generate/podcast-prep", `{"episodeType":"solo","topic":"Home espresso on a budget"}`},
		{"newsletter", "/generate/newsletter", `{"title":"Dialing in espresso","style":"value-first","transcript":` + quote(transcript) + `}`},
		{"clips", "/generate/clips", `{"title":"Dialing in espresso","transcript":` + quote(transcript) + `}`},
		{"community_posts", "/generate/community-posts", `{"postType":"poll"}`},
		{"channel_optimize (description)", "/generate/channel-optimize", `{"type":"description"}`},
		{"channel_optimize (playlists)", "/generate/channel-optimize", `{"type":"playlists"}`},
		{"channel_optimize (banner)", "/generate/channel-optimize", `{"type":"banner"}`},
		{"reoptimize", "/generate/reoptimize", `{"videoUrl":"https://www.youtube.com/watch?v=dQw4w9WgXcQ","transcript":` + quote(transcript) + `}`},
		{"niche_score", "/niche-score", `{}`},
		{"ideas", "/generate/ideas", `{"count":3}`},
	}
	var refineFrom string
	for _, tool := range tools {
		n := errorCount()
		row, id := runTool(t, base, tool.name, tool.path, tool.body, &calls, deadline)
		row.serverErrors = errorsSince(n) // after the negotiation, every error answer counts
		rows = append(rows, row)
		if row.outcome == "success" && refineFrom == "" && tool.name != "ideas" {
			refineFrom = id
		}
	}
	if refineFrom != "" {
		n := errorCount()
		row, _ := runTool(t, base, "refine", "/refine", `{"generationId":"`+refineFrom+`","feedback":"shorter and warmer"}`, &calls, deadline)
		row.serverErrors = errorsSince(n)
		rows = append(rows, row)
	} else {
		rows = append(rows, llmRow{name: "refine", outcome: "not run", reason: "no successful run to refine"})
	}

	var table strings.Builder
	fmt.Fprintf(&table, "\n%-32s %-9s %5s %6s %9s  %s\n", "run", "outcome", "calls", "errors", "time", "reason")
	succeeded := 0
	for _, r := range rows {
		fmt.Fprintf(&table, "%-32s %-9s %5d %6d %8.1fs  %s\n", r.name, r.outcome, r.calls, len(r.serverErrors), r.took.Seconds(), r.reason)
		if r.outcome == "success" || r.outcome == "succeeded" {
			succeeded++
		}
		if mismatch(r.reason) || len(r.serverErrors) > 0 {
			t.Errorf("%s: a protocol or capability mismatch: %s %q", r.name, r.reason, r.serverErrors)
		}
	}
	fmt.Fprintf(&table, "json_schema refusals while the adapter negotiated (research's first calls): %d\n", rows[0].negotiated)
	fmt.Fprintf(&table, "%d of %d runs succeeded; model %s (llama-cpp-python, %s threads), deadline %s\n", succeeded, len(rows), filepath.Base(model), threads, deadline)
	fmt.Print(table.String())
	if out := os.Getenv("CSS_LLM_TABLE"); out != "" {
		_ = os.WriteFile(out, []byte(table.String()), 0o644)
	}
}

// mismatch: a failure that says the server and the adapter did not understand each other, rather than
// the model writing badly or slowly.
func mismatch(reason string) bool {
	for _, s := range []string{"refused the structured output mode", "HTTP 400", "HTTP 422", "HTTP 500", "HTTP 501", "tool_choice", "response_format"} {
		if strings.Contains(reason, s) {
			return true
		}
	}
	return false
}

// runTool submits one generation (Prefer: respond-async) and follows it to its end.
func runTool(t *testing.T, base, name, path, body string, calls *atomic.Int64, deadline time.Duration) (llmRow, string) {
	t.Helper()
	before, began := calls.Load(), time.Now()
	req, _ := http.NewRequest("POST", base+"/api/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+devKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var accepted struct {
		GenerationID string `json:"generationId"`
		Error        string `json:"error"`
		Message      string `json:"message"`
	}
	raw := bufio.NewReader(resp.Body)
	_ = json.NewDecoder(raw).Decode(&accepted)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return llmRow{name: name, outcome: "refused", reason: fmt.Sprintf("HTTP %d %s %s", resp.StatusCode, accepted.Error, accepted.Message), took: time.Since(began)}, ""
	}
	limit := deadline + 30*time.Second
	for {
		_, got := call(t, "GET", base+"/api/v1/generations/"+accepted.GenerationID, devKey, "")
		var run struct {
			Status   string          `json:"status"`
			Output   json.RawMessage `json:"output"`
			Error    string          `json:"error"`
			ToolName string          `json:"toolName"`
		}
		if err := json.Unmarshal([]byte(got), &run); err != nil {
			t.Fatalf("%s: GET run: %s", name, got)
		}
		row := llmRow{name: name, outcome: run.Status, reason: run.Error, calls: calls.Load() - before, took: time.Since(began)}
		switch run.Status {
		case "success":
			if empty(run.Output) {
				t.Errorf("%s: a success with empty content: %s", name, run.Output)
				row.outcome, row.reason = "EMPTY", string(run.Output)
			}
			return row, accepted.GenerationID
		case "failed":
			return row, accepted.GenerationID
		}
		if time.Since(began) > limit {
			t.Errorf("%s: still %s after %s (deadline %s)", name, run.Status, time.Since(began), deadline)
			row.outcome, row.reason = "OVERDUE", "pending past its deadline"
			return row, accepted.GenerationID
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// empty: no text anywhere in the output.
func empty(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return true
	}
	var text func(v any) bool
	text = func(v any) bool {
		switch x := v.(type) {
		case string:
			return strings.TrimSpace(x) != ""
		case []any:
			for _, e := range x {
				if text(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range x {
				if text(e) {
					return true
				}
			}
		}
		return false
	}
	return !text(v)
}

func waitForRunWithin(t *testing.T, base, id string, limit time.Duration) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		status, body := call(t, "GET", base+"/api/v1/research/runs/"+id, devKey, "")
		var run map[string]any
		if err := json.Unmarshal([]byte(body), &run); err != nil || status != 200 {
			t.Fatalf("GET run: %d %s", status, body)
		}
		if s := run["status"]; s != "queued" && s != "running" {
			return run
		}
		select {
		case <-ctx.Done():
			t.Errorf("research run %s still %v after %s", id, run["status"], limit)
			run["status"] = "OVERDUE"
			return run
		case <-time.After(500 * time.Millisecond):
		}
	}
}
