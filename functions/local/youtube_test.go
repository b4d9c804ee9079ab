package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/connectiontest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

// ownVideo is a video of the connected channel with captions; its manual English track is preferred over
// the automatic one.
const ownVideo = "e2eVideo01x"

const manualVTT = `WEBVTT

00:00:01.000 --> 00:00:20.000
Welcome back: five vegan lunches under three dollars.

00:04:10.000 --> 00:04:30.000
The first lunch is a chickpea wrap.

00:08:30.000 --> 00:08:50.000
Here is what the whole week costs.
`

// Connect a channel on make run's stack as its owner would (the consent page of a real OAuth server,
// mock-oauth2-server, followed as a browser does), fetch a transcript of one of its own videos through a
// generation, refuse another channel's video, and disconnect (the grant revoked at "Google").
func TestYouTubeConnectionThroughTheLocalStack(t *testing.T) {
	// The channel's uploads, which the daily sync reads: the newest published 8 days ago under the title of
	// a pipeline video in `edited`, so the sync links it, publishes it and reviews it at day 7.
	now := time.Now().UTC()
	var uploads []research.SourceVideo
	for i := range 12 {
		uploads = append(uploads, research.SourceVideo{ID: fmt.Sprintf("e2eUpload%02d", i), ChannelID: "UCe2eaaaaaaaaaaaaaaaaaaa",
			Title: fmt.Sprintf("Vegan lunch number %d", i), PublishedAt: now.Add(-time.Duration(8+4*i) * 24 * time.Hour),
			DurationSeconds: 600, Views: int64(2000 + 500*i)})
	}
	uploads[0].Title, uploads[0].Views = "Five Vegan Lunches Under $3!", 9000
	catalog := youtubesample.NewCatalog(youtubesample.CatalogChannel{
		Channel: research.Channel{ID: "UCe2eaaaaaaaaaaaaaaaaaaa", Title: "Vegan Bites"}, Uploads: uploads})
	google := connectiontest.StartWith(t, catalog)
	analytics := youtubetest.StartAnalytics(catalog, time.Now)
	analytics.TrustOwners(google.YouTube)
	t.Cleanup(analytics.Close)
	google.Owns("owner-e2e", "UCe2eaaaaaaaaaaaaaaaaaaa", "Vegan Bites", "en")
	google.YouTube.AddCaptions("UCe2eaaaaaaaaaaaaaaaaaaa", ownVideo,
		youtubetest.CaptionTrack{ID: "asr-en", Language: "en", Kind: "asr", LastUpdated: "2026-11-01T00:00:00Z",
			VTT: "WEBVTT\n\n00:00:01.000 --> 00:00:30.000\nautomatic words\n"},
		youtubetest.CaptionTrack{ID: "manual-en", Language: "en", Kind: "standard", Name: "English", LastUpdated: "2026-11-02T00:00:00Z", VTT: manualVTT})
	google.YouTube.AddCaptions("UCothercccccccccccccccc", "otherVideo1", youtubetest.CaptionTrack{ID: "other", Language: "en", Kind: "standard", VTT: manualVTT})
	env := map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey, "CSS_RESEARCH_SCHEDULE_EVERY": "1h",
		"CSS_GOOGLE_CLIENT_ID": "css-test-client", "CSS_GOOGLE_CLIENT_SECRET": "css-test-secret",
		"CSS_GOOGLE_AUTH_ENDPOINT": google.AuthURL(), "CSS_GOOGLE_TOKEN_ENDPOINT": google.TokenURL(),
		"CSS_GOOGLE_REVOKE_ENDPOINT": google.RevokeURL(), "CSS_YOUTUBE_ENDPOINT": google.YouTube.Endpoint(),
		"CSS_YOUTUBE_ANALYTICS_ENDPOINT": analytics.Endpoint(), "CSS_YOUTUBE_REPORTING_ENDPOINT": analytics.Endpoint()}
	base, _, stop := start(t, env)
	defer stop()
	api := base + "/api/v1"
	// The pipeline video the sync will link to its upload (title spelled otherwise).
	status, body := call(t, "POST", api+"/my-videos", devKey, `{"title":"five vegan lunches under 3","contentType":"Long","formulaType":"listicle"}`)
	if status != 200 && status != 201 {
		t.Fatalf("create the pipeline video: %d %s", status, body)
	}
	var pipeline struct{ ID string }
	_ = json.Unmarshal([]byte(body), &pipeline)
	if status, body = call(t, "POST", api+"/my-videos/status", devKey, `{"videoId":"`+pipeline.ID+`","status":"edited"}`); status != 200 {
		t.Fatalf("move the pipeline video to edited: %d %s", status, body)
	}

	if _, health := call(t, "GET", api+"/health", "", ""); !strings.Contains(health, `"youtubeConnection":"ok"`) {
		t.Fatalf("health %s", health)
	}
	if _, body := call(t, "GET", api+"/youtube/connection", devKey, ""); !strings.Contains(body, `"status":"not_connected"`) {
		t.Fatalf("before connecting: %s", body)
	}

	// The connect-link attack (issue 32): the tenant opens its start link, passes Google's consent link on to
	// the creator, who consents in a browser of their own. That browser has no binding cookie: 400, nothing
	// is connected, and the link is spent.
	startLink := func() string {
		t.Helper()
		status, body := call(t, "POST", api+"/youtube/connection", devKey, "")
		var started struct{ AuthorizationURL, ExpiresAt string }
		if err := json.Unmarshal([]byte(body), &started); err != nil || status != 200 ||
			!strings.HasPrefix(started.AuthorizationURL, base+"/api/youtube/oauth/start?state=") {
			t.Fatalf("POST /youtube/connection: %d %s", status, body)
		}
		return started.AuthorizationURL
	}
	callbackIn := func(callback *url.URL, cookie string) (int, string, *http.Response) {
		t.Helper()
		req, _ := http.NewRequest("GET", callback.String(), nil)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(page), res
	}
	attackerLink := startLink()
	consentLink, attackerCookie := connectiontest.Open(t, attackerLink)
	if !strings.HasPrefix(consentLink, google.AuthURL()) || !strings.HasPrefix(attackerCookie, "css-youtube-connect=") {
		t.Fatalf("start step: %s %s", consentLink, attackerCookie)
	}
	// The start link works once.
	if res, err := http.Get(attackerLink); err != nil || res.StatusCode != 400 {
		t.Fatalf("the start link again: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	creatorsRedirect := connectiontest.Consent(t, consentLink, "owner-e2e")
	if status, page, _ := callbackIn(creatorsRedirect, ""); status != 400 || !strings.Contains(page, "started in another browser") {
		t.Fatalf("the creator's browser without the cookie: %d %s", status, page)
	}
	if status, page, _ := callbackIn(creatorsRedirect, attackerCookie); status != 400 {
		t.Fatalf("the spent link: %d %s", status, page)
	}
	if _, body := call(t, "GET", api+"/youtube/connection", devKey, ""); !strings.Contains(body, `"status":"not_connected"`) {
		t.Fatalf("after the refused link: %s", body)
	}

	began := time.Now()
	link := startLink()
	consentLink, cookie := connectiontest.Open(t, link)
	callback := connectiontest.Consent(t, consentLink, "owner-e2e")
	if !strings.HasPrefix(callback.String(), base+"/api/youtube/oauth/callback?") {
		t.Fatalf("Google sends the browser to %s", callback)
	}
	status, page, res := callbackIn(callback, cookie)
	t.Logf("one connect on loopback (POST, start, consent, callback): %v", time.Since(began))
	if status != 200 || !strings.Contains(page, "Vegan Bites") || !strings.Contains(page, "to your channel “") || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") || res.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("callback: %d %v %s", status, res.Header, page)
	}
	// The link is spent.
	if status, _, _ := callbackIn(callback, cookie); status != 400 {
		t.Fatalf("the callback again: %d", status)
	}
	_, body = call(t, "GET", api+"/youtube/connection", devKey, "")
	var conn map[string]any
	_ = json.Unmarshal([]byte(body), &conn)
	if conn["status"] != "connected" || conn["youtubeChannelId"] != "UCe2eaaaaaaaaaaaaaaaaaaa" || conn["youtubeChannelTitle"] != "Vegan Bites" {
		t.Fatalf("connection %s", body)
	}
	// Connecting queued the channel's first sync (decision 43): its uploads and analytics arrive, the
	// edited video is linked to its upload, published and reviewed at day 7, and the report is YouTube's.
	deadline := time.Now().Add(60 * time.Second)
	for conn["lastSyncAt"] == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		_, body = call(t, "GET", api+"/youtube/connection", devKey, "")
		_ = json.Unmarshal([]byte(body), &conn)
	}
	if conn["lastSyncAt"] == nil {
		t.Fatalf("no sync after connecting: %s", body)
	}
	_, body = call(t, "GET", api+"/performance", devKey, "")
	var perf struct {
		MonthlyReport struct {
			Source    string
			Views     int64
			TopVideos []struct{ YoutubeVideoID string }
			PeriodEnd string
		}
	}
	if err := json.Unmarshal([]byte(body), &perf); err != nil || perf.MonthlyReport.Source != "youtube analytics" ||
		perf.MonthlyReport.Views <= 0 || len(perf.MonthlyReport.TopVideos) == 0 {
		t.Fatalf("performance after the sync: %s", body)
	}
	_, body = call(t, "GET", api+"/my-videos", devKey, "")
	var list struct {
		Videos []struct {
			ID             string
			Status         string
			YoutubeVideoID string
			Reviews        []struct {
				Day   int
				Views int64
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Videos) != 1 || list.Videos[0].ID != pipeline.ID {
		t.Fatalf("the pipeline after the sync: %s", body)
	}
	if linked := list.Videos[0]; linked.YoutubeVideoID != "e2eUpload00" || linked.Status != "published" ||
		len(linked.Reviews) != 1 || linked.Reviews[0].Day != 7 || linked.Reviews[0].Views <= 0 {
		t.Fatalf("the pipeline video after the sync: %s", body)
	}
	t.Logf("sync after connecting: %d analytics queries, %d Data API units in all so far", analytics.Queries(), google.YouTube.Units())
	unitsBefore := google.YouTube.Units()

	// Clips from the channel's own video: its manual track, cue times kept.
	clips := `{"title":"Meal prep live","videoUrl":"https://www.youtube.com/watch?v=` + ownVideo + `","clipCount":3}`
	status, body = call(t, "POST", api+"/generate/clips", devKey, clips)
	if status != 200 {
		t.Fatalf("clips from videoUrl: %d %s", status, body)
	}
	_, hist := call(t, "GET", api+"/history?tool=clips&limit=1", devKey, "")
	if !strings.Contains(hist, "chickpea wrap") || strings.Contains(hist, "automatic words") {
		t.Errorf("the run's input does not hold the manual track's words: %s", hist)
	}
	spent := google.YouTube.Units() - unitsBefore
	t.Logf("units of the first transcript: %d", spent)
	if spent != 250 || google.YouTube.Calls()["captions.download"] != 1 {
		t.Fatalf("the first transcript cost %d units (%v), want 250", spent, google.YouTube.Calls())
	}
	// Again: the track is cached, only captions.list is spent.
	if status, body = call(t, "POST", api+"/generate/clips", devKey, clips); status != 200 {
		t.Fatalf("clips again: %d %s", status, body)
	}
	if spent := google.YouTube.Units() - unitsBefore; spent != 300 || google.YouTube.Calls()["captions.download"] != 1 {
		t.Fatalf("the second transcript cost %d units in all (%v), want 300", spent, google.YouTube.Calls())
	}
	// Another channel's video, and a URL that is not YouTube's: refused, naming videoUrl.
	for _, url := range []string{"https://youtu.be/otherVideo1", "https://example.com/watch?v=" + ownVideo} {
		status, body = call(t, "POST", api+"/generate/clips", devKey, `{"title":"x","videoUrl":"`+url+`"}`)
		if status != 400 || !strings.Contains(body, `"VALIDATION_ERROR"`) || !strings.Contains(body, "videoUrl: transcripts are fetched only for the connected channel's own videos; send transcript") {
			t.Fatalf("%s: %d %s", url, status, body)
		}
	}

	if status, body = call(t, "DELETE", api+"/youtube/connection", devKey, ""); status != 204 {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	if got := google.YouTube.Revoked(); len(got) != 1 || got[0] == "" {
		t.Fatalf("revocations received: %v", got)
	}
	if _, body = call(t, "GET", api+"/youtube/connection", devKey, ""); !strings.Contains(body, `"status":"not_connected"`) {
		t.Fatalf("after disconnecting: %s", body)
	}
	// What the sync stored went with the connection: the report is the service's own again.
	if _, body = call(t, "GET", api+"/performance", devKey, ""); !strings.Contains(body, `"source":"service"`) {
		t.Fatalf("performance after disconnecting: %s", body)
	}
	// Without the connection, the own video's URL is refused too.
	if status, body = call(t, "POST", api+"/generate/clips", devKey, clips); status != 400 || !strings.Contains(body, "videoUrl") {
		t.Fatalf("clips after disconnecting: %d %s", status, body)
	}
}
