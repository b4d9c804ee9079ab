package ownperf

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/videos"
)

// Link sets (or, with a null youtubeVideoId, clears) a video's link by hand (PATCH /my-videos/{id},
// decision 44). The upload must be one the channel's sync read: any other is NOT_FOUND, so a channel can
// never link, or learn of, another channel's upload. An upload linked to another video is a CONFLICT.
// Clearing the link clears the reviews made of it.
func (s *Service) Link(ctx context.Context, channelID string, in contract.UpdateMyVideoInput) (videos.Video, error) {
	if err := in.Body.Validate(); err != nil {
		return videos.Video{}, err
	}
	v, version, err := s.c.Repo.GetVideo(ctx, channelID, in.ID)
	if err != nil {
		return videos.Video{}, err
	}
	to := in.Body.YoutubeVideoID.Value
	now := s.c.Now().UTC().Truncate(time.Millisecond)
	switch {
	case to == nil && v.YouTubeVideoID == nil, to != nil && v.YouTubeVideoID != nil && *to == *v.YouTubeVideoID:
		return v, nil
	case to == nil:
		v.YouTubeVideoID, v.Reviews = nil, nil
	default:
		sync, _, err := s.c.Repo.OwnSync(ctx, channelID)
		if err != nil {
			return videos.Video{}, err
		}
		if _, ok := sync.Upload(*to); !ok {
			return videos.Video{}, apperr.NotFoundf("upload %s is not one of the connected YouTube channel's uploads "+
				"(the daily sync reads them; connect the channel, or wait for its first sync)", *to)
		}
		stored, err := s.c.Repo.ListVideos(ctx, channelID)
		if err != nil {
			return videos.Video{}, err
		}
		for _, raw := range stored {
			var o videos.Video
			if err := json.Unmarshal(raw, &o); err != nil {
				return videos.Video{}, fmt.Errorf("ownperf: decode video: %w", err)
			}
			if o.ID != v.ID && o.YouTubeVideoID != nil && *o.YouTubeVideoID == *to {
				return videos.Video{}, apperr.Conflictf("upload %s is linked to video %s already", *to, o.ID)
			}
		}
		id := *to
		v.YouTubeVideoID, v.Reviews = &id, nil
	}
	v.UpdatedAt = now
	if err := s.c.Repo.UpdateVideo(ctx, channelID, v, version); err != nil {
		return videos.Video{}, err
	}
	return v, nil
}

// MonthlyReport is PerformanceData.monthlyReport with source "youtube analytics" (decision 43).
type MonthlyReport struct {
	Source                     string     `json:"source"`
	PeriodStart                string     `json:"periodStart"`
	PeriodEnd                  string     `json:"periodEnd"`
	Views                      int64      `json:"views"`
	WatchMinutes               int64      `json:"watchMinutes"`
	AverageViewDurationSeconds int64      `json:"averageViewDurationSeconds"`
	AverageViewPercentage      float64    `json:"averageViewPercentage"`
	SubscribersNet             int64      `json:"subscribersNet"`
	TopVideos                  []TopVideo `json:"topVideos"`
}

// TopVideo is one of monthlyReport.topVideos.
type TopVideo struct {
	YouTubeVideoID        string  `json:"youtubeVideoId"`
	Title                 string  `json:"title"`
	Views                 int64   `json:"views"`
	AverageViewPercentage float64 `json:"averageViewPercentage"`
	URL                   string  `json:"url"`
	// Impressions and their CTR over the report's period, from the reach reports (decision 51); absent
	// without them.
	Impressions    *int64   `json:"impressions,omitempty"`
	ImpressionsCTR *float64 `json:"impressionsCtr,omitempty"`
}

// SourceAnalytics labels a report built from YouTube Analytics.
const SourceAnalytics = "youtube analytics"

// Monthly is the report of a complete sync whose analytics were available; ok is false otherwise (the
// overview then keeps the service's own report).
func Monthly(s Sync) (MonthlyReport, bool) {
	if !s.Synced() || s.Analytics != AnalyticsAvailable {
		return MonthlyReport{}, false
	}
	r := MonthlyReport{Source: SourceAnalytics, PeriodStart: s.PeriodStart, PeriodEnd: s.PeriodEnd, TopVideos: []TopVideo{}}
	var weighted float64
	for _, d := range s.Days {
		r.Views += d.Views
		r.WatchMinutes += d.WatchMinutes
		r.SubscribersNet += d.SubscribersGained - d.SubscribersLost
		weighted += d.AverageViewPercentage * float64(d.Views)
	}
	if r.Views > 0 {
		r.AverageViewDurationSeconds = int64(math.Round(float64(r.WatchMinutes) * 60 / float64(r.Views)))
		r.AverageViewPercentage = math.Round(weighted/float64(r.Views)*100) / 100
	}
	var top []Upload
	for _, u := range s.Uploads {
		if u.Analytics != nil && u.Analytics.Views > 0 {
			top = append(top, u)
		}
	}
	slices.SortStableFunc(top, func(a, b Upload) int { return cmp.Compare(b.Analytics.Views, a.Analytics.Views) })
	for _, u := range top[:min(len(top), TopVideos)] {
		t := TopVideo{YouTubeVideoID: u.ID, Title: u.Title, Views: u.Analytics.Views,
			AverageViewPercentage: u.Analytics.AverageViewPercentage, URL: u.URL()}
		if impr, ctr, ok := ReachOver(u.Reach, s.PeriodStart, s.PeriodEnd); ok {
			t.Impressions, t.ImpressionsCTR = &impr, &ctr
		}
		r.TopVideos = append(r.TopVideos, t)
	}
	return r, true
}
