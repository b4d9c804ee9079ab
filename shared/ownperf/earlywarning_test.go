package ownperf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/webhooks"
)

func TestPercentileAndSignalAtTheEdges(t *testing.T) {
	ten := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, c := range []struct {
		v      int64
		xs     []int64
		p      float64
		signal string
	}{
		{25, ten, 20, ownperf.SignalUnder},
		{35, ten, 30, ownperf.SignalUsual}, // exactly the 30th: not below it
		{30, ten, 25, ownperf.SignalUnder}, // a tie counts half
		{75, ten, 70, ownperf.SignalUsual}, // exactly the 70th: not above it
		{85, ten, 80, ownperf.SignalOver},
		{0, ten[:4], 0, ""},                  // 4 earlier uploads: no signal
		{0, ten[:5], 0, ownperf.SignalUnder}, // 5: a signal
		{1000, ten[:5], 100, ownperf.SignalOver},
	} {
		p := ownperf.Percentile(c.v, c.xs)
		if p != c.p || ownperf.SignalOf(p, len(c.xs)) != c.signal {
			t.Errorf("%d among %v: percentile %v signal %q, want %v %q", c.v, c.xs, p, ownperf.SignalOf(p, len(c.xs)), c.p, c.signal)
		}
	}
}

// youngAndEarlier makes a young upload (published an hour before start) with views young, and n earlier
// ones, published 6 days and more before start (old enough for their Analytics days), views 1000..
func youngAndEarlier(ytID, prefix string, young int64, n int) []research.SourceVideo {
	ups := []research.SourceVideo{{ID: videoID(prefix, 0), ChannelID: ytID, Title: "New upload " + prefix, PublishedAt: start.Add(-time.Hour),
		DurationSeconds: 400, Views: young}}
	for i := 1; i <= n; i++ {
		ups = append(ups, research.SourceVideo{ID: videoID(prefix, i), ChannelID: ytID, Title: fmt.Sprintf("Earlier %s %d", prefix, i),
			PublishedAt: start.Add(-time.Hour).AddDate(0, 0, -5-i), DurationSeconds: 400, Views: int64(1000 + 500*i)})
	}
	return ups
}

func (h *harness) watch(t *testing.T, channelID string) ownperf.WatchReport {
	t.Helper()
	rep, err := h.svc.Watch(context.Background(), channelID)
	if err != nil {
		t.Fatalf("watch %s: %v", channelID, err)
	}
	return rep
}

func (h *harness) watched(t *testing.T, channelID string) ownperf.Watch {
	t.Helper()
	w, _, err := h.store.OwnWatch(context.Background(), channelID)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// An upload far below the channel's earlier uploads at the same age emits video.underperforming once,
// however many hourly reads follow; the baseline comes from Analytics' daily views until hourly curves
// exist; the reads spend one unit and one stats call each.
func TestUnderperformingUploadEmitsOnceAcrossReads(t *testing.T) {
	h := newHarness(t, youngAndEarlier(ytA, "a", 50, 8), youngAndEarlier(ytB, "b", 50_000_000, 8), 0)
	h.data.SetClock(h.clock.now)
	h.sync(t, chA)
	h.sync(t, chB)
	units, stats, queries := h.data.Units(), h.data.Spent().Stats, h.analytics.Queries()

	rep := h.watch(t, chA)
	if rep.Young != 1 || rep.Events != 1 || rep.Units != 1 || rep.Stats != 1 || rep.Queries != 8 {
		t.Fatalf("first read %+v", rep)
	}
	if h.data.Units()-units != 1 || h.data.Spent().Stats-stats != 1 || h.analytics.Queries()-queries != 8 {
		t.Fatalf("server: %d units, %d stats calls, %d queries", h.data.Units()-units, h.data.Spent().Stats-stats, h.analytics.Queries()-queries)
	}
	evs := h.events.ofType(webhooks.VideoUnderperforming)
	if len(evs) != 1 || evs[0].ChannelID != chA {
		t.Fatalf("%d video.underperforming", len(evs))
	}
	var data struct {
		YouTubeVideoID string  `json:"youtubeVideoId"`
		Percentile     float64 `json:"percentile"`
		BaselineSize   int     `json:"baselineSize"`
		Baseline       string  `json:"baseline"`
		AgeHours       float64 `json:"ageHours"`
		Title          string  `json:"title"`
	}
	if err := json.Unmarshal(evs[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.YouTubeVideoID != videoID("a", 0) || data.Percentile != 0 || data.BaselineSize != 8 || data.Baseline != "analytics daily views" ||
		data.AgeHours != 1 || data.Title != "New upload a" {
		t.Fatalf("event data %+v", data)
	}
	h.watch(t, chB)
	// The same hour again, then every hour to 72: no second event; one stats call a read, the daily views read once.
	h.watch(t, chA)
	for range 75 {
		h.clock.add(time.Hour)
		if r := h.watch(t, chA); r.Events != 0 || r.Queries != 0 {
			t.Fatalf("a later read %+v", r)
		}
	}
	if n := len(h.events.ofType(webhooks.VideoUnderperforming)); n != 1 {
		t.Fatalf("%d video.underperforming after 76 reads", n)
	}
	w := h.watched(t, chA)
	if len(w.Young(h.clock.now())) != 0 {
		t.Fatal("still young past 72 hours")
	}
	// Its hourly curve is kept as a baseline for the next upload: 71 snapshots (the reads of hours 1..71).
	for _, v := range w.Videos {
		if v.ID == videoID("a", 0) && (len(v.Hourly) != 71 || v.Emitted[0] != webhooks.VideoUnderperforming) {
			t.Fatalf("kept %d snapshots, emitted %v", len(v.Hourly), v.Emitted)
		}
	}
	// B's upload did far better than B's usual (read at the same hour as A's first): outperforming, B's own.
	if evs := h.events.ofType(webhooks.VideoOutperforming); len(evs) != 1 || evs[0].ChannelID != chB ||
		!strings.Contains(string(evs[0].Data), videoID("b", 0)) {
		t.Fatalf("B's events %v", evs)
	}
	for _, v := range h.watched(t, chB).Videos {
		if strings.HasPrefix(v.ID, "a-") {
			t.Fatalf("B's watch holds A's upload %s", v.ID)
		}
	}
	// The outbox holds each event once, for the dispatcher to sign and deliver.
	for _, ch := range []string{chA, chB} {
		out, err := h.store.OldOutbox(context.Background(), h.clock.now().Add(time.Hour), 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range out {
			if m.ChannelID == ch {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("channel %s: %d outbox messages", ch, n)
		}
	}
}

// Four earlier uploads with a curve give no signal, and say why; a fifth gives one.
func TestEarlyWarningNeedsFiveEarlierUploads(t *testing.T) {
	h := newHarness(t, youngAndEarlier(ytA, "a", 1, 4), youngAndEarlier(ytB, "b", 1, 5), 0)
	h.data.SetClock(h.clock.now)
	h.sync(t, chA)
	h.sync(t, chB)
	if rep := h.watch(t, chA); rep.Events != 0 {
		t.Fatalf("4 earlier uploads: %+v", rep)
	}
	young := h.watched(t, chA).Young(h.clock.now())
	if len(young) != 1 || young[0].Last.Signal != ownperf.SignalNone || young[0].Last.Percentile != nil ||
		young[0].Last.BaselineSize != 4 || !strings.Contains(young[0].Last.Reason, "4 of the channel's earlier uploads") {
		t.Fatalf("no-signal evaluation %+v", young[0].Last)
	}
	if rep := h.watch(t, chB); rep.Events != 1 {
		t.Fatalf("5 earlier uploads: %+v", rep)
	}
}

// The scheduler's pass queues one hourly read per connected channel an hour, whatever the number of passes;
// the worker's dispatch runs it.
func TestScheduleQueuesAnHourlyReadOnce(t *testing.T) {
	h := newHarness(t, youngAndEarlier(ytA, "a", 1, 6), youngAndEarlier(ytB, "b", 1, 6), 0)
	ctx := context.Background()
	rep, err := h.svc.Schedule(ctx)
	if err != nil || rep.Watched != 2 {
		t.Fatalf("first pass %+v %v", rep, err)
	}
	h.clock.add(15 * time.Minute)
	if rep, err = h.svc.Schedule(ctx); err != nil || rep.Watched != 0 {
		t.Fatalf("same hour %+v %v", rep, err)
	}
	msgs := h.queue.take()
	var watches []queue.Outgoing
	for _, m := range msgs {
		if m.Attributes["kind"] == "youtube.watch" {
			watches = append(watches, m)
		}
	}
	if len(watches) != 2 {
		t.Fatalf("%d watch messages of %d", len(watches), len(msgs))
	}
	h.clock.add(time.Hour)
	if rep, err = h.svc.Schedule(ctx); err != nil || rep.Watched != 2 {
		t.Fatalf("next hour %+v %v", rep, err)
	}
	h.sync(t, chA)
	research := func(context.Context, queue.Message) error { t.Fatal("a watch message reached research"); return nil }
	if err := h.svc.Dispatch(research)(ctx, queue.Message{ID: "m1", Body: watches[0].Body}); err != nil {
		t.Fatal(err)
	}
	if h.watched(t, chA).ReadAt == nil {
		t.Fatal("the dispatched read did not run")
	}
}

// Two reads of the same state: the second write is refused and emits nothing.
func TestSaveOwnWatchIsVersionChecked(t *testing.T) {
	h := newHarness(t, nil, nil, 0)
	ctx := context.Background()
	if err := h.store.SaveOwnWatch(ctx, chA, ownperf.Watch{Requested: "x"}, 0); err != nil {
		t.Fatal(err)
	}
	_, ver, _ := h.store.OwnWatch(ctx, chA)
	ev, err := webhooks.NewEvent(h.store.NewID(), webhooks.VideoUnderperforming, chA, h.clock.now(), map[string]any{"youtubeVideoId": "x",
		"url": "u", "publishedAt": start, "ageHours": 1, "views": 1, "percentile": 1, "baselineSize": 5, "baseline": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.SaveOwnWatch(ctx, chA, ownperf.Watch{Requested: "y"}, ver, ev); err != nil {
		t.Fatal(err)
	}
	if err := h.store.SaveOwnWatch(ctx, chA, ownperf.Watch{Requested: "z"}, ver, ev); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("stale write: %v", err)
	}
	out, _ := h.store.OldOutbox(ctx, h.clock.now().Add(time.Hour), 10)
	if len(out) != 1 {
		t.Fatalf("%d outbox messages", len(out))
	}
}

// A read before the channel's first sync finds the uploads itself (videos.list for those it sees first:
// their titles and publishing times), and compares with the earlier ones all the same.
func TestAReadBeforeTheFirstSync(t *testing.T) {
	h := newHarness(t, youngAndEarlier(ytA, "a", 1, 6), nil, 0)
	h.data.SetClock(h.clock.now)
	rep := h.watch(t, chA)
	if rep.Events != 1 || rep.Units != 2 || rep.Stats != 0 || h.data.Calls()["videos"] != 1 {
		t.Fatalf("read %+v, calls %v", rep, h.data.Calls())
	}
	young := h.watched(t, chA).Young(h.clock.now())
	if len(young) != 1 || young[0].Title != "New upload a" || young[0].Last.BaselineSize != 6 {
		t.Fatalf("young %+v", young)
	}
	// The next hour's read knows it: one stats call, no videos.list.
	h.clock.add(time.Hour)
	if rep := h.watch(t, chA); rep.Units != 1 || rep.Stats != 1 || h.data.Calls()["videos"] != 1 {
		t.Fatalf("second read %+v, calls %v", rep, h.data.Calls())
	}
}

// BenchmarkHourlyRead times one hourly read of a channel with a young upload and 20 earlier ones
// (the steady state: playlistItems.list, one batchGetStats call, the baseline's curves stored).
func BenchmarkHourlyRead(b *testing.B) {
	h := newHarness(b, youngAndEarlier(ytA, "a", 1, 20), nil, 0)
	h.data.SetClock(h.clock.now)
	ctx := context.Background()
	if _, err := h.svc.Watch(ctx, chA); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		h.clock.add(time.Minute)
		if _, err := h.svc.Watch(ctx, chA); err != nil {
			b.Fatal(err)
		}
	}
}

// Without analytics access (here before any sync tells so) the earlier uploads have no fallback curve:
// no signal, and why; not a baseline of zeros.
func TestNoAnalyticsNoFallbackCurve(t *testing.T) {
	h := newHarness(t, youngAndEarlier(ytA, "a", 1, 6), nil, 0)
	h.data.SetClock(h.clock.now)
	h.analytics.Forbid(ytA)
	if rep := h.watch(t, chA); rep.Events != 0 || rep.Queries != 6 {
		t.Fatalf("read %+v", rep)
	}
	young := h.watched(t, chA).Young(h.clock.now())
	if len(young) != 1 || young[0].Last.Signal != ownperf.SignalNone || young[0].Last.BaselineSize != 0 {
		t.Fatalf("evaluation %+v", young[0].Last)
	}
	// Each was asked once: the next read asks again for none.
	h.clock.add(time.Hour)
	if rep := h.watch(t, chA); rep.Queries != 0 {
		t.Fatalf("second read %+v", rep)
	}
}

// A young upload's snapshots so far are a curve for the next upload: three hours after it, the next one at
// one hour compares with it by its hourly snapshots, and with the older ones by their Analytics days.
func TestAYoungUploadsSnapshotsAreABaseline(t *testing.T) {
	ups := youngAndEarlier(ytA, "a", 1000, 5)
	next := research.SourceVideo{ID: videoID("n", 0), ChannelID: ytA, Title: "Next", PublishedAt: start.Add(2 * time.Hour), DurationSeconds: 400, Views: 1000}
	h := newHarness(t, append([]research.SourceVideo{next}, ups...), nil, 0)
	h.data.SetClock(h.clock.now)
	for range 4 { // the first upload at 1, 2, 3 and 4 hours; the next one is published at 3
		h.watch(t, chA)
		h.clock.add(time.Hour)
	}
	var ev *ownperf.Evaluation
	for _, v := range h.watched(t, chA).Young(h.clock.now()) {
		if v.ID == next.ID {
			ev = v.Last
		}
	}
	if ev == nil || ev.BaselineSize != 6 || ev.Baseline != "hourly snapshots and analytics daily views" {
		t.Fatalf("the next upload's evaluation %+v", ev)
	}
}
