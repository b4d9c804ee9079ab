package performance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/performance"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/videos"
)

type pipeline struct {
	videos []videos.Video
	ideas  int
}

func (p pipeline) ListVideos(context.Context, string) ([]videos.Stored, error) {
	out := make([]videos.Stored, len(p.videos))
	for i, v := range p.videos {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (p pipeline) ListIdeas(context.Context, string) ([]videos.Idea, error) {
	return make([]videos.Idea, p.ideas), nil
}

type researchData struct {
	top  []research.Video
	last *research.Run
}

func (r researchData) TopVideos(_ context.Context, _ string, n int) ([]research.Video, error) {
	return r.top[:min(n, len(r.top))], nil
}

func (r researchData) LastRun(context.Context, string) (*research.Run, error) { return r.last, nil }

func (r researchData) DerivedMetrics() research.DerivedMetrics {
	return research.DerivedMetrics{Status: research.DerivedAccepted}
}

type generations struct{}

func (generations) MonthGenerations(context.Context, string, time.Time) (int, error) { return 42, nil }

func (generations) RunsSince(context.Context, string, time.Time) (performance.RunCounts, error) {
	return performance.RunCounts{TitleRuns: 3, TotalRuns: 5}, nil
}

var now = time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC)

func video(title string, status videos.Status, created time.Time, history ...videos.StatusChange) videos.Video {
	return videos.Video{ID: title, Title: title, ContentType: "Long", FormulaType: "f", Status: status, CreatedAt: created,
		StatusHistory: history}
}

func TestOverview(t *testing.T) {
	lastMonth := time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC)
	vs := []videos.Video{
		video("old", videos.Published, lastMonth, videos.StatusChange{Status: videos.Planned, At: lastMonth},
			videos.StatusChange{Status: videos.Published, At: lastMonth.Add(time.Hour)}),
		video("new", videos.Published, now.Add(-48*time.Hour), videos.StatusChange{Status: videos.Planned, At: now.Add(-48 * time.Hour)},
			videos.StatusChange{Status: videos.Published, At: now.Add(-time.Hour)}),
		video("draft", videos.Scripted, now.Add(-24*time.Hour), videos.StatusChange{Status: videos.Planned, At: now.Add(-24 * time.Hour)},
			videos.StatusChange{Status: videos.Scripted, At: now.Add(-2 * time.Hour)}),
	}
	for i := range 12 {
		at := now.Add(-time.Duration(100+i) * time.Hour)
		vs = append(vs, video(fmt.Sprint("filler ", i), videos.Planned, at, videos.StatusChange{Status: videos.Planned, At: at}))
	}
	var top []research.Video
	for i := range 15 {
		top = append(top, research.Video{Title: fmt.Sprint("top ", i), Views: int64(1000 - i), URL: fmt.Sprint("https://www.youtube.com/watch?v=", i)})
	}
	finished := now.Add(-30 * time.Minute)
	r := researchData{top: top, last: &research.Run{Status: research.Succeeded, VideoCount: 500, Source: "youtube", FinishedAt: &finished}}
	svc := performance.NewService(pipeline{videos: vs, ideas: 7}, r, nil, 2000, func() time.Time { return now })
	d, err := svc.Overview(context.Background(), "acct", "ch")
	if err != nil {
		t.Fatal(err)
	}
	if d.PipelineStatus != (performance.PipelineStatus{Ideas: 7, Planned: 12, Scripted: 1, Published: 2}) {
		t.Errorf("pipeline %+v", d.PipelineStatus)
	}
	if m := d.MonthlyReport; m.Month != "2026-11" || m.VideosCommitted != 14 || m.VideosPublished != 1 || m.GenerationQuota != 2000 || m.Generations != nil {
		t.Errorf("monthly report %+v", m)
	}
	if len(d.TopResearchVideos) != performance.TopResearchVideos || d.TopResearchVideos[0].Title != "top 0" {
		t.Errorf("top research videos %+v", d.TopResearchVideos)
	}
	if len(d.RecentActivity) != performance.RecentActivity || d.RecentActivity[0].Event != "research.completed: 500 videos (youtube)" ||
		d.RecentActivity[1].Event != `video.status_changed: "new" is published` {
		t.Errorf("recent activity %+v", d.RecentActivity[:3])
	}
	for i := 1; i < len(d.RecentActivity); i++ {
		if d.RecentActivity[i].Date.After(d.RecentActivity[i-1].Date) {
			t.Fatal("recent activity is not newest first")
		}
	}
	if d.GenerationStats != nil {
		t.Error("generation stats without a source of them")
	}
	with := performance.NewService(pipeline{}, researchData{}, generations{}, 2000, func() time.Time { return now })
	d, err = with.Overview(context.Background(), "acct", "ch")
	if err != nil || d.MonthlyReport.Generations == nil || *d.MonthlyReport.Generations != 42 || d.GenerationStats.Last30Days.TotalRuns != 5 {
		t.Fatalf("with generation counts: %+v, %v", d, err)
	}
	if len(d.TopResearchVideos) != 0 || d.TopResearchVideos == nil || d.RecentActivity == nil {
		t.Fatalf("an empty channel lists nil: %+v", d)
	}
}

type ownSyncs map[string]ownperf.Sync

// OwnWatch: the "analytics" channel has a young upload without a signal yet.
func (o ownSyncs) OwnWatch(_ context.Context, channelID string) (ownperf.Watch, int64, error) {
	if channelID != "analytics" {
		return ownperf.Watch{}, 0, nil
	}
	return ownperf.Watch{Videos: []ownperf.Watched{{ID: "abcdefghijk", Title: "new", PublishedAt: now.Add(-3 * time.Hour),
		Last: &ownperf.Evaluation{At: now.Add(-time.Hour), AgeHours: 2, Views: 40, Signal: ownperf.SignalNone, BaselineSize: 3,
			Reason: "3 of the channel's earlier uploads have a views curve at 2 hours; 5 are needed"}}}}, 1, nil
}

func (o ownSyncs) OwnSync(_ context.Context, channelID string) (ownperf.Sync, int64, error) {
	s, ok := o[channelID]
	if !ok {
		return ownperf.Sync{}, 0, nil
	}
	return s, 1, nil
}

// monthlyReport is the service's, labelled so, until a sync with analytics; then YouTube Analytics' (decision 43).
func TestMonthlyReportSource(t *testing.T) {
	synced := now.Add(-time.Hour)
	id := "dQw4w9WgXcQ"
	score := 1.5
	linked := video("linked", videos.Published, now.AddDate(0, 0, -10))
	linked.ID = "0190f000-0000-7000-8000-0000000000d1"
	linked.YouTubeVideoID = &id
	linked.Reviews = []videos.Review{{Day: 7, Views: 100, OwnOutlierScore: &score, At: now.Add(-2 * time.Hour)}}
	own := ownSyncs{
		"analytics": {YouTubeChannelID: "UCa", SyncedAt: &synced, Analytics: ownperf.AnalyticsAvailable, PeriodStart: "2026-10-23",
			PeriodEnd: "2026-11-19", Days: []ownperf.Day{{Date: "2026-11-19", Figures: ownperf.Figures{Views: 10, WatchMinutes: 5,
				AverageViewPercentage: 40, SubscribersGained: 3, SubscribersLost: 1}}},
			Uploads:     []ownperf.Upload{{ID: id, Title: "linked", Views: 100, Analytics: &ownperf.Figures{Views: 10, AverageViewPercentage: 40}}},
			SearchTerms: []ownperf.SearchTerm{{Term: "vegan lunch", Views: 120}}},
		"forbidden": {YouTubeChannelID: "UCb", SyncedAt: &synced, Analytics: ownperf.AnalyticsUnavailable, Message: "403"},
	}
	svc := performance.NewService(pipeline{videos: []videos.Video{linked}}, researchData{}, nil, 2000, func() time.Time { return now }).WithOwn(own)
	for _, c := range []struct {
		channel, source string
		ownChannel      bool
	}{{"none", "service", false}, {"forbidden", "service", true}, {"analytics", "youtube analytics", true}} {
		d, err := svc.Overview(context.Background(), "acc", c.channel)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(d)
		if _, err := contract.ValidateJSON("PerformanceData", b); err != nil {
			t.Fatalf("%s: %v\n%s", c.channel, err, b)
		}
		var got struct {
			MonthlyReport map[string]any `json:"monthlyReport"`
			OwnChannel    *struct {
				Analytics    string            `json:"analytics"`
				Reviews      []json.RawMessage `json:"reviews"`
				EarlyWarning []struct {
					Signal, Reason string
					BaselineSize   int
				} `json:"earlyWarning"`
				SearchTerms *struct {
					Period string
					Terms  []ownperf.SearchTerm
				} `json:"searchTerms"`
			} `json:"ownChannel"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.MonthlyReport["source"] != c.source || (got.OwnChannel != nil) != c.ownChannel {
			t.Fatalf("%s: %s", c.channel, b)
		}
		switch c.source {
		case "service":
			if got.MonthlyReport["month"] != "2026-11" || got.MonthlyReport["views"] != nil {
				t.Fatalf("%s: %v", c.channel, got.MonthlyReport)
			}
		default:
			if got.MonthlyReport["views"] != 10.0 || got.MonthlyReport["subscribersNet"] != 2.0 || got.MonthlyReport["month"] != nil ||
				got.MonthlyReport["averageViewDurationSeconds"] != 30.0 || len(got.OwnChannel.Reviews) != 1 {
				t.Fatalf("%s: %s", c.channel, b)
			}
			// The early warning says why there is no signal; the search terms carry their period (decisions 53-54).
			ew, st := got.OwnChannel.EarlyWarning, got.OwnChannel.SearchTerms
			if len(ew) != 1 || ew[0].Signal != "no signal" || ew[0].BaselineSize != 3 || ew[0].Reason == "" ||
				st == nil || st.Period != "2026-10-23/2026-11-19" || len(st.Terms) != 1 || st.Terms[0].Views != 120 {
				t.Fatalf("%s: %s", c.channel, b)
			}
		}
	}
}

// The reach state and the title calibration are each channel's own: read through the store, channel A's
// eight calibrated videos give A the figure, and B (one video, another job state) sees none of them.
func TestReachAndCalibrationPerChannel(t *testing.T) {
	ctx := context.Background()
	st := store.New(memstore.New(t, pebble.WithClock(func() time.Time { return now })), store.WithClock(func() time.Time { return now }))
	const chA, chB = "0190f000-0000-7000-8000-00000000000a", "0190f000-0000-7000-8000-00000000000b"
	add := func(channelID string, i int, score, ctr float64) {
		ytID := fmt.Sprintf("yt%09d", i)
		v := video(fmt.Sprintf("0190f000-0000-7000-8000-%012d", i), videos.Published, now.AddDate(0, 0, -40))
		v.UpdatedAt, v.YouTubeVideoID = v.CreatedAt, &ytID
		v.StatusHistory = []videos.StatusChange{{Status: videos.Planned, At: v.CreatedAt}}
		v.Reviews = []videos.Review{{Day: 28, Views: 10, ImpressionsCTR: &ctr, TitleScore: &score, At: now.AddDate(0, 0, -12)}}
		if err := st.CreateVideo(ctx, channelID, v, 0, 100); err != nil {
			t.Fatal(err)
		}
	}
	// Scores 70..77 against CTRs in the same order but the last two swapped.
	for i := range 8 {
		ctr := 0.02 + float64(i)/100
		if i >= 6 {
			ctr = 0.02 + float64(13-i)/100
		}
		add(chA, i, 70+float64(i), ctr)
	}
	add(chB, 100, 90, 0.09)
	synced, job := now.Add(-time.Hour), now.Add(-10*time.Hour)
	for ch, reach := range map[string]*ownperf.ReachState{chA: {JobID: "job1", JobCreatedAt: &job, Reports: 3, LastReportCreated: &synced},
		chB: {JobID: "job2", JobCreatedAt: &job}} {
		if err := st.SaveOwnSync(ctx, ch, ownperf.Sync{YouTubeChannelID: "UC" + ch[:4], SyncedAt: &synced, Analytics: ownperf.AnalyticsUnavailable, Reach: reach}, 0); err != nil {
			t.Fatal(err)
		}
	}
	svc := performance.NewService(st, researchData{}, nil, 2000, func() time.Time { return now }).WithOwn(st)
	a, err := svc.Overview(ctx, "acc", chA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.Overview(ctx, "acc", chB)
	if err != nil {
		t.Fatal(err)
	}
	// Ranks 1..8 against 1..6, 8, 7: 1 - 6·2/(8·63).
	want := math.Round((1-12.0/504)*1000) / 1000
	if c := a.OwnChannel.TitleCalibration; c.N != 8 || c.Spearman == nil || *c.Spearman != want || a.OwnChannel.Reach.Status != ownperf.ReachAvailable {
		t.Fatalf("A: %+v, reach %+v; want spearman %v", c, a.OwnChannel.Reach, want)
	}
	if c := b.OwnChannel.TitleCalibration; c.N != 1 || c.Spearman != nil || b.OwnChannel.Reach.Status != ownperf.ReachWaiting ||
		!b.OwnChannel.Reach.FirstReportExpectedAt.Equal(job.Add(48*time.Hour)) {
		t.Fatalf("B: %+v, reach %+v", c, b.OwnChannel.Reach)
	}
	for _, d := range []performance.Data{a, b} {
		raw, _ := json.Marshal(d)
		if _, err := contract.ValidateJSON("PerformanceData", raw); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
	}
}
