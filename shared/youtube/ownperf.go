package youtube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/api/googleapi"
	yt "google.golang.org/api/youtube/v3"
	ya "google.golang.org/api/youtubeanalytics/v2"
	yr "google.golang.org/api/youtubereporting/v1"

	"github.com/creatorstrategy/css/shared/ownperf"
)

// OwnerClients gives the HTTP client of a connected channel's owner (shared/connection's service): a
// client whose requests carry the owner's OAuth token, and the YouTube channel it is for.
type OwnerClients interface {
	OwnerClient(ctx context.Context, channelID string) (client *http.Client, youtubeChannelID string, err error)
}

// OwnerAccess is ownperf.Access over the owner's OAuth client: the Data API calls of the sync (the
// channel's uploads and statistics, the same calls and units research makes) and YouTube Analytics v2
// reports.query, and the Reporting API's reach report (decision 51). Endpoint, AnalyticsEndpoint and
// ReportingEndpoint replace the APIs' base URLs (CSS_YOUTUBE_ENDPOINT, CSS_YOUTUBE_ANALYTICS_ENDPOINT,
// CSS_YOUTUBE_REPORTING_ENDPOINT; tests).
type OwnerAccess struct {
	Clients           OwnerClients
	Endpoint          string
	AnalyticsEndpoint string
	ReportingEndpoint string
}

// Owner implements ownperf.Access. The client is the channel's own, so one channel's token never
// serves another's calls.
func (a OwnerAccess) Owner(ctx context.Context, channelID string) (ownperf.Owner, error) {
	client, ytID, err := a.Clients.OwnerClient(ctx, channelID)
	if err != nil {
		return ownperf.Owner{}, err
	}
	svc, err := yt.NewService(ctx, clientOptions(client, a.Endpoint)...)
	if err != nil {
		return ownperf.Owner{}, fmt.Errorf("youtube: %w", err)
	}
	an, err := ya.NewService(ctx, clientOptions(client, a.AnalyticsEndpoint)...)
	if err != nil {
		return ownperf.Owner{}, fmt.Errorf("youtube analytics: %w", err)
	}
	rs, err := yr.NewService(ctx, clientOptions(client, a.ReportingEndpoint)...)
	if err != nil {
		return ownperf.Owner{}, fmt.Errorf("youtube reporting: %w", err)
	}
	return ownperf.Owner{YouTubeChannelID: ytID, Data: &Source{svc: svc}, Analytics: analytics{an}, Reporting: reporting{rs}}, nil
}

// analytics is ownperf.AnalyticsAPI on reports.query, for the token's own channel (ids=channel==MINE).
type analytics struct{ svc *ya.Service }

// metrics are the figures the sync reads (decision 43), in this order.
const metrics = "views,estimatedMinutesWatched,averageViewDuration,averageViewPercentage,subscribersGained,subscribersLost"

func (a analytics) query(ctx context.Context, start, end, dimension string, n int) ([]map[string]any, error) {
	q := reportQuery{start: start, end: end, dimensions: dimension, metrics: metrics, sort: dimension}
	if dimension == "video" {
		q.sort, q.max = "-views", n
	}
	return a.report(ctx, q)
}

// reportQuery is one reports.query of the token's own channel.
type reportQuery struct {
	start, end, dimensions, metrics, filters, sort string
	max                                            int // maxResults (0: the API's default)
}

func (a analytics) report(ctx context.Context, q reportQuery) ([]map[string]any, error) {
	call := a.svc.Reports.Query().Ids("channel==MINE").StartDate(q.start).EndDate(q.end).Metrics(q.metrics).
		Dimensions(q.dimensions)
	if q.sort != "" {
		call.Sort(q.sort)
	}
	if q.filters != "" {
		call.Filters(q.filters)
	}
	if q.max > 0 {
		call.MaxResults(int64(q.max))
	}
	resp, err := call.Context(ctx).Do()
	if err != nil {
		var ge *googleapi.Error
		if errors.As(err, &ge) {
			if ge.Code == http.StatusForbidden && !strings.Contains(strings.ToLower(reasonOf(err)), "quota") {
				return nil, fmt.Errorf("%w: %s", ownperf.ErrAnalyticsForbidden, ge.Message)
			}
			return nil, fmt.Errorf("youtube analytics: %d %s: %s", ge.Code, reasonOf(err), ge.Message)
		}
		return nil, fmt.Errorf("youtube analytics: %w", err)
	}
	var out []map[string]any
	for _, row := range resp.Rows {
		m := map[string]any{}
		for i, h := range resp.ColumnHeaders {
			if i < len(row) && h != nil {
				m[h.Name] = row[i]
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func figuresOf(m map[string]any) ownperf.Figures {
	return ownperf.Figures{Views: int64(num(m, "views")), WatchMinutes: int64(num(m, "estimatedMinutesWatched")),
		AverageViewDurationSeconds: int64(num(m, "averageViewDuration")), AverageViewPercentage: num(m, "averageViewPercentage"),
		SubscribersGained: int64(num(m, "subscribersGained")), SubscribersLost: int64(num(m, "subscribersLost"))}
}

// Days implements ownperf.AnalyticsAPI (one query).
func (a analytics) Days(ctx context.Context, start, end string) ([]ownperf.Day, error) {
	rows, err := a.query(ctx, start, end, "day", 0)
	if err != nil {
		return nil, err
	}
	out := make([]ownperf.Day, 0, len(rows))
	for _, m := range rows {
		d, _ := m["day"].(string)
		out = append(out, ownperf.Day{Date: d, Figures: figuresOf(m)})
	}
	return out, nil
}

// TopVideos implements ownperf.AnalyticsAPI (one query of at most 200 rows).
func (a analytics) TopVideos(ctx context.Context, start, end string, n int) ([]ownperf.VideoFigures, error) {
	rows, err := a.query(ctx, start, end, "video", n)
	if err != nil {
		return nil, err
	}
	out := make([]ownperf.VideoFigures, 0, len(rows))
	for _, m := range rows {
		id, _ := m["video"].(string)
		out = append(out, ownperf.VideoFigures{VideoID: id, Figures: figuresOf(m)})
	}
	return out, nil
}
