package ownperf_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/transcript"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/youtube"
)

// A review names the retention curve's 3 steepest drops, each with the line of the cached own caption
// track spoken there, and the relative retention; the sync stores the channel's own search terms.
func TestReviewNamesDropPointsWithCaptionsAndSyncReadsSearchTerms(t *testing.T) {
	ups := uploads(ytA, "a", 40, start)
	ups[2].Title, ups[2].DurationSeconds = "5 vegan lunches under $3", 600
	h := newHarness(t, ups, uploads(ytB, "b", 5, start), 0)
	edited := commit(t, h, chA, "5 vegan lunches under $3", videos.Edited)
	// The transcript cache holds the video's own track (decision 41): a cue every 3 seconds.
	var cues []transcript.Cue
	for s := 0; s < 600; s += 3 {
		cues = append(cues, transcript.Cue{Start: time.Duration(s) * time.Second, End: time.Duration(s+3) * time.Second, Text: "line at " + time.Duration(s*int(time.Second)).String()})
	}
	ctx := context.Background()
	if err := h.store.PutTranscript(ctx, chA, ups[2].ID, "track-1", "v1", transcript.Text(cues)); err != nil {
		t.Fatal(err)
	}
	rep := h.sync(t, chA)
	s := h.stored(t, chA)
	today := start.Truncate(24 * time.Hour)
	want := youtubetest.SearchTerms(youtubesample.CatalogChannel{Uploads: ups}, today.AddDate(0, 0, -ownperf.WindowDays), today.AddDate(0, 0, -1), today, 25)
	if len(s.SearchTerms) == 0 || len(s.SearchTerms) != len(want) {
		t.Fatalf("search terms %+v, want %+v", s.SearchTerms, want)
	}
	for i, w := range want {
		if s.SearchTerms[i] != (ownperf.SearchTerm{Term: w.Term, Views: w.Views}) {
			t.Fatalf("search term %d: %+v, want %+v", i, s.SearchTerms[i], w)
		}
	}
	if rep.Queries != 3 {
		t.Fatalf("queries %d", rep.Queries)
	}

	h.clock.add(5*24*time.Hour + 2*time.Hour) // day 7
	before := h.analytics.Queries()
	rep = h.sync(t, chA)
	if rep.Reviews != 1 || h.analytics.Queries()-before != 4 {
		t.Fatalf("report %+v, %d queries; want a review and 4 queries (3 + its retention)", rep, h.analytics.Queries()-before)
	}
	v := get(t, h, chA, edited.ID)
	r := v.Reviews[0]
	at, depth := youtubetest.RetentionDrops(ups[2].ID)
	if len(r.DropPoints) != 3 {
		t.Fatalf("drop points %+v", r.DropPoints)
	}
	for k, d := range r.DropPoints {
		// The curve falls 0.003 a point besides its cliffs: each drop is the cliff and that.
		secs := int(math.Round(float64(at[k]) / 100 * 600))
		line := "line at " + (time.Duration(secs/3*3) * time.Second).String()
		if d.AtSeconds != secs || d.ElapsedRatio != float64(at[k])/100 || math.Abs(d.ShareLost-(depth[k]+0.003)) > 1e-9 || d.Caption != line {
			t.Errorf("drop %d: %+v, want at %ds, ratio %v, lost %v, caption %q", k, d, secs, float64(at[k])/100, depth[k]+0.003, line)
		}
	}
	wantRel := youtubetest.RetentionCurve(ups[2].ID)[0].RelativePerformance
	if r.RelativeRetention == nil || *r.RelativeRetention != wantRel {
		t.Fatalf("relative retention %v, want %v", r.RelativeRetention, wantRel)
	}
	b, _ := json.Marshal(v)
	if _, err := contract.ValidateJSON("MyVideo", b); err != nil {
		t.Fatalf("reviewed video against the contract: %v", err)
	}
	if evs := h.events.ofType(webhooks.VideoReviewed); len(evs) != 1 || !json.Valid(evs[0].Data) {
		t.Fatalf("%d video.reviewed", len(evs))
	}
	var data struct {
		Review videos.Review `json:"review"`
	}
	if err := json.Unmarshal(h.events.ofType(webhooks.VideoReviewed)[0].Data, &data); err != nil || len(data.Review.DropPoints) != 3 {
		t.Fatalf("video.reviewed carries %+v (%v)", data.Review, err)
	}
}

// Without a cached track the drops are named without words; a channel without analytics access has
// neither drops nor search terms.
func TestDropPointsWithoutCaptionsAndWithoutAnalytics(t *testing.T) {
	ups := uploads(ytA, "a", 20, start)
	ups[2].Title = "Mine"
	upsB := uploads(ytB, "b", 20, start)
	upsB[2].Title = "Theirs"
	h := newHarness(t, ups, upsB, 0)
	h.analytics.Forbid(ytB)
	va := commit(t, h, chA, "Mine", videos.Edited)
	vb := commit(t, h, chB, "Theirs", videos.Edited)
	h.sync(t, chA)
	h.sync(t, chB)
	h.clock.add(5*24*time.Hour + 2*time.Hour)
	h.sync(t, chA)
	h.sync(t, chB)
	ra, rb := get(t, h, chA, va.ID).Reviews, get(t, h, chB, vb.ID).Reviews
	if len(ra) != 1 || len(ra[0].DropPoints) != 3 || ra[0].DropPoints[0].Caption != "" {
		t.Fatalf("A's review %+v", ra)
	}
	if len(rb) != 1 || rb[0].DropPoints != nil || rb[0].RelativeRetention != nil || h.stored(t, chB).SearchTerms != nil {
		t.Fatalf("B (no analytics): review %+v, terms %+v", rb, h.stored(t, chB).SearchTerms)
	}
}

func TestDropPointsAreApartAndSteepestFirst(t *testing.T) {
	w := []float64{1, 0.99, 0.80, 0.62, 0.61, 0.60, 0.50, 0.49, 0.48, 0.47, 0.30, 0.29}
	var curve []ownperf.RetentionPoint
	for i, x := range w {
		curve = append(curve, ownperf.RetentionPoint{Ratio: float64(i+1) / 100, AudienceWatchRatio: x, RelativePerformance: 0.4})
	}
	got := ownperf.DropPoints(curve, 1000, "", 3)
	// 0.19 (index 2) and 0.18 (index 3) are one cliff: the second is within 3 points of the first.
	want := []float64{0.19, 0.17, 0.10}
	if len(got) != 3 {
		t.Fatalf("%+v", got)
	}
	for i, d := range got {
		if math.Abs(d.ShareLost-want[i]) > 1e-9 {
			t.Fatalf("drop %d: %+v, want lost %v", i, d, want[i])
		}
	}
	if got[0].AtSeconds != 20 || got[0].ElapsedRatio != 0.02 {
		t.Fatalf("first drop %+v", got[0])
	}
	if r := ownperf.RelativeRetention(curve); r == nil || *r != 0.4 {
		t.Fatalf("relative %v", r)
	}
	if ownperf.DropPoints(nil, 100, "", 3) == nil || ownperf.RelativeRetention(nil) != nil {
		t.Fatal("empty curve")
	}
}

// Each channel's retention, daily views and search terms are its own token's: A's owner asking for B's
// video is refused (YouTube's 403), and A's search terms hold none of B's titles.
func TestDeeperAnalyticsAreTheOwnersOnly(t *testing.T) {
	h := newHarness(t, uploads(ytA, "a", 10, start), uploads(ytB, "b", 10, start), 0)
	access := youtube.OwnerAccess{Clients: h.owners, Endpoint: h.data.Endpoint(), AnalyticsEndpoint: h.analytics.Endpoint()}
	ctx := context.Background()
	a, err := access.Owner(ctx, chA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Analytics.Retention(ctx, videoID("b", 3), "2026-01-01", "2026-03-01"); !errors.Is(err, ownperf.ErrAnalyticsForbidden) {
		t.Fatalf("A reading B's retention: %v", err)
	}
	if _, err := a.Analytics.VideoDays(ctx, videoID("b", 3), "2026-01-01", "2026-03-01"); !errors.Is(err, ownperf.ErrAnalyticsForbidden) {
		t.Fatalf("A reading B's daily views: %v", err)
	}
	curve, err := a.Analytics.Retention(ctx, videoID("a", 3), "2026-01-01", "2026-03-01")
	if err != nil || len(curve) != 100 {
		t.Fatalf("A's own retention: %d points, %v", len(curve), err)
	}
	terms, err := a.Analytics.SearchTerms(ctx, "2026-02-01", "2026-03-09", 25)
	if err != nil || len(terms) == 0 {
		t.Fatalf("A's terms %v %v", terms, err)
	}
	for _, st := range terms {
		if !strings.HasPrefix(st.Term, "upload a ") {
			t.Fatalf("A's search terms hold %q", st.Term)
		}
	}
}
