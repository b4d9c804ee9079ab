package rest_test

import (
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/wire"
)

// The derived-metrics switch both ways through the API (decision 48): without the owner's acceptance
// research still collects and stores its videos, but no answer carries a score computed from other
// channels' data or anything ranked by one, each says why, and /health names the missing acceptance.
func TestDerivedMetricsThroughREST(t *testing.T) {
	derived := []string{"outlierScore", "channelMedianViews", "sampleSize", "viewsPerDay"}
	for _, accepted := range []bool{false, true} {
		var opts []func(*env, *wire.APIConfig)
		if !accepted {
			opts = append(opts, withoutDerivedMetrics)
		}
		e := newEnv(t, opts...)
		a := func(method, path string) resp {
			return e.do(req{method: method, path: v1 + path, cred: e.keyA})
		}
		status := map[bool]string{true: "accepted", false: "not_accepted"}[accepted]
		says := func(what string, r resp) {
			t.Helper()
			dm, _ := r.json["derivedMetrics"].(map[string]any)
			if dm["status"] != status || dm["reason"] == "" {
				t.Errorf("accepted=%v: %s's derivedMetrics %v", accepted, what, dm)
			}
		}

		e.do(req{method: "PUT", path: v1 + "/niche-profile", cred: e.keyA, body: map[string]any{
			"focusedNiche": "vegan meal prep", "keywords": []string{"vegan", "meal prep", "budget", "protein"}}}).must(t, 200)
		id := a("POST", "/research").must(t, 202).str("id")
		e.runResearch()
		run := a("GET", "/research/runs/"+id).must(t, 200)
		says("the run", run)
		steps := map[string]string{}
		for _, s := range run.list("steps") {
			s := s.(map[string]any)
			steps[s["name"].(string)] = s["status"].(string)
		}
		want := map[bool]string{true: "succeeded", false: "skipped"}[accepted]
		if run.str("status") != "succeeded" || run.num("videoCount") != 500 || steps["analyse_patterns"] != want || steps["write_ideas"] != want {
			t.Errorf("accepted=%v: run %s, steps %v", accepted, run.str("status"), steps)
		}

		list := a("GET", "/research/videos?limit=100").must(t, 200)
		says("the videos", list)
		if list.num("total") != 500 {
			t.Errorf("accepted=%v: %v videos stored", accepted, list.num("total"))
		}
		prev := -1.0
		for _, v := range list.list("videos") {
			v := v.(map[string]any)
			for _, f := range derived {
				if _, has := v[f]; has != accepted {
					t.Fatalf("accepted=%v: a video has %s: %v (%v)", accepted, f, has, v)
				}
			}
			if !accepted && prev >= 0 && v["views"].(float64) > prev {
				t.Fatalf("accepted=%v: not most viewed first by default", accepted)
			}
			prev = v["views"].(float64)
		}
		if r := a("GET", "/research/videos?sort=outlier"); accepted {
			r.must(t, 200)
		} else if r.must(t, 400, "VALIDATION_ERROR"); !strings.HasPrefix(r.str("error"), "sort:") || !strings.Contains(r.str("error"), "derived metrics") {
			t.Errorf("sort=outlier while not accepted: %s", r.raw)
		}
		a("GET", "/research/videos?sort=views").must(t, 200)

		insights := a("GET", "/research-insights").must(t, 200)
		says("research-insights", insights)
		if _, has := insights.json["sources"]; (insights.str("titles") != "") != accepted || has != accepted {
			t.Errorf("accepted=%v: research-insights %s", accepted, clip(insights.raw))
		}

		perf := a("GET", "/performance").must(t, 200)
		says("performance", perf)
		if n := len(perf.list("topResearchVideos")); (n == 10) != accepted || !accepted && n != 0 {
			t.Errorf("accepted=%v: %d topResearchVideos", accepted, n)
		}
		if ideas := a("GET", "/video-ideas").must(t, 200); (ideas.num("total") > 0) != accepted {
			t.Errorf("accepted=%v: research added %v ideas", accepted, ideas.num("total"))
		}

		health := e.do(req{method: "GET", path: v1 + "/health"}).must(t, 200)
		services := health.json["services"].(map[string]any)
		reason, _ := services["youtubeDerivedMetricsReason"].(string)
		if accepted && (services["youtubeDerivedMetrics"] != "ok" || reason != "") ||
			!accepted && (services["youtubeDerivedMetrics"] != "degraded" || !strings.Contains(reason, "amendment to the YouTube API Developer Policies")) {
			t.Errorf("accepted=%v: /health services %v", accepted, services)
		}
	}
}
