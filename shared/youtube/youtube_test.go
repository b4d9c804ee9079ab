package youtube_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/sourcetest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/youtube"
)

const key = "AIzaTestKey-0123456789abcdefghijklmnopq"

var now = time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC)

// serve starts the wire-protocol server over the niche's sample corpus and returns the real client
// pointed at it.
func serve(t *testing.T, n research.Niche) (*youtube.Source, *youtubetest.Server) {
	t.Helper()
	srv := youtubetest.Start(key, youtubesample.Corpus(n, now))
	t.Cleanup(srv.Close)
	src, err := youtube.New(context.Background(), youtube.Config{APIKey: key, Endpoint: srv.Endpoint(), HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return src, srv
}

func TestConformance(t *testing.T) {
	sourcetest.Run(t, now, func(t *testing.T, n research.Niche) research.Source {
		src, srv := serve(t, n)
		t.Cleanup(func() { checkUnits(t, srv) })
		return src
	})
}

// checkUnits holds that the server saw the key on every request, in the header and never in a URL.
func checkUnits(t *testing.T, srv *youtubetest.Server) {
	t.Helper()
	for _, k := range srv.Keys() {
		if k != key {
			t.Errorf("a request carried key %q", k)
		}
	}
	for _, u := range srv.URLs() {
		if strings.Contains(u, key) || strings.Contains(u, "key=") {
			t.Errorf("the key is in a URL: %s", u)
		}
	}
}

// Each call reports what the server charged for it, in its bucket: search 1 search call, the list calls 1
// unit per 50 ids or per page, videos:batchGetStats 1 stats call per 50 ids.
func TestCostsMatchTheCalls(t *testing.T) {
	src, srv := serve(t, sourcetest.Niche())
	ctx := context.Background()
	var reported quota.Cost
	page, err := src.Search(ctx, research.SearchQuery{Terms: sourcetest.Niche().Keywords, Order: research.OrderViewCount,
		MaxResults: 50, PublishedAfter: now.AddDate(-1, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	reported = reported.Add(page.Cost)
	var chIDs, vidIDs []string
	for _, h := range page.Hits {
		chIDs = append(chIDs, h.ChannelID)
		vidIDs = append(vidIDs, h.VideoID)
	}
	for len(chIDs) < 120 { // repeated ids still cost a call per 50
		chIDs = append(chIDs, chIDs...)
	}
	chs, err := src.Channels(ctx, research.ChannelsQuery{IDs: chIDs})
	if err != nil {
		t.Fatal(err)
	}
	reported = reported.Add(chs.Cost)
	up, err := src.Uploads(ctx, research.UploadsQuery{PlaylistID: chs.Channels[0].UploadsPlaylistID, MaxResults: 50})
	if err != nil {
		t.Fatal(err)
	}
	reported = reported.Add(up.Cost)
	vs, err := src.Videos(ctx, research.VideosQuery{IDs: append(vidIDs, up.VideoIDs...)})
	if err != nil {
		t.Fatal(err)
	}
	reported = reported.Add(vs.Cost)
	stats, err := src.VideoStats(ctx, research.VideosQuery{IDs: append(vidIDs, up.VideoIDs...)})
	if err != nil || len(stats.Stats) != len(vs.Videos) {
		t.Fatalf("stats of %d videos, %v; want the %d videos.list found", len(stats.Stats), err, len(vs.Videos))
	}
	reported = reported.Add(stats.Cost)
	calls := srv.Calls()
	want := map[string]int{"search": 1, "channels": research.CallsFor(len(chIDs)), "playlistItems": 1,
		"videos": research.CallsFor(len(vidIDs) + len(up.VideoIDs)), "batchGetStats": research.CallsFor(len(vidIDs) + len(up.VideoIDs))}
	for ep, n := range want {
		if calls[ep] != n {
			t.Errorf("%s: %d calls, want %d", ep, calls[ep], n)
		}
	}
	if wantCost := (quota.Cost{Units: want["channels"] + 1 + want["videos"], Searches: 1, Stats: want["batchGetStats"]}); reported != srv.Spent() || reported != wantCost {
		t.Errorf("reported %v, the server charged %v, want %v", reported, srv.Spent(), wantCost)
	}
	checkUnits(t, srv)
}

// The API's error bodies map to research's kinds, with what the failed call cost and the bucket it is
// charged to, and no error carries the key.
func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		failure  youtubetest.Failure
		endpoint string
		want     error
		cost     quota.Cost
		bucket   quota.Bucket
	}{
		{"quota exceeded", youtubetest.QuotaExceeded(), "search", research.ErrQuotaExceeded, quota.SearchCall, quota.Searches},
		{"stats quota exceeded", youtubetest.QuotaExceeded(), "batchGetStats", research.ErrQuotaExceeded, quota.StatsCall, quota.Stats},
		{"units quota exceeded", youtubetest.QuotaExceeded(), "videos", research.ErrQuotaExceeded, quota.ListCall, quota.Units},
		{"rate limited", youtubetest.RateLimited(), "videos", research.ErrThrottled, quota.ListCall, quota.Units},
		{"backend error", youtubetest.BackendError(), "channels", research.ErrThrottled, quota.ListCall, quota.Units},
		{"too many requests", youtubetest.Failure{Status: http.StatusTooManyRequests, Reason: "rateLimitExceeded", Domain: "global"}, "search", research.ErrThrottled, quota.SearchCall, quota.Searches},
		{"forbidden", youtubetest.Forbidden(), "playlistItems", research.ErrSourceFailed, quota.ListCall, quota.Units},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, srv := serve(t, sourcetest.Niche())
			srv.FailNext(tc.endpoint, tc.failure)
			ctx := context.Background()
			var err error
			switch tc.endpoint {
			case "search":
				_, err = src.Search(ctx, research.SearchQuery{Terms: []string{"vegan"}, Order: research.OrderViewCount, MaxResults: 5})
			case "videos":
				_, err = src.Videos(ctx, research.VideosQuery{IDs: []string{"a", "b"}})
			case "batchGetStats":
				_, err = src.VideoStats(ctx, research.VideosQuery{IDs: []string{"a", "b"}})
			case "channels":
				_, err = src.Channels(ctx, research.ChannelsQuery{IDs: []string{"a"}})
			case "playlistItems":
				_, err = src.Uploads(ctx, research.UploadsQuery{PlaylistID: "UUx", MaxResults: 5})
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got := research.CostOf(err); got != tc.cost || srv.Spent() != tc.cost || research.BucketOf(err) != tc.bucket {
				t.Errorf("cost %v in %s, server charged %v, want %v in %s", got, research.BucketOf(err), srv.Spent(), tc.cost, tc.bucket)
			}
			if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), tc.failure.Reason) {
				t.Errorf("error %q: want the reason, never the key", err)
			}
		})
	}
}

// A failure in the second batch of a list call reports the cost of both calls; a bucket's quota stops only
// its own calls.
func TestFailedBatchCountsTheCallsMade(t *testing.T) {
	src, srv := serve(t, sourcetest.Niche())
	srv.SetQuota(1)
	ids := make([]string, 60)
	for i := range ids {
		ids[i] = "v" + string(rune('a'+i%26))
	}
	_, err := src.Videos(context.Background(), research.VideosQuery{IDs: ids})
	if !errors.Is(err, research.ErrQuotaExceeded) || research.CostOf(err) != quota.ListCall.Times(2) {
		t.Fatalf("err %v costing %v; want quotaExceeded after 2 calls", err, research.CostOf(err))
	}
	if _, err := src.VideoStats(context.Background(), research.VideosQuery{IDs: ids}); err != nil {
		t.Fatalf("stats calls after the units ran out: %v", err)
	}
	srv.SetBucketQuota(quota.Stats, 3)
	if _, err := src.VideoStats(context.Background(), research.VideosQuery{IDs: ids}); !errors.Is(err, research.ErrQuotaExceeded) ||
		research.CostOf(err) != quota.StatsCall.Times(2) || research.BucketOf(err) != quota.Stats {
		t.Fatalf("stats past their quota: %v costing %v; want quotaExceeded of the stats bucket after 2 calls", err, research.CostOf(err))
	}
}

func TestInvalidKey(t *testing.T) {
	_, srv := serve(t, sourcetest.Niche())
	bad, err := youtube.New(context.Background(), youtube.Config{APIKey: "wrong-key", Endpoint: srv.Endpoint(), HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Search(context.Background(), research.SearchQuery{Terms: []string{"vegan"}, Order: research.OrderViewCount, MaxResults: 5})
	if !errors.Is(err, research.ErrSourceFailed) || strings.Contains(err.Error(), "wrong-key") {
		t.Fatalf("err = %v; want a failure that does not name the key", err)
	}
	if _, err := youtube.New(context.Background(), youtube.Config{APIKey: " "}); err == nil {
		t.Fatal("a source without a key")
	}
}

// A channel whose uploads playlist is gone reads as no uploads: the run goes on without it.
func TestPlaylistNotFoundIsEmpty(t *testing.T) {
	src, srv := serve(t, sourcetest.Niche())
	p, err := src.Uploads(context.Background(), research.UploadsQuery{PlaylistID: "PLnotanuploadsplaylist", MaxResults: 5})
	if err != nil || len(p.VideoIDs) != 0 || p.Cost != quota.ListCall || srv.Units() != 1 {
		t.Fatalf("%+v, %v (server %d units); want an empty page for 1 unit", p, err, srv.Units())
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"PT15S", 15}, {"PT3M", 180}, {"PT3M1S", 181}, {"PT1H2M3S", 3723}, {"P1DT2H", 93600}, {"P0D", 0},
		{"PT0S", 0}, {"P1W", 604800}, {"", 0}, {"15S", 0}, {"PT1X", 0}, {"PT", 0}, {"PT5", 0}, {"P1H", 0},
		// videos:batchGetStats gives a protobuf Duration.
		{"754s", 754}, {"754.5s", 754}, {"0s", 0}, {"-5s", 0}, {"s", 0}, {"1e12s", 0}, {"abcs", 0},
	}
	for _, tc := range tests {
		if got := youtube.Duration(tc.in); got != tc.want {
			t.Errorf("Duration(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestQuery(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"vegan"}, "vegan"},
		{[]string{"vegan", "meal prep"}, `vegan|"meal prep"`},
		{[]string{` say "hi" `, "", "a|b"}, `"say hi"|"a|b"`},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := youtube.Query(tc.in); got != tc.want {
			t.Errorf("Query(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
