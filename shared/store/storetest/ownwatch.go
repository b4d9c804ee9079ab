package storetest

import (
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// testOwnWatch runs the early warning's record (decision 54) and the retention's reads (decision 53) on the
// adapter: the record round-trips, its version guards it and the events written with it (a stale write
// queues none), one channel never reads another's, the sync's delete takes it; a review keeps its drop
// points; a video's cached captions are found by video, and only the channel's own.
func testOwnWatch(t *testing.T, s suite) {
	st, ctx := store.New(s.fresh(t)), t.Context()
	const a, b = "0190f000-0000-7000-8000-0000000000a2", "0190f000-0000-7000-8000-0000000000b2"
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := 12.5
	w := ownperf.Watch{Requested: "2026-03-01T12", ReadAt: &at, Videos: []ownperf.Watched{{ID: "abcdefghijk", Title: "t", PublishedAt: at.Add(-time.Hour),
		Hourly: []ownperf.Snapshot{{Minutes: 60, Views: 40}}, Daily: []int64{1, 2, 3, 4}, DailyRead: true, Emitted: []string{webhooks.VideoUnderperforming},
		Last: &ownperf.Evaluation{At: at, AgeHours: 1, Views: 40, Percentile: &p, BaselineSize: 6, Signal: ownperf.SignalUnder}}}}
	ev, err := webhooks.NewEvent("0190f000-0000-7000-8000-0000000000e1", webhooks.VideoUnderperforming, a, at, map[string]any{"youtubeVideoId": "abcdefghijk",
		"url": "u", "publishedAt": at, "ageHours": 1, "views": 40, "percentile": 12.5, "baselineSize": 6, "baseline": "hourly snapshots"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveOwnWatch(ctx, a, w, 0, ev); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveOwnWatch(ctx, a, w, 0, ev); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("a second first write: %v", err)
	}
	got, v, err := st.OwnWatch(ctx, a)
	if err != nil || v != 1 || len(got.Videos) != 1 || got.Videos[0].Hourly[0] != w.Videos[0].Hourly[0] || *got.Videos[0].Last.Percentile != p ||
		got.Videos[0].Emitted[0] != webhooks.VideoUnderperforming || !got.ReadAt.Equal(at) {
		t.Fatalf("read %+v v%d %v", got, v, err)
	}
	if out, err := st.OldOutbox(ctx, at.Add(time.Hour), 10); err != nil || len(out) != 1 || out[0].ID != ev.ID {
		t.Fatalf("outbox %+v %v", out, err)
	}
	if other, v, err := st.OwnWatch(ctx, b); err != nil || v != 0 || other.Videos != nil {
		t.Fatalf("channel b reads %+v v%d %v", other, v, err)
	}
	if err := st.DeleteOwnSync(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, v, err := st.OwnWatch(ctx, a); err != nil || v != 0 || got.Videos != nil {
		t.Fatalf("after the sync's delete: %+v v%d %v", got, v, err)
	}

	id, rel := "abcdefghijk", 0.41
	vid := videos.Video{ID: "0190f000-0000-7000-8000-0000000000c2", Title: "t", ContentType: "Long", FormulaType: "f",
		Status: videos.Published, CreatedAt: at, UpdatedAt: at, StatusHistory: []videos.StatusChange{{Status: videos.Planned, At: at}},
		YouTubeVideoID: &id, Reviews: []videos.Review{{Day: 7, Views: 10, At: at, RelativeRetention: &rel,
			DropPoints: []videos.DropPoint{{AtSeconds: 42, ElapsedRatio: 0.07, ShareLost: 0.12, Caption: "and now"}}}}}
	if err := st.CreateVideo(ctx, a, vid, 0, 10); err != nil {
		t.Fatal(err)
	}
	back, _, err := st.GetVideo(ctx, a, vid.ID)
	if err != nil || len(back.Reviews[0].DropPoints) != 1 || back.Reviews[0].DropPoints[0] != vid.Reviews[0].DropPoints[0] || *back.Reviews[0].RelativeRetention != rel {
		t.Fatalf("review %+v %v", back.Reviews, err)
	}

	if err := st.PutTranscript(ctx, a, id, "track-1", "v1", "0:00:01 hello\n"); err != nil {
		t.Fatal(err)
	}
	if text, ok, err := st.OwnCaptions(ctx, a, id); err != nil || !ok || text != "0:00:01 hello\n" {
		t.Fatalf("own captions %q %v %v", text, ok, err)
	}
	for _, c := range []struct{ channel, video string }{{b, id}, {a, "abcdefghij"}, {a, ""}, {a, id + "#track-1"}} {
		if _, ok, err := st.OwnCaptions(ctx, c.channel, c.video); err != nil || ok {
			t.Fatalf("captions of %s in %s: %v %v", c.video, c.channel, ok, err)
		}
	}
}
