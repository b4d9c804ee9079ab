package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/connectiontest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

// googleClock is the Reporting stand-in's time, moved on by the test: YouTube's 48 hours pass at once.
type googleClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *googleClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *googleClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// Reach end to end (decisions 51, 52): connecting makes the reporting job, /performance says when the
// first report is due, nothing arrives before "48 hours", then the reports' impressions and CTR reach the
// day-28 reviews, and with 8 reviewed titles the service graded the calibration figure is shown; a ninth,
// the creator's own title, is graded when first reviewed and counts too.
func TestReachAndTitleCalibrationThroughTheLocalStack(t *testing.T) {
	const ytID = "UCe2ereachaaaaaaaaaaaaaa"
	now := time.Now().UTC()
	var uploads []research.SourceVideo
	for i := range 10 {
		uploads = append(uploads, research.SourceVideo{ID: fmt.Sprintf("e2eReach%03d", i), ChannelID: ytID,
			Title: fmt.Sprintf("Old upload %d", i), PublishedAt: now.Add(-time.Duration(30+i) * 24 * time.Hour),
			DurationSeconds: 600, Views: int64(3000 + 700*i)})
	}
	catalog := youtubesample.NewCatalog(youtubesample.CatalogChannel{Channel: research.Channel{ID: ytID, Title: "Reach Bites"}, Uploads: uploads})
	google := connectiontest.StartWith(t, catalog)
	gclock := &googleClock{}
	analytics := youtubetest.StartAnalytics(catalog, gclock.now)
	analytics.TrustOwners(google.YouTube)
	t.Cleanup(analytics.Close)
	google.Owns("owner-reach", ytID, "Reach Bites", "en")
	env := map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey, "CSS_RESEARCH_SCHEDULE_EVERY": "1h",
		"CSS_GOOGLE_CLIENT_ID": "css-test-client", "CSS_GOOGLE_CLIENT_SECRET": "css-test-secret",
		"CSS_GOOGLE_AUTH_ENDPOINT": google.AuthURL(), "CSS_GOOGLE_TOKEN_ENDPOINT": google.TokenURL(),
		"CSS_GOOGLE_REVOKE_ENDPOINT": google.RevokeURL(), "CSS_YOUTUBE_ENDPOINT": google.YouTube.Endpoint(),
		"CSS_YOUTUBE_ANALYTICS_ENDPOINT": analytics.Endpoint(), "CSS_YOUTUBE_REPORTING_ENDPOINT": analytics.Endpoint()}
	base, _, stop := start(t, env)
	defer stop()
	api := base + "/api/v1"

	// connect connects the channel as its owner and waits for the sync connecting queues.
	lastSync := ""
	connect := func() {
		t.Helper()
		status, body := call(t, "POST", api+"/youtube/connection", devKey, "")
		var started struct{ AuthorizationURL string }
		if err := json.Unmarshal([]byte(body), &started); err != nil || status != 200 {
			t.Fatalf("POST /youtube/connection: %d %s", status, body)
		}
		consent, cookie := connectiontest.Open(t, started.AuthorizationURL)
		callback := connectiontest.Consent(t, consent, "owner-reach")
		req, _ := http.NewRequest("GET", callback.String(), nil)
		req.Header.Set("Cookie", cookie)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("callback: %v %v", res, err)
		}
		res.Body.Close()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			var conn struct{ LastSyncAt string }
			_, body = call(t, "GET", api+"/youtube/connection", devKey, "")
			if json.Unmarshal([]byte(body), &conn) == nil && conn.LastSyncAt != "" && conn.LastSyncAt != lastSync {
				lastSync = conn.LastSyncAt
				return
			}
		}
		t.Fatalf("no sync after connecting")
	}
	type review struct {
		Day            int
		Impressions    *int64
		ImpressionsCtr *float64
		TitleScore     *float64
	}
	var perf struct {
		OwnChannel struct {
			Reach struct {
				Status, Message                     string
				JobCreatedAt, FirstReportExpectedAt time.Time
			}
			TitleCalibration struct {
				N, Minimum int
				Spearman   *float64
			}
			Reviews []struct {
				YoutubeVideoID string
				Review         review
			}
		}
		MonthlyReport struct {
			TopVideos []struct {
				Impressions    *int64
				ImpressionsCtr *float64
			}
		}
	}
	performance := func() {
		t.Helper()
		_, body := call(t, "GET", api+"/performance", devKey, "")
		if err := json.Unmarshal([]byte(body), &perf); err != nil {
			t.Fatalf("performance: %v %s", err, body)
		}
	}

	connect()
	if jobs := analytics.Jobs(ytID); len(jobs) != 1 {
		t.Fatalf("jobs after connecting: %v", jobs)
	}
	performance()
	r := perf.OwnChannel.Reach
	if r.Status != "waiting" || !r.FirstReportExpectedAt.Equal(r.JobCreatedAt.Add(48*time.Hour)) || !strings.Contains(r.Message, "48 hours") {
		t.Fatalf("reach after connecting: %+v", r)
	}

	// Titles the service graded, published and linked by hand to eight uploads over 28 days old.
	type graded struct {
		Title string
		Score float64
	}
	var titles []graded
	for _, topic := range []string{"Vegan lunches on a budget", "Meal prep for busy weeks", "Cheap protein at home"} {
		status, body := call(t, "POST", api+"/generate/titles", devKey, `{"title":"`+topic+`","type":"listicle","videoType":"Long"}`)
		var res struct{ Titles []graded }
		if err := json.Unmarshal([]byte(body), &res); err != nil || status != 200 {
			t.Fatalf("titles: %d %s", status, body)
		}
		titles = append(titles, res.Titles...)
	}
	// A title two runs proposed scores as the newest run graded it (decision 52): keep each title once, with
	// its newest score.
	newest, distinct := map[string]float64{}, []graded{}
	for _, g := range titles {
		key := strings.ToLower(strings.TrimSpace(g.Title))
		if _, seen := newest[key]; !seen {
			distinct = append(distinct, g)
		}
		newest[key] = g.Score
	}
	for i := range distinct {
		distinct[i].Score = newest[strings.ToLower(strings.TrimSpace(distinct[i].Title))]
	}
	if len(distinct) < 8 {
		t.Fatalf("%d distinct titles", len(distinct))
	}
	scoreOf := map[string]float64{}
	for i, g := range distinct[:8] {
		status, body := call(t, "POST", api+"/my-videos", devKey, `{"title":`+quote(g.Title)+`,"contentType":"Long","formulaType":"listicle"}`)
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(body), &v); err != nil || status != 201 && status != 200 {
			t.Fatalf("commit %q: %d %s", g.Title, status, body)
		}
		if status, body = call(t, "POST", api+"/my-videos/status", devKey, `{"videoId":"`+v.ID+`","status":"published"}`); status != 200 {
			t.Fatalf("publish: %d %s", status, body)
		}
		if status, body = call(t, "PATCH", api+"/my-videos/"+v.ID, devKey, `{"youtubeVideoId":"`+uploads[i].ID+`"}`); status != 200 {
			t.Fatalf("link: %d %s", status, body)
		}
		scoreOf[uploads[i].ID] = g.Score
	}
	// A title of the creator's own, which no run proposed, is graded when its video is first reviewed.
	own := uploads[8]
	status, body := call(t, "POST", api+"/my-videos", devKey, `{"title":`+quote(own.Title)+`,"contentType":"Long","formulaType":"story"}`)
	var ownVideo struct{ ID string }
	if err := json.Unmarshal([]byte(body), &ownVideo); err != nil || status != 201 && status != 200 {
		t.Fatalf("commit the creator's own title: %d %s", status, body)
	}
	if status, body = call(t, "POST", api+"/my-videos/status", devKey, `{"videoId":"`+ownVideo.ID+`","status":"published"}`); status != 200 {
		t.Fatalf("publish: %d %s", status, body)
	}
	if status, body = call(t, "PATCH", api+"/my-videos/"+ownVideo.ID, devKey, `{"youtubeVideoId":"`+own.ID+`"}`); status != 200 {
		t.Fatalf("link: %d %s", status, body)
	}

	// 47 "hours" on, a sync (connecting again queues one) finds no report yet.
	gclock.add(47 * time.Hour)
	connect()
	performance()
	if perf.OwnChannel.Reach.Status != "waiting" {
		t.Fatalf("reach at 47 h: %+v", perf.OwnChannel.Reach)
	}
	for _, rv := range perf.OwnChannel.Reviews {
		if rv.Review.Impressions != nil {
			t.Fatalf("a review with reach before any report: %+v", rv)
		}
	}
	// 48 hours: the day-28 reviews made now carry impressions and CTR, and the calibration is shown.
	gclock.add(time.Hour)
	connect()
	performance()
	if perf.OwnChannel.Reach.Status != "available" || len(analytics.Jobs(ytID)) != 1 {
		t.Fatalf("reach at 48 h: %+v, jobs %v", perf.OwnChannel.Reach, analytics.Jobs(ytID))
	}
	var scores, ctrs []float64
	for _, rv := range perf.OwnChannel.Reviews {
		if rv.Review.Day != 28 {
			continue
		}
		if rv.YoutubeVideoID == own.ID {
			if rv.Review.TitleScore == nil || *rv.Review.TitleScore < 0 || *rv.Review.TitleScore > 100 {
				t.Fatalf("the creator's own title was not graded on its review: %+v", rv.Review)
			}
			scoreOf[own.ID] = *rv.Review.TitleScore
		}
		if rv.Review.Impressions == nil || rv.Review.ImpressionsCtr == nil || *rv.Review.ImpressionsCtr != youtubetest.ReachCTR(rv.YoutubeVideoID) ||
			rv.Review.TitleScore == nil || *rv.Review.TitleScore != scoreOf[rv.YoutubeVideoID] {
			t.Fatalf("day-28 review of %s: impressions %v, CTR %v (want %v), title score %v (want %v)", rv.YoutubeVideoID, deref(rv.Review.Impressions), deref(rv.Review.ImpressionsCtr), youtubetest.ReachCTR(rv.YoutubeVideoID), deref(rv.Review.TitleScore), scoreOf[rv.YoutubeVideoID])
		}
		scores, ctrs = append(scores, *rv.Review.TitleScore), append(ctrs, *rv.Review.ImpressionsCtr)
	}
	want, ok := ownperf.Spearman(scores, ctrs)
	c := perf.OwnChannel.TitleCalibration
	if len(scores) != 9 || c.N != 9 || c.Minimum != 8 || !ok || c.Spearman == nil || *c.Spearman != math.Round(want*1000)/1000 {
		t.Fatalf("calibration %+v over %d reviews; want %v (%v)", c, len(scores), want, ok)
	}
	if len(perf.MonthlyReport.TopVideos) == 0 || perf.MonthlyReport.TopVideos[0].Impressions == nil {
		t.Fatalf("top videos without reach: %+v", perf.MonthlyReport.TopVideos)
	}
	// Over MCP: get_performance mirrors the overview, css://video/{id} the reviewed video.
	mcpCall := func(method, params string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		req.Header.Set("Authorization", "Bearer "+devKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	got := mcpCall("tools/call", `{"name":"get_performance","arguments":{}}`)
	if !strings.Contains(got, "titleCalibration") || !strings.Contains(got, "impressionsCtr") || !strings.Contains(got, "spearman") {
		t.Fatalf("get_performance over MCP: %s", got)
	}
	_, body = call(t, "GET", api+"/my-videos", devKey, "")
	var list struct{ Videos []struct{ ID string } }
	_ = json.Unmarshal([]byte(body), &list)
	if got = mcpCall("resources/read", `{"uri":"css://video/`+list.Videos[0].ID+`"}`); !strings.Contains(got, "impressionsCtr") || !strings.Contains(got, "titleScore") {
		t.Fatalf("css://video over MCP: %s", got)
	}
	calls, downloads := analytics.ReportingCalls()
	t.Logf("reach: %d Reporting API calls, %d reports downloaded; calibration n=%d spearman=%v", calls, downloads, c.N, *c.Spearman)
}

// quote is s as a JSON string (the llm-tagged tests use it too).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// deref is *p, or the zero value for nil, for messages.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
