package generation

import (
	"context"

	"github.com/creatorstrategy/css/shared/research"
)

// ResearchOutliers is the OutlierSource over research: the niche's strongest research videos of the
// channel's stored research (read only). Wire it as Config.Outliers.
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
