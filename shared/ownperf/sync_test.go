package ownperf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire/workers"
)

const apiKey = "test-data-api-key"

// clock is the tests' controllable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// owners is the connection seam as the tests give it: each connected channel has its own OAuth token,
// which its client sends as a bearer token (the Analytics server checks it), and the Data API key the
// loopback Data API server checks.
type owners struct {
	mu     sync.Mutex
	tokens map[string]string // channel -> token
	yt     map[string]string // channel -> YouTube channel id
	synced map[string]time.Time
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	r.Header.Set("X-Goog-Api-Key", apiKey)
	return b.next.RoundTrip(r)
}

func (o *owners) OwnerClient(_ context.Context, channelID string) (*http.Client, string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	tok, ok := o.tokens[channelID]
	if !ok {
		return nil, "", apperr.NotFoundf("channel %s is not connected", channelID)
	}
	return &http.Client{Transport: bearer{tok, http.DefaultTransport}, Timeout: 10 * time.Second}, o.yt[channelID], nil
}

func (o *owners) Connected(context.Context) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ids []string
	for id := range o.tokens {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

func (o *owners) MarkSynced(_ context.Context, channelID string, at time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.synced[channelID] = at
	return nil
}

// sent records the research queue's messages.
type sent struct {
	mu   sync.Mutex
	msgs []queue.Outgoing
}

func (s *sent) Send(_ context.Context, msgs ...queue.Outgoing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, msgs...)
	return nil
}

func (s *sent) take() []queue.Outgoing {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.msgs
	s.msgs = nil
	return out
}

// published records the events published after their write.
type published struct {
	mu  sync.Mutex
	evs []webhooks.Event
}

func (p *published) PublishEvents(_ context.Context, evs ...webhooks.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.evs = append(p.evs, evs...)
}

func (p *published) ofType(typ string) []webhooks.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []webhooks.Event
	for _, e := range p.evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// harness is the sync against the loopback Data API and Analytics servers and a memory table.
type harness struct {
	clock     *clock
	store     *store.Store
	data      *youtubetest.Server
	analytics *youtubetest.Analytics
	owners    *owners
	queue     *sent
	events    *published
	svc       *ownperf.Service
}

// The channels: A and B are the service's channels, connected to YouTube channels ytA and ytB.
const (
	chA = "0190f000-0000-7000-8000-00000000000a"
	chB = "0190f000-0000-7000-8000-00000000000b"
)

var start = time.Date(2026, 3, 10, 18, 0, 0, 0, time.UTC)

// videoID is an 11-character YouTube id.
func videoID(prefix string, i int) string { return fmt.Sprintf("%s-%09d", prefix, i)[:11] }

// uploads makes n uploads, newest first, one a day before now (the first an hour old), with views
// varying by video.
func uploads(ytID, prefix string, n int, now time.Time) []research.SourceVideo {
	var out []research.SourceVideo
	for i := range n {
		out = append(out, research.SourceVideo{ID: videoID(prefix, i), ChannelID: ytID, ChannelTitle: "Own " + prefix,
			Title: fmt.Sprintf("Upload %s number %d", prefix, i), PublishedAt: now.Add(-time.Hour).AddDate(0, 0, -i),
			DurationSeconds: 300 + i%7*60, Views: int64(1000 + (i*7919)%5000), URL: "https://www.youtube.com/watch?v=" + videoID(prefix, i)})
	}
	return out
}

func ytChannel(id string, ups []research.SourceVideo) youtubesample.CatalogChannel {
	return youtubesample.CatalogChannel{Channel: research.Channel{ID: id, Title: "Channel " + id}, Uploads: ups}
}

const (
	ytA = "UCaaaaaaaaaaaaaaaaaaaaaa"
	ytB = "UCbbbbbbbbbbbbbbbbbbbbbb"
)

func newHarness(t testing.TB, upsA, upsB []research.SourceVideo, dailyUnits int) *harness {
	t.Helper()
	return newGradedHarness(t, upsA, upsB, dailyUnits, nil)
}

// newGradedHarness is newHarness whose sync grades the reviewed titles no title run proposed with grader.
func newGradedHarness(t testing.TB, upsA, upsB []research.SourceVideo, dailyUnits int, grader ownperf.TitleGrader) *harness {
	t.Helper()
	c := &clock{t: start}
	catalog := youtubesample.NewCatalog(ytChannel(ytA, upsA), ytChannel(ytB, upsB))
	h := &harness{clock: c, queue: &sent{}, events: &published{},
		store: store.New(memstore.New(t, pebble.WithClock(c.now)), store.WithClock(c.now)),
		data:  youtubetest.Start(apiKey, catalog), analytics: youtubetest.StartAnalytics(catalog, c.now),
		owners: &owners{tokens: map[string]string{chA: "token-a", chB: "token-b"}, yt: map[string]string{chA: ytA, chB: ytB},
			synced: map[string]time.Time{}}}
	t.Cleanup(h.data.Close)
	t.Cleanup(h.analytics.Close)
	h.analytics.Grant("token-a", ytA)
	h.analytics.Grant("token-b", ytB)
	// As the worker wires it: the Data API and Analytics endpoints from the configuration.
	var cfg config.Config
	cfg.Research.YouTubeEndpoint, cfg.Research.YouTubeAnalyticsEndpoint = h.data.Endpoint(), h.analytics.Endpoint()
	cfg.Research.YouTubeReportingEndpoint = h.analytics.Endpoint() // the stand-in serves both APIs
	cfg.Research.DailyUnits = dailyUnits
	var err error
	if h.svc, err = workers.OwnSync(cfg, h.store, h.queue, h.events, h.owners, grader, c.now, nil); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) sync(t *testing.T, channelID string) ownperf.Report {
	t.Helper()
	rep, err := h.svc.Sync(context.Background(), channelID)
	if err != nil {
		t.Fatalf("sync %s: %v", channelID, err)
	}
	return rep
}

func (h *harness) stored(t testing.TB, channelID string) ownperf.Sync {
	t.Helper()
	s, _, err := h.store.OwnSync(context.Background(), channelID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSyncOfAChannelWithManyUploads(t *testing.T) {
	ups := uploads(ytA, "a", 500, start)
	h := newHarness(t, ups, uploads(ytB, "b", 3, start), 0)
	rep := h.sync(t, chA)

	// channels.list 1, playlistItems.list 10 pages of 50, videos.list 10 batches of 50.
	if rep.Units != 21 || h.data.Units() != 21 || rep.Stopped != "" {
		t.Fatalf("units: report %d, server %d (stopped %q); want 21", rep.Units, h.data.Units(), rep.Stopped)
	}
	if calls := h.data.Calls(); calls["channels"] != 1 || calls["playlistItems"] != 10 || calls["videos"] != 10 {
		t.Fatalf("calls %v", calls)
	}
	// Days, top videos, and the channel's own search terms (decision 53).
	if rep.Queries != 3 || h.analytics.Queries() != 3 || h.analytics.Refused() != 0 {
		t.Fatalf("analytics queries: report %d, server %d, refused %d; want 3, 3, 0", rep.Queries, h.analytics.Queries(), h.analytics.Refused())
	}
	s := h.stored(t, chA)
	if len(s.Uploads) != 500 || s.YouTubeChannelID != ytA || s.Analytics != ownperf.AnalyticsAvailable || len(s.Days) != ownperf.WindowDays {
		t.Fatalf("stored: %d uploads, channel %s, analytics %s, %d days", len(s.Uploads), s.YouTubeChannelID, s.Analytics, len(s.Days))
	}
	for i, u := range s.Uploads {
		if u.ID != ups[i].ID || u.Views != ups[i].Views || u.Title != ups[i].Title || !u.PublishedAt.Equal(ups[i].PublishedAt) {
			t.Fatalf("upload %d: %+v, want %+v", i, u, ups[i])
		}
	}
	if at, ok := h.owners.synced[chA]; !ok || !at.Equal(start) {
		t.Fatalf("MarkSynced: %v %v", at, ok)
	}

	// The report adds up what the Analytics server spread over the window's days.
	m, ok := ownperf.Monthly(s)
	if !ok {
		t.Fatal("no analytics report")
	}
	today := start.Truncate(24 * time.Hour)
	var want int64
	for d := today.AddDate(0, 0, -ownperf.WindowDays); d.Before(today); d = d.AddDate(0, 0, 1) {
		for _, v := range ups {
			want += youtubetest.DayViews(v, d, today)
		}
	}
	if m.Source != "youtube analytics" || m.Views != want || m.PeriodStart != "2026-02-10" || m.PeriodEnd != "2026-03-09" {
		t.Fatalf("report %+v; want %d views over 2026-02-10..2026-03-09", m, want)
	}
	if len(m.TopVideos) != ownperf.TopVideos || m.WatchMinutes <= 0 || m.AverageViewPercentage < 30 || m.AverageViewPercentage > 70 {
		t.Fatalf("report %+v", m)
	}
	for i := 1; i < len(m.TopVideos); i++ {
		if m.TopVideos[i].Views > m.TopVideos[i-1].Views {
			t.Fatalf("top videos out of order: %+v", m.TopVideos)
		}
	}
	if got := m.TopVideos[0]; got.URL != "https://www.youtube.com/watch?v="+got.YouTubeVideoID || got.Title == "" {
		t.Fatalf("top video %+v", got)
	}
	// The report is the contract's monthlyReport.
	b, _ := json.Marshal(map[string]any{"monthlyReport": m})
	if _, err := contract.ValidateJSON("PerformanceData", b); err != nil {
		t.Fatalf("monthlyReport against the contract: %v", err)
	}
}

func TestAnalyticsForbiddenKeepsTheDataAPIFigures(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 60, start), nil, 0)
	h.analytics.Forbid(ytA)
	rep := h.sync(t, chA)
	s := h.stored(t, chA)
	if rep.Stopped != "" || rep.Analytics != ownperf.AnalyticsUnavailable || len(s.Uploads) != 60 || s.Days != nil {
		t.Fatalf("report %+v, stored %d uploads, %d days", rep, len(s.Uploads), len(s.Days))
	}
	if s.Message == "" || s.Uploads[0].Views == 0 || s.Uploads[0].Analytics != nil {
		t.Fatalf("stored %+v", s.Uploads[0])
	}
	if _, ok := ownperf.Monthly(s); ok {
		t.Fatal("a monthly report without analytics")
	}
	if rep.Queries != 1 {
		t.Fatalf("queries %d: the 403 of the first query ends the analytics part", rep.Queries)
	}
}

func TestQuotaExhaustionMidSyncStopsAndResumesTheNextDay(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 500, start), nil, 0)
	h.data.SetQuota(5) // channels.list and 4 pages; the 5th page is refused
	rep := h.sync(t, chA)
	if rep.Stopped != "quota" || rep.Units != 6 {
		t.Fatalf("report %+v; want stopped by the quota after 6 units (the refused call costs too)", rep)
	}
	s := h.stored(t, chA)
	if s.Synced() || s.Pending == nil || len(s.Pending.IDs) != 200 || s.Pending.PageToken == "" {
		t.Fatalf("pending %+v", s.Pending)
	}
	// The same budget day: nothing is called again.
	calls := h.data.Calls()
	if rep := h.sync(t, chA); rep.Stopped != "quota" || !mapsEqual(calls, h.data.Calls()) {
		t.Fatalf("same day: %+v, calls %v then %v", rep, calls, h.data.Calls())
	}
	// The next budget day, it resumes from the page it stopped at.
	h.data.SetQuota(0)
	h.clock.add(24 * time.Hour)
	rep = h.sync(t, chA)
	s = h.stored(t, chA)
	if rep.Stopped != "" || len(s.Uploads) != 500 || s.Pending != nil {
		t.Fatalf("resumed: %+v, %d uploads, pending %+v", rep, len(s.Uploads), s.Pending)
	}
	if c := h.data.Calls(); c["channels"] != 1 || c["playlistItems"] != 11 || c["videos"] != 10 {
		t.Fatalf("calls %v: the resumed sync reads only the pages left", c)
	}
	if s.Units != 6+16 {
		t.Fatalf("sync units %d", s.Units)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestTheDailyBudgetStopsASync(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 500, start), nil, 15)
	rep := h.sync(t, chA)
	if rep.Stopped != "budget" || h.data.Units() != 11 {
		t.Fatalf("report %+v, units %d; want stopped by the budget before videos.list", rep, h.data.Units())
	}
	u, err := h.store.QuotaUsed(context.Background(), mustDay(t, start))
	if err != nil || u.Used != (quota.Cost{Units: 11}) {
		t.Fatalf("budget used %+v, %v; want the 11 units spent", u.Used, err)
	}
}

func mustDay(t *testing.T, at time.Time) string {
	c, err := research.NewClock()
	if err != nil {
		t.Fatal(err)
	}
	return c.Day(at)
}

func TestScheduleQueuesEachConnectedChannelOnceADay(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 3, start), uploads(ytB, "b", 3, start), 0)
	ctx := context.Background()
	rep, err := h.svc.Schedule(ctx)
	if err != nil || rep.Connected != 2 || rep.Queued != 2 {
		t.Fatalf("%+v %v", rep, err)
	}
	if rep, _ := h.svc.Schedule(ctx); rep.Queued != 0 {
		t.Fatalf("second pass queued %d", rep.Queued)
	}
	msgs := h.queue.take()
	research := func(context.Context, queue.Message) error { t.Fatal("a sync message reached research"); return nil }
	handle := h.svc.Dispatch(research)
	for i, m := range msgs {
		if err := handle(ctx, queue.Message{ID: fmt.Sprint(i), Body: m.Body}); err != nil {
			t.Fatal(err)
		}
	}
	if !h.stored(t, chA).Synced() || !h.stored(t, chB).Synced() {
		t.Fatal("not synced")
	}
	h.clock.add(24 * time.Hour)
	if rep, _ := h.svc.Schedule(ctx); rep.Queued != 2 {
		t.Fatalf("next day queued %d", rep.Queued)
	}
	// A research step message goes to research.
	seen := false
	handle = h.svc.Dispatch(func(context.Context, queue.Message) error { seen = true; return nil })
	if err := handle(ctx, queue.Message{ID: "r", Body: []byte(`{"runId":"x","channelId":"y","step":"discover"}`)}); err != nil || !seen {
		t.Fatalf("research message: %v %v", err, seen)
	}
}

func TestTenantIsolation(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 70, start), uploads(ytB, "b", 40, start), 0)
	h.sync(t, chA)
	h.sync(t, chB)
	a, b := h.stored(t, chA), h.stored(t, chB)
	if len(a.Uploads) != 70 || len(b.Uploads) != 40 {
		t.Fatalf("%d and %d uploads", len(a.Uploads), len(b.Uploads))
	}
	for _, u := range b.Uploads {
		if _, ok := a.Upload(u.ID); ok {
			t.Fatalf("A sees B's upload %s", u.ID)
		}
	}
	ma, _ := ownperf.Monthly(a)
	mb, _ := ownperf.Monthly(b)
	// Each channel's analytics are its own token's: B's report lists B's uploads only.
	if len(mb.TopVideos) == 0 || len(ma.TopVideos) == 0 {
		t.Fatalf("reports: %+v %+v", ma, mb)
	}
	for _, v := range mb.TopVideos {
		if _, ok := b.Upload(v.YouTubeVideoID); !ok {
			t.Fatalf("B's report lists %s, not one of B's uploads", v.YouTubeVideoID)
		}
	}
	for _, v := range mb.TopVideos {
		if slices.ContainsFunc(ma.TopVideos, func(x ownperf.TopVideo) bool { return x.YouTubeVideoID == v.YouTubeVideoID }) {
			t.Fatalf("A's report lists B's video %s", v.YouTubeVideoID)
		}
	}
	// B cannot link A's upload: it is not among B's synced uploads.
	ctx := context.Background()
	v := commit(t, h, chB, "anything", videos.Published)
	_, err := h.svc.Link(ctx, chB, contract.UpdateMyVideoInput{ID: v.ID, Body: update(a.Uploads[0].ID)})
	if apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("linking A's upload from B: %v", err)
	}
	// Nor touch A's videos.
	va := commit(t, h, chA, "mine", videos.Published)
	if _, err := h.svc.Link(ctx, chB, contract.UpdateMyVideoInput{ID: va.ID, Body: update(b.Uploads[0].ID)}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("linking A's video from B: %v", err)
	}
}

func update(id string) contract.MyVideoUpdate {
	return contract.MyVideoUpdate{YoutubeVideoID: contract.Optional[string]{Set: true, Value: &id}}
}

func commit(t *testing.T, h *harness, channelID, title string, status videos.Status) videos.Video {
	t.Helper()
	now := h.clock.now().Truncate(time.Millisecond)
	v := videos.Video{ID: h.store.NewID(), Title: title, ContentType: "Long", FormulaType: "listicle", Status: status,
		CreatedAt: now, UpdatedAt: now, StatusHistory: []videos.StatusChange{{Status: videos.Planned, At: now}}}
	if status != videos.Planned {
		v.StatusHistory = append(v.StatusHistory, videos.StatusChange{Status: status, At: now})
	}
	if err := h.store.CreateVideo(context.Background(), channelID, v, 0, 5000); err != nil {
		t.Fatal(err)
	}
	return v
}

func get(t *testing.T, h *harness, channelID, id string) videos.Video {
	t.Helper()
	v, _, err := h.store.GetVideo(context.Background(), channelID, id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLinkingByTitleAndReviewsAtDay7And28(t *testing.T) {
	ups := uploads(ytA, "a", 40, start)
	ups[2].Title = "5 vegan lunches under $3" // two days old
	ups[20].Title = "Old upload"              // 20 days old: past the link window
	h := newHarness(t, ups, nil, 0)
	edited := commit(t, h, chA, "  5 Vegan Lunches — Under $3!! ", videos.Edited)
	old := commit(t, h, chA, "old upload", videos.Published)
	planned := commit(t, h, chA, "Upload a number 5", videos.Planned) // a match, but not edited or published

	rep := h.sync(t, chA)
	if rep.Linked != 1 || rep.Reviews != 0 {
		t.Fatalf("report %+v", rep)
	}
	v := get(t, h, chA, edited.ID)
	if v.YouTubeVideoID == nil || *v.YouTubeVideoID != ups[2].ID || v.Status != videos.Published {
		t.Fatalf("linked video %+v", v)
	}
	if last := v.StatusHistory[len(v.StatusHistory)-1]; last.Status != videos.Published {
		t.Fatalf("history %+v", v.StatusHistory)
	}
	if evs := h.events.ofType(webhooks.VideoStatusChanged); len(evs) != 1 || !json.Valid(evs[0].Data) {
		t.Fatalf("status events %d", len(evs))
	}
	if get(t, h, chA, old.ID).YouTubeVideoID != nil || get(t, h, chA, planned.ID).YouTubeVideoID != nil {
		t.Fatal("linked past the window, or a planned video")
	}

	// Day 7 after publishing (published 2 days and an hour before the first sync).
	h.clock.add(5*24*time.Hour + 2*time.Hour)
	rep = h.sync(t, chA)
	v = get(t, h, chA, edited.ID)
	if rep.Reviews != 1 || len(v.Reviews) != 1 || v.Reviews[0].Day != 7 {
		t.Fatalf("report %+v, reviews %+v", rep, v.Reviews)
	}
	r := v.Reviews[0]
	// The baseline: the other uploads of the last 90 days that reached 7 days, at the first sync that saw them there.
	var peers []int64
	for i, u := range ups {
		if i != 2 && !u.PublishedAt.Before(h.clock.now().AddDate(0, 0, -90)) && !h.clock.now().Before(u.PublishedAt.AddDate(0, 0, 7)) {
			peers = append(peers, u.Views)
		}
	}
	wantScore := float64(int64(float64(ups[2].Views)/research.Median(peers)*100+0.5)) / 100
	if r.Views != ups[2].Views || r.OwnOutlierScore == nil || *r.OwnOutlierScore != wantScore {
		t.Fatalf("review %+v, want views %d score %v", r, ups[2].Views, wantScore)
	}
	if r.AverageViewPercentage == nil || r.SubscribersGained == nil || !r.At.Equal(h.clock.now().Truncate(time.Millisecond)) {
		t.Fatalf("review %+v", r)
	}
	evs := h.events.ofType(webhooks.VideoReviewed)
	if len(evs) != 1 {
		t.Fatalf("%d video.reviewed events", len(evs))
	}
	// Another sync the same age makes no second review.
	if rep := h.sync(t, chA); rep.Reviews != 0 {
		t.Fatalf("second sync reviewed again: %+v", rep)
	}
	// Day 28.
	h.clock.add(21 * 24 * time.Hour)
	rep = h.sync(t, chA)
	v = get(t, h, chA, edited.ID)
	if rep.Reviews != 1 || len(v.Reviews) != 2 || v.Reviews[1].Day != 28 || len(h.events.ofType(webhooks.VideoReviewed)) != 2 {
		t.Fatalf("day 28: report %+v, reviews %+v", rep, v.Reviews)
	}
	b, _ := json.Marshal(v)
	if _, err := contract.ValidateJSON("MyVideo", b); err != nil {
		t.Fatalf("reviewed video against the contract: %v", err)
	}
}

// grader grades every title 61.5, failing the first time it sees a title in failOnce.
type grader struct {
	mu       sync.Mutex
	failOnce map[string]bool
	calls    map[string]int
	short    map[string]bool
}

func (g *grader) GradeTitle(_ context.Context, _, title string, short bool) (float64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls[title]++
	g.short[title] = short
	if g.failOnce[title] && g.calls[title] == 1 {
		return 0, fmt.Errorf("the model is down")
	}
	return 61.5, nil
}

// A linked title no title run proposed is graded at its first review, once; a failed grading leaves that
// review without a score and the next review grades again (decision 52).
func TestTheCreatorsOwnTitleIsGradedAtItsFirstReview(t *testing.T) {
	ups := uploads(ytA, "a", 40, start)
	ups[2].Title, ups[3].Title = "5 vegan lunches under $3", "I cooked for a week on $20"
	ups[3].DurationSeconds = 45
	g := &grader{failOnce: map[string]bool{ups[3].Title: true}, calls: map[string]int{}, short: map[string]bool{}}
	h := newGradedHarness(t, ups, nil, 0, g)
	lunches := commit(t, h, chA, ups[2].Title, videos.Edited)
	week := commit(t, h, chA, ups[3].Title, videos.Published)
	if rep := h.sync(t, chA); rep.Linked != 2 || len(g.calls) != 0 {
		t.Fatalf("linking: report %+v, graded %v", rep, g.calls)
	}
	h.clock.add(5*24*time.Hour + 2*time.Hour) // both past day 7
	if rep := h.sync(t, chA); rep.Reviews != 2 {
		t.Fatalf("day 7: %+v", rep)
	}
	if r := get(t, h, chA, lunches.ID).Reviews; len(r) != 1 || r[0].TitleScore == nil || *r[0].TitleScore != 61.5 {
		t.Fatalf("graded review %+v", r)
	}
	if r := get(t, h, chA, week.ID).Reviews; len(r) != 1 || r[0].TitleScore != nil {
		t.Fatalf("a review whose grading failed: %+v", r)
	}
	if !g.short[ups[3].Title] || g.short[ups[2].Title] {
		t.Fatalf("short flags %v (a 45-second upload is a Short)", g.short)
	}
	h.clock.add(21 * 24 * time.Hour)
	if rep := h.sync(t, chA); rep.Reviews != 2 {
		t.Fatalf("day 28: %+v", rep)
	}
	for _, id := range []string{lunches.ID, week.ID} {
		if r := get(t, h, chA, id).Reviews; len(r) != 2 || r[1].TitleScore == nil || *r[1].TitleScore != 61.5 {
			t.Fatalf("day-28 review of %s: %+v", id, r)
		}
	}
	if g.calls[ups[2].Title] != 1 || g.calls[ups[3].Title] != 2 {
		t.Fatalf("gradings %v: want the graded title once, the failed one again", g.calls)
	}
}

func TestLinkByHand(t *testing.T) {
	ups := uploads(ytA, "a", 30, start)
	h := newHarness(t, ups, uploads(ytB, "b", 5, start), 0)
	ctx := context.Background()
	v1 := commit(t, h, chA, "first", videos.Published)
	v2 := commit(t, h, chA, "second", videos.Published)
	// Before any sync no upload is known.
	if _, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v1.ID, Body: update(ups[0].ID)}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("before a sync: %v", err)
	}
	h.sync(t, chA)
	h.sync(t, chB)
	got, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v1.ID, Body: update(ups[29].ID)})
	if err != nil || got.YouTubeVideoID == nil || *got.YouTubeVideoID != ups[29].ID {
		t.Fatalf("link: %+v %v", got, err)
	}
	if _, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v2.ID, Body: update(ups[29].ID)}); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("the same upload twice: %v", err)
	}
	if _, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v2.ID, Body: update(videoID("b", 1))}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another channel's upload: %v", err)
	}
	bad := "not-an-id"
	if _, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v2.ID, Body: contract.MyVideoUpdate{
		YoutubeVideoID: contract.Optional[string]{Set: true, Value: &bad}}}); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("a malformed id: %v", err)
	}
	// The next sync reviews a video linked by hand whose upload is past both ages at once.
	h.clock.add(2 * time.Hour)
	if rep := h.sync(t, chA); rep.Reviews != 2 {
		t.Fatalf("reviews %+v", rep)
	}
	cleared, err := h.svc.Link(ctx, chA, contract.UpdateMyVideoInput{ID: v1.ID, Body: contract.MyVideoUpdate{
		YoutubeVideoID: contract.Optional[string]{Set: true}}})
	if err != nil || cleared.YouTubeVideoID != nil || cleared.Reviews != nil {
		t.Fatalf("clear: %+v %v", cleared, err)
	}
}

func TestNormalizeTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"5 Vegan Lunches — Under $3!", "5 vegan lunches under 3"},
		{"  5   vegan\tlunches under 3 ", "5 vegan lunches under 3"},
		{"Don't stop", "don t stop"},
		{"🔥 Crème Brûlée 🔥", "crème brûlée"},
		{"!!!", ""},
		{"", ""},
		{"ÉCOLE", "école"},
	} {
		if got := ownperf.NormalizeTitle(c.in); got != c.want {
			t.Errorf("NormalizeTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// A title made of punctuation matches nothing.
	h := newHarness(t, []research.SourceVideo{{ID: videoID("a", 0), ChannelID: ytA, Title: "!!!", PublishedAt: start.Add(-time.Hour), Views: 5}}, nil, 0)
	v := commit(t, h, chA, "???", videos.Edited)
	if rep := h.sync(t, chA); rep.Linked != 0 || get(t, h, chA, v.ID).Status != videos.Edited {
		t.Fatalf("linked an empty title: %+v", rep)
	}
}

func TestBestAndWorst(t *testing.T) {
	now := start
	var vs []videos.Video
	var ups []ownperf.Upload
	for i := range 13 {
		score := float64(i) / 2
		id := videoID("v", i)
		vs = append(vs, videos.Video{ID: fmt.Sprintf("id-%02d", i), Title: fmt.Sprint(i), YouTubeVideoID: &id,
			Reviews: []videos.Review{{Day: 7, OwnOutlierScore: &score}}})
		ups = append(ups, ownperf.Upload{ID: id, PublishedAt: now.AddDate(0, 0, -10)})
	}
	ups[12].PublishedAt = now.AddDate(0, 0, -100) // the best, but too old
	best, worst := ownperf.BestAndWorst(vs, ups, now, 5)
	if len(best) != 5 || len(worst) != 5 || best[0].Score != 5.5 || best[4].Score != 3.5 || worst[0].Score != 0 || worst[4].Score != 2 {
		t.Fatalf("best %+v worst %+v", best, worst)
	}
	best, worst = ownperf.BestAndWorst(vs[:3], ups, now, 5)
	if len(best) != 2 || len(worst) != 1 || best[0].Score != 1 || worst[0].Score != 0 {
		t.Fatalf("few: best %+v worst %+v", best, worst)
	}
}

// BenchmarkSync500 is one daily sync of a 500-upload channel on the loopback servers: 21 Data API units
// and 3 Analytics queries per sync (the channel per day, its top videos, its own search terms).
func BenchmarkSync500(b *testing.B) {
	ups := uploads(ytA, "a", 500, start)
	h := newHarness(b, ups, nil, 1_000_000_000)
	b.ResetTimer()
	for b.Loop() {
		h.clock.add(24 * time.Hour)
		rep, err := h.svc.Sync(context.Background(), chA)
		if err != nil || rep.Units != 21 || rep.Queries != 3 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(21, "units/sync")
	b.ReportMetric(3, "queries/sync")
}

func TestListingUnits(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 3, 50: 3, 51: 5, 500: 21, 5000: 201} {
		if got := ownperf.ListingUnits(n); got != want {
			t.Errorf("ListingUnits(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestHandleDropsWhatItCannotSync(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 3, start), nil, 0)
	ctx := context.Background()
	for _, body := range []string{`{"kind":"youtube.sync"}`, `{"kind":"youtube.sync","channelId":"0190f000-0000-7000-8000-0000000000ff"}`} {
		if err := h.svc.Handle(ctx, queue.Message{ID: "m", Body: []byte(body)}); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	if h.data.Units() != 0 || h.analytics.Queries() != 0 {
		t.Fatal("a call for a channel not connected")
	}
	// A token the Analytics API refuses (401) is not a 403: the sync fails and is delivered again,
	// keeping the listing it paid for.
	h.owners.tokens[chA] = "revoked"
	err := h.svc.Handle(ctx, queue.Message{ID: "m", Body: []byte(`{"kind":"youtube.sync","channelId":"` + chA + `"}`)})
	if err == nil || h.analytics.Refused() != 1 {
		t.Fatalf("handle: %v, refused %d", err, h.analytics.Refused())
	}
	s := h.stored(t, chA)
	if s.Synced() || s.Pending == nil || !s.Pending.Listed || len(s.Pending.IDs) != 3 {
		t.Fatalf("pending %+v", s.Pending)
	}
	h.owners.tokens[chA] = "token-a"
	units := h.data.Units()
	if rep := h.sync(t, chA); rep.Stopped != "" || rep.Units != 1 || h.data.Units() != units+1 {
		t.Fatalf("retry: %+v (only videos.list is called again)", rep)
	}
}
