// Package sourcetest is the conformance suite of the research.Source port: the YouTube adapter (against
// the Data API's wire format on loopback) and the offline sample run it, so research can rely on the same
// rules whatever the source.
package sourcetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
)

// Niche is the niche the suite asks about.
func Niche() research.Niche {
	return research.Niche{Keywords: []string{"budget", "meal prep", "protein", "vegan"}, Language: "english", Focus: "vegan meal prep"}
}

// Run runs the suite. newSource returns a source whose corpus covers n as of now (for the offline sample,
// its own; for an API adapter, a server's).
func Run(t *testing.T, now time.Time, newSource func(t *testing.T, n research.Niche) research.Source) {
	t.Helper()
	tests := []struct {
		name string
		run  func(*testing.T, research.Source, time.Time)
	}{
		{"Label", testLabel},
		{"SearchBoundsAndUnits", testSearch},
		{"SearchPaging", testSearchPaging},
		{"SearchOrderDate", testSearchOrderDate},
		{"Channels", testChannels},
		{"UploadsPaging", testUploads},
		{"UnknownPlaylistIsEmpty", testUnknownPlaylist},
		{"Videos", testVideos},
		{"VideosAndStatsInBatches", testVideoBatches},
		{"CanceledContext", testCanceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newSource(t, Niche()), now)
		})
	}
}

// cost is what a call should report: its API cost when the source is metered, else nothing.
func cost(src research.Source, c quota.Cost) quota.Cost {
	if src.Metered() {
		return c
	}
	return quota.Cost{}
}

func search(t *testing.T, src research.Source, now time.Time, order, token string, n int) research.SearchPage {
	t.Helper()
	p, err := src.Search(context.Background(), research.SearchQuery{Niche: Niche(), Terms: Niche().Keywords, Language: "en",
		PublishedAfter: now.AddDate(-1, 0, 0), Order: order, MaxResults: n, PageToken: token})
	if err != nil {
		t.Fatalf("Search(%s, %q): %v", order, token, err)
	}
	return p
}

func testLabel(t *testing.T, src research.Source, _ time.Time) {
	if l := src.Label(); l != research.SourceYouTube && l != research.SourceOffline {
		t.Errorf("Label() = %q, want %q or %q", l, research.SourceYouTube, research.SourceOffline)
	}
	if src.Metered() != (src.Label() == research.SourceYouTube) {
		t.Errorf("Metered() = %v for %q: only the API spends quota", src.Metered(), src.Label())
	}
}

func testSearch(t *testing.T, src research.Source, now time.Time) {
	for _, n := range []int{1, 7, research.MaxResults} {
		p := search(t, src, now, research.OrderViewCount, "", n)
		if len(p.Hits) == 0 || len(p.Hits) > n {
			t.Errorf("maxResults %d: %d hits", n, len(p.Hits))
		}
		if want := cost(src, quota.SearchCall); p.Cost != want {
			t.Errorf("maxResults %d: cost %v, want %v", n, p.Cost, want)
		}
		for _, h := range p.Hits {
			if h.VideoID == "" || h.ChannelID == "" || h.Title == "" {
				t.Errorf("incomplete hit %+v", h)
			}
			if !h.PublishedAt.After(now.AddDate(-1, 0, 0)) {
				t.Errorf("hit %s published %s, before publishedAfter", h.VideoID, h.PublishedAt)
			}
		}
	}
}

func testSearchPaging(t *testing.T, src research.Source, now time.Time) {
	seen := map[string]bool{}
	token, pages := "", 0
	for {
		p := search(t, src, now, research.OrderRelevance, token, 20)
		pages++
		for _, h := range p.Hits {
			if seen[h.VideoID] {
				t.Fatalf("page %d repeats %s", pages, h.VideoID)
			}
			seen[h.VideoID] = true
		}
		if p.NextPageToken == "" || pages == 3 {
			break
		}
		token = p.NextPageToken
	}
	if pages < 2 {
		t.Fatalf("the niche's search has a single page of 20; the suite needs more to test paging")
	}
}

func testSearchOrderDate(t *testing.T, src research.Source, now time.Time) {
	p := search(t, src, now, research.OrderDate, "", research.MaxResults)
	if !slices.IsSortedFunc(p.Hits, func(a, b research.SearchHit) int { return b.PublishedAt.Compare(a.PublishedAt) }) {
		t.Error("order=date: hits are not newest first")
	}
}

// channelIDs returns distinct channels of the niche found by search.
func channelIDs(t *testing.T, src research.Source, now time.Time) []string {
	t.Helper()
	var ids []string
	for _, h := range search(t, src, now, research.OrderViewCount, "", research.MaxResults).Hits {
		if !slices.Contains(ids, h.ChannelID) {
			ids = append(ids, h.ChannelID)
		}
	}
	return ids
}

func testChannels(t *testing.T, src research.Source, now time.Time) {
	ids := channelIDs(t, src, now)
	p, err := src.Channels(context.Background(), research.ChannelsQuery{Niche: Niche(), IDs: append(slices.Clone(ids), "UCunknownunknownunknown0")})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Channels) != len(ids) {
		t.Fatalf("%d channels for %d known ids and one unknown", len(p.Channels), len(ids))
	}
	for _, c := range p.Channels {
		if !slices.Contains(ids, c.ID) || c.Title == "" || c.UploadsPlaylistID == "" {
			t.Errorf("channel %+v", c)
		}
	}
	if want := cost(src, quota.ListCall.Times(research.CallsFor(len(ids)+1))); p.Cost != want {
		t.Errorf("%d ids: cost %v, want %v", len(ids)+1, p.Cost, want)
	}
	empty, err := src.Channels(context.Background(), research.ChannelsQuery{Niche: Niche()})
	if err != nil || len(empty.Channels) != 0 || !empty.Cost.IsZero() {
		t.Errorf("no ids: %+v, %v; want nothing, no call", empty, err)
	}
}

func uploadsPlaylist(t *testing.T, src research.Source, now time.Time) string {
	t.Helper()
	p, err := src.Channels(context.Background(), research.ChannelsQuery{Niche: Niche(), IDs: channelIDs(t, src, now)[:1]})
	if err != nil || len(p.Channels) != 1 {
		t.Fatalf("Channels: %+v, %v", p, err)
	}
	return p.Channels[0].UploadsPlaylistID
}

func testUploads(t *testing.T, src research.Source, now time.Time) {
	playlist := uploadsPlaylist(t, src, now)
	var all []string
	token := ""
	for pages := 1; ; pages++ {
		p, err := src.Uploads(context.Background(), research.UploadsQuery{Niche: Niche(), PlaylistID: playlist, MaxResults: 15, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.VideoIDs) > 15 {
			t.Fatalf("page %d: %d ids, maxResults 15", pages, len(p.VideoIDs))
		}
		if want := cost(src, quota.ListCall); p.Cost != want {
			t.Errorf("page %d: cost %v, want %v", pages, p.Cost, want)
		}
		all = append(all, p.VideoIDs...)
		if token = p.NextPageToken; token == "" {
			break
		}
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
	if len(all) <= 15 || len(slices.Compact(slices.Sorted(slices.Values(all)))) != len(all) {
		t.Fatalf("%d uploads over the pages, some repeated or too few to page", len(all))
	}
	vs, err := src.Videos(context.Background(), research.VideosQuery{Niche: Niche(), IDs: all})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Videos) != len(all) {
		t.Fatalf("%d of %d uploads found by Videos", len(vs.Videos), len(all))
	}
	if !slices.IsSortedFunc(vs.Videos, func(a, b research.SourceVideo) int { return b.PublishedAt.Compare(a.PublishedAt) }) {
		t.Error("uploads are not newest first")
	}
}

func testUnknownPlaylist(t *testing.T, src research.Source, _ time.Time) {
	p, err := src.Uploads(context.Background(), research.UploadsQuery{Niche: Niche(), PlaylistID: "UUunknownunknownunknown0", MaxResults: 10})
	if err != nil || len(p.VideoIDs) != 0 || p.NextPageToken != "" {
		t.Errorf("unknown playlist: %+v, %v; want an empty page", p, err)
	}
}

func testVideos(t *testing.T, src research.Source, now time.Time) {
	hits := search(t, src, now, research.OrderViewCount, "", 10).Hits
	ids := []string{"unknownvid0"}
	for _, h := range hits {
		ids = append(ids, h.VideoID)
	}
	p, err := src.Videos(context.Background(), research.VideosQuery{Niche: Niche(), IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Videos) != len(hits) {
		t.Fatalf("%d videos for %d known ids and one unknown", len(p.Videos), len(hits))
	}
	if want := cost(src, quota.ListCall); p.Cost != want {
		t.Errorf("cost %v, want %v", p.Cost, want)
	}
	for i, v := range p.Videos {
		h := hits[i]
		if v.ID != h.VideoID || v.ChannelID != h.ChannelID || v.Title != h.Title || !v.PublishedAt.Equal(h.PublishedAt) {
			t.Errorf("video %d = %s %s %q %s; search said %s %s %q %s", i, v.ID, v.ChannelID, v.Title, v.PublishedAt,
				h.VideoID, h.ChannelID, h.Title, h.PublishedAt)
		}
		if v.DurationSeconds <= 0 || v.Views < 0 || v.URL == "" || v.ChannelTitle == "" {
			t.Errorf("video %s incomplete: %+v", v.ID, v)
		}
	}
	if i := slices.IndexFunc(p.Videos, func(v research.SourceVideo) bool { return v.Views > 0 }); i < 0 {
		t.Error("no video has views")
	}
}

func testVideoBatches(t *testing.T, src research.Source, now time.Time) {
	playlist := uploadsPlaylist(t, src, now)
	var ids []string
	token := ""
	for len(ids) < 120 {
		p, err := src.Uploads(context.Background(), research.UploadsQuery{Niche: Niche(), PlaylistID: playlist, MaxResults: research.MaxResults, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.VideoIDs...)
		if token = p.NextPageToken; token == "" {
			break
		}
	}
	// Repeat ids to pass 50 even on a short playlist: a repeated id is answered once per call it is in.
	for len(ids) <= 2*research.MaxIDs {
		ids = append(ids, ids...)
	}
	p, err := src.Videos(context.Background(), research.VideosQuery{Niche: Niche(), IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if want := cost(src, quota.ListCall.Times(research.CallsFor(len(ids)))); p.Cost != want {
		t.Errorf("%d ids: cost %v, want %v", len(ids), p.Cost, want)
	}
	if len(p.Videos) == 0 {
		t.Error("no videos")
	}
	// The same ids' statistics: videos:batchGetStats, in its own bucket, the same figures as videos.list.
	st, err := src.VideoStats(context.Background(), research.VideosQuery{Niche: Niche(), IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if want := cost(src, quota.StatsCall.Times(research.CallsFor(len(ids)))); st.Cost != want {
		t.Errorf("stats of %d ids: cost %v, want %v", len(ids), st.Cost, want)
	}
	byID := map[string]research.SourceVideo{}
	for _, v := range p.Videos {
		byID[v.ID] = v
	}
	if len(st.Stats) != len(p.Videos) {
		t.Errorf("stats of %d videos, videos.list found %d", len(st.Stats), len(p.Videos))
	}
	for _, s := range st.Stats {
		v, ok := byID[s.ID]
		if !ok || s.Views != v.Views || s.Likes != v.Likes || s.Comments != v.Comments ||
			s.DurationSeconds != v.DurationSeconds || !s.PublishedAt.Equal(v.PublishedAt) {
			t.Errorf("stats %+v differ from videos.list's %+v", s, v)
		}
	}
	none, err := src.VideoStats(context.Background(), research.VideosQuery{Niche: Niche(), IDs: []string{"unknownvid01"}})
	if err != nil || len(none.Stats) != 0 {
		t.Errorf("stats of an unknown id: %+v, %v; want none", none, err)
	}
}

func testCanceled(t *testing.T, src research.Source, now time.Time) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Search(ctx, research.SearchQuery{Niche: Niche(), Terms: Niche().Keywords, Order: research.OrderViewCount, MaxResults: 5}); err == nil {
		t.Error("Search with a canceled context succeeded")
	}
	if _, err := src.Videos(ctx, research.VideosQuery{Niche: Niche(), IDs: []string{"x"}}); err == nil {
		t.Error("Videos with a canceled context succeeded")
	}
}
