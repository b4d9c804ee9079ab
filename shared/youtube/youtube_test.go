package youtube_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/infra/local/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/sourcetest"
	"github.com/creatorstrategy/css/shared/youtube"
	"github.com/creatorstrategy/css/shared/youtube/youtubetest"
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

// Each call reports what the server charged for it: search 100, the list calls 1 per 50 ids or per page.
func TestUnitsMatchTheCalls(t *testing.T) {
	src, srv := serve(t, sourcetest.Niche())
	ctx := context.Background()
	reported := 0
	page, err := src.Search(ctx, research.SearchQuery{Terms: sourcetest.Niche().Keywords, Order: research.OrderViewCount,
		MaxResults: 50, PublishedAfter: now.AddDate(-1, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	reported += page.Units
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
	reported += chs.Units
	up, err := src.Uploads(ctx, research.UploadsQuery{PlaylistID: chs.Channels[0].UploadsPlaylistID, MaxResults: 50})
	if err != nil {
		t.Fatal(err)
	}
	reported += up.Units
	vs, err := src.Videos(ctx, research.VideosQuery{IDs: append(vidIDs, up.VideoIDs...)})
	if err != nil {
		t.Fatal(err)
	}
	reported += vs.Units
	calls := srv.Calls()
	want := map[string]int{"search": 1, "channels": research.CallsFor(len(chIDs)), "playlistItems": 1,
		"videos": research.CallsFor(len(vidIDs) + len(up.VideoIDs))}
	for ep, n := range want {
		if calls[ep] != n {
			t.Errorf("%s: %d calls, want %d", ep, calls[ep], n)
		}
	}
	if reported != srv.Units() || reported != 100+want["channels"]+1+want["videos"] {
		t.Errorf("reported %d units, the server charged %d", reported, srv.Units())
	}
	checkUnits(t, srv)
}

// The API's error bodies map to research's kinds, with the units the failed call cost, and no error
// carries the key.
func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		failure  youtubetest.Failure
		endpoint string
		want     error
		units    int
	}{
		{"quota exceeded", youtubetest.QuotaExceeded(), "search", research.ErrQuotaExceeded, research.SearchCost},
		{"rate limited", youtubetest.RateLimited(), "videos", research.ErrThrottled, research.ListCost},
		{"backend error", youtubetest.BackendError(), "channels", research.ErrThrottled, research.ListCost},
		{"too many requests", youtubetest.Failure{Status: http.StatusTooManyRequests, Reason: "rateLimitExceeded", Domain: "global"}, "search", research.ErrThrottled, research.SearchCost},
		{"forbidden", youtubetest.Forbidden(), "playlistItems", research.ErrSourceFailed, research.ListCost},
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
			case "channels":
				_, err = src.Channels(ctx, research.ChannelsQuery{IDs: []string{"a"}})
			case "playlistItems":
				_, err = src.Uploads(ctx, research.UploadsQuery{PlaylistID: "UUx", MaxResults: 5})
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got := research.UnitsOf(err); got != tc.units || srv.Units() != tc.units {
				t.Errorf("units %d, server charged %d, want %d", got, srv.Units(), tc.units)
			}
			if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), tc.failure.Reason) {
				t.Errorf("error %q: want the reason, never the key", err)
			}
		})
	}
}

// A failure in the second batch of a list call reports the units of both calls.
func TestFailedBatchCountsTheCallsMade(t *testing.T) {
	src, srv := serve(t, sourcetest.Niche())
	srv.SetQuota(1)
	ids := make([]string, 60)
	for i := range ids {
		ids[i] = "v" + string(rune('a'+i%26))
	}
	_, err := src.Videos(context.Background(), research.VideosQuery{IDs: ids})
	if !errors.Is(err, research.ErrQuotaExceeded) || research.UnitsOf(err) != 2 {
		t.Fatalf("err %v with %d units; want quotaExceeded after 2 calls", err, research.UnitsOf(err))
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
	if err != nil || len(p.VideoIDs) != 0 || p.Units != 1 || srv.Units() != 1 {
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
