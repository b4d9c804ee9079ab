package research

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/quota"
)

// Source is where research finds videos: the YouTube Data API (shared/youtube) or the offline sample
// (shared/testkit/offline/youtubesample, the local stack's). Its calls are the Data API methods research
// uses, each reporting the quota it cost in its bucket (shared/quota), so a run counts what it spends call
// by call. One conformance suite (shared/research/sourcetest) holds every adapter to the same rules.
type Source interface {
	// Label names the source on every run and video: "youtube" or "offline sample".
	Label() string
	// Metered says whether the source's calls spend the deployment's daily quota.
	Metered() bool
	// Search finds videos (search.list: 1 call of the searches bucket).
	Search(ctx context.Context, q SearchQuery) (SearchPage, error)
	// Channels returns the channels with these ids, unknown ones left out (channels.list, 1 unit per call
	// of up to MaxIDs ids; the adapter splits longer lists).
	Channels(ctx context.Context, q ChannelsQuery) (ChannelsPage, error)
	// Uploads returns one page of a channel's uploads playlist, newest first (playlistItems.list, 1 unit).
	// An unknown or empty playlist is an empty page, not an error.
	Uploads(ctx context.Context, q UploadsQuery) (UploadsPage, error)
	// Videos returns the videos with these ids, unknown ones left out (videos.list, 1 unit per call of up
	// to MaxIDs ids; the adapter splits longer lists).
	Videos(ctx context.Context, q VideosQuery) (VideosPage, error)
	// VideoStats returns the statistics, duration and publishing time of the videos with these ids, unknown
	// ones left out (videos:batchGetStats: 1 call of the stats bucket per MaxIDs ids). It has no title,
	// description, tags or channel: research uses it for videos whose snippet it read recently.
	VideoStats(ctx context.Context, q VideosQuery) (StatsPage, error)
}

// The most ids or results one call takes.
const (
	MaxIDs     = 50
	MaxResults = 50
)

// CallsFor is the number of list calls n ids take (MaxIDs per call).
func CallsFor(n int) int { return (n + MaxIDs - 1) / MaxIDs }

// SearchQuery asks for one page of search results.
type SearchQuery struct {
	// Niche is the niche the call serves. The Data API needs only the other fields; the offline sample
	// builds its corpus from it (and so do the other calls' Niche fields).
	Niche Niche
	// Terms are searched for; a video matching any of them is a hit (the API's `|` operator).
	Terms          []string
	Language       string    // ISO 639-1 code (relevanceLanguage)
	PublishedAfter time.Time // only videos published after this
	Order          string    // "viewCount", "relevance" or "date"
	MaxResults     int       // 1..MaxResults
	PageToken      string
}

// Search orders.
const (
	OrderViewCount = "viewCount"
	OrderRelevance = "relevance"
	OrderDate      = "date"
)

// SearchHit is one search result.
type SearchHit struct {
	VideoID      string
	ChannelID    string
	ChannelTitle string
	Title        string
	PublishedAt  time.Time
}

// SearchPage is one page of search results.
type SearchPage struct {
	Hits          []SearchHit
	NextPageToken string
	Cost          quota.Cost
}

// ChannelsQuery asks for channels by id.
type ChannelsQuery struct {
	Niche Niche
	IDs   []string
}

// Channel is a channel's snippet, uploads playlist and statistics.
type Channel struct {
	ID                string
	Title             string
	UploadsPlaylistID string
	Subscribers       int64
	VideoCount        int64
}

// ChannelsPage is the channels found.
type ChannelsPage struct {
	Channels []Channel
	Cost     quota.Cost
}

// UploadsQuery asks for a page of an uploads playlist.
type UploadsQuery struct {
	Niche      Niche
	PlaylistID string
	MaxResults int // 1..MaxResults
	PageToken  string
}

// UploadsPage is one page of an uploads playlist: video ids, newest first.
type UploadsPage struct {
	VideoIDs      []string
	NextPageToken string
	Cost          quota.Cost
}

// VideosQuery asks for videos by id.
type VideosQuery struct {
	Niche Niche
	IDs   []string
}

// SourceVideo is what a source knows of a video: snippet, duration and statistics.
type SourceVideo struct {
	ID              string
	ChannelID       string
	ChannelTitle    string
	Title           string
	Description     string
	Tags            []string
	PublishedAt     time.Time
	DurationSeconds int
	Views           int64
	Likes           int64
	Comments        int64
	ThumbnailURL    string
	URL             string // where the video is watched
	// SnippetAt is when its title, description and tags were read (research sets it).
	SnippetAt time.Time `json:",omitzero"`
}

// VideosPage is the videos found.
type VideosPage struct {
	Videos []SourceVideo
	Cost   quota.Cost
}

// VideoStat is what videos:batchGetStats tells of a video.
type VideoStat struct {
	ID              string
	PublishedAt     time.Time
	DurationSeconds int
	Views           int64
	Likes           int64
	Comments        int64
}

// StatsPage is the statistics found.
type StatsPage struct {
	Stats []VideoStat
	Cost  quota.Cost
}

// Kinds of source failure. Every adapter maps its errors to one of them (errors.Is).
var (
	// ErrQuotaExceeded: a bucket of the API's daily quota is spent (quotaExceeded). Nothing more is spent
	// from that bucket that day; a run that needs it waits for the next one.
	ErrQuotaExceeded = errors.New("source quota exceeded")
	// ErrThrottled: too many requests for now, or the API is briefly unavailable; the step is tried again.
	ErrThrottled = errors.New("source throttled")
	// ErrSourceFailed: anything else (a bad API key, a malformed request); the run fails and says why.
	ErrSourceFailed = errors.New("source failed")
)

// SourceError is a failure of a source call: Kind is one of the kinds above; Cost is what the failed call
// cost (the API charges failed calls too); Bucket is the bucket the call is charged to (the one a
// quotaExceeded speaks of).
type SourceError struct {
	Kind   error
	Cost   quota.Cost
	Bucket quota.Bucket
	Err    error
}

func (e *SourceError) Error() string { return fmt.Sprintf("%v: %v", e.Kind, e.Err) }

func (e *SourceError) Is(target error) bool { return target == e.Kind }

func (e *SourceError) Unwrap() error { return e.Err }

// CostOf returns what a failed call cost, when err says.
func CostOf(err error) quota.Cost {
	var se *SourceError
	if errors.As(err, &se) {
		return se.Cost
	}
	return quota.Cost{}
}

// BucketOf returns the bucket a failed call is charged to (Units when err does not say).
func BucketOf(err error) quota.Bucket {
	var se *SourceError
	if errors.As(err, &se) && se.Bucket != "" {
		return se.Bucket
	}
	return quota.Units
}
