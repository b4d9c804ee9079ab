// Package youtube is the research source on the YouTube Data API v3, through Google's client
// (google.golang.org/api/youtube/v3). Every call reports the quota it cost in its bucket (shared/quota):
// search.list 1 call of the searches bucket, videos:batchGetStats 1 call of the stats bucket per 50 ids,
// channels.list, playlistItems.list and videos.list 1 unit per call of up to 50 items (ids are sent in
// batches of 50). The API key travels in the X-Goog-Api-Key header, never in a URL, so no logged URL or error
// carries it.
package youtube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"iter"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	yt "google.golang.org/api/youtube/v3"

	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
)

// Config configures the source.
type Config struct {
	// APIKey is the Data API key (required). A secret: never logged.
	APIKey string
	// Endpoint replaces the API's base URL, e.g. "http://127.0.0.1:8123/" (tests).
	Endpoint string
	// HTTPClient is the client the calls go through (default: one with a 20 s timeout). The key is added
	// to each request on top of its transport.
	HTTPClient *http.Client
}

// Timeout bounds one call when Config.HTTPClient is not given.
const Timeout = 20 * time.Second

// Source is the YouTube Data API as a research.Source.
type Source struct{ svc *yt.Service }

// New returns the source. It makes no call.
func New(ctx context.Context, c Config) (*Source, error) {
	if strings.TrimSpace(c.APIKey) == "" {
		return nil, errors.New("youtube: no API key")
	}
	base := cmp.Or(c.HTTPClient, &http.Client{Timeout: Timeout})
	client := *base
	client.Transport = keyTransport{key: c.APIKey, next: cmp.Or(base.Transport, http.DefaultTransport)}
	svc, err := yt.NewService(ctx, clientOptions(&client, c.Endpoint)...)
	if err != nil {
		return nil, fmt.Errorf("youtube: %w", err)
	}
	return &Source{svc: svc}, nil
}

// clientOptions are a Google client's options: calls through client, its logs discarded, at endpoint
// instead of the API's base URL when given.
func clientOptions(client *http.Client, endpoint string) []option.ClientOption {
	opts := []option.ClientOption{option.WithHTTPClient(client), option.WithLogger(slog.New(slog.DiscardHandler))}
	if endpoint != "" {
		opts = append(opts, option.WithEndpoint(endpoint))
	}
	return opts
}

// keyTransport adds the API key to each request as a header.
type keyTransport struct {
	key  string
	next http.RoundTripper
}

func (t keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Goog-Api-Key", t.key)
	return t.next.RoundTrip(r)
}

// Label implements research.Source.
func (*Source) Label() string { return research.SourceYouTube }

// Metered implements research.Source: every call spends the project's quota.
func (*Source) Metered() bool { return true }

// Search implements research.Source (search.list: the searches bucket).
func (s *Source) Search(ctx context.Context, q research.SearchQuery) (research.SearchPage, error) {
	call := s.svc.Search.List([]string{"snippet"}).Q(Query(q.Terms)).Type("video").Order(q.Order).
		MaxResults(int64(q.MaxResults)).
		Fields("nextPageToken", "items(id/videoId,snippet(channelId,channelTitle,title,publishedAt))")
	if !q.PublishedAfter.IsZero() {
		call.PublishedAfter(q.PublishedAfter.UTC().Format(time.RFC3339))
	}
	if q.Language != "" {
		call.RelevanceLanguage(q.Language)
	}
	if q.PageToken != "" {
		call.PageToken(q.PageToken)
	}
	resp, err := call.Context(ctx).Do()
	if err != nil {
		return research.SearchPage{}, sourceError(err, quota.SearchCall, quota.Searches)
	}
	page := research.SearchPage{NextPageToken: resp.NextPageToken, Cost: quota.SearchCall}
	for _, it := range resp.Items {
		if it.Id == nil || it.Id.VideoId == "" || it.Snippet == nil {
			continue
		}
		// Search snippets are HTML-escaped ("&#39;"); videos.list's are not.
		page.Hits = append(page.Hits, research.SearchHit{VideoID: it.Id.VideoId, ChannelID: it.Snippet.ChannelId,
			ChannelTitle: html.UnescapeString(it.Snippet.ChannelTitle), Title: html.UnescapeString(it.Snippet.Title),
			PublishedAt: parseTime(it.Snippet.PublishedAt)})
	}
	return page, nil
}

// Query is the search's q: the terms joined by the API's OR operator, phrases quoted.
func Query(terms []string) string {
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		t = strings.Join(strings.Fields(strings.ReplaceAll(t, `"`, " ")), " ")
		if t == "" {
			continue
		}
		if strings.Contains(t, " ") || strings.Contains(t, "|") {
			t = `"` + t + `"`
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "|")
}

// Channels implements research.Source (channels.list, 1 unit per 50 ids).
func (s *Source) Channels(ctx context.Context, q research.ChannelsQuery) (research.ChannelsPage, error) {
	var page research.ChannelsPage
	for ids := range batches(q.IDs) {
		resp, err := s.svc.Channels.List([]string{"snippet", "contentDetails", "statistics"}).Id(ids...).
			MaxResults(research.MaxIDs).
			Fields("items(id,snippet/title,contentDetails/relatedPlaylists/uploads,statistics(subscriberCount,videoCount))").
			Context(ctx).Do()
		if err != nil {
			return research.ChannelsPage{}, sourceError(err, page.Cost.Add(quota.ListCall), quota.Units)
		}
		page.Cost = page.Cost.Add(quota.ListCall)
		for _, it := range resp.Items {
			c := research.Channel{ID: it.Id}
			if it.Snippet != nil {
				c.Title = it.Snippet.Title
			}
			if it.ContentDetails != nil && it.ContentDetails.RelatedPlaylists != nil {
				c.UploadsPlaylistID = it.ContentDetails.RelatedPlaylists.Uploads
			}
			if it.Statistics != nil {
				c.Subscribers, c.VideoCount = int64(it.Statistics.SubscriberCount), int64(it.Statistics.VideoCount)
			}
			page.Channels = append(page.Channels, c)
		}
	}
	return page, nil
}

// Uploads implements research.Source (playlistItems.list, 1 unit).
func (s *Source) Uploads(ctx context.Context, q research.UploadsQuery) (research.UploadsPage, error) {
	call := s.svc.PlaylistItems.List([]string{"contentDetails"}).PlaylistId(q.PlaylistID).MaxResults(int64(q.MaxResults)).
		Fields("nextPageToken", "items/contentDetails/videoId")
	if q.PageToken != "" {
		call.PageToken(q.PageToken)
	}
	resp, err := call.Context(ctx).Do()
	if err != nil {
		if reasonOf(err) == "playlistNotFound" {
			return research.UploadsPage{Cost: quota.ListCall}, nil // a channel without uploads
		}
		return research.UploadsPage{}, sourceError(err, quota.ListCall, quota.Units)
	}
	page := research.UploadsPage{NextPageToken: resp.NextPageToken, Cost: quota.ListCall}
	for _, it := range resp.Items {
		if it.ContentDetails != nil && it.ContentDetails.VideoId != "" {
			page.VideoIDs = append(page.VideoIDs, it.ContentDetails.VideoId)
		}
	}
	return page, nil
}

// Videos implements research.Source (videos.list, 1 unit per 50 ids).
func (s *Source) Videos(ctx context.Context, q research.VideosQuery) (research.VideosPage, error) {
	var page research.VideosPage
	for ids := range batches(q.IDs) {
		resp, err := s.svc.Videos.List([]string{"snippet", "contentDetails", "statistics"}).Id(ids...).
			Fields("items(id,snippet(channelId,channelTitle,title,description,tags,publishedAt,thumbnails(high/url,medium/url,default/url)),contentDetails/duration,statistics(viewCount,likeCount,commentCount))").
			Context(ctx).Do()
		if err != nil {
			return research.VideosPage{}, sourceError(err, page.Cost.Add(quota.ListCall), quota.Units)
		}
		page.Cost = page.Cost.Add(quota.ListCall)
		for _, it := range resp.Items {
			page.Videos = append(page.Videos, videoOf(it))
		}
	}
	return page, nil
}

// VideoStats implements research.Source (videos:batchGetStats: 1 call of the stats bucket per 50 ids).
// Google's client sends the ids as repeated parameters.
func (s *Source) VideoStats(ctx context.Context, q research.VideosQuery) (research.StatsPage, error) {
	var page research.StatsPage
	for ids := range batches(q.IDs) {
		resp, err := s.svc.Videos.BatchGetStats().Part("snippet", "contentDetails", "statistics").Id(ids...).
			Context(ctx).Do()
		if err != nil {
			return research.StatsPage{}, sourceError(err, page.Cost.Add(quota.StatsCall), quota.Stats)
		}
		page.Cost = page.Cost.Add(quota.StatsCall)
		for _, it := range resp.Items {
			st := research.VideoStat{ID: it.Id}
			if it.Snippet != nil {
				st.PublishedAt = parseTime(it.Snippet.PublishTime)
			}
			if it.ContentDetails != nil {
				st.DurationSeconds = Duration(it.ContentDetails.Duration)
			}
			if it.Statistics != nil {
				st.Views, st.Likes, st.Comments = it.Statistics.ViewCount, it.Statistics.LikeCount, it.Statistics.CommentCount
			}
			page.Stats = append(page.Stats, st)
		}
	}
	return page, nil
}

func videoOf(it *yt.Video) research.SourceVideo {
	v := research.SourceVideo{ID: it.Id, URL: "https://www.youtube.com/watch?v=" + it.Id}
	if sn := it.Snippet; sn != nil {
		v.ChannelID, v.ChannelTitle, v.Title, v.Description, v.Tags = sn.ChannelId, sn.ChannelTitle, sn.Title, sn.Description, sn.Tags
		v.PublishedAt = parseTime(sn.PublishedAt)
		if t := sn.Thumbnails; t != nil {
			for _, th := range []*yt.Thumbnail{t.High, t.Medium, t.Default} {
				if th != nil && th.Url != "" {
					v.ThumbnailURL = th.Url
					break
				}
			}
		}
	}
	if it.ContentDetails != nil {
		v.DurationSeconds = Duration(it.ContentDetails.Duration)
	}
	if st := it.Statistics; st != nil {
		v.Views, v.Likes, v.Comments = int64(st.ViewCount), int64(st.LikeCount), int64(st.CommentCount)
	}
	return v
}

// batches splits ids into runs of at most research.MaxIDs.
func batches(ids []string) iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		for start := 0; start < len(ids); start += research.MaxIDs {
			if !yield(ids[start:min(start+research.MaxIDs, len(ids))]) {
				return
			}
		}
	}
}

// Duration reads a duration as the API gives it in seconds: ISO 8601 in videos.list ("PT1H2M3S",
// "P1DT2H", "P0D"), a protobuf Duration in videos:batchGetStats ("754s", "754.5s"); 0 for anything else (a
// live stream's, an upcoming video's).
func Duration(s string) int {
	if secs, ok := strings.CutSuffix(s, "s"); ok {
		f, err := strconv.ParseFloat(secs, 64)
		if err != nil || f < 0 || f > 1e9 {
			return 0
		}
		return int(f)
	}
	rest, ok := strings.CutPrefix(s, "P")
	if !ok {
		return 0
	}
	total, inTime := 0, false
	num := ""
	for _, r := range rest {
		switch {
		case r == 'T':
			inTime = true
		case r >= '0' && r <= '9':
			num += string(r)
		default:
			n, err := strconv.Atoi(num)
			if err != nil {
				return 0
			}
			num = ""
			switch {
			case r == 'W' && !inTime:
				total += n * 7 * 86400
			case r == 'D' && !inTime:
				total += n * 86400
			case r == 'H' && inTime:
				total += n * 3600
			case r == 'M' && inTime:
				total += n * 60
			case r == 'S' && inTime:
				total += n
			default:
				return 0
			}
		}
	}
	if num != "" {
		return 0
	}
	return total
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// reasonOf returns the first reason of an API error ("quotaExceeded", "playlistNotFound", ...).
func reasonOf(err error) string {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		for _, e := range ge.Errors {
			if e.Reason != "" {
				return e.Reason
			}
		}
	}
	return ""
}

// sourceError maps a failed call to research's kinds: the daily quota spent, throttling and server or
// network trouble (tried again later), or anything else (the run fails and says why).
func sourceError(err error, cost quota.Cost, bucket quota.Bucket) error {
	kind := research.ErrSourceFailed
	var ge *googleapi.Error
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &ge):
		switch reason := reasonOf(err); {
		case reason == "quotaExceeded" || reason == "dailyLimitExceeded":
			kind = research.ErrQuotaExceeded
		case ge.Code == http.StatusTooManyRequests || ge.Code >= 500 || reason == "rateLimitExceeded" ||
			reason == "userRateLimitExceeded" || reason == "backendError":
			kind = research.ErrThrottled
		}
		// The message is the API's; the request's URL and headers (the key) are not in it.
		err = fmt.Errorf("youtube: %d %s: %s", ge.Code, reasonOf(err), ge.Message)
	default:
		kind = research.ErrThrottled // the network: worth another try
	}
	return &research.SourceError{Kind: kind, Cost: cost, Bucket: bucket, Err: err}
}
