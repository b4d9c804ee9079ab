package rest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
)

// runResearch delivers the research queue's messages to the pipeline (the worker's part) until none is
// left.
func (e *env) runResearch() {
	e.t.Helper()
	now := func() time.Time { return e.store.Now() }
	cfg := research.DefaultConfig(research.SourceOffline)
	cfg.DerivedMetrics = !e.derivedOff
	p, err := research.NewPipeline(e.store, youtubesample.New(now), e.research, cfg, now)
	if err != nil {
		e.t.Fatal(err)
	}
	for {
		m, ok := e.research.take()
		if !ok {
			return
		}
		if err := p.Handle(context.Background(), m); err != nil {
			e.t.Fatal(err)
		}
	}
}

func TestResearchOperations(t *testing.T) {
	e := newEnv(t)
	a := func(method, path string, body any) resp {
		return e.do(req{method: method, path: v1 + path, cred: e.keyA, body: body})
	}
	// No profile, then a profile without keywords: 400 naming keywords, nothing queued.
	for _, prepare := range []func(){func() {}, func() { a("PUT", "/niche-profile", map[string]any{"broadNiche": "cooking"}).must(t, 200) }} {
		prepare()
		r := a("POST", "/research", nil).must(t, 400, "VALIDATION_ERROR")
		if !strings.Contains(r.str("error"), "keywords") {
			t.Fatalf("error %q does not name keywords", r.str("error"))
		}
	}
	if _, queued := e.research.take(); queued {
		t.Fatal("a refused start queued a message")
	}
	a("PUT", "/niche-profile", map[string]any{"focusedNiche": "vegan meal prep", "keywords": []string{"vegan", "meal prep", "budget", "protein"}}).must(t, 200)
	run := a("POST", "/research", nil).must(t, 202)
	id := run.str("id")
	if run.str("status") != "queued" || run.str("source") != "offline sample" || len(run.list("steps")) != 7 || run.num("unitsSpent") != 0 {
		t.Fatalf("started run %s", run.raw)
	}
	r := a("POST", "/research", nil).must(t, 409, "CONFLICT")
	if !strings.Contains(r.str("error"), id) {
		t.Fatalf("409 %q does not name the run", r.str("error"))
	}
	a("GET", "/research/runs/"+id, nil).must(t, 200)
	e.do(req{method: "GET", path: v1 + "/research/runs/" + id, cred: e.keyB}).must(t, 404, "NOT_FOUND")
	a("GET", "/research/runs/"+e.store.NewID(), nil).must(t, 404, "NOT_FOUND")
	a("GET", "/research/runs/not-a-uuid", nil).must(t, 400, "VALIDATION_ERROR")
	if l := a("GET", "/research/videos", nil).must(t, 200); l.num("total") != 0 || len(l.list("videos")) != 0 {
		t.Fatalf("videos before the run completed: %s", l.raw)
	}

	e.runResearch()
	done := a("GET", "/research/runs/"+id, nil).must(t, 200)
	if done.str("status") != "succeeded" || done.num("videoCount") != 500 || done.str("finishedAt") == "" {
		t.Fatalf("finished run %s", clip(done.raw))
	}
	list := a("GET", "/research/videos", nil).must(t, 200)
	if list.num("total") != 500 || len(list.list("videos")) != 20 {
		t.Fatalf("default page: %d of %v", len(list.list("videos")), list.num("total"))
	}
	first := list.list("videos")[0].(map[string]any)
	if first["source"] != "offline sample" || first["outlierScore"].(float64) <= 1 {
		t.Fatalf("first video %v", first)
	}
	shorts := a("GET", "/research/videos?contentType=Short&sort=views&limit=100", nil).must(t, 200)
	prev := -1.0
	for _, v := range shorts.list("videos") {
		v := v.(map[string]any)
		if v["contentType"] != "Short" || (prev >= 0 && v["views"].(float64) > prev) {
			t.Fatalf("shorts by views: %v after %v", v, prev)
		}
		prev = v["views"].(float64)
	}
	if page := a("GET", "/research/videos?limit=100&offset=450", nil).must(t, 200); len(page.list("videos")) != 50 {
		t.Fatalf("last page: %d videos", len(page.list("videos")))
	}
	for _, bad := range []string{"sort=best", "limit=0", "limit=101", "offset=-1", "contentType=Reel"} {
		a("GET", "/research/videos?"+bad, nil).must(t, 400, "VALIDATION_ERROR")
	}
	// Another channel sees none of it.
	if other := e.do(req{method: "GET", path: v1 + "/research/videos", cred: e.keyB}).must(t, 200); other.num("total") != 0 {
		t.Fatal("another channel sees the research")
	}
	insights := a("GET", "/research-insights", nil).must(t, 200)
	for _, k := range []string{"titles", "thumbnails", "longScripts", "shortScripts", "descriptions", "ideas"} {
		if insights.str(k) == "" {
			t.Errorf("research-insights %s is empty", k)
		}
	}
	// Each kind lists its source videos (issue 19 item 1): at most 10, each one of the run's videos.
	all := a("GET", "/research/videos?limit=100", nil).must(t, 200).list("videos")
	for offset := 100; offset < 500; offset += 100 {
		all = append(all, a("GET", fmt.Sprintf("/research/videos?limit=100&offset=%d", offset), nil).must(t, 200).list("videos")...)
	}
	titles := map[string]string{}
	for _, v := range all {
		v := v.(map[string]any)
		titles[v["videoId"].(string)] = v["title"].(string)
	}
	sources, _ := insights.json["sources"].(map[string]any)
	for _, k := range []string{"titles", "thumbnails", "longScripts", "shortScripts", "descriptions", "ideas"} {
		list, _ := sources[k].([]any)
		if len(list) == 0 || len(list) > 10 {
			t.Errorf("research-insights sources.%s: %d videos", k, len(list))
		}
		for _, s := range list {
			s, _ := s.(map[string]any)
			id, _ := s["videoId"].(string)
			if title, ok := titles[id]; !ok || s["title"] != title {
				t.Errorf("research-insights sources.%s: %v is not one of the run's videos", k, s)
			}
		}
	}
	ideas := a("GET", "/video-ideas?limit=100", nil).must(t, 200)
	if ideas.num("total") != 20 {
		t.Fatalf("%v ideas after the run", ideas.num("total"))
	}
	perf := a("GET", "/performance", nil).must(t, 200)
	top, _ := perf.json["topResearchVideos"].([]any)
	pipeline, _ := perf.json["pipelineStatus"].(map[string]any)
	if len(top) != 10 || top[0].(map[string]any)["title"] != first["title"] || pipeline["ideas"] != 20.0 {
		t.Fatalf("performance %s", clip(perf.raw))
	}
	// A second run may start once the first is done.
	a("POST", "/research", nil).must(t, 202)
}

// GET /performance before any research or video: every count zero, lists empty.
func TestPerformanceOfANewChannel(t *testing.T) {
	e := newEnv(t)
	p := e.do(req{method: "GET", path: v1 + "/performance", cred: e.keyA}).must(t, 200)
	want := fmt.Sprintf(`"month":"%s"`, e.store.Now().Format("2006-01"))
	if !strings.Contains(string(p.raw), want) || !strings.Contains(string(p.raw), `"topResearchVideos":[]`) ||
		!strings.Contains(string(p.raw), `"recentActivity":[]`) {
		t.Fatalf("performance %s", p.raw)
	}
}
