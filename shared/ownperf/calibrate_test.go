package ownperf_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/videos"
)

func TestSpearmanOnAKnownRankingWithTies(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
		ok   bool
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1, true},
		{"reversed", []float64{1, 2, 3, 4}, []float64{0.4, 0.3, 0.2, 0.1}, -1, true},
		// y's ranks 1, 2, 3.5, 5, 3.5: sum dxdy 8, sum dx² 10, sum dy² 9.5.
		{"ties share their mean rank", []float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}, 8 / math.Sqrt(95), true},
		// Both sides tied: x ranks 1.5, 1.5, 3, 4; y ranks 1, 2.5, 2.5, 4: sum dxdy 3.75, sum dx² = sum dy² = 4.5.
		{"ties on both sides", []float64{70, 70, 80, 90}, []float64{0.01, 0.05, 0.05, 0.09}, 3.75 / 4.5, true},
		{"a constant side", []float64{1, 2, 3}, []float64{5, 5, 5}, 0, false},
		{"one pair", []float64{1}, []float64{2}, 0, false},
	} {
		got, ok := ownperf.Spearman(c.x, c.y)
		if ok != c.ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v %v; want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// reviewed is a linked video with a day-28 review of that score and CTR.
func reviewed(i int, title string, score, ctr float64) videos.Video {
	id := videoID("v", i)
	return videos.Video{ID: id, Title: title, YouTubeVideoID: &id, Reviews: []videos.Review{
		{Day: 7, At: start}, {Day: 28, ImpressionsCTR: &ctr, TitleScore: &score, At: start.Add(21 * 24 * time.Hour)}}}
}

func TestCalibrationNeedsEightVideos(t *testing.T) {
	var vs []videos.Video
	for i := range 7 {
		vs = append(vs, reviewed(i, "Title", 70+float64(i), 0.02+float64(i)/100))
	}
	// A video without a day-28 CTR, or without a score, does not count.
	noCTR := reviewed(20, "x", 99, 0)
	noCTR.Reviews[1].ImpressionsCTR = nil
	noScore := reviewed(21, "y", 0, 0.5)
	noScore.Reviews[1].TitleScore = nil
	vs = append(vs, noCTR, noScore)
	if c := ownperf.Calibrate(vs); c.N != 7 || c.Minimum != 8 || c.Spearman != nil {
		t.Fatalf("7 videos: %+v; want no figure", c)
	}
	// The eighth breaks the perfect order: ranks 1..8 against 1..6, 8, 7.
	vs = append(vs, reviewed(7, "Title", 77, 0.075))
	c := ownperf.Calibrate(vs)
	if c.N != 8 || c.Spearman == nil || *c.Spearman != math.Round((1-6*2/(8*63.0))*1000)/1000 {
		t.Fatalf("8 videos: %+v", c)
	}
}

func TestTitlePatternsByCTR(t *testing.T) {
	ps := ownperf.TitlePatterns([]videos.Video{
		reviewed(1, "5 lunches under $3", 80, 0.04), reviewed(2, "7 dinners", 70, 0.06),
		reviewed(3, "How to meal prep", 90, 0.08), reviewed(4, "Is tofu healthy?", 85, 0.01),
	})
	var got []string
	for _, p := range ps {
		got = append(got, p.Pattern)
	}
	if strings.Join(got, ",") != "how-to,listicle,question" || ps[1].Videos != 2 || ps[1].ImpressionsCTR != 0.05 || ps[1].BestTitle != "7 dinners" {
		t.Fatalf("patterns %+v", ps)
	}
}
