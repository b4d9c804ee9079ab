package ownperf_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/youtube"
)

func reachOf(s ownperf.Sync) map[string][]ownperf.ReachDay {
	out := map[string][]ownperf.ReachDay{}
	for _, u := range s.Uploads {
		if u.Reach != nil {
			out[u.ID] = u.Reach
		}
	}
	return out
}

// The job is made by the first sync (the one connecting queues), no report is read before 48 hours, the
// backfill after, and a sync that reads the same reports again changes nothing.
func TestReachJobAndReportsWithAControlledClock(t *testing.T) {
	ups := uploads(ytA, "a", 40, start)
	h := newHarness(t, ups, uploads(ytB, "b", 5, start), 0)

	rep := h.sync(t, chA)
	s := h.stored(t, chA)
	if rep.ReportingCalls != 2 || s.Reach == nil || s.Reach.JobID == "" || !s.Reach.JobCreatedAt.Equal(start) || s.Reach.Reports != 0 {
		t.Fatalf("first sync: report %+v, reach %+v; want jobs.list and jobs.create", rep, s.Reach)
	}
	st := s.Reach.Status()
	if st.Status != ownperf.ReachWaiting || !st.FirstReportExpectedAt.Equal(start.Add(48*time.Hour)) ||
		!strings.Contains(st.Message, "48 hours") || !strings.Contains(st.Message, start.Add(48*time.Hour).Format(time.RFC3339)) {
		t.Fatalf("status before the first report: %+v", st)
	}

	// 47 hours on: still no report, and never a second job.
	h.clock.add(47 * time.Hour)
	rep = h.sync(t, chA)
	if s = h.stored(t, chA); rep.ReportingCalls != 1 || s.Reach.Reports != 0 || len(reachOf(s)) != 0 || len(h.analytics.Jobs(ytA)) != 1 {
		t.Fatalf("at 47 h: report %+v, reach %+v, %d uploads with reach, jobs %v", rep, s.Reach, len(reachOf(s)), h.analytics.Jobs(ytA))
	}

	// 48 hours: the backfill, 30 days before the job to the job's day, in 4 pages of 10.
	h.clock.add(time.Hour)
	rep = h.sync(t, chA)
	s = h.stored(t, chA)
	if rep.ReportingCalls != 4+31 || s.Reach.Reports != 31 || s.Reach.Status().Status != ownperf.ReachAvailable {
		t.Fatalf("at 48 h: report %+v, reach %+v", rep, s.Reach)
	}
	today := h.clock.now().Truncate(24 * time.Hour)
	for _, v := range ups[:10] {
		u, _ := s.Upload(v.ID)
		var want int64
		for d := start.Truncate(24*time.Hour).AddDate(0, 0, -30); !d.After(start); d = d.AddDate(0, 0, 1) {
			want += youtubetest.ReachImpressions(v, d, today)
		}
		impr, ctr, ok := ownperf.ReachOver(u.Reach, "2000-01-01", "2999-12-31")
		// The report's rows are split by subscribed status: the days add them up, CTR weighted.
		if !ok || impr != want || want == 0 || math.Abs(ctr-youtubetest.ReachCTR(v.ID)) > 1e-9 {
			t.Fatalf("upload %s: %d impressions at %v; want %d at %v", v.ID, impr, ctr, want, youtubetest.ReachCTR(v.ID))
		}
	}
	before := reachOf(s)

	// The same reports read again (a redelivered message after a failed save) change nothing.
	s.Reach.LastReportCreated, s.Reach.Reports = nil, 0
	_, ver, _ := h.store.OwnSync(context.Background(), chA)
	if err := h.store.SaveOwnSync(context.Background(), chA, s, ver); err != nil {
		t.Fatal(err)
	}
	h.sync(t, chA)
	if s = h.stored(t, chA); !reflect.DeepEqual(reachOf(s), before) || s.Reach.Reports != 31 {
		t.Fatalf("reading the reports again changed the reach (%d reports)", s.Reach.Reports)
	}
	// A sync with nothing new downloads nothing.
	_, downloads := h.analytics.ReportingCalls()
	if rep = h.sync(t, chA); rep.ReportingCalls != 1 {
		t.Fatalf("nothing new: %+v", rep)
	}
	// A day on, one new report.
	h.clock.add(24 * time.Hour)
	if rep = h.sync(t, chA); rep.ReportingCalls != 2 || h.stored(t, chA).Reach.Reports != 32 {
		t.Fatalf("a day on: %+v", rep)
	}
	if _, d := h.analytics.ReportingCalls(); d != downloads+1 {
		t.Fatalf("downloads %d then %d", downloads, d)
	}
	// The monthly report's top videos carry the reach of the window.
	m, _ := ownperf.Monthly(h.stored(t, chA))
	if len(m.TopVideos) == 0 || m.TopVideos[0].Impressions == nil || m.TopVideos[0].ImpressionsCTR == nil {
		t.Fatalf("top videos %+v", m.TopVideos)
	}
	b, _ := json.Marshal(map[string]any{"monthlyReport": m})
	if _, err := contract.ValidateJSON("PerformanceData", b); err != nil {
		t.Fatalf("monthlyReport against the contract: %v", err)
	}
}

// An upload keeps the window's days only while it is among the window's 200 most viewed (the top videos
// come from those), so a channel's reach stays bounded however many uploads it has; every upload keeps its
// first 28 days, which its reviews read.
func TestReachKeptForTheRankedUploadsOnly(t *testing.T) {
	ups := uploads(ytA, "a", 260, start)
	h := newHarness(t, ups, nil, 0)
	h.sync(t, chA)
	h.clock.add(48 * time.Hour)
	h.sync(t, chA)
	s := h.stored(t, chA)
	windowStart := h.clock.now().AddDate(0, 0, -29).Format(time.DateOnly)
	var ranked, unranked, young int
	for _, u := range s.Uploads {
		reviewEnd := u.PublishedAt.AddDate(0, 0, 28).Format(time.DateOnly)
		for _, d := range u.Reach {
			if d.Date < reviewEnd {
				young++
				continue
			}
			if d.Date < windowStart {
				t.Fatalf("upload %s keeps %s, before the window and past its first 28 days", u.ID, d.Date)
			}
			if u.Analytics == nil {
				unranked++
			} else {
				ranked++
			}
		}
	}
	if unranked != 0 || ranked == 0 || young == 0 {
		t.Fatalf("window days of ranked uploads %d, of unranked %d; first-28 days %d", ranked, unranked, young)
	}
	// Every upload's days came in the report, and every ranked one keeps them.
	var withAnalytics int
	for _, u := range s.Uploads {
		if u.Analytics != nil {
			withAnalytics++
			if impr, _, ok := ownperf.ReachOver(u.Reach, windowStart, "2999-12-31"); !ok || impr == 0 {
				t.Fatalf("ranked upload %s without the window's reach", u.ID)
			}
		}
	}
	if withAnalytics == 0 || withAnalytics == len(ups) {
		t.Fatalf("%d ranked uploads", withAnalytics)
	}
}

// Reach needs no scope beyond the connection's: yt-analytics.readonly covers the Reporting API.
func TestReachScopesUnchanged(t *testing.T) {
	want := []string{"https://www.googleapis.com/auth/youtube.readonly", "https://www.googleapis.com/auth/youtube.force-ssl",
		"https://www.googleapis.com/auth/yt-analytics.readonly"}
	if !reflect.DeepEqual(connection.Scopes, want) {
		t.Fatalf("scopes %v; want %v", connection.Scopes, want)
	}
}

// A reconnect to another YouTube channel starts its reach over (the old job is not the new channel's), and
// a job already there (made by an earlier connection) is the channel's: no second one, its reports read.
func TestReachAfterReconnectingAnotherChannel(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 10, start), uploads(ytB, "b", 10, start), 0)
	h.sync(t, chB) // B's own job on ytB
	h.sync(t, chA)
	h.clock.add(48 * time.Hour)
	h.sync(t, chA)
	h.owners.mu.Lock()
	h.owners.tokens[chA], h.owners.yt[chA] = "token-b", ytB
	h.owners.mu.Unlock()
	rep := h.sync(t, chA)
	s := h.stored(t, chA)
	if jobs := h.analytics.Jobs(ytB); len(jobs) != 1 || s.Reach.JobID != jobs[0] || s.Reach.Reports != 31 || rep.ReportingCalls != 1+4+31 {
		t.Fatalf("after reconnecting to ytB: report %+v, reach %+v, ytB's jobs %v", rep, s.Reach, h.analytics.Jobs(ytB))
	}
	for id := range reachOf(s) {
		if !strings.HasPrefix(id, "b-") {
			t.Fatalf("reach of %s kept from the other channel", id)
		}
	}
}

// A report that is not a reach CSV is skipped and counted, not retried forever: the sync goes on.
func TestUnreadableReportsAreSkipped(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 10, start), nil, 0)
	h.sync(t, chA)
	h.analytics.CorruptReports(ytA)
	h.clock.add(48 * time.Hour)
	rep := h.sync(t, chA)
	s := h.stored(t, chA)
	if rep.Stopped != "" || s.Reach.Unreadable != 31 || s.Reach.Reports != 31 || len(reachOf(s)) != 0 || s.Pending != nil ||
		!strings.Contains(s.Reach.Status().Message, "31 of the 31") {
		t.Fatalf("report %+v, reach %+v, pending %+v", rep, s.Reach, s.Pending)
	}
	for _, bad := range []string{"date,video_id\n", "date,video_id,video_thumbnail_impressions,video_thumbnail_impressions_ctr\n2026-03-01,v,1,0.1\n",
		"date,video_id,video_thumbnail_impressions,video_thumbnail_impressions_ctr\n20260301,v,-1,0.1\n",
		"date,video_id,video_thumbnail_impressions,video_thumbnail_impressions_ctr\n20260301,v,1,1.5\n", "a,\"b\n"} {
		var pe *ownperf.ParseError
		if _, err := ownperf.ParseReach(strings.NewReader(bad)); !errors.As(err, &pe) {
			t.Errorf("%q: %v; want a ParseError", bad, err)
		}
	}
}

// A job deleted by the owner is made again by the next sync; a channel refusing reporting (403) keeps its
// sync, with reach unavailable and why.
func TestReachJobGoneAndReportingForbidden(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 10, start), uploads(ytB, "b", 10, start), 0)
	h.sync(t, chA)
	h.analytics.DeleteJobs(ytA)
	h.clock.add(48 * time.Hour)
	rep := h.sync(t, chA)
	s := h.stored(t, chA)
	if rep.Stopped != "" || !s.Synced() || s.Reach.JobID != "" || s.Reach.Status().Status != ownperf.ReachUnavailable {
		t.Fatalf("job gone: %+v, reach %+v", rep, s.Reach)
	}
	h.clock.add(24 * time.Hour)
	h.sync(t, chA)
	if s = h.stored(t, chA); s.Reach.JobID == "" || len(h.analytics.Jobs(ytA)) != 1 || s.Reach.Status().Status != ownperf.ReachWaiting {
		t.Fatalf("job made again: %+v", s.Reach)
	}

	h.analytics.Forbid(ytB)
	if rep = h.sync(t, chB); rep.Stopped != "" || rep.ReportingCalls != 1 {
		t.Fatalf("forbidden: %+v", rep)
	}
	if st := h.stored(t, chB).Reach.Status(); st.Status != ownperf.ReachUnavailable || !strings.Contains(st.Message, "permission") {
		t.Fatalf("forbidden: %+v", st)
	}
}

// A job the API failed to make is made by a later sync; the failure does not fail the sync.
func TestReachJobRetriedOnALaterSync(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 5, start), nil, 0)
	h.analytics.FailJobCreation(ytA, 1)
	rep := h.sync(t, chA)
	s := h.stored(t, chA)
	if rep.Stopped != "" || !s.Synced() || s.Reach.JobID != "" || s.Reach.Error == "" || s.Reach.Status().Status != ownperf.ReachUnavailable {
		t.Fatalf("failed job: report %+v, reach %+v", rep, s.Reach)
	}
	h.clock.add(24 * time.Hour)
	h.sync(t, chA)
	if s = h.stored(t, chA); s.Reach.JobID == "" || s.Reach.Error != "" || !s.Reach.JobCreatedAt.Equal(h.clock.now()) {
		t.Fatalf("retried job: %+v", s.Reach)
	}
}

// Each channel's reach is its own token's: its own job, its own videos; another channel's job and
// reports answer not found.
func TestReachTenantIsolation(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 20, start), uploads(ytB, "b", 12, start), 0)
	h.sync(t, chA)
	h.sync(t, chB)
	h.clock.add(48 * time.Hour)
	h.sync(t, chA)
	h.sync(t, chB)
	a, b := h.stored(t, chA), h.stored(t, chB)
	if a.Reach.JobID == b.Reach.JobID || len(reachOf(a)) == 0 || len(reachOf(b)) == 0 {
		t.Fatalf("jobs %s and %s, %d and %d uploads with reach", a.Reach.JobID, b.Reach.JobID, len(reachOf(a)), len(reachOf(b)))
	}
	for id := range reachOf(b) {
		if !strings.HasPrefix(id, "b-") {
			t.Fatalf("B holds the reach of %s", id)
		}
	}
	ctx := context.Background()
	ownerB, err := youtube.OwnerAccess{Clients: h.owners, ReportingEndpoint: h.analytics.Endpoint()}.Owner(ctx, chB)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ownerB.Reporting.Reports(ctx, a.Reach.JobID, time.Time{}, ""); !errors.Is(err, ownperf.ErrJobGone) {
		t.Fatalf("B listing A's reports: %v", err)
	}
	url := h.analytics.URL + "/v1/media/CHANNEL/" + ytA + "/jobs/" + a.Reach.JobID + "/reports/rep" + start.Format("20060102") + "?alt=media"
	if _, err := ownerB.Reporting.Download(ctx, ownperf.ReportFile{DownloadURL: url}); err == nil {
		t.Fatal("B downloaded A's report")
	}
	// A download URL elsewhere is fetched from the configured endpoint only, never where it points.
	if _, err := ownerB.Reporting.Download(ctx, ownperf.ReportFile{DownloadURL: "http://169.254.169.254/latest/meta-data"}); err == nil {
		t.Fatal("a downloadUrl outside /v1/media/ was followed")
	}
}

// The reviews carry the reach of the video's first days and its title's score; the brief's title
// patterns and the calibration read them.
func TestReachInReviewsAndTitleScore(t *testing.T) {
	ups := uploads(ytA, "a", 40, start)
	ups[2].Title = "5 vegan lunches under $3"
	h := newHarness(t, ups, nil, 0)
	ctx := context.Background()
	out, _ := json.Marshal(map[string]any{"titles": []map[string]any{
		{"title": "Something else", "grade": "A", "score": 95.0}, {"title": "5 Vegan Lunches Under $3!", "grade": "B", "score": 84.5}}})
	run := generation.ToolRun{ID: h.store.NewID(), ToolName: generation.ToolTitles, Status: generation.Success,
		Input: json.RawMessage(`{"topic":"vegan lunches"}`), Output: out, GeneratedAt: start}
	if err := h.store.CreateRun(ctx, chA, run); err != nil {
		t.Fatal(err)
	}
	edited := commit(t, h, chA, "5 vegan lunches under $3", videos.Edited)
	h.sync(t, chA) // linked; the job made
	h.clock.add(5*24*time.Hour + 2*time.Hour)
	h.sync(t, chA) // day 7: the reports of the job's first 48 hours are in
	v := get(t, h, chA, edited.ID)
	if len(v.Reviews) != 1 {
		t.Fatalf("reviews %+v", v.Reviews)
	}
	r := v.Reviews[0]
	if r.Impressions == nil || *r.Impressions == 0 || r.ImpressionsCTR == nil || *r.ImpressionsCTR != youtubetest.ReachCTR(ups[2].ID) {
		t.Fatalf("review reach %v %v; want CTR %v", r.Impressions, r.ImpressionsCTR, youtubetest.ReachCTR(ups[2].ID))
	}
	if r.TitleScore == nil || *r.TitleScore != 84.5 {
		t.Fatalf("title score %v; want 84.5 from the run that proposed the title", r.TitleScore)
	}
	b, _ := json.Marshal(v)
	if _, err := contract.ValidateJSON("MyVideo", b); err != nil {
		t.Fatalf("reviewed video against the contract: %v", err)
	}
	h.clock.add(21 * 24 * time.Hour)
	h.sync(t, chA)
	v = get(t, h, chA, edited.ID)
	if len(v.Reviews) != 2 || v.Reviews[1].ImpressionsCTR == nil || v.Reviews[1].TitleScore == nil || *v.Reviews[1].Impressions <= *r.Impressions {
		t.Fatalf("day 28 %+v", v.Reviews)
	}
	own, err := ownperf.BriefSource{Data: h.store, Now: h.clock.now}.OwnResults(ctx, chA)
	if err != nil || own == nil || len(own.TitlePatterns) != 1 || own.TitlePatterns[0].Pattern != "listicle" ||
		own.TitlePatterns[0].ImpressionsCTR != youtubetest.ReachCTR(ups[2].ID) || own.TitlePatterns[0].BestTitle != v.Title {
		t.Fatalf("brief: %+v, %v", own, err)
	}
	if c := ownperf.Calibrate([]videos.Video{v}); c.N != 1 || c.Spearman != nil {
		t.Fatalf("calibration %+v", c)
	}
	// The title tools' brief carries the patterns and says what they are; a script tool's does not.
	a := &generation.Assembler{Data: h.store, Own: ownperf.BriefSource{Data: h.store, Now: h.clock.now}}
	tb, err := a.Assemble(ctx, chA, generation.ToolTitles, "", generation.Brief{Task: generation.TaskTitles, VideoType: "Long",
		Input: json.RawMessage(`{"title":"lunch","type":"how-to"}`)})
	if err != nil || tb.OwnResults == nil || len(tb.OwnResults.TitlePatterns) != 1 {
		t.Fatalf("titles brief: %+v %v", tb.OwnResults, err)
	}
	if _, usr, err := generation.Render(tb); err != nil || !strings.Contains(usr, "titlePatterns") || !strings.Contains(usr, "click-through rate") {
		t.Fatalf("rendered titles brief (%v):\n%s", err, usr)
	}
	sb, err := a.Assemble(ctx, chA, generation.ToolLongScripts, "", generation.Brief{Task: generation.TaskLongScript,
		Input: json.RawMessage(`{"title":"lunch"}`)})
	if err != nil || sb.OwnResults == nil || sb.OwnResults.TitlePatterns != nil {
		t.Fatalf("script brief: %+v %v", sb.OwnResults, err)
	}
}

// A review made before the reports arrive (here: at connecting) gets its reach when they do, without a
// second video.reviewed.
func TestReviewReachFillsInAsReportsArrive(t *testing.T) {
	ups := uploads(ytA, "a", 12, start)
	h := newHarness(t, ups, nil, 0)
	ctx := context.Background()
	h.sync(t, chA)
	v := commit(t, h, chA, "anything", videos.Published)
	if _, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v.ID, Body: update(ups[9].ID)}); err != nil {
		t.Fatal(err)
	}
	h.sync(t, chA) // reviewed at day 7 (the upload is 9 days old); no report yet
	if v = get(t, h, chA, v.ID); len(v.Reviews) != 1 || v.Reviews[0].Impressions != nil {
		t.Fatalf("reviews before the reports %+v", v.Reviews)
	}
	h.clock.add(48 * time.Hour)
	h.sync(t, chA)
	v = get(t, h, chA, v.ID)
	if len(v.Reviews) != 1 || v.Reviews[0].Impressions == nil || *v.Reviews[0].ImpressionsCTR != youtubetest.ReachCTR(ups[9].ID) ||
		len(h.events.ofType("video.reviewed")) != 1 {
		t.Fatalf("reviews after the reports %+v, %d events", v.Reviews, len(h.events.ofType("video.reviewed")))
	}
	// Nothing new: the video is not written again.
	updated := v.UpdatedAt
	h.clock.add(time.Hour)
	h.sync(t, chA)
	if v = get(t, h, chA, v.ID); !v.UpdatedAt.Equal(updated) {
		t.Fatalf("rewritten without a change: %v then %v", updated, v.UpdatedAt)
	}
}

// BenchmarkReachBackfill500 times a sync that reads a 500-upload channel's backfill (31 reports of 30
// days' history): each run reads them all again, as a first report day does, and reports the stored
// uploads' size with their reach.
func BenchmarkReachBackfill500(b *testing.B) {
	ctx := context.Background()
	h := newHarness(b, uploads(ytA, "a", 500, start), nil, 1_000_000_000)
	if _, err := h.svc.Sync(ctx, chA); err != nil {
		b.Fatal(err)
	}
	h.clock.add(48 * time.Hour)
	for b.Loop() {
		s, ver, err := h.store.OwnSync(ctx, chA)
		if err != nil {
			b.Fatal(err)
		}
		s.Reach.LastReportCreated = nil
		if err := h.store.SaveOwnSync(ctx, chA, s, ver); err != nil {
			b.Fatal(err)
		}
		if rep, err := h.svc.Sync(ctx, chA); err != nil || rep.ReportingCalls != 4+31 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	raw, _ := json.Marshal(h.stored(b, chA).Uploads)
	b.ReportMetric(float64(len(raw))/1024, "KB-uploads")
	b.ReportMetric(35, "reporting-calls/sync")
}
