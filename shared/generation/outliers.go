package generation

import (
	"context"

	"github.com/creatorstrategy/css/shared/research"
)

// ResearchOutliers is the OutlierSource over research: the niche's strongest research videos of the
// channel's stored research (read only; none while derived metrics are not accepted, decision 48). Wire it
// as Config.Outliers.
type ResearchOutliers struct{ Research *research.Service }

// Outliers implements OutlierSource.
func (o ResearchOutliers) Outliers(ctx context.Context, channelID, kind string, n int) ([]Outlier, error) {
	vs, err := o.Research.Outliers(ctx, channelID, kind, n)
	if err != nil {
		return nil, err
	}
	out := make([]Outlier, len(vs))
	for i, v := range vs {
		out[i] = Outlier{Title: v.Title, URL: v.URL, Views: v.Views, Score: v.OutlierScore, ContentType: v.ContentType}
	}
	return out, nil
}

var _ OutlierSource = ResearchOutliers{}

// ResearchData is ChannelData whose patterns are read through research, which withholds them while the
// deployment has not accepted YouTube's derived-metrics amendment (decision 48); the rest is ChannelData's.
type ResearchData struct {
	ChannelData
	Research *research.Service
}

// GetPatterns implements ChannelData.
func (d ResearchData) GetPatterns(ctx context.Context, channelID string) (research.Patterns, error) {
	return d.Research.Insights(ctx, channelID)
}
