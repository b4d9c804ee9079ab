package ownperf

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"

	"github.com/creatorstrategy/css/shared/brief"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
)

// The title grade, checked against the channel's own click-through rate (decision 52).
const (
	// MinCalibration is how many reviewed videos with a title score and a day-28 CTR the figure needs.
	MinCalibration = 8
	// CalibrationDay is the review whose CTR the figure reads.
	CalibrationDay = 28
	// titleRunsRead is how many of the newest title runs a title's score is looked for in.
	titleRunsRead = 50
)

// TitleRuns gives the outputs of the channel's n newest title runs, newest first (*store.Store).
type TitleRuns interface {
	TitleRunOutputs(ctx context.Context, channelID string, n int) ([]json.RawMessage, error)
}

// TitleGrader grades a published title as the title tool grades its own: 0..100 (generation.Generator).
type TitleGrader interface {
	GradeTitle(ctx context.Context, channelID, title string, short bool) (float64, error)
}

// titleScore is the score the newest title run proposing title gave it; nil when none did.
func titleScore(ctx context.Context, runs TitleRuns, channelID, title string) (*float64, error) {
	want := NormalizeTitle(title)
	if runs == nil || want == "" {
		return nil, nil
	}
	outs, err := runs.TitleRunOutputs(ctx, channelID, titleRunsRead)
	if err != nil {
		return nil, err
	}
	for _, raw := range outs {
		var out struct {
			Titles []struct {
				Title string   `json:"title"`
				Score *float64 `json:"score"`
			} `json:"titles"`
		}
		if json.Unmarshal(raw, &out) != nil {
			continue
		}
		for _, t := range out.Titles {
			if t.Score != nil && NormalizeTitle(t.Title) == want {
				return t.Score, nil
			}
		}
	}
	return nil, nil
}

// Calibration is ownChannel.titleCalibration: the Spearman rank correlation between the titles' scores
// and their day-28 CTR, over N videos; Spearman is absent below MinCalibration.
type Calibration struct {
	N        int      `json:"n"`
	Minimum  int      `json:"minimum"`
	Spearman *float64 `json:"spearman,omitempty"`
}

// day28 returns the video's day-28 review when it has a title score and a CTR.
func day28(v videos.Video) (videos.Review, bool) {
	for _, r := range v.Reviews {
		if r.Day == CalibrationDay && r.TitleScore != nil && r.ImpressionsCTR != nil {
			return r, true
		}
	}
	return videos.Review{}, false
}

// Calibrate is the calibration figure over the channel's linked videos.
func Calibrate(vs []videos.Video) Calibration {
	var scores, ctrs []float64
	for _, v := range vs {
		if r, ok := day28(v); ok && v.YouTubeVideoID != nil {
			scores, ctrs = append(scores, *r.TitleScore), append(ctrs, *r.ImpressionsCTR)
		}
	}
	c := Calibration{N: len(scores), Minimum: MinCalibration}
	if c.N >= MinCalibration {
		if rho, ok := Spearman(scores, ctrs); ok {
			rho = math.Round(rho*1000) / 1000
			c.Spearman = &rho
		}
	}
	return c
}

// Spearman is the rank correlation of x and y: Pearson's correlation of their ranks, tied values
// sharing the mean of their ranks. ok is false for fewer than 2 pairs or when either side is constant.
func Spearman(x, y []float64) (float64, bool) {
	if len(x) != len(y) || len(x) < 2 {
		return 0, false
	}
	rx, ry := ranks(x), ranks(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	n := float64(len(rx))
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	return sxy / math.Sqrt(sxx*syy), true
}

// ranks are the 1-based ranks of xs, ties at their mean rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	out := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			out[idx[k]] = mean
		}
		i = j + 1
	}
	return out
}

// TitlePatterns is the channel's own title patterns (research.FormulaOf of its reviewed videos' titles)
// by mean day-28 CTR, highest first, each with how many videos and its best title: what the brief tells
// the title tools (decision 52). Videos reviewed without a score count too: the pattern is the title's.
func TitlePatterns(vs []videos.Video) []brief.TitlePattern {
	type acc struct {
		sum      float64
		n        int
		best     string
		bestRate float64
	}
	by := map[string]*acc{}
	for _, v := range vs {
		if v.YouTubeVideoID == nil {
			continue
		}
		for _, r := range v.Reviews {
			if r.Day != CalibrationDay || r.ImpressionsCTR == nil {
				continue
			}
			p := research.FormulaOf(v.Title)
			a := by[p]
			if a == nil {
				a = &acc{}
				by[p] = a
			}
			a.sum += *r.ImpressionsCTR
			a.n++
			if a.best == "" || *r.ImpressionsCTR > a.bestRate {
				a.best, a.bestRate = v.Title, *r.ImpressionsCTR
			}
		}
	}
	out := []brief.TitlePattern{}
	for p, a := range by {
		out = append(out, brief.TitlePattern{Pattern: p, Videos: a.n,
			ImpressionsCTR: math.Round(a.sum/float64(a.n)*1e4) / 1e4, BestTitle: a.best})
	}
	slices.SortFunc(out, func(a, b brief.TitlePattern) int {
		return cmp.Or(cmp.Compare(b.ImpressionsCTR, a.ImpressionsCTR), cmp.Compare(a.Pattern, b.Pattern))
	})
	return out
}
