package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/videos"
)

// A connected channel's own results reach MCP: css://video/{id} shows a video's link and reviews,
// get_performance the analytics report and the reviews, content_audit the best and worst videos; the
// other channel sees none of it, and cannot link the upload (REST PATCH /my-videos/{id}).
func TestOwnResultsOverMCP(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cs := e.connect(e.keyA)
	defer cs.Close()
	now := *e.now.Load()
	committed := ok(t, cs, "commit_video", map[string]any{"title": "5 vegan lunches", "contentType": "Long", "formulaType": "listicle"})
	videoID := str(committed.structured, "id")

	// What the daily sync stored for channel A: its uploads and analytics, and one linked video reviewed.
	synced := now.Add(-time.Hour)
	up := ownperf.Upload{ID: "dQw4w9WgXcQ", Title: "5 vegan lunches", PublishedAt: now.AddDate(0, 0, -8), Views: 4200,
		Analytics: &ownperf.Figures{Views: 4000, AverageViewPercentage: 51.5, SubscribersGained: 30}}
	other := ownperf.Upload{ID: "a-b_c0123XY", Title: "older", PublishedAt: now.AddDate(0, 0, -20), Views: 2000}
	sync := ownperf.Sync{YouTubeChannelID: "UCaaaaaaaaaaaaaaaaaaaaaa", SyncedAt: &synced, Analytics: ownperf.AnalyticsAvailable,
		PeriodStart: "2026-01-01", PeriodEnd: "2026-01-28", Uploads: []ownperf.Upload{up, other},
		Days:        []ownperf.Day{{Date: "2026-01-28", Figures: ownperf.Figures{Views: 4000, WatchMinutes: 9000, AverageViewPercentage: 51.5, SubscribersGained: 30, SubscribersLost: 4}}},
		SearchTerms: []ownperf.SearchTerm{{Term: "vegan lunch ideas", Views: 800}}}
	if err := e.store.SaveOwnSync(ctx, e.channelA, sync, 0); err != nil {
		t.Fatal(err)
	}
	// And the hourly read's state: a 5-hour-old upload compared with 3 earlier ones, so no signal yet (decision 54).
	watch := ownperf.Watch{Videos: []ownperf.Watched{{ID: "newupload01", Title: "new one", PublishedAt: now.Add(-5 * time.Hour),
		Last: &ownperf.Evaluation{At: now.Add(-30 * time.Minute), AgeHours: 4.5, Views: 90, BaselineSize: 3, Signal: ownperf.SignalNone,
			Reason: "3 of the channel's earlier uploads have a views curve at 4 hours; 5 are needed"}}}}
	if err := e.store.SaveOwnWatch(ctx, e.channelA, watch, 0); err != nil {
		t.Fatal(err)
	}
	// Linked by hand through REST; the other channel's key cannot link it.
	if code, body := e.patch(t, e.keyB, videoID, `{"youtubeVideoId":"dQw4w9WgXcQ"}`); code != http.StatusNotFound {
		t.Fatalf("B linking A's video: %d %s", code, body)
	}
	if code, body := e.patch(t, e.keyA, videoID, `{"youtubeVideoId":"zzzzzzzzzzz"}`); code != http.StatusNotFound {
		t.Fatalf("an upload the sync never read: %d %s", code, body)
	}
	if code, body := e.patch(t, e.keyA, videoID, `{"youtubeVideoId":"bad id"}`); code != http.StatusBadRequest || !strings.Contains(body, "youtubeVideoId") {
		t.Fatalf("a malformed id: %d %s", code, body)
	}
	if code, body := e.patch(t, e.keyA, videoID, `{}`); code != http.StatusBadRequest || !strings.Contains(body, "youtubeVideoId") {
		t.Fatalf("no youtubeVideoId: %d %s", code, body)
	}
	if code, body := e.patch(t, e.keyA, "0190f000-0000-7000-8000-0000000000ee", `{"youtubeVideoId":"dQw4w9WgXcQ"}`); code != http.StatusNotFound {
		t.Fatalf("an unknown video: %d %s", code, body)
	}
	if code, body := e.patch(t, e.keyA, videoID, `{"youtubeVideoId":"dQw4w9WgXcQ"}`); code != http.StatusOK || !strings.Contains(body, `"youtubeVideoId":"dQw4w9WgXcQ"`) {
		t.Fatalf("link: %d %s", code, body)
	}
	v, version, err := e.store.GetVideo(ctx, e.channelA, videoID)
	if err != nil {
		t.Fatal(err)
	}
	score, pct, subs := 2.1, 51.5, int64(30)
	rel := 0.42
	v.Reviews = []videos.Review{{Day: 7, Views: 4200, OwnOutlierScore: &score, AverageViewPercentage: &pct, SubscribersGained: &subs, At: now.Add(-time.Hour),
		DropPoints: []videos.DropPoint{{AtSeconds: 42, ElapsedRatio: 0.07, ShareLost: 0.12, Caption: "and now the sponsor"}}, RelativeRetention: &rel}}
	if err := e.store.UpdateVideo(ctx, e.channelA, v, version); err != nil {
		t.Fatal(err)
	}

	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "css://video/" + videoID})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"youtubeVideoId":"dQw4w9WgXcQ"`) || !strings.Contains(res.Contents[0].Text, `"ownOutlierScore":2.1`) {
		t.Fatalf("video resource: %v %v", res, err)
	}
	if !strings.Contains(res.Contents[0].Text, `"caption":"and now the sponsor"`) || !strings.Contains(res.Contents[0].Text, `"relativeRetention":0.42`) {
		t.Fatalf("video resource without its drop points: %s", res.Contents[0].Text)
	}
	perf := ok(t, cs, "get_performance", map[string]any{})
	report, _ := perf.structured["monthlyReport"].(map[string]any)
	if report["source"] != "youtube analytics" || report["views"] != 4000.0 || report["subscribersNet"] != 26.0 || len(list(report, "topVideos")) != 1 {
		t.Fatalf("monthlyReport %v", report)
	}
	own, _ := perf.structured["ownChannel"].(map[string]any)
	if reviews := list(own, "reviews"); len(reviews) != 1 || str(reviews[0].(map[string]any), "videoId") != videoID || own["uploads"] != 2.0 {
		t.Fatalf("ownChannel %v", own)
	}
	// The early warning says why there is no signal; the search terms come with their period (decisions 53-54).
	if ew := list(own, "earlyWarning"); len(ew) != 1 || str(ew[0].(map[string]any), "signal") != "no signal" ||
		!strings.Contains(str(ew[0].(map[string]any), "reason"), "5 are needed") {
		t.Fatalf("earlyWarning %v", own["earlyWarning"])
	}
	if st, _ := own["searchTerms"].(map[string]any); str(st, "period") != "2026-01-01/2026-01-28" || len(list(st, "terms")) != 1 {
		t.Fatalf("searchTerms %v", own["searchTerms"])
	}
	audit := ok(t, cs, "content_audit", map[string]any{})
	ownRes, _ := audit.structured["ownResults"].(map[string]any)
	if best := list(ownRes, "best"); len(best) != 1 || str(best[0].(map[string]any), "title") != "5 vegan lunches" || ownRes["linked"] != 1.0 {
		t.Fatalf("content_audit ownResults %v", audit.structured)
	}
	if !strings.Contains(strings.Join(toStrings(list(audit.structured, "recommendations")), " "), "5 vegan lunches") {
		t.Fatalf("recommendations %v", audit.structured["recommendations"])
	}

	// Channel B: the service's own report, no ownChannel, no own results, not A's video.
	csB := e.connect(e.keyB)
	defer csB.Close()
	perfB := ok(t, csB, "get_performance", map[string]any{})
	if r, _ := perfB.structured["monthlyReport"].(map[string]any); r["source"] != "service" || perfB.structured["ownChannel"] != nil {
		t.Fatalf("B's performance %v", perfB.structured)
	}
	if a := ok(t, csB, "content_audit", map[string]any{}); a.structured["ownResults"] != nil {
		t.Fatalf("B's audit %v", a.structured)
	}
	if _, err := csB.ReadResource(ctx, &sdk.ReadResourceParams{URI: "css://video/" + videoID}); err == nil {
		t.Fatal("B read A's video")
	}
}

func toStrings(xs []any) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i], _ = x.(string)
	}
	return out
}

// patch sends PATCH /api/v1/my-videos/{id} with key.
func (e *env) patch(t *testing.T, key, id, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPatch, e.srv.URL+"/api/v1/my-videos/"+id, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v any
	if resp.StatusCode == http.StatusOK && json.Unmarshal(b, &v) != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return resp.StatusCode, string(b)
}
