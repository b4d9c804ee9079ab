package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/research"
)

// derivedFields are the figures research computes from other channels' data (decision 48).
var derivedFields = []string{`"outlierScore"`, `"channelMedianViews"`, `"sampleSize"`, `"viewsPerDay"`}

// A run while derived metrics are not accepted stores its videos but writes no patterns and no ideas, and
// reading it shows no score, no outlier order, no insights and no outliers; accepted, all of them.
func TestDerivedMetricsSwitch(t *testing.T) {
	ctx := context.Background()
	for _, accepted := range []bool{false, true} {
		f := newFixture(t, setup{config: func(c *research.Config) { c.DerivedMetrics = accepted }})
		f.profile("ch", keywords...)
		run := f.start("ch")
		f.drain(0)
		done := f.run("ch", run.ID)
		if done.Status != research.Succeeded || done.VideoCount == 0 {
			t.Fatalf("accepted=%v: run %s with %d videos", accepted, done.Status, done.VideoCount)
		}
		wantStep := research.StepSkipped
		if accepted {
			wantStep = research.StepSucceeded
		}
		for _, s := range done.Steps {
			if (s.Name == research.StepPatterns || s.Name == research.StepIdeas) && s.Status != wantStep {
				t.Errorf("accepted=%v: step %s %s, want %s", accepted, s.Name, s.Status, wantStep)
			}
		}
		view := f.service.View(done)
		if view.DerivedMetrics == nil || view.DerivedMetrics.Accepted() != accepted || view.DerivedMetrics.Reason == "" {
			t.Errorf("accepted=%v: run view's derivedMetrics %+v", accepted, view.DerivedMetrics)
		}

		vs, total, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: research.MaxVideos})
		if err != nil || total != done.VideoCount || len(vs) != total {
			t.Fatalf("accepted=%v: videos %d of %d, %v", accepted, len(vs), total, err)
		}
		raw, _ := json.Marshal(vs)
		for _, field := range derivedFields {
			if strings.Contains(string(raw), field) != accepted {
				t.Errorf("accepted=%v: videos' JSON has %s: %v", accepted, field, !accepted)
			}
		}
		// The default order: the strongest outliers accepted, else the most viewed.
		for i := 1; i < len(vs); i++ {
			if accepted && vs[i].OutlierScore > vs[i-1].OutlierScore || !accepted && vs[i].Views > vs[i-1].Views {
				t.Fatalf("accepted=%v: video %d out of the default order", accepted, i)
			}
		}
		_, _, err = f.service.Videos(ctx, "ch", research.VideoQuery{Sort: research.SortOutlier, Limit: 5})
		var e *apperr.Error
		if accepted && err != nil || !accepted && (!errors.As(err, &e) || e.Code != apperr.Validation || e.Field != "sort") {
			t.Errorf("accepted=%v: sort=outlier: %v", accepted, err)
		}

		pats, err := f.service.Insights(ctx, "ch")
		if err != nil || (pats.Titles != "") != accepted || (pats.Sources != nil) != accepted {
			t.Errorf("accepted=%v: insights %+v, %v", accepted, pats, err)
		}
		top, _ := f.service.TopVideos(ctx, "ch", 10)
		outs, _ := f.service.Outliers(ctx, "ch", "titles", 10)
		if (len(top) == 10) != accepted || (len(outs) == 10) != accepted || !accepted && (len(top) > 0 || len(outs) > 0) {
			t.Errorf("accepted=%v: %d top videos, %d outliers", accepted, len(top), len(outs))
		}
		ideas, _ := f.store.ListIdeas(ctx, "ch")
		if (len(ideas) > 0) != accepted {
			t.Errorf("accepted=%v: the run added %d ideas", accepted, len(ideas))
		}

		var completed map[string]any
		for _, e := range f.events.list {
			if e.name == research.EventCompleted {
				b, _ := json.Marshal(e.data)
				_ = json.Unmarshal(b, &completed)
			}
		}
		dm, _ := completed["derivedMetrics"].(map[string]any)
		topVideos, _ := completed["topVideos"].([]any)
		_, hasPatterns := completed["patterns"]
		status := research.DerivedNotAccepted
		if accepted {
			status = research.DerivedAccepted
		}
		if dm["status"] != status || (len(topVideos) == 5) != accepted || hasPatterns != accepted {
			t.Errorf("accepted=%v: research.completed %v", accepted, completed)
		}
	}
}

// Research stored while derived metrics were accepted is not shown once they are not (the setting was
// turned off): the read decides, whenever the figures were computed.
func TestDerivedMetricsWithheldWhenTurnedOff(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, setup{})
	f.profile("ch", keywords...)
	f.start("ch")
	f.drain(0)
	cfg := f.cfg
	cfg.DerivedMetrics = false
	off, err := research.NewService(f.store, f.queue, cfg, f.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := f.service.Insights(ctx, "ch"); p.Titles == "" {
		t.Fatal("no patterns while accepted: the test shows nothing")
	}
	if p, err := off.Insights(ctx, "ch"); err != nil || p != (research.Patterns{}) {
		t.Errorf("insights once off: %+v, %v", p, err)
	}
	view, err := off.InsightsView(ctx, "ch")
	if raw, _ := json.Marshal(view); err != nil || view.DerivedMetrics.Accepted() || !strings.Contains(string(raw), `"derivedMetrics":{"status":"not_accepted"`) {
		t.Errorf("insights view once off: %s, %v", raw, err)
	}
	vs, _, err := off.Videos(ctx, "ch", research.VideoQuery{Limit: 3})
	if raw, _ := json.Marshal(vs); err != nil || len(vs) != 3 || vs[0].OutlierScore != 0 || strings.Contains(string(raw), "outlierScore") {
		t.Errorf("videos once off: %s, %v", raw, err)
	}
}

// While derived metrics are not accepted, the videos a run keeps are the most viewed, not the strongest
// outliers.
func TestScoreKeepsByTheOrderGiven(t *testing.T) {
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	v := func(id, ch string, views int64) research.SourceVideo {
		return research.SourceVideo{ID: id, ChannelID: ch, Views: views, DurationSeconds: 600, PublishedAt: now.AddDate(0, 0, -10)}
	}
	// a3 beats its channel five times over; b's videos are each their channel's usual, with more views.
	vs := []research.SourceVideo{v("a1", "a", 1000), v("a2", "a", 1000), v("a3", "a", 5000),
		v("b1", "b", 20000), v("b2", "b", 20000), v("b3", "b", 20000)}
	since := now.AddDate(-1, 0, 0)
	if got := research.Score(vs, "youtube", since, now, 1, research.SortOutlier); got[0].VideoID != "a3" || got[0].OutlierScore != 5 {
		t.Errorf("by outlier: %+v", got)
	}
	if got := research.Score(vs, "youtube", since, now, 1, research.SortViews); got[0].VideoID != "b1" || got[0].OutlierScore != 1 {
		t.Errorf("by views: %+v", got)
	}
}
