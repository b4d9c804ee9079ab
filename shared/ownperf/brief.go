package ownperf

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/brief"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/videos"
)

// BriefData is what the brief's own results are read from (*store.Store).
type BriefData interface {
	OwnSync(ctx context.Context, channelID string) (Sync, int64, error)
	ListVideos(ctx context.Context, channelID string) ([]videos.Stored, error)
	GetSeries(ctx context.Context, channelID, id string) (planning.Series, int64, error)
}

// BriefSource gives the generation brief a synced channel's own best and worst reviewed videos of the
// last 90 days (decision 45; generation.OwnResultsSource).
type BriefSource struct {
	Data BriefData
	Now  func() time.Time
}

// OwnResultsLabel says whose results the brief's own results are.
const OwnResultsLabel = "The channel's own results: its own YouTube videos of the last 90 days, by views against " +
	"its own usual (not other channels' research)"

// OwnResults implements generation.OwnResultsSource: nil for a channel never synced, or with neither
// reviews nor search terms.
func (b BriefSource) OwnResults(ctx context.Context, channelID string) (*brief.OwnResults, error) {
	sync, _, err := b.Data.OwnSync(ctx, channelID)
	if err != nil || !sync.Synced() {
		return nil, err
	}
	vs, err := decodeVideos(b.Data.ListVideos(ctx, channelID))
	if err != nil {
		return nil, err
	}
	vs = slices.DeleteFunc(vs, func(v videos.Video) bool { return len(v.Reviews) == 0 })
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	best, worst := BestAndWorst(vs, sync.Uploads, now().UTC(), BriefVideos)
	if len(best) == 0 && len(sync.SearchTerms) == 0 {
		return nil, nil
	}
	names := map[string]string{}
	view := func(list []Scored) ([]brief.OwnVideo, error) {
		out := []brief.OwnVideo{}
		for _, s := range list {
			o := brief.OwnVideo{Title: s.Video.Title, ContentType: s.Video.ContentType, FormulaType: s.Video.FormulaType,
				OwnOutlierScore: s.Score}
			if id := s.Video.SeriesID; id != nil {
				name, ok := names[*id]
				if !ok {
					se, _, err := b.Data.GetSeries(ctx, channelID, *id)
					if err != nil && apperr.CodeOf(err) != apperr.NotFound {
						return nil, err
					}
					name, names[*id] = se.Name, se.Name
				}
				o.Series = name
			}
			out = append(out, o)
		}
		return out, nil
	}
	r := &brief.OwnResults{Label: OwnResultsLabel, TitlePatterns: TitlePatterns(vs)}
	if len(r.TitlePatterns) == 0 {
		r.TitlePatterns = nil
	}
	if r.Best, err = view(best); err != nil {
		return nil, err
	}
	if r.Worst, err = view(worst); err != nil {
		return nil, err
	}
	r.LostViewers = lostViewers(append(slices.Clone(worst), best...))
	for _, t := range sync.SearchTerms {
		r.SearchTerms = append(r.SearchTerms, brief.SearchTerm(t))
	}
	if len(r.SearchTerms) > 0 {
		r.SearchPeriod = sync.Period()
	}
	return r, nil
}

// lostViewers is the steepest drop of each video's latest review with drop points, worst videos first.
func lostViewers(vs []Scored) []brief.LostViewer {
	var out []brief.LostViewer
	for _, s := range vs {
		for _, r := range slices.Backward(s.Video.Reviews) {
			if len(r.DropPoints) == 0 {
				continue
			}
			d := r.DropPoints[0]
			out = append(out, brief.LostViewer{Title: s.Video.Title, At: fmt.Sprintf("%d:%02d", d.AtSeconds/60, d.AtSeconds%60),
				PercentLost: math.Round(d.ShareLost*1000) / 10, Caption: d.Caption})
			break
		}
	}
	return out
}
