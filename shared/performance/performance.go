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
	MonthlyReport     MonthlyReport    `json:"monthlyReport"`
	RecentActivity    []Activity       `json:"recentActivity"`
	TopResearchVideos []ResearchVideo  `json:"topResearchVideos"`
	PipelineStatus    PipelineStatus   `json:"pipelineStatus"`
	GenerationStats   *GenerationStats `json:"generationStats,omitempty"`
}

// MonthlyReport is the current calendar month (UTC). Generations is left out until generation reports it.
type MonthlyReport struct {
	Month           string `json:"month"`
	Generations     *int   `json:"generations,omitempty"`
	GenerationQuota int    `json:"generationQuota"`
	VideosCommitted int    `json:"videosCommitted"`
	VideosPublished int    `json:"videosPublished"`
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
	TopVideos(ctx context.Context, channelID string, n int) ([]research.Video, error)
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
	quota       int
	now         func() time.Time
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
	d := Data{MonthlyReport: MonthlyReport{Month: now.Format("2006-01"), GenerationQuota: s.quota},
		RecentActivity: []Activity{}, TopResearchVideos: []ResearchVideo{}}

	stored, err := s.pipeline.ListVideos(ctx, channelID)
	if err != nil {
		return Data{}, err
	}
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
	}
	ideas, err := s.pipeline.ListIdeas(ctx, channelID)
	if err != nil {
		return Data{}, err
	}
	d.PipelineStatus.Ideas = len(ideas)

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
