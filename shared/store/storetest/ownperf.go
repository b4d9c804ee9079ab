package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/videos"
)

// testOwnSync runs the connected channel's sync records (decision 43) on the adapter: a sync with many
// uploads round-trips in chunks, the version guards it, fewer chunks replace more, one channel never
// reads another's, and a video keeps its link and reviews.
func testOwnSync(t *testing.T, s suite) {
	st, ctx := store.New(s.fresh(t)), t.Context()
	const a, b = "0190f000-0000-7000-8000-0000000000a1", "0190f000-0000-7000-8000-0000000000b1"
	if got, v, err := st.OwnSync(ctx, a); err != nil || v != 0 || got.Synced() || got.Uploads != nil {
		t.Fatalf("before any: %+v v%d %v", got, v, err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	big := ownperf.Sync{YouTubeChannelID: "UCa", SyncedAt: &at, Analytics: ownperf.AnalyticsAvailable,
		Days: []ownperf.Day{{Date: "2026-02-28", Figures: ownperf.Figures{Views: 9, AverageViewPercentage: 41.5}}}}
	for i := range 3000 { // about 600 KB: three chunks
		big.Uploads = append(big.Uploads, ownperf.Upload{ID: fmt.Sprintf("v%010d", i), Title: strings.Repeat("t", 100),
			PublishedAt: at.AddDate(0, 0, -i), Views: int64(i), ViewsAtAge: map[int]int64{7: int64(i)},
			Analytics: &ownperf.Figures{Views: 3, AverageViewPercentage: 50.25}})
	}
	if err := st.SaveOwnSync(ctx, a, big, 0); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveOwnSync(ctx, a, big, 0); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("a second first write: %v", err)
	}
	got, v, err := st.OwnSync(ctx, a)
	if err != nil || v != 1 || len(got.Uploads) != 3000 || !got.SyncedAt.Equal(at) || got.Days[0] != big.Days[0] {
		t.Fatalf("read: %d uploads v%d %v", len(got.Uploads), v, err)
	}
	if u := got.Uploads[2999]; u.ID != "v0000002999" || u.ViewsAtAge[7] != 2999 || u.Analytics.AverageViewPercentage != 50.25 {
		t.Fatalf("upload %+v", u)
	}
	if other, v, err := st.OwnSync(ctx, b); err != nil || v != 0 || other.Uploads != nil {
		t.Fatalf("channel b reads %d uploads v%d %v", len(other.Uploads), v, err)
	}
	small := big
	small.Uploads = big.Uploads[:2]
	if err := st.SaveOwnSync(ctx, a, small, 0); apperr.CodeOf(err) != apperr.Conflict {
		t.Fatalf("stale version: %v", err)
	}
	if err := st.SaveOwnSync(ctx, a, small, 1); err != nil {
		t.Fatal(err)
	}
	if got, v, err := st.OwnSync(ctx, a); err != nil || v != 2 || len(got.Uploads) != 2 {
		t.Fatalf("after the smaller write: %d uploads v%d %v", len(got.Uploads), v, err)
	}
	if err := st.DeleteOwnSync(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, v, err := st.OwnSync(ctx, a); err != nil || v != 0 || got.Uploads != nil {
		t.Fatalf("after delete: %+v v%d %v", got, v, err)
	}

	// The budget: reservations stop at the limit and after the API said the bucket's quota is spent.
	day := "2026-03-01"
	limit := quota.Cost{Units: 10, Stats: 10}
	if ok, err := st.ReserveQuota(ctx, day, quota.Cost{Units: 8}, limit); !ok || err != nil {
		t.Fatalf("reserve 8: %v %v", ok, err)
	}
	if ok, err := st.ReserveQuota(ctx, day, quota.Cost{Units: 3}, limit); ok || err != nil {
		t.Fatalf("reserve past the limit: %v %v", ok, err)
	}
	if ok, err := st.ReserveQuota(ctx, day, quota.Cost{Units: -5}, quota.Cost{}); !ok || err != nil {
		t.Fatalf("give back: %v %v", ok, err)
	}
	if u, err := st.QuotaUsed(ctx, day); u.Used != (quota.Cost{Units: 3}) || err != nil {
		t.Fatalf("used %+v %v", u, err)
	}
	if err := st.MarkQuotaExhausted(ctx, day, quota.Units); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.ReserveQuota(ctx, day, quota.Cost{Units: 1}, limit); ok || err != nil {
		t.Fatalf("reserve after the quota: %v %v", ok, err)
	}
	if ok, err := st.ReserveQuota(ctx, day, quota.Cost{Stats: 1}, limit); !ok || err != nil {
		t.Fatalf("stats after the units' quota: %v %v", ok, err)
	}

	// A video's link and reviews.
	id, score := "abcdefghijk", 1.25
	vid := videos.Video{ID: "0190f000-0000-7000-8000-0000000000c1", Title: "t", ContentType: "Long", FormulaType: "f",
		Status: videos.Published, CreatedAt: at, UpdatedAt: at, StatusHistory: []videos.StatusChange{{Status: videos.Planned, At: at}},
		YouTubeVideoID: &id, Reviews: []videos.Review{{Day: 7, Views: 10, OwnOutlierScore: &score, At: at}}}
	if err := st.CreateVideo(ctx, a, vid, 0, 10); err != nil {
		t.Fatal(err)
	}
	back, _, err := st.GetVideo(ctx, a, vid.ID)
	if err != nil || back.YouTubeVideoID == nil || *back.YouTubeVideoID != id || len(back.Reviews) != 1 ||
		*back.Reviews[0].OwnOutlierScore != score || back.Reviews[0].AverageViewPercentage != nil {
		t.Fatalf("video %+v %v", back, err)
	}
	if _, _, err := st.GetVideo(ctx, b, vid.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("channel b reads a's video: %v", err)
	}
}
