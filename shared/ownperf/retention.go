package ownperf

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/transcript"
	"github.com/creatorstrategy/css/shared/videos"
)

// DropPointsPerReview is how many of the retention curve's steepest drops a review names (decision 53).
const DropPointsPerReview = 3

// dropSpacing is how many curve points (hundredths of the video) apart two named drops are at least, so
// one cliff spread over two points is named once.
const dropSpacing = 3

// RetentionPoint is one point of a video's retention curve (Analytics' elapsedVideoTimeRatio report):
// the share of the video elapsed, the share of its viewers still watching there (above 1 where parts are
// watched again), and YouTube's relative retention there (0..1 against similar videos, 0.5 the median).
type RetentionPoint struct {
	Ratio               float64
	AudienceWatchRatio  float64
	RelativePerformance float64
}

// CaptionCache gives a video's cached own caption track (decision 41), as transcript.Text wrote it; ok is
// false when none is cached (the review names its drops without the words then).
type CaptionCache interface {
	OwnCaptions(ctx context.Context, channelID, youtubeVideoID string) (text string, ok bool, err error)
}

// DropPoints returns the n steepest drops of curve (the largest falls of audienceWatchRatio between two
// neighbouring points, at least dropSpacing points apart), steepest first: when (the start of the fall, in
// seconds of a video of durationSeconds), the share of the starting audience lost, and the cached
// captions' line spoken then ("" without captions).
func DropPoints(curve []RetentionPoint, durationSeconds int, captions string, n int) []videos.DropPoint {
	type fall struct {
		i    int
		lost float64
	}
	var falls []fall
	for i := 1; i < len(curve); i++ {
		if lost := curve[i-1].AudienceWatchRatio - curve[i].AudienceWatchRatio; lost > 0 {
			falls = append(falls, fall{i, lost})
		}
	}
	slices.SortStableFunc(falls, func(a, b fall) int { return cmp.Compare(b.lost, a.lost) })
	var picked []fall
	for _, f := range falls {
		if len(picked) == n {
			break
		}
		if !slices.ContainsFunc(picked, func(p fall) bool { return abs(p.i-f.i) < dropSpacing }) {
			picked = append(picked, f)
		}
	}
	out := make([]videos.DropPoint, 0, len(picked))
	for _, f := range picked {
		ratio := curve[f.i-1].Ratio
		at := int(math.Round(ratio * float64(durationSeconds)))
		d := videos.DropPoint{AtSeconds: at, ElapsedRatio: ratio, ShareLost: math.Round(f.lost*10000) / 10000}
		if captions != "" {
			d.Caption = transcript.LineAt(captions, time.Duration(at)*time.Second)
		}
		out = append(out, d)
	}
	return out
}

// RelativeRetention is the mean of the curve's relative retention (nil for an empty curve).
func RelativeRetention(curve []RetentionPoint) *float64 {
	if len(curve) == 0 {
		return nil
	}
	var sum float64
	for _, p := range curve {
		sum += p.RelativePerformance
	}
	m := math.Round(sum/float64(len(curve))*1000) / 1000
	return &m
}

func abs(x int) int { return max(x, -x) }

// retention adds the upload's drop points and relative retention to its review r: one Analytics query
// (from its publishing day to the sync's last day) and the cached captions. A failed query leaves the
// review without them (logged): the review is worth making without.
func (s *Service) retention(ctx context.Context, owner Owner, channelID string, u Upload, sync Sync, r *videos.Review, rep *Report) {
	if owner.Analytics == nil || sync.Analytics != AnalyticsAvailable {
		return
	}
	start := u.PublishedAt.UTC().Format(time.DateOnly)
	if sync.PeriodEnd < start {
		return
	}
	rep.Queries++
	curve, err := owner.Analytics.Retention(ctx, u.ID, start, sync.PeriodEnd)
	if err != nil {
		if !errors.Is(err, ErrAnalyticsForbidden) {
			s.c.Log.Warn("ownperf: retention query failed; the review has no drop points", "videoId", u.ID, "error", err.Error())
		}
		return
	}
	captions := ""
	if s.c.Captions != nil {
		text, ok, err := s.c.Captions.OwnCaptions(ctx, channelID, u.ID)
		if err != nil {
			s.c.Log.Warn("ownperf: cached captions unreadable", "videoId", u.ID, "error", err.Error())
		} else if ok {
			captions = text
		}
	}
	r.DropPoints = DropPoints(curve, u.DurationSeconds, captions, DropPointsPerReview)
	r.RelativeRetention = RelativeRetention(curve)
}
