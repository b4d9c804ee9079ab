// Package performance builds the channel's performance overview (PerformanceData, GET /performance) from
// the pipeline, the backlog, the research and, once generation reports it, the generation history.
package performance

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
)

// TopResearchVideos is how many research videos the overview lists (PerformanceData.topResearchVideos
// maxItems), and RecentActivity how many events.
const (
	TopResearchVideos = 10
	RecentActivity    = 10
)

// Data is PerformanceData.
type Data struct {
	MonthlyReport     MonthlyReport   `json:"monthlyReport"`
	RecentActivity    []Activity      `json:"recentActivity"`
	TopResearchVideos []ResearchVideo `json:"topResearchVideos"`
	// DerivedMetrics says whether topResearchVideos (the strongest outliers) is shown (decision 48).
	DerivedMetrics  research.DerivedMetrics `json:"derivedMetrics"`
	PipelineStatus  PipelineStatus          `json:"pipelineStatus"`
	OwnChannel      *OwnChannel             `json:"ownChannel,omitempty"`
	GenerationStats *GenerationStats        `json:"generationStats,omitempty"`
}

// MonthlyReport is the current calendar month (UTC), source "service". Generations is left out until
// generation reports it. For a synced channel with analytics, Analytics is the report instead (decision 43).
type MonthlyReport struct {
	Source          string `json:"source"`
	Month           string `json:"month"`
	Generations     *int   `json:"generations,omitempty"`
	GenerationQuota int    `json:"generationQuota"`
	VideosCommitted int    `json:"videosCommitted"`
	VideosPublished int    `json:"videosPublished"`

	Analytics *ownperf.MonthlyReport `json:"-"`
}

// SourceService labels the service's own report.
const SourceService = "service"

// MarshalJSON writes the analytics report when there is one, else the service's.
func (m MonthlyReport) MarshalJSON() ([]byte, error) {
	if m.Analytics != nil {
		return json.Marshal(m.Analytics)
	}
	type plain MonthlyReport
	return json.Marshal(plain(m))
}

// OwnChannel is the connected channel's last sync and the reviews of its linked videos (ownChannel).
type OwnChannel struct {
	YouTubeChannelID string      `json:"youtubeChannelId"`
	SyncedAt         time.Time   `json:"syncedAt"`
	Uploads          int         `json:"uploads"`
	Analytics        string      `json:"analytics"`
	Message          string      `json:"message,omitempty"`
	Reviews          []OwnReview `json:"reviews"`
	// Reach says whether impressions and CTR have arrived, or when the first report is expected
	// (decision 51); TitleCalibration is the title grade against day-28 CTR (decision 52).
	Reach            ownperf.ReachStatus `json:"reach"`
	TitleCalibration ownperf.Calibration `json:"titleCalibration"`
	// EarlyWarning is each upload younger than 72 hours as its last hourly read compared it (decision 54),
	// and SearchTerms the channel's own YouTube search terms of the sync's window (decision 53).
	EarlyWarning []EarlyWarning `json:"earlyWarning"`
	SearchTerms  *SearchTerms   `json:"searchTerms,omitempty"`
}

// EarlyWarning is a young upload and its last comparison with the channel's earlier uploads.
type EarlyWarning struct {
	YouTubeVideoID string    `json:"youtubeVideoId"`
	Title          string    `json:"title,omitempty"`
	PublishedAt    time.Time `json:"publishedAt"`
	ownperf.Evaluation
}

// SearchTerms are ownChannel.searchTerms.
type SearchTerms struct {
	Period string               `json:"period"`
	Terms  []ownperf.SearchTerm `json:"terms"`
}

// OwnReview is a linked video's review as the overview lists it.
type OwnReview struct {
	VideoID        string        `json:"videoId"`
	Title          string        `json:"title"`
	YouTubeVideoID string        `json:"youtubeVideoId"`
	Review         videos.Review `json:"review"`
}

// MaxReviews bounds ownChannel.reviews.
const MaxReviews = 100

// OwnSyncs reads the connected channel's sync and its early-warning state (*store.Store).
type OwnSyncs interface {
	OwnSync(ctx context.Context, channelID string) (ownperf.Sync, int64, error)
	OwnWatch(ctx context.Context, channelID string) (ownperf.Watch, int64, error)
}

// Activity is one recent event of the channel.
type Activity struct {
	Event string    `json:"event"`
	Date  time.Time `json:"date"`
}

// ResearchVideo is a top research video as the overview lists it.
type ResearchVideo struct {
	Title string `json:"title"`
	Views int64  `json:"views"`
	URL   string `json:"url"`
}

// PipelineStatus counts the backlog and the videos per status.
type PipelineStatus struct {
	Ideas     int `json:"ideas"`
	Planned   int `json:"planned"`
	Scripted  int `json:"scripted"`
	Filmed    int `json:"filmed"`
	Edited    int `json:"edited"`
	Published int `json:"published"`
}

// GenerationStats is generationStats of PerformanceData.
type GenerationStats struct {
	Last30Days RunCounts `json:"last30Days"`
}

// RunCounts counts generation runs by kind.
type RunCounts struct {
	TitleRuns       int `json:"titleRuns"`
	ScriptRuns      int `json:"scriptRuns"`
	ThumbnailRuns   int `json:"thumbnailRuns"`
	DescriptionRuns int `json:"descriptionRuns"`
	TotalRuns       int `json:"totalRuns"`
}

// Pipeline is what the overview reads of the pipeline and the backlog (*store.Store).
type Pipeline interface {
	ListVideos(ctx context.Context, channelID string) ([]videos.Stored, error)
	ListIdeas(ctx context.Context, channelID string) ([]videos.Idea, error)
}

// Research is what it reads of the research (*research.Service).
type Research interface {
	TopVideos(ctx context.Context, channelID string, n int) ([]research.Video, error) // none while derived metrics are not accepted
	DerivedMetrics() research.DerivedMetrics
	LastRun(ctx context.Context, channelID string) (*research.Run, error)
}

// Generations reports generation counts (shared/generation). Until generation provides it, the overview
// leaves monthlyReport.generations and generationStats out.
type Generations interface {
	// MonthGenerations is the account's successful generations in the month of `month` (UTC).
	MonthGenerations(ctx context.Context, accountID string, month time.Time) (int, error)
	// RunsSince counts the channel's runs since `since` by kind.
	RunsSince(ctx context.Context, channelID string, since time.Time) (RunCounts, error)
}

// Service builds overviews.
type Service struct {
	pipeline    Pipeline
	research    Research
	generations Generations
	own         OwnSyncs
	quota       int
	now         func() time.Time
}

// WithOwn fills the overview from the connected channel's sync (nil: the service's figures only).
func (s *Service) WithOwn(o OwnSyncs) *Service {
	s.own = o
	return s
}

// NewService returns the service; generations may be nil; quota is the account's monthly generations.
func NewService(p Pipeline, r Research, g Generations, quota int, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{pipeline: p, research: r, generations: g, quota: quota, now: now}
}

// Overview returns the channel's PerformanceData.
func (s *Service) Overview(ctx context.Context, accountID, channelID string) (Data, error) {
	now := s.now().UTC()
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	d := Data{MonthlyReport: MonthlyReport{Source: SourceService, Month: now.Format("2006-01"), GenerationQuota: s.quota},
		RecentActivity: []Activity{}, TopResearchVideos: []ResearchVideo{}}

	stored, err := s.pipeline.ListVideos(ctx, channelID)
	if err != nil {
		return Data{}, err
	}
	var reviews []OwnReview
	var linked []videos.Video
	for _, raw := range stored {
		var v videos.Video
		if err := json.Unmarshal(raw, &v); err != nil {
			return Data{}, fmt.Errorf("performance: decode video: %w", err)
		}
		switch v.Status {
		case videos.Planned:
			d.PipelineStatus.Planned++
		case videos.Scripted:
			d.PipelineStatus.Scripted++
		case videos.Filmed:
			d.PipelineStatus.Filmed++
		case videos.Edited:
			d.PipelineStatus.Edited++
		case videos.Published:
			d.PipelineStatus.Published++
		}
		if !v.CreatedAt.Before(monthStart) {
			d.MonthlyReport.VideosCommitted++
		}
		published := false
		for i, c := range v.StatusHistory {
			event := fmt.Sprintf("video.status_changed: %q is %s", v.Title, c.Status)
			if i == 0 {
				event = fmt.Sprintf("video.committed: %q", v.Title)
			}
			d.RecentActivity = append(d.RecentActivity, Activity{Event: event, Date: c.At})
			published = published || c.Status == videos.Published && !c.At.Before(monthStart)
		}
		if published {
			d.MonthlyReport.VideosPublished++
		}
		if v.YouTubeVideoID != nil {
			linked = append(linked, v)
			for _, r := range v.Reviews {
				if !r.At.Before(now.AddDate(0, 0, -ownperf.BaselineDays)) {
					reviews = append(reviews, OwnReview{VideoID: v.ID, Title: v.Title, YouTubeVideoID: *v.YouTubeVideoID, Review: r})
				}
			}
		}
	}
	if s.own != nil {
		sync, _, err := s.own.OwnSync(ctx, channelID)
		if err != nil {
			return Data{}, err
		}
		if sync.Synced() {
			if m, ok := ownperf.Monthly(sync); ok {
				d.MonthlyReport.Analytics = &m
			}
			slices.SortStableFunc(reviews, func(a, b OwnReview) int { return b.Review.At.Compare(a.Review.At) })
			d.OwnChannel = &OwnChannel{YouTubeChannelID: sync.YouTubeChannelID, SyncedAt: *sync.SyncedAt,
				Uploads: len(sync.Uploads), Analytics: sync.Analytics, Message: sync.Message,
				Reviews: append([]OwnReview{}, reviews[:min(len(reviews), MaxReviews)]...),
				Reach:   sync.Reach.Status(), TitleCalibration: ownperf.Calibrate(linked), EarlyWarning: []EarlyWarning{}}
			if len(sync.SearchTerms) > 0 {
				d.OwnChannel.SearchTerms = &SearchTerms{Period: sync.Period(), Terms: sync.SearchTerms}
			}
			w, _, err := s.own.OwnWatch(ctx, channelID)
			if err != nil {
				return Data{}, err
			}
			for _, v := range w.Young(now) {
				d.OwnChannel.EarlyWarning = append(d.OwnChannel.EarlyWarning, EarlyWarning{YouTubeVideoID: v.ID, Title: v.Title,
					PublishedAt: v.PublishedAt, Evaluation: *v.Last})
			}
		}
	}
	ideas, err := s.pipeline.ListIdeas(ctx, channelID)
	if err != nil {
		return Data{}, err
	}
	d.PipelineStatus.Ideas = len(ideas)

	d.DerivedMetrics = s.research.DerivedMetrics()
	top, err := s.research.TopVideos(ctx, channelID, TopResearchVideos)
	if err != nil {
		return Data{}, err
	}
	for _, v := range top {
		d.TopResearchVideos = append(d.TopResearchVideos, ResearchVideo{Title: v.Title, Views: v.Views, URL: v.URL})
	}
	if run, err := s.research.LastRun(ctx, channelID); err != nil {
		return Data{}, err
	} else if run != nil && run.FinishedAt != nil && run.Status == research.Succeeded {
		d.RecentActivity = append(d.RecentActivity, Activity{
			Event: fmt.Sprintf("research.completed: %d videos (%s)", run.VideoCount, run.Source), Date: *run.FinishedAt})
	}
	slices.SortStableFunc(d.RecentActivity, func(a, b Activity) int { return cmp.Compare(b.Date.UnixNano(), a.Date.UnixNano()) })
	d.RecentActivity = d.RecentActivity[:min(len(d.RecentActivity), RecentActivity)]

	if s.generations != nil {
		n, err := s.generations.MonthGenerations(ctx, accountID, now)
		if err != nil {
			return Data{}, err
		}
		runs, err := s.generations.RunsSince(ctx, channelID, now.AddDate(0, 0, -30))
		if err != nil {
			return Data{}, err
		}
		d.MonthlyReport.Generations = &n
		d.GenerationStats = &GenerationStats{Last30Days: runs}
	}
	return d, nil
}
