package ownperf

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
)

// NormalizeTitle is a title as linking compares it (decision 44): lower case, letters and digits only
// (punctuation, symbols and emoji dropped), words separated by one space. "5 Vegan Lunches — under $3!"
// and "5 vegan lunches under 3" are the same.
func NormalizeTitle(t string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(t) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// linkable says whether the sync may link v by title: edited or published, not linked yet.
func linkable(v videos.Video) bool {
	return v.YouTubeVideoID == nil && (v.Status == videos.Edited || v.Status == videos.Published)
}

// matchUpload returns the newest upload published in the LinkDays before now whose normalised title is
// the video's and that no other video links, if any.
func matchUpload(v videos.Video, uploads []Upload, taken map[string]bool, now time.Time) (Upload, bool) {
	title := NormalizeTitle(v.Title)
	if title == "" {
		return Upload{}, false
	}
	var best *Upload
	for i := range uploads {
		u := &uploads[i]
		if taken[u.ID] || u.PublishedAt.Before(now.AddDate(0, 0, -LinkDays)) || u.PublishedAt.After(now) ||
			NormalizeTitle(u.Title) != title {
			continue
		}
		if best == nil || u.PublishedAt.After(best.PublishedAt) {
			best = u
		}
	}
	if best == nil {
		return Upload{}, false
	}
	return *best, true
}

// review is the video's review at day, from the sync's uploads; ok is false while the upload has not
// reached that age (or has no views recorded at it).
func review(u Upload, day int, uploads []Upload, now time.Time) (videos.Review, bool) {
	views, ok := u.ViewsAtAge[day]
	if !ok || now.Before(u.PublishedAt.AddDate(0, 0, day)) {
		return videos.Review{}, false
	}
	// The baseline: the channel's other uploads of the last 90 days at the same age.
	var peers []int64
	for _, o := range uploads {
		if o.ID == u.ID || o.PublishedAt.Before(now.AddDate(0, 0, -BaselineDays)) {
			continue
		}
		if n, ok := o.ViewsAtAge[day]; ok {
			peers = append(peers, n)
		}
	}
	r := videos.Review{Day: day, Views: views, At: now}
	if m := research.Median(peers); m > 0 {
		score := float64(int64(float64(views)/m*100+0.5)) / 100
		r.OwnOutlierScore = &score
	}
	if a := u.Analytics; a != nil {
		pct, subs := a.AverageViewPercentage, a.SubscribersGained
		r.AverageViewPercentage, r.SubscribersGained = &pct, &subs
	}
	r.Impressions, r.ImpressionsCTR = reachFor(u, day)
	return r, true
}

// reachFor is the upload's impressions and CTR over its first day days; nil without reach for them.
func reachFor(u Upload, day int) (*int64, *float64) {
	from := u.PublishedAt.Format(time.DateOnly)
	impr, ctr, ok := ReachOver(u.Reach, from, u.PublishedAt.AddDate(0, 0, day-1).Format(time.DateOnly))
	if !ok {
		return nil, nil
	}
	return &impr, &ctr
}

// reachBehind says whether a review of v holds other reach than the upload's days now give.
func reachBehind(v videos.Video, u Upload) bool {
	for _, r := range v.Reviews {
		impr, ctr := reachFor(u, r.Day)
		if !samePtr(r.Impressions, impr) || !samePtr(r.ImpressionsCTR, ctr) {
			return true
		}
	}
	return false
}

func samePtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// hasReview says whether v has its review of day.
func hasReview(v videos.Video, day int) bool {
	return slices.ContainsFunc(v.Reviews, func(r videos.Review) bool { return r.Day == day })
}

// Score is a reviewed video's own outlier score: its latest review's (28 days before 7).
func Score(v videos.Video) (float64, bool) {
	for _, r := range slices.Backward(v.Reviews) {
		if r.OwnOutlierScore != nil {
			return *r.OwnOutlierScore, true
		}
	}
	return 0, false
}

// Scored is a reviewed video with its score.
type Scored struct {
	Video videos.Video
	Score float64
}

// BestAndWorst returns up to n best and n worst reviewed videos among vs whose upload (found in uploads,
// else dated by its first review) was published in the BaselineDays before now (decision 45): best first in best, worst first in worst, none in both.
func BestAndWorst(vs []videos.Video, uploads []Upload, now time.Time, n int) (best, worst []Scored) {
	var all []Scored
	for _, v := range vs {
		if v.YouTubeVideoID == nil {
			continue
		}
		score, ok := Score(v)
		if !ok {
			continue
		}
		// When the upload is not at hand, its first review tells when it was published.
		published := v.Reviews[0].At.AddDate(0, 0, -v.Reviews[0].Day)
		for _, u := range uploads {
			if u.ID == *v.YouTubeVideoID {
				published = u.PublishedAt
			}
		}
		if published.Before(now.AddDate(0, 0, -BaselineDays)) {
			continue
		}
		all = append(all, Scored{v, score})
	}
	slices.SortStableFunc(all, func(a, b Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Video.ID, b.Video.ID))
	})
	nb := min(n, (len(all)+1)/2)
	best = all[:nb]
	rest := all[nb:]
	for i := len(rest) - 1; i >= 0 && len(worst) < n; i-- {
		worst = append(worst, rest[i])
	}
	return best, worst
}
