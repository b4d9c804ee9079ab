package research_test

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/research"
)

// TestInsightsListSourceVideos (issue 19 item 1): the patterns of a completed run are shown with their
// source videos: each kind lists at most research.MaxPatternSources of the run's videos (id and title as
// the run stored them), the strongest outliers among those the kind learns from; and patterns stored
// before sources were kept still read.
func TestInsightsListSourceVideos(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, setup{})
	f.profile("old", keywords...)
	old := research.Patterns{Titles: "Numbers in titles", Ideas: "Budget angles"}
	if err := f.store.PutPatterns(ctx, "old", old); err != nil {
		t.Fatal(err)
	}
	if got, err := f.service.Insights(ctx, "old"); err != nil || got != old {
		t.Fatalf("patterns without sources read as %+v, %v", got, err)
	}

	f.profile("ch", keywords...)
	run := f.start("ch")
	f.drain(0)
	if got := f.run("ch", run.ID); got.Status != research.Succeeded {
		t.Fatalf("run %s: %s", got.Status, got.Message)
	}
	vs, _, err := f.service.Videos(ctx, "ch", research.VideoQuery{Limit: research.MaxVideos})
	if err != nil || len(vs) == 0 {
		t.Fatalf("%d videos, %v", len(vs), err)
	}
	byID := map[string]research.Video{}
	for _, v := range vs {
		byID[v.VideoID] = v
	}
	p, err := f.service.Insights(ctx, "ch")
	if err != nil {
		t.Fatal(err)
	}
	if p.Sources == nil {
		t.Fatalf("insights without sources: %+v", p)
	}
	for _, k := range []struct {
		kind, text, contentType string
		sources                 []research.PatternSource
	}{{"titles", p.Titles, "", p.Sources.Titles}, {"thumbnails", p.Thumbnails, "", p.Sources.Thumbnails},
		{"longScripts", p.LongScripts, research.Long, p.Sources.LongScripts},
		{"shortScripts", p.ShortScripts, research.Short, p.Sources.ShortScripts},
		{"descriptions", p.Descriptions, "", p.Sources.Descriptions}, {"ideas", p.Ideas, "", p.Sources.Ideas}} {
		if k.text == "" || len(k.sources) == 0 || len(k.sources) > research.MaxPatternSources {
			t.Errorf("%s: %d sources for the text %q", k.kind, len(k.sources), k.text)
			continue
		}
		want := research.KindVideos(vs, k.kind, research.MaxPatternSources)
		if len(k.sources) != len(want) {
			t.Errorf("%s: %d sources, want the kind's %d strongest", k.kind, len(k.sources), len(want))
		}
		for i, s := range k.sources {
			v, ok := byID[s.VideoID]
			switch {
			case s.VideoID == "" || s.Title == "" || !ok:
				t.Errorf("%s: source %+v is not one of the run's videos", k.kind, s)
			case s.Title != v.Title || s.URL != v.URL || s.ChannelTitle != v.ChannelTitle || s.Views != v.Views || s.OutlierScore != v.OutlierScore:
				t.Errorf("%s: source %+v differs from the run's video %+v", k.kind, s, v)
			case k.contentType != "" && v.ContentType != k.contentType:
				t.Errorf("%s: source %s is a %s video", k.kind, s.VideoID, v.ContentType)
			case i < len(want) && s.VideoID != want[i].VideoID:
				t.Errorf("%s: source %d is %s, want %s", k.kind, i, s.VideoID, want[i].VideoID)
			}
		}
	}
}
