package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/connectiontest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

// The connected channel's results, deeper (issue 31 items 2-4), through make run's stack: an upload 90
// minutes old with far fewer views than the channel's earlier uploads had at that age fires
// video.underperforming once, signed; a reviewed video names where it lost viewers with the words of its
// own cached captions; the channel's own search terms show in /performance and give ideas their demand.
// The stack runs on the wall clock; the stand-ins' views grow with it (youtubetest.SetClock), so the
// hourly read sees the young upload as it is now.
func TestOwnResultsDeeperThroughTheLocalStack(t *testing.T) {
	const ytChannel = "UCe2ewarnaaaaaaaaaaaaaaa"
	now := time.Now().UTC()
	uploads := []research.SourceVideo{{ID: "e2eWarnNew0", ChannelID: ytChannel, Title: "Vegan lunch ideas for busy days",
		PublishedAt: now.Add(-90 * time.Minute), DurationSeconds: 600, Views: 30}}
	for i := 1; i <= 10; i++ {
		uploads = append(uploads, research.SourceVideo{ID: fmt.Sprintf("e2eWarnUp%02d", i), ChannelID: ytChannel,
			Title: fmt.Sprintf("Vegan lunch ideas part %d", i), PublishedAt: now.Add(-time.Hour).AddDate(0, 0, -5-3*i),
			DurationSeconds: 600, Views: int64(4000 + 300*i)})
	}
	reviewed := uploads[1] // 8 days old: reviewed at day 7 once linked
	catalog := youtubesample.NewCatalog(youtubesample.CatalogChannel{
		Channel: research.Channel{ID: ytChannel, Title: "Vegan Bites"}, Uploads: uploads})
	google := connectiontest.StartWith(t, catalog)
	google.YouTube.SetClock(time.Now)
	analytics := youtubetest.StartAnalytics(catalog, time.Now)
	analytics.TrustOwners(google.YouTube)
	t.Cleanup(analytics.Close)
	google.Owns("owner-warn", ytChannel, "Vegan Bites", "en")
	google.YouTube.AddCaptions(ytChannel, reviewed.ID, youtubetest.CaptionTrack{ID: "manual-en", Language: "en", Kind: "standard",
		Name: "English", LastUpdated: "2026-11-02T00:00:00Z", VTT: captionsEvery(10, 600)})
	env := map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey, "CSS_RESEARCH_SCHEDULE_EVERY": "1s",
		"CSS_GOOGLE_CLIENT_ID": "css-test-client", "CSS_GOOGLE_CLIENT_SECRET": "css-test-secret",
		"CSS_GOOGLE_AUTH_ENDPOINT": google.AuthURL(), "CSS_GOOGLE_TOKEN_ENDPOINT": google.TokenURL(),
		"CSS_GOOGLE_REVOKE_ENDPOINT": google.RevokeURL(), "CSS_YOUTUBE_ENDPOINT": google.YouTube.Endpoint(),
		"CSS_YOUTUBE_ANALYTICS_ENDPOINT": analytics.Endpoint()}
	base, _, stop := start(t, env)
	defer stop()
	api := base + "/api/v1"

	receiver := webhookstest.StartReceiver(t)
	receiver.CheckTimestamp = true
	status, body := call(t, "POST", base+"/api/webhooks", devKey,
		fmt.Sprintf(`{"url":%q,"events":["video.underperforming","video.outperforming"]}`, receiver.URL()))
	if status != 201 {
		t.Fatalf("register: %d %s", status, body)
	}
	receiver.Trust(decodeJSON(t, body)["secret"].(string))

	connect := func() {
		t.Helper()
		status, body := call(t, "POST", api+"/youtube/connection", devKey, "")
		var started struct{ AuthorizationURL string }
		if err := json.Unmarshal([]byte(body), &started); err != nil || status != 200 {
			t.Fatalf("POST /youtube/connection: %d %s", status, body)
		}
		consent, cookie := connectiontest.Open(t, started.AuthorizationURL)
		callback := connectiontest.Consent(t, consent, "owner-warn")
		req, _ := http.NewRequest("GET", callback.String(), nil)
		req.Header.Set("Cookie", cookie)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("callback: %v %v", res, err)
		}
		res.Body.Close()
	}
	synced := func() string {
		_, body := call(t, "GET", api+"/youtube/connection", devKey, "")
		s, _ := decodeJSON(t, body)["lastSyncAt"].(string)
		return s
	}
	connect()
	waitFor(t, "the first sync", 60*time.Second, func() bool { return synced() != "" })

	// The scheduler's pass queued the hourly read: the young upload is far below the 10 earlier ones at
	// 90 minutes (their curves from Analytics' daily views): one signed delivery.
	waitFor(t, "video.underperforming", 60*time.Second, func() bool { return len(receiver.Requests()) > 0 })
	got := receiver.Requests()[0]
	var warning struct {
		YouTubeVideoID string  `json:"youtubeVideoId"`
		Percentile     float64 `json:"percentile"`
		BaselineSize   int     `json:"baselineSize"`
		Baseline       string  `json:"baseline"`
	}
	if err := json.Unmarshal(got.Envelope.Data, &warning); err != nil || got.VerifyErr != nil || got.Envelope.Type != "video.underperforming" ||
		warning.YouTubeVideoID != "e2eWarnNew0" || warning.Percentile != 0 || warning.BaselineSize != 10 || warning.Baseline != "analytics daily views" {
		t.Fatalf("delivery %s %s (verify: %v)", got.Envelope.Type, got.Envelope.Data, got.VerifyErr)
	}

	// Where viewers left: the own video's captions cached (a generation reading it), a pipeline video of
	// its title in `edited`, and a sync (connecting again queues one) links and reviews it at day 7.
	clips := `{"title":"Lunch clips","videoUrl":"https://www.youtube.com/watch?v=` + reviewed.ID + `","clipCount":2}`
	if status, body := call(t, "POST", api+"/generate/clips", devKey, clips); status != 200 {
		t.Fatalf("clips: %d %s", status, body)
	}
	status, body = call(t, "POST", api+"/my-videos", devKey, `{"title":"Vegan lunch ideas part 1","contentType":"Long","formulaType":"listicle"}`)
	if status != 200 && status != 201 {
		t.Fatalf("commit: %d %s", status, body)
	}
	video := decodeJSON(t, body)["id"].(string)
	if status, body := call(t, "POST", api+"/my-videos/status", devKey, `{"videoId":"`+video+`","status":"edited"}`); status != 200 {
		t.Fatalf("edited: %d %s", status, body)
	}
	connect()
	var list struct {
		Videos []struct {
			YoutubeVideoID string
			Reviews        []struct {
				Day               int
				RelativeRetention *float64
				DropPoints        []struct {
					AtSeconds int
					ShareLost float64
					Caption   string
				}
			}
		}
	}
	waitFor(t, "the review", 60*time.Second, func() bool {
		_, body = call(t, "GET", api+"/my-videos", devKey, "")
		return json.Unmarshal([]byte(body), &list) == nil && len(list.Videos) == 1 && len(list.Videos[0].Reviews) == 1
	})
	if list.Videos[0].YoutubeVideoID != reviewed.ID {
		t.Fatalf("the reviewed video: %s", body)
	}
	r := list.Videos[0].Reviews[0]
	at, _ := youtubetest.RetentionDrops(reviewed.ID)
	if len(r.DropPoints) != 3 || r.RelativeRetention == nil {
		t.Fatalf("review: %s", body)
	}
	for k, d := range r.DropPoints {
		secs := at[k] * 6 // 600 s videos: a hundredth is 6 s
		if want := fmt.Sprintf("said at %d", secs/10*10); d.AtSeconds != secs || d.Caption != want || d.ShareLost <= 0 {
			t.Fatalf("drop %d: %+v, want at %ds saying %q", k, d, secs, want)
		}
	}

	// The channel's own search terms and the early warning in /performance.
	_, body = call(t, "GET", api+"/performance", devKey, "")
	var perf struct {
		OwnChannel struct {
			SearchTerms struct {
				Period string
				Terms  []struct {
					Term  string
					Views int64
				}
			}
			EarlyWarning []struct {
				YoutubeVideoID, Signal string
				BaselineSize           int
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &perf); err != nil || len(perf.OwnChannel.SearchTerms.Terms) != 1 ||
		perf.OwnChannel.SearchTerms.Terms[0].Term != "vegan lunch ideas" || len(perf.OwnChannel.EarlyWarning) != 1 ||
		perf.OwnChannel.EarlyWarning[0].Signal != "underperforming" {
		t.Fatalf("performance: %s", body)
	}
	// Ideas on the searched topic carry the term as their demand.
	status, body = call(t, "POST", api+"/generate/ideas", devKey, `{"context":"vegan lunch ideas","count":5}`)
	if status != 200 {
		t.Fatalf("ideas: %d %s", status, body)
	}
	var ideas struct {
		Ideas []struct {
			Title  string
			Demand *struct {
				Source, Term, Period string
				Views                int64
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &ideas); err != nil {
		t.Fatal(err)
	}
	withDemand := 0
	for _, i := range ideas.Ideas {
		if d := i.Demand; d != nil {
			if d.Source != "own search terms" || d.Term != "vegan lunch ideas" || d.Views != perf.OwnChannel.SearchTerms.Terms[0].Views ||
				d.Period != perf.OwnChannel.SearchTerms.Period {
				t.Fatalf("idea %q: demand %+v", i.Title, d)
			}
			withDemand++
		}
	}
	if withDemand == 0 {
		t.Fatalf("no idea carries demand: %s", body)
	}
	// Still one delivery of the warning: the passes since read the same hour's state.
	if n := len(receiver.Requests()); n != 1 {
		t.Fatalf("%d deliveries", n)
	}
}

// captionsEvery is WebVTT with a cue every step seconds up to end, saying when it is.
func captionsEvery(step, end int) string {
	var b strings.Builder
	b.WriteString("WEBVTT\n\n")
	for s := 0; s < end; s += step {
		fmt.Fprintf(&b, "00:%02d:%02d.000 --> 00:%02d:%02d.000\nsaid at %d\n\n", s/60, s%60, (s+step)/60, (s+step)%60, s)
	}
	return b.String()
}
