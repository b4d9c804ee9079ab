package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitForRun polls the run until it leaves queued and running (the in-process worker runs it meanwhile).
func waitForRun(t testing.TB, base, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, body := call(t, "GET", base+"/api/v1/research/runs/"+id, devKey, "")
		var run map[string]any
		if err := json.Unmarshal([]byte(body), &run); err != nil || status != 200 {
			t.Fatalf("GET run: %d %s", status, body)
		}
		if s := run["status"]; s != "queued" && s != "running" {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %v after a minute", id, run["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The whole research pipeline through make run's stack: the offline sample source, the in-process
// research queue, its worker; the research survives a restart.
func TestResearchThroughTheLocalStack(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"CSS_DATA_DIR": data, "CSS_DEV_API_KEYS": devKey, "CSS_RESEARCH_SCHEDULE_EVERY": "1h"}
	base, _, stop := start(t, env)
	profile := `{"focusedNiche":"vegan meal prep","keywords":["vegan","meal prep","budget","protein"]}`
	if status, body := call(t, "PUT", base+"/api/v1/niche-profile", devKey, profile); status != 200 {
		t.Fatalf("PUT profile: %d %s", status, body)
	}
	status, body := call(t, "POST", base+"/api/v1/research", devKey, "")
	// The stack's first scheduler pass runs as it starts: when it sees the profile just put, the channel's
	// first research is its run (409 names it), the same pipeline.
	if m := regexp.MustCompile(`research run ([0-9a-f-]{36}) is queued`).FindStringSubmatch(body); status == 409 && m != nil {
		status, body = call(t, "GET", base+"/api/v1/research/runs/"+m[1], devKey, "")
		if status == 200 {
			status = 202
		}
	}
	var run map[string]any
	if err := json.Unmarshal([]byte(body), &run); err != nil || status != 202 || run["source"] != "offline sample" {
		t.Fatalf("POST /research: %d %s", status, body)
	}
	done := waitForRun(t, base, run["id"].(string))
	if done["status"] != "succeeded" || done["videoCount"] != 500.0 {
		t.Fatalf("run %v", done)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	base, _, stop = start(t, env)
	defer stop()
	_, videos := call(t, "GET", base+"/api/v1/research/videos?contentType=Short&limit=3", devKey, "")
	if !strings.Contains(videos, `"source":"offline sample"`) || !strings.Contains(videos, `"contentType":"Short"`) {
		t.Fatalf("after a restart: %s", videos)
	}
	_, perf := call(t, "GET", base+"/api/v1/performance", devKey, "")
	if !strings.Contains(perf, `"topResearchVideos":[{"title"`) || !strings.Contains(perf, `"ideas":20`) {
		t.Fatalf("performance %s", perf)
	}
	// The model (the offline one here) wrote the patterns from the strongest outliers that fit its prompt.
	_, insights := call(t, "GET", base+"/api/v1/research-insights", devKey, "")
	if !strings.Contains(insights, `"titles":"Across the 40 strongest outliers`) || !strings.Contains(insights, `Keywords in the 40 strongest outlier titles: `) ||
		!strings.Contains(insights, `\"vegan\" in `) {
		t.Fatalf("insights %s", insights)
	}
	// More ideas, inspired by the research, into the backlog.
	status, body = call(t, "POST", base+"/api/v1/generate/ideas", devKey, `{"count":5,"contentType":"Short"}`)
	var ideas struct {
		Ideas []struct {
			Title, ContentType string
			InspiredBy         *string
		}
	}
	if err := json.Unmarshal([]byte(body), &ideas); err != nil || status != 200 || len(ideas.Ideas) != 5 {
		t.Fatalf("POST /generate/ideas: %d %s", status, body)
	}
	for _, i := range ideas.Ideas {
		if i.ContentType != "Short" || i.InspiredBy == nil || !strings.Contains(*i.InspiredBy, "offline-sample.invalid") {
			t.Errorf("idea %+v", i)
		}
	}
	if _, list := call(t, "GET", base+"/api/v1/video-ideas?limit=1", devKey, ""); !strings.Contains(list, `"total":25`) {
		t.Fatalf("backlog %s", list)
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOfflineResearchRun is a 500-video research run on the offline sample through the local stack
// (HTTP on loopback, the embedded store, the in-process queue and its worker), from POST /research to the
// run's success, each run for another niche so that none reuses another's research. It reports the CPU
// the whole process spent per run (the stack runs in the benchmark's process).
func BenchmarkOfflineResearchRun(b *testing.B) {
	base, _, stop := start(b, map[string]string{"CSS_DATA_DIR": b.TempDir(), "CSS_DEV_API_KEYS": devKey,
		"CSS_RESEARCH_SCHEDULE_EVERY": "1h"})
	defer stop()
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		profile := fmt.Sprintf(`{"focusedNiche":"vegan meal prep","keywords":["vegan","meal prep","budget","protein %d"]}`, i)
		if status, body := call(b, "PUT", base+"/api/v1/niche-profile", devKey, profile); status != 200 {
			b.Fatalf("PUT profile: %d %s", status, body)
		}
		before := cpuTime(b)
		status, body := call(b, "POST", base+"/api/v1/research", devKey, "")
		var run map[string]any
		if err := json.Unmarshal([]byte(body), &run); err != nil || status != 202 {
			b.Fatalf("POST /research: %d %s", status, body)
		}
		if done := waitForRun(b, base, run["id"].(string)); done["status"] != "succeeded" || done["videoCount"] != 500.0 {
			b.Fatalf("run %v", done)
		}
		cpu += cpuTime(b) - before
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/run")
}
