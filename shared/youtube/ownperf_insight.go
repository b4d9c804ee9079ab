package youtube

import (
	"context"

	"github.com/creatorstrategy/css/shared/ownperf"
)

// The deeper reports of the owner's channel (issue 31, decision 53): a video's retention curve, the
// channel's YouTube search terms and a video's views per day. Each is one reports.query.

// Retention implements ownperf.AnalyticsAPI (dimensions=elapsedVideoTimeRatio, filters=video==ID).
func (a analytics) Retention(ctx context.Context, videoID, start, end string) ([]ownperf.RetentionPoint, error) {
	rows, err := a.report(ctx, reportQuery{start: start, end: end, dimensions: "elapsedVideoTimeRatio",
		metrics: "audienceWatchRatio,relativeRetentionPerformance", filters: "video==" + videoID, sort: "elapsedVideoTimeRatio"})
	if err != nil {
		return nil, err
	}
	out := make([]ownperf.RetentionPoint, 0, len(rows))
	for _, m := range rows {
		out = append(out, ownperf.RetentionPoint{Ratio: num(m, "elapsedVideoTimeRatio"), AudienceWatchRatio: num(m, "audienceWatchRatio"),
			RelativePerformance: num(m, "relativeRetentionPerformance")})
	}
	return out, nil
}

// SearchTerms implements ownperf.AnalyticsAPI (dimensions=insightTrafficSourceDetail,
// filters=insightTrafficSourceType==YT_SEARCH, sort=-views; at most 25 rows).
func (a analytics) SearchTerms(ctx context.Context, start, end string, n int) ([]ownperf.SearchTerm, error) {
	rows, err := a.report(ctx, reportQuery{start: start, end: end, dimensions: "insightTrafficSourceDetail", metrics: "views",
		filters: "insightTrafficSourceType==YT_SEARCH", sort: "-views", max: n})
	if err != nil {
		return nil, err
	}
	out := make([]ownperf.SearchTerm, 0, len(rows))
	for _, m := range rows {
		if t, _ := m["insightTrafficSourceDetail"].(string); t != "" {
			out = append(out, ownperf.SearchTerm{Term: t, Views: int64(num(m, "views"))})
		}
	}
	return out, nil
}

// VideoDays implements ownperf.AnalyticsAPI (dimensions=day, filters=video==ID).
func (a analytics) VideoDays(ctx context.Context, videoID, start, end string) (map[string]int64, error) {
	rows, err := a.report(ctx, reportQuery{start: start, end: end, dimensions: "day", metrics: "views", filters: "video==" + videoID, sort: "day"})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, m := range rows {
		if d, _ := m["day"].(string); d != "" {
			out[d] = int64(num(m, "views"))
		}
	}
	return out, nil
}

// num reads a metric of a row (JSON numbers decode as float64; 0 when absent).
func num(m map[string]any, k string) float64 {
	f, _ := m[k].(float64)
	return f
}
