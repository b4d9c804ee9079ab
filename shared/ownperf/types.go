// Package ownperf is the connected YouTube channel's own performance (decisions 43–45): the daily sync of
// its uploads (Data API) and YouTube Analytics, the monthly report built from it, the links between
// pipeline videos and their uploads, the reviews 7 and 28 days after publishing, and the channel's own
// best and worst videos for the generation brief. It is free of HTTP: the YouTube adapter gives it the
// APIs of a channel's owner (Access), the store keeps what a sync read (Repository).
package ownperf

import (
	"errors"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/research"
)

// The rules' numbers (decisions 43–45).
const (
	// WindowDays is the analytics period: the 28 days before the sync's day.
	WindowDays = 28
	// LinkDays is how recent an upload is for the sync to link it by title.
	LinkDays = 14
	// BaselineDays is how far back the uploads a review compares with were published.
	BaselineDays = 90
	// TopVideos is monthlyReport.topVideos' most.
	TopVideos = 10
	// BriefVideos is how many best, and how many worst, reviewed videos the brief carries.
	BriefVideos = 5
	// AnalyticsVideoRows is the most rows of the per-video report (the API's maxResults for
	// dimensions=video): the 200 most viewed uploads of the window get their analytics figures.
	AnalyticsVideoRows = 200
)

// ReviewDays are the ages, in days after publishing, a linked video is reviewed at.
var ReviewDays = []int{7, 28}

// Analytics states of a sync.
const (
	AnalyticsAvailable   = "available"
	AnalyticsUnavailable = "unavailable"
)

// ErrAnalyticsForbidden is what the Analytics port answers when the channel gives no analytics access
// (the API's 403): the sync keeps what the Data API gave.
var ErrAnalyticsForbidden = errors.New("youtube analytics: the channel gives no analytics access")

// Figures are YouTube Analytics' metrics of a period (a day, or a video over the window).
type Figures struct {
	Views                      int64   `json:"views"`
	WatchMinutes               int64   `json:"watchMinutes"`
	AverageViewDurationSeconds int64   `json:"averageViewDurationSeconds"`
	AverageViewPercentage      float64 `json:"averageViewPercentage"`
	SubscribersGained          int64   `json:"subscribersGained"`
	SubscribersLost            int64   `json:"subscribersLost"`
}

// Day is the channel's figures of one day.
type Day struct {
	Date string `json:"date"` // YYYY-MM-DD
	Figures
}

// VideoFigures is one video's figures over the window.
type VideoFigures struct {
	VideoID string `json:"videoId"`
	Figures
}

// Upload is one of the channel's uploads as the last sync read it.
type Upload struct {
	ID              string    `json:"id"`
	Title           string    `json:"title"`
	PublishedAt     time.Time `json:"publishedAt"`
	DurationSeconds int       `json:"durationSeconds,omitempty"`
	Views           int64     `json:"views"`
	Likes           int64     `json:"likes,omitempty"`
	Comments        int64     `json:"comments,omitempty"`
	// Analytics is the video's figures over the window; nil when it is not among the window's most viewed
	// or analytics are unavailable.
	Analytics *Figures `json:"analytics,omitempty"`
	// ViewsAtAge holds, per review day, the views the first sync at or past that age read: what a
	// review compares with. A video first seen past an age has the views of that first sync there.
	ViewsAtAge map[int]int64 `json:"viewsAtAge,omitempty"`
	// Reach is its impressions and CTR per day from the reach reports (decision 51), oldest first: its
	// first 28 days and the last 28.
	Reach []ReachDay `json:"reach,omitempty"`
}

// URL is the upload's watch address.
func (u Upload) URL() string { return "https://www.youtube.com/watch?v=" + u.ID }

// Sync is what the channel's syncs keep: the last complete one's figures and uploads, and a sync in
// flight's progress (Pending), so a sync stopped by the quota resumes where it stopped.
type Sync struct {
	YouTubeChannelID string     `json:"youtubeChannelId,omitempty"`
	SyncedAt         *time.Time `json:"syncedAt,omitempty"`
	PeriodStart      string     `json:"periodStart,omitempty"`
	PeriodEnd        string     `json:"periodEnd,omitempty"`
	Analytics        string     `json:"analytics,omitempty"` // AnalyticsAvailable or AnalyticsUnavailable
	Message          string     `json:"message,omitempty"`   // why analytics are unavailable
	Days             []Day      `json:"days,omitempty"`
	// SearchTerms are the YouTube search terms that brought the channel the most views in the window
	// (decision 53), most first.
	SearchTerms []SearchTerm `json:"searchTerms,omitempty"`
	Uploads     []Upload     `json:"-"` // stored apart, in chunks
	// Units and Queries are what the last complete sync spent: Data API units, Analytics queries.
	Units   int `json:"units,omitempty"`
	Queries int `json:"queries,omitempty"`
	// Reach is the reporting job and the reports read (decision 51); nil before the first try.
	Reach *ReachState `json:"reach,omitempty"`
	// Requested is the budget day a sync was last queued for: the scheduler queues one a day.
	Requested string   `json:"requested,omitempty"`
	Pending   *Pending `json:"pending,omitempty"`
}

// Synced says whether a sync has completed.
func (s Sync) Synced() bool { return s.SyncedAt != nil }

// Upload returns the upload with id.
func (s Sync) Upload(id string) (Upload, bool) {
	if i := slices.IndexFunc(s.Uploads, func(u Upload) bool { return u.ID == id }); i >= 0 {
		return s.Uploads[i], true
	}
	return Upload{}, false
}

// Pending is a sync stopped part way: by the day's budget or the API's quota.
type Pending struct {
	Day        string   `json:"day"`    // the budget day it stopped on; it resumes on a later one
	Reason     string   `json:"reason"` // "budget" or "quota"
	PlaylistID string   `json:"playlistId,omitempty"`
	PageToken  string   `json:"pageToken,omitempty"`
	IDs        []string `json:"ids,omitempty"` // the uploads listed so far
	Listed     bool     `json:"listed,omitempty"`
	Units      int      `json:"units,omitempty"` // spent so far
}

// Costs of the Data API calls a sync makes (as research counts them).
const (
	listCost = 1 // units of a list call (quota.ListCall)
	maxIDs   = research.MaxIDs
)

// ListingUnits is what reading n uploads costs: channels.list, then playlistItems.list and videos.list
// per 50.
func ListingUnits(n int) int {
	pages := (n + maxIDs - 1) / maxIDs
	return listCost + 2*pages*listCost
}
