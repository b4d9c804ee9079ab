// Package outliers gives generation the niche's strongest research videos: generation.OutlierSource over
// research.Service, apart from researchapp so that the research functions do not link generation.
package outliers

import (
	"context"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/research"
)

// Source is generation.OutlierSource over research: wire it as generation's Outliers.
type Source struct{ Research *research.Service }

// Outliers implements generation.OutlierSource.
func (o Source) Outliers(ctx context.Context, channelID, kind string, n int) ([]generation.Outlier, error) {
	vs, err := o.Research.Outliers(ctx, channelID, kind, n)
	if err != nil {
		return nil, err
	}
	out := make([]generation.Outlier, len(vs))
	for i, v := range vs {
		out[i] = generation.Outlier{Title: v.Title, URL: v.URL, Views: v.Views, Score: v.OutlierScore, ContentType: v.ContentType}
	}
	return out, nil
}

var _ generation.OutlierSource = Source{}
