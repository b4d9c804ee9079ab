// Package videos holds the creator's pipeline: committed videos with their status history, and the backlog
// of video ideas they are committed from.
package videos

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/creatorstrategy/css/shared/contract"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/page"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Status is a pipeline status.
type Status string

const (
	Planned   Status = "planned"
	Scripted  Status = "scripted"
	Filmed    Status = "filmed"
	Edited    Status = "edited"
	Published Status = "published"
)

// Video is a committed video (MyVideo in the API).
type Video struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	ContentType string    `json:"contentType"`
	FormulaType string    `json:"formulaType"`
	Status      Status    `json:"status"`
	SeriesID    *string   `json:"seriesId"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// StatusHistory records every status the video entered, starting with planned (decision 11).
	StatusHistory []StatusChange `json:"statusHistory"`
	// YouTubeVideoID links the video to its upload, and Reviews are its results after publishing
	// (decision 44; shared/ownperf writes both). Videos stored before they existed have neither.
	YouTubeVideoID *string  `json:"youtubeVideoId,omitempty"`
	Reviews        []Review `json:"reviews,omitempty"`
}

// Review is a linked video's results Day days after publishing (VideoReview in the API).
type Review struct {
	Day                   int       `json:"day"`
	Views                 int64     `json:"views"`
	OwnOutlierScore       *float64  `json:"ownOutlierScore"`
	AverageViewPercentage *float64  `json:"averageViewPercentage"`
	SubscribersGained     *int64    `json:"subscribersGained"`
	At                    time.Time `json:"at"`
	// Reach (decision 51): impressions and their click-through rate (a fraction) over the days since
	// publishing that the reach reports had; absent without them. TitleScore is the 0..100 score the
	// title tool gave the title (decision 52); absent when no generation proposed it.
	Impressions    *int64   `json:"impressions,omitempty"`
	ImpressionsCTR *float64 `json:"impressionsCtr,omitempty"`
	TitleScore     *float64 `json:"titleScore,omitempty"`
	// DropPoints are the retention curve's steepest drops, steepest first, and RelativeRetention the
	// video's retention against YouTube's similar videos (0..1, 0.5 the median); absent without analytics
	// (issue 31, decision 53).
	DropPoints        []DropPoint `json:"dropPoints,omitempty"`
	RelativeRetention *float64    `json:"relativeRetention,omitempty"`
}

// DropPoint is where a video lost viewers: the moment (seconds, and the share of the video), the share of
// the starting audience lost over the drop, and what the video's own captions say at that moment.
type DropPoint struct {
	AtSeconds    int     `json:"atSeconds"`
	ElapsedRatio float64 `json:"elapsedRatio"`
	ShareLost    float64 `json:"shareLost"`
	Caption      string  `json:"caption,omitempty"`
}

// Stored is a video as the store holds it: the JSON encoding of Video, which is the MyVideo shape. Lists
// serve it as it is, so a long list costs a copy per video rather than a decode and an encode; the few
// fields a filter needs are read from it directly. (A field added to Video later needs its stored videos
// rewritten, since lists do not pass them through Video.)
type Stored = json.RawMessage

// StatusChange is one entry of a video's status history.
type StatusChange struct {
	Status Status    `json:"status"`
	At     time.Time `json:"at"`
}

// Idea is a backlog item (VideoIdea in the API).
type Idea struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	ContentType string    `json:"contentType"`
	FormulaType string    `json:"formulaType"`
	InspiredBy  *string   `json:"inspiredBy"`
	ViewCount   *float64  `json:"viewCount"`
	CreatedAt   time.Time `json:"createdAt"`
	// Demand is the evidence viewers look for the idea: one of the channel's own YouTube search terms
	// its title holds (decision 53); nil without.
	Demand *Demand `json:"demand,omitempty"`
}

// Demand is an idea's evidence of demand: a search term (Source "own search terms"), the views it
// brought the channel, and over which period ("start/end").
type Demand struct {
	Source string `json:"source"`
	Term   string `json:"term"`
	Views  int64  `json:"views"`
	Period string `json:"period"`
}

// MatchTerm returns the index of the first of terms whose every word the title holds (case, punctuation
// and word order aside), -1 when none does: terms most viewed first give the strongest match.
func MatchTerm(title string, terms []string) int {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(title), notWord) {
		words[w] = true
	}
	for i, t := range terms {
		ws := strings.FieldsFunc(strings.ToLower(t), notWord)
		if len(ws) > 0 && !slices.ContainsFunc(ws, func(w string) bool { return !words[w] }) {
			return i
		}
	}
	return -1
}

func notWord(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// Repository is what the service needs from storage.
type Repository interface {
	NewID() string
	// ListVideos returns the channel's videos as stored, newest first.
	ListVideos(ctx context.Context, channelID string) ([]Stored, error)
	// VideoPage returns the videos [offset, offset+limit) of those match accepts (nil: all), newest first,
	// and how many match, keeping only the page in memory.
	VideoPage(ctx context.Context, channelID string, match func(Stored) bool, limit, offset int) ([]Stored, int, error)
	GetVideo(ctx context.Context, channelID, videoID string) (Video, int64, error)
	// CreateVideo stores a new video and, when it has a SeriesID, adds seriesDelta to that series'
	// videoCount, and puts evs into the outbox, atomically; NOT_FOUND when the channel has no such series.
	// The channel's pipeline holds at most maxVideos videos: past it, VALIDATION_ERROR.
	CreateVideo(ctx context.Context, channelID string, v Video, seriesDelta, maxVideos int, evs ...webhooks.Event) error
	// CommitIdea removes the idea and stores the video build makes of it (moving its series' videoCount by
	// seriesDelta when seriesID is set, and putting the events build returns into the outbox), atomically;
	// NOT_FOUND when the idea or the series does not exist.
	CommitIdea(ctx context.Context, channelID, ideaID string, seriesID *string, seriesDelta, maxVideos int, build func(Idea) (Video, []webhooks.Event, error)) (Video, []webhooks.Event, error)
	// UpdateVideo replaces a video if it is still at version was, and puts evs into the outbox, atomically;
	// CONFLICT otherwise.
	UpdateVideo(ctx context.Context, channelID string, v Video, was int64, evs ...webhooks.Event) error
	ListIdeas(ctx context.Context, channelID string) ([]Idea, error)
	DeleteIdea(ctx context.Context, channelID, ideaID string) error
}

// Publisher sends events on once the write that put them into the outbox committed (webhooks.Relay).
type Publisher interface {
	PublishEvents(ctx context.Context, evs ...webhooks.Event)
}

// Service holds the pipeline's rules.
type Service struct {
	repo      Repository
	now       func() time.Time
	publish   Publisher
	maxVideos int
}

// DefaultMaxVideos is the most videos a channel's pipeline holds unless WithMaxVideos says otherwise
// (config.DefaultMaxVideos, CSS_MAX_VIDEOS).
const DefaultMaxVideos = 5000

// WithMaxVideos bounds the videos of a channel's pipeline (CSS_MAX_VIDEOS); n < 1 keeps the default.
func WithMaxVideos(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.maxVideos = n
		}
	}
}

// Option configures a Service.
type Option func(*Service)

// WithPublisher publishes the service's events as soon as they are written (without it, they wait in the
// outbox for its sweep).
func WithPublisher(p Publisher) Option { return func(s *Service) { s.publish = p } }

// NewService returns a Service.
func NewService(repo Repository, now func() time.Time, opts ...Option) *Service {
	s := &Service{repo: repo, now: now, maxVideos: DefaultMaxVideos}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (s *Service) published(ctx context.Context, evs []webhooks.Event) {
	if s.publish != nil && len(evs) > 0 {
		s.publish.PublishEvents(ctx, evs...)
	}
}

// statusChanged is the data of video.status_changed: the video and the status it left.
type statusChanged struct {
	Video
	PreviousStatus Status `json:"previousStatus"`
}

// newVideoSeriesDelta is what a new video does to its series' videoCount. videoCount counts the channel's
// videos with that seriesId (decision 14); a video keeps its seriesId for good and is never deleted, so each
// new video adds one and nothing takes one away.
const newVideoSeriesDelta = 1

// CommitVideo puts a video into the pipeline at planned (decision 11), from an idea or from scratch; with a
// seriesId, the video counts in that series, which must be one of the channel's (decision 12). It emits
// video.committed with the video.
func (s *Service) CommitVideo(ctx context.Context, channelID string, c contract.CommitVideoRequest) (Video, error) {
	if err := c.Validate(); err != nil {
		return Video{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	seriesID := c.SeriesID.Value // null and absent: no series
	newVideo := func(title, contentType, formulaType string) Video {
		return Video{
			ID: s.repo.NewID(), Title: title, ContentType: contentType, FormulaType: formulaType,
			Status: Planned, SeriesID: seriesID, CreatedAt: now, UpdatedAt: now,
			StatusHistory: []StatusChange{{Status: Planned, At: now}},
		}
	}
	committed := func(v Video) ([]webhooks.Event, error) {
		ev, err := webhooks.NewEvent(s.repo.NewID(), webhooks.VideoCommitted, channelID, now, v)
		return []webhooks.Event{ev}, err
	}
	if c.IdeaID != nil {
		v, evs, err := s.repo.CommitIdea(ctx, channelID, *c.IdeaID, seriesID, newVideoSeriesDelta, s.maxVideos, func(i Idea) (Video, []webhooks.Event, error) {
			v := newVideo(i.Title, i.ContentType, i.FormulaType)
			evs, err := committed(v)
			return v, evs, err
		})
		if err != nil {
			return Video{}, err
		}
		s.published(ctx, evs)
		return v, nil
	}
	v := newVideo(contract.Value(c.Title), string(contract.Value(c.ContentType)), contract.Value(c.FormulaType))
	evs, err := committed(v)
	if err != nil {
		return Video{}, err
	}
	if err := s.repo.CreateVideo(ctx, channelID, v, newVideoSeriesDelta, s.maxVideos, evs...); err != nil {
		return Video{}, err
	}
	s.published(ctx, evs)
	return v, nil
}

// SetStatus moves a video to any of the five statuses (decision 11) and emits video.status_changed; the
// current status again is a no-op that emits nothing. changed reports whether anything was written.
func (s *Service) SetStatus(ctx context.Context, channelID string, in contract.VideoStatusUpdate) (v Video, changed bool, err error) {
	if err := in.Validate(); err != nil {
		return Video{}, false, err
	}
	to := Status(in.Status)
	v, version, err := s.repo.GetVideo(ctx, channelID, in.VideoID)
	if err != nil {
		return Video{}, false, err
	}
	if v.Status == to {
		return v, false, nil
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	from := v.Status
	v.Status, v.UpdatedAt = to, now
	v.StatusHistory = append(v.StatusHistory, StatusChange{Status: to, At: now})
	ev, err := webhooks.NewEvent(s.repo.NewID(), webhooks.VideoStatusChanged, channelID, now, statusChanged{Video: v, PreviousStatus: from})
	if err != nil {
		return Video{}, false, err
	}
	if err := s.repo.UpdateVideo(ctx, channelID, v, version, ev); err != nil {
		return Video{}, false, err
	}
	s.published(ctx, []webhooks.Event{ev})
	return v, true, nil
}

// Filter narrows a video list; empty fields match everything.
type Filter struct {
	Status      Status
	ContentType string
}

// List returns the channel's videos that match f, newest first, as stored.
func (s *Service) List(ctx context.Context, channelID string, f Filter) ([]Stored, error) {
	all, err := s.repo.ListVideos(ctx, channelID)
	if err != nil || f == (Filter{}) {
		return all, err
	}
	out := all[:0]
	for _, v := range all {
		if f.matches(v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// Page returns one page of the channel's videos that match f, newest first, and how many match: paged in
// the store, which keeps only the page (issue 19 item 18).
func (s *Service) Page(ctx context.Context, channelID string, f Filter, limit, offset int) ([]Stored, int, error) {
	var match func(Stored) bool
	if f != (Filter{}) {
		match = f.matches
	}
	return s.repo.VideoPage(ctx, channelID, match, limit, offset)
}

func (f Filter) matches(v Stored) bool {
	return (f.Status == "" || gjson.GetBytes(v, "status").Str == string(f.Status)) &&
		(f.ContentType == "" || gjson.GetBytes(v, "contentType").Str == f.ContentType)
}

// ListIdeas returns one page of the backlog, newest first, and the number of matching ideas.
func (s *Service) ListIdeas(ctx context.Context, channelID, contentType string, limit, offset int) ([]Idea, int, error) {
	all, err := s.repo.ListIdeas(ctx, channelID)
	if err != nil {
		return nil, 0, err
	}
	matching := all[:0]
	for _, i := range all {
		if contentType == "" || i.ContentType == contentType {
			matching = append(matching, i)
		}
	}
	return page.Of(matching, limit, offset), len(matching), nil
}

// DeleteIdea removes an idea from the backlog for good.
func (s *Service) DeleteIdea(ctx context.Context, channelID, ideaID string) error {
	return s.repo.DeleteIdea(ctx, channelID, ideaID)
}

// Get returns one of the channel's videos with its status history; NOT_FOUND for an unknown id or
// another channel's video.
func (s *Service) Get(ctx context.Context, channelID, videoID string) (Video, error) {
	v, _, err := s.repo.GetVideo(ctx, channelID, videoID)
	return v, err
}
