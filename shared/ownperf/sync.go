package ownperf

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Repository is what the sync needs from storage (*store.Store).
type Repository interface {
	NewID() string
	// OwnSync returns the channel's sync with its uploads and its version (0 before any).
	OwnSync(ctx context.Context, channelID string) (Sync, int64, error)
	// SaveOwnSync writes it if still at version was; CONFLICT otherwise.
	SaveOwnSync(ctx context.Context, channelID string, s Sync, was int64) error
	ListVideos(ctx context.Context, channelID string) ([]videos.Stored, error)
	GetVideo(ctx context.Context, channelID, videoID string) (videos.Video, int64, error)
	UpdateVideo(ctx context.Context, channelID string, v videos.Video, was int64, evs ...webhooks.Event) error
	// ReserveQuota reserves (the positive buckets of delta) or gives back (the negative ones) quota of a
	// budget day within limit; false when a bucket of the day's budget, or of the API's quota, is spent.
	ReserveQuota(ctx context.Context, day string, delta, limit quota.Cost) (bool, error)
	MarkQuotaExhausted(ctx context.Context, day string, b quota.Bucket) error
	// OwnWatch returns the channel's early-warning state and its version (0 before any); SaveOwnWatch
	// writes it, with the events it emits, if still at version was (CONFLICT otherwise).
	OwnWatch(ctx context.Context, channelID string) (Watch, int64, error)
	SaveOwnWatch(ctx context.Context, channelID string, w Watch, was int64, evs ...webhooks.Event) error
}

// DataAPI is the Data API calls the sync and the hourly read make, as research's source has them (the
// YouTube adapter over the owner's OAuth client): channels.list, playlistItems.list, videos.list,
// videos:batchGetStats.
type DataAPI interface {
	Channels(ctx context.Context, q research.ChannelsQuery) (research.ChannelsPage, error)
	Uploads(ctx context.Context, q research.UploadsQuery) (research.UploadsPage, error)
	Videos(ctx context.Context, q research.VideosQuery) (research.VideosPage, error)
	VideoStats(ctx context.Context, q research.VideosQuery) (research.StatsPage, error)
}

// AnalyticsAPI is YouTube Analytics v2's reports.query for the owner's channel; ErrAnalyticsForbidden
// when the channel gives no analytics access. Dates are YYYY-MM-DD, inclusive.
type AnalyticsAPI interface {
	// Days is the channel's figures per day.
	Days(ctx context.Context, start, end string) ([]Day, error)
	// TopVideos is the figures of the n most viewed videos of the period, most viewed first.
	TopVideos(ctx context.Context, start, end string, n int) ([]VideoFigures, error)
	// Retention is one of the channel's videos' retention curve over the period, in time order.
	Retention(ctx context.Context, videoID, start, end string) ([]RetentionPoint, error)
	// SearchTerms is the n YouTube search terms that brought the most views in the period, most first.
	SearchTerms(ctx context.Context, start, end string, n int) ([]SearchTerm, error)
	// VideoDays is one of the channel's videos' views per day of the period, by date (YYYY-MM-DD).
	VideoDays(ctx context.Context, videoID, start, end string) (map[string]int64, error)
}

// Owner is a connected channel's APIs, authorised by its owner's OAuth grant.
type Owner struct {
	YouTubeChannelID string
	Data             DataAPI
	Analytics        AnalyticsAPI
	Reporting        ReportingAPI // nil: no reach (decision 51)
}

// Access gives the APIs of a channel's owner; NOT_FOUND when the channel is not connected.
type Access interface {
	Owner(ctx context.Context, channelID string) (Owner, error)
}

// Connections is what the sync reads and tells of the connections (shared/connection).
type Connections interface {
	Connected(ctx context.Context) ([]string, error)
	MarkSynced(ctx context.Context, channelID string, at time.Time) error
}

// Publisher sends events on once their write committed (webhooks.Relay); nil leaves them to the outbox's sweep.
type Publisher interface {
	PublishEvents(ctx context.Context, evs ...webhooks.Event)
}

// Config configures the Service.
type Config struct {
	Repo        Repository
	Access      Access
	Connections Connections
	Queue       queue.Sender // the research queue: the sync is a step of its work (nil: Link only)
	Publisher   Publisher
	// Titles finds the score a title run gave a linked video's title, for its reviews (decision 52; nil:
	// reviews carry none).
	Titles TitleRuns
	// Grader grades a linked video's title no title run proposed, at its first review (decision 52; nil:
	// such a review carries none).
	Grader   TitleGrader
	Captions CaptionCache // the cached own caption tracks a review's drop points quote (nil: none)
	// Daily is the Data API budget of a quota day (research's, shared/quota). The sync is a scheduled
	// refresh (decision 46): it may reserve up to the whole of it.
	Daily quota.Cost
	Clock research.Clock
	Now   func() time.Time
	Log   *slog.Logger
}

// Service runs the daily sync, links uploads and reviews videos.
type Service struct{ c Config }

// NewService returns the service.
func NewService(c Config) (*Service, error) {
	if c.Repo == nil {
		return nil, errors.New("ownperf: a repository is required")
	}
	if c.Daily.IsZero() {
		c.Daily = quota.DefaultDaily
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Log = cmp.Or(c.Log, slog.New(slog.DiscardHandler))
	return &Service{c: c}, nil
}

// MessageKind marks a sync message on the research queue (research's step messages have none).
const MessageKind = "youtube.sync"

type message struct {
	Kind      string `json:"kind"`
	ChannelID string `json:"channelId"`
}

// IsMessage says whether a research queue message is a sync's or an hourly read's.
func IsMessage(m queue.Message) bool {
	var msg message
	return json.Unmarshal(m.Body, &msg) == nil && (msg.Kind == MessageKind || msg.Kind == watchMessage)
}

// Dispatch is the research worker's handler: sync messages to the sync, the rest to research.
func (s *Service) Dispatch(research queue.Handler) queue.Handler {
	return func(ctx context.Context, m queue.Message) error {
		if IsMessage(m) {
			return s.Handle(ctx, m)
		}
		return research(ctx, m)
	}
}

// RequestSync queues a sync of the channel (the connection calls it once connected; the scheduler daily).
func (s *Service) RequestSync(ctx context.Context, channelID string) error {
	return s.send(ctx, MessageKind, channelID)
}

// send queues a message of kind for the channel on the research queue.
func (s *Service) send(ctx context.Context, kind, channelID string) error {
	if s.c.Queue == nil {
		return errors.New("ownperf: no queue to send " + kind + " on")
	}
	body, err := json.Marshal(message{Kind: kind, ChannelID: channelID})
	if err != nil {
		return err
	}
	return s.c.Queue.Send(ctx, queue.Outgoing{Body: body, Attributes: map[string]string{"kind": kind, "channelId": channelID}})
}

// ScheduleReport says what a pass of Schedule did.
type ScheduleReport struct {
	Connected int `json:"connected"`
	Queued    int `json:"queued"`
	Watched   int `json:"watched"` // hourly early-warning reads queued
}

// Schedule queues the day's sync of every connected channel not yet queued this budget day (the research
// scheduler calls it on each pass; a sync stopped by the budget or the quota is queued again the next day).
func (s *Service) Schedule(ctx context.Context) (ScheduleReport, error) {
	if s.c.Connections == nil {
		return ScheduleReport{}, nil
	}
	ids, err := s.c.Connections.Connected(ctx)
	if err != nil {
		return ScheduleReport{}, fmt.Errorf("ownperf: connected channels: %w", err)
	}
	day := s.c.Clock.Day(s.c.Now())
	rep := ScheduleReport{Connected: len(ids)}
	for _, id := range ids {
		queued, err := s.scheduleWatch(ctx, id, s.c.Now())
		if err != nil {
			return rep, err
		}
		if queued {
			rep.Watched++
		}
		cur, ver, err := s.c.Repo.OwnSync(ctx, id)
		if err != nil {
			return rep, err
		}
		if cur.Requested >= day {
			continue
		}
		cur.Requested = day
		// The mark is written first: a pass racing this one loses on the version and queues nothing.
		if err := s.c.Repo.SaveOwnSync(ctx, id, cur, ver); err != nil {
			if apperr.CodeOf(err) == apperr.Conflict {
				continue
			}
			return rep, err
		}
		if err := s.RequestSync(ctx, id); err != nil {
			return rep, err
		}
		rep.Queued++
	}
	return rep, nil
}

// ErrChannelMissing is a sync's connected YouTube channel that YouTube no longer lists (deleted or
// suspended): the sync stops and its message is dropped.
var ErrChannelMissing = &apperr.Error{Code: apperr.NotFound, Message: "the connected YouTube channel was not found"}

// Handle runs one sync message: the channel's sync. A channel no longer connected, or a malformed message,
// ends the message; a failure leaves it for another delivery.
func (s *Service) Handle(ctx context.Context, m queue.Message) error {
	var msg message
	if err := json.Unmarshal(m.Body, &msg); err != nil || msg.ChannelID == "" {
		s.c.Log.Error("ownperf: malformed sync message dropped", "messageId", m.ID)
		return nil
	}
	if msg.Kind == watchMessage {
		wrep, err := s.Watch(ctx, msg.ChannelID)
		if apperr.CodeOf(err) == apperr.NotFound {
			s.c.Log.Warn("ownperf: hourly read of a channel not connected dropped", "channelId", msg.ChannelID)
			return nil
		}
		if err == nil {
			s.c.Log.Info("youtube hourly read", "channelId", msg.ChannelID, "stopped", wrep.Stopped, "young", wrep.Young,
				"units", wrep.Units, "statsCalls", wrep.Stats, "analyticsQueries", wrep.Queries, "events", wrep.Events)
		}
		return err
	}
	rep, err := s.Sync(ctx, msg.ChannelID)
	// A channel no longer connected, or whose grant Google refused (marked needs_reconnect, its event
	// emitted), has no owner to sync for: its message is dropped, not retried into the dead-letter queue.
	// The owner connecting again queues a new sync.
	if errors.Is(err, connection.ErrNotConnected) || errors.Is(err, connection.ErrNeedsReconnect) {
		s.c.Log.Warn("ownperf: sync of a channel no longer connected dropped", "channelId", msg.ChannelID, "reason", err.Error())
		return nil
	}
	if errors.Is(err, ErrChannelMissing) {
		s.c.Log.Warn("ownperf: sync dropped: the connected YouTube channel is missing", "channelId", msg.ChannelID, "reason", err.Error())
		return nil
	}
	if apperr.CodeOf(err) == apperr.NotFound {
		s.c.Log.Warn("ownperf: sync dropped", "channelId", msg.ChannelID, "reason", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	s.c.Log.Info("youtube sync", "channelId", msg.ChannelID, "stopped", rep.Stopped, "uploads", rep.Uploads,
		"units", rep.Units, "analyticsQueries", rep.Queries, "reportingCalls", rep.ReportingCalls, "analytics", rep.Analytics, "linked", rep.Linked, "reviews", rep.Reviews)
	return nil
}

// Report says what a sync did.
type Report struct {
	// Stopped is "" for a complete sync, or why it stopped part way: "budget" (the day's budget is
	// reserved), "quota" (the API's quota is spent); it resumes on the next budget day.
	Stopped   string `json:"stopped,omitempty"`
	Uploads   int    `json:"uploads"`
	Units     int    `json:"units"`   // Data API units spent by this call
	Queries   int    `json:"queries"` // Analytics queries made
	Analytics string `json:"analytics,omitempty"`
	// ReportingCalls are the Reporting API's calls (its own quota, decision 51).
	ReportingCalls int `json:"reportingCalls"`
	Linked         int `json:"linked"`
	Reviews        int `json:"reviews"`
}

// Why a sync stops part way.
const (
	stopBudget = "budget"
	stopQuota  = "quota"
)

// errStop ends a sync part way: its progress is saved and it resumes on the next budget day.
type errStop struct{ reason string }

func (e errStop) Error() string { return "sync stopped: " + e.reason }

// Sync reads the channel's uploads and analytics, saves them, links uploads to pipeline videos and
// reviews the linked ones (decisions 43–44).
func (s *Service) Sync(ctx context.Context, channelID string) (Report, error) {
	if s.c.Access == nil {
		return Report{}, apperr.NotFoundf("no YouTube connection is configured")
	}
	now := s.c.Now().UTC().Truncate(time.Millisecond)
	day := s.c.Clock.Day(now)
	cur, ver, err := s.c.Repo.OwnSync(ctx, channelID)
	if err != nil {
		return Report{}, err
	}
	if p := cur.Pending; p != nil && p.Day == day && (p.Reason == stopBudget || p.Reason == stopQuota) {
		return Report{Stopped: p.Reason}, nil // stopped today already: the next budget day resumes it
	}
	owner, err := s.c.Access.Owner(ctx, channelID)
	if err != nil {
		return Report{}, err
	}
	p := cur.Pending
	if p == nil {
		p = &Pending{}
	}
	p.Day = day
	// pause saves the progress so far, for a later delivery or budget day to resume.
	pause := func(reason string) error {
		p.Reason, cur.Pending = reason, p
		return s.c.Repo.SaveOwnSync(ctx, channelID, cur, ver)
	}
	rep := Report{}
	ups, err := s.list(ctx, owner, p, day, &rep)
	var stop errStop
	if errors.As(err, &stop) {
		rep.Stopped = stop.reason
		return rep, pause(stop.reason)
	}
	if err != nil {
		return rep, err
	}

	next := Sync{YouTubeChannelID: owner.YouTubeChannelID, SyncedAt: &now, Requested: cur.Requested, Analytics: AnalyticsAvailable,
		Reach: cur.Reach}
	today := now.Truncate(24 * time.Hour)
	next.PeriodStart = today.AddDate(0, 0, -WindowDays).Format(time.DateOnly)
	next.PeriodEnd = today.AddDate(0, 0, -1).Format(time.DateOnly)
	byID := map[string]*Upload{}
	before := make(map[string]Upload, len(cur.Uploads))
	for _, u := range cur.Uploads {
		before[u.ID] = u
	}
	for _, v := range ups {
		u := Upload{ID: v.ID, Title: v.Title, PublishedAt: v.PublishedAt, DurationSeconds: v.DurationSeconds,
			Views: v.Views, Likes: v.Likes, Comments: v.Comments}
		if old, ok := before[v.ID]; ok {
			u.ViewsAtAge, u.Reach = maps.Clone(old.ViewsAtAge), old.Reach
		}
		for _, d := range ReviewDays {
			if _, ok := u.ViewsAtAge[d]; !ok && !now.Before(u.PublishedAt.AddDate(0, 0, d)) {
				if u.ViewsAtAge == nil {
					u.ViewsAtAge = map[int]int64{}
				}
				u.ViewsAtAge[d] = u.Views
			}
		}
		next.Uploads = append(next.Uploads, u)
	}
	for i := range next.Uploads {
		byID[next.Uploads[i].ID] = &next.Uploads[i]
	}

	if owner.Analytics != nil {
		rep.Queries++
		days, err := owner.Analytics.Days(ctx, next.PeriodStart, next.PeriodEnd)
		if err == nil {
			next.Days = days
			rep.Queries++
			var top []VideoFigures
			if top, err = owner.Analytics.TopVideos(ctx, next.PeriodStart, next.PeriodEnd, AnalyticsVideoRows); err == nil {
				for _, f := range top {
					if u, ok := byID[f.VideoID]; ok {
						fig := f.Figures
						u.Analytics = &fig
					}
				}
				rep.Queries++
				next.SearchTerms, err = owner.Analytics.SearchTerms(ctx, next.PeriodStart, next.PeriodEnd, SearchTermRows)
			}
		}
		switch {
		case errors.Is(err, ErrAnalyticsForbidden):
			next.Analytics, next.Days, next.SearchTerms = AnalyticsUnavailable, nil, nil
			next.Message = "YouTube Analytics refused access to this channel (403): the figures are the Data API's " +
				"(views, likes, comments); reconnect with an account that can see the channel's analytics"
		case err != nil:
			// Saved progress would be spent again on a retry: keep the listing and try the rest later.
			if serr := pause("analytics"); serr != nil {
				return rep, serr
			}
			return rep, fmt.Errorf("ownperf: analytics of %s: %w", channelID, err)
		}
	} else {
		next.Analytics = AnalyticsUnavailable
		next.Message = "no YouTube Analytics client is configured"
	}
	if owner.Reporting != nil {
		st := ReachState{}
		// A reconnect to another YouTube channel starts over: the old job is the other channel's.
		if cur.Reach != nil && cur.YouTubeChannelID == owner.YouTubeChannelID {
			st = *cur.Reach
		}
		st, calls, err := reach(ctx, owner.Reporting, st, &next, now)
		rep.ReportingCalls = calls
		if err != nil {
			// As for analytics: the listing is kept and the reports are read again on the next delivery.
			if serr := pause("reach"); serr != nil {
				return rep, serr
			}
			return rep, err
		}
		next.Reach = &st
	}
	next.Units, next.Queries = p.Units, rep.Queries
	rep.Analytics, rep.Uploads = next.Analytics, len(next.Uploads)
	if err := s.c.Repo.SaveOwnSync(ctx, channelID, next, ver); err != nil {
		return rep, err
	}
	if err := s.loop(ctx, owner, channelID, next, now, &rep); err != nil {
		return rep, err
	}
	if s.c.Connections != nil {
		if err := s.c.Connections.MarkSynced(ctx, channelID, now); err != nil {
			return rep, fmt.Errorf("ownperf: mark synced: %w", err)
		}
	}
	return rep, nil
}

// list reads the uploads: channels.list (the uploads playlist), every page of playlistItems.list, then
// videos.list per 50, reserving the units of each part in the day's budget first and giving back what it
// did not spend. The listing so far is kept in p, so a stop resumes it.
func (s *Service) list(ctx context.Context, o Owner, p *Pending, day string, rep *Report) ([]research.SourceVideo, error) {
	spend := func(units int) {
		p.Units += units
		rep.Units += units
	}
	reserve := func(units int) error { return s.reserve(ctx, day, quota.ListCall.Times(units)) }
	settle := func(reserved, spent int) error {
		if back := reserved - spent; back > 0 {
			_, err := s.c.Repo.ReserveQuota(ctx, day, quota.ListCall.Times(-back), quota.Cost{})
			return err
		}
		return nil
	}
	expected := 0
	if p.PlaylistID == "" {
		if err := reserve(listCost); err != nil {
			return nil, err
		}
		page, err := o.Data.Channels(ctx, research.ChannelsQuery{IDs: []string{o.YouTubeChannelID}})
		spend(page.Cost.Add(research.CostOf(err)).Units)
		if err != nil {
			return nil, s.stopOnQuota(ctx, day, err)
		}
		if len(page.Channels) == 0 {
			return nil, fmt.Errorf("YouTube channel %s: %w", o.YouTubeChannelID, ErrChannelMissing)
		}
		p.PlaylistID = page.Channels[0].UploadsPlaylistID
		expected = int(page.Channels[0].VideoCount)
		p.IDs, p.PageToken, p.Listed = nil, "", false
	}
	if !p.Listed && p.PlaylistID != "" {
		pages := max((expected-len(p.IDs)+maxIDs-1)/maxIDs, 1)
		if err := reserve(pages * listCost); err != nil {
			return nil, err
		}
		spent := 0
		for {
			if spent == pages*listCost { // more uploads than channels.list said: reserve as we go
				if err := reserve(listCost); err != nil {
					return nil, err
				}
				pages++
			}
			page, err := o.Data.Uploads(ctx, research.UploadsQuery{PlaylistID: p.PlaylistID, MaxResults: maxIDs, PageToken: p.PageToken})
			units := page.Cost.Add(research.CostOf(err)).Units
			spend(units)
			spent += units
			if err != nil {
				if serr := settle(pages*listCost, spent); serr != nil {
					return nil, serr
				}
				return nil, s.stopOnQuota(ctx, day, err)
			}
			p.IDs = append(p.IDs, page.VideoIDs...)
			p.PageToken = page.NextPageToken
			if p.PageToken == "" {
				break
			}
		}
		p.Listed = true
		if err := settle(pages*listCost, spent); err != nil {
			return nil, err
		}
	}
	batches := (len(p.IDs) + maxIDs - 1) / maxIDs
	if batches == 0 {
		return nil, nil
	}
	if err := reserve(batches * listCost); err != nil {
		return nil, err
	}
	page, err := o.Data.Videos(ctx, research.VideosQuery{IDs: p.IDs})
	units := page.Cost.Add(research.CostOf(err)).Units
	spend(units)
	if serr := settle(batches*listCost, units); serr != nil {
		return nil, serr
	}
	if err != nil {
		return nil, s.stopOnQuota(ctx, day, err)
	}
	// Newest first, as the playlist lists them.
	order := make(map[string]int, len(p.IDs))
	for i, id := range p.IDs {
		order[id] = i
	}
	vs := page.Videos
	slices.SortStableFunc(vs, func(a, b research.SourceVideo) int { return order[a.ID] - order[b.ID] })
	return vs, nil
}

// reserve holds cost of the day's budget; errStop when the budget has no room for it.
func (s *Service) reserve(ctx context.Context, day string, cost quota.Cost) error {
	ok, err := s.c.Repo.ReserveQuota(ctx, day, cost, s.c.Daily)
	if err == nil && !ok {
		return errStop{stopBudget}
	}
	return err
}

// stopOnQuota turns the API's quotaExceeded into errStop, the bucket marked spent for the day.
func (s *Service) stopOnQuota(ctx context.Context, day string, err error) error {
	if !errors.Is(err, research.ErrQuotaExceeded) {
		return err
	}
	if merr := s.c.Repo.MarkQuotaExhausted(ctx, day, research.BucketOf(err)); merr != nil {
		return merr
	}
	return errStop{stopQuota}
}

// scoreOf is the video's title score: an earlier review's, else the title runs', else the grader's. A
// failed grading leaves the review without one; the next review grades again.
func (s *Service) scoreOf(ctx context.Context, channelID string, v videos.Video, u Upload) (*float64, error) {
	for _, r := range v.Reviews {
		if r.TitleScore != nil {
			return r.TitleScore, nil
		}
	}
	score, err := titleScore(ctx, s.c.Titles, channelID, v.Title)
	if score != nil || err != nil || s.c.Grader == nil {
		return score, err
	}
	short := u.DurationSeconds > 0 && u.DurationSeconds <= research.ShortMaxSeconds
	graded, err := s.c.Grader.GradeTitle(ctx, channelID, u.Title, short)
	if err != nil {
		s.c.Log.Warn("ownperf: the title could not be graded; the next review tries again", "videoId", v.ID, "error", err)
		return nil, nil
	}
	return &graded, nil
}

// statusChanged is video.status_changed's data (as shared/videos writes it).
type statusChanged struct {
	videos.Video
	PreviousStatus videos.Status `json:"previousStatus"`
}

// reviewed is video.reviewed's data.
type reviewed struct {
	videos.Video
	Review videos.Review `json:"review"`
}

// decodeVideos decodes the videos ListVideos answered.
func decodeVideos(stored []videos.Stored, err error) ([]videos.Video, error) {
	if err != nil {
		return nil, err
	}
	out := make([]videos.Video, 0, len(stored))
	for _, raw := range stored {
		var v videos.Video
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("ownperf: decode video: %w", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// loop links the sync's recent uploads to pipeline videos by title and reviews the linked videos that
// reached a review age (decision 44). A video changed concurrently is left to the next sync.
func (s *Service) loop(ctx context.Context, owner Owner, channelID string, sync Sync, now time.Time, rep *Report) error {
	all, err := decodeVideos(s.c.Repo.ListVideos(ctx, channelID))
	if err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, v := range all {
		if v.YouTubeVideoID != nil {
			taken[*v.YouTubeVideoID] = true
		}
	}
	// Oldest first, so an older pipeline video gets an upload before a newer one of the same title.
	slices.Reverse(all)
	uploads := make(map[string]Upload, len(sync.Uploads))
	for _, u := range sync.Uploads {
		uploads[u.ID] = u
	}
	// due says, from the listed copy, whether a video has a link or a review to write: only those are read
	// again (for their version), so a sync of a large pipeline reads what it changes.
	due := func(v videos.Video) bool {
		if linkable(v) {
			_, ok := matchUpload(v, sync.Uploads, taken, now)
			return ok
		}
		if v.YouTubeVideoID == nil {
			return false
		}
		u, ok := uploads[*v.YouTubeVideoID]
		for _, d := range ReviewDays {
			if _, seen := u.ViewsAtAge[d]; ok && seen && !hasReview(v, d) && !now.Before(u.PublishedAt.AddDate(0, 0, d)) {
				return true
			}
		}
		return ok && reachBehind(v, u)
	}
	for _, listed := range all {
		if !due(listed) {
			continue
		}
		v, version, err := s.c.Repo.GetVideo(ctx, channelID, listed.ID)
		if err != nil {
			return err
		}
		var evs []webhooks.Event
		changed := false
		if linkable(v) {
			u, ok := matchUpload(v, sync.Uploads, taken, now)
			if !ok {
				continue
			}
			taken[u.ID] = true
			id := u.ID
			v.YouTubeVideoID, v.UpdatedAt, changed = &id, now, true
			rep.Linked++
			if v.Status == videos.Edited {
				v.Status = videos.Published
				v.StatusHistory = append(v.StatusHistory, videos.StatusChange{Status: videos.Published, At: now})
				ev, err := webhooks.NewEvent(s.c.Repo.NewID(), webhooks.VideoStatusChanged, channelID, now,
					statusChanged{Video: v, PreviousStatus: videos.Edited})
				if err != nil {
					return err
				}
				evs = append(evs, ev)
			}
		}
		if v.YouTubeVideoID == nil {
			continue
		}
		if u, ok := uploads[*v.YouTubeVideoID]; ok {
			// Reports lag about 2 days, and a channel's first comes 48 hours after its job: a review's
			// reach fills in as they arrive (decision 51), without another video.reviewed.
			if reachBehind(v, u) {
				for i, r := range v.Reviews {
					v.Reviews[i].Impressions, v.Reviews[i].ImpressionsCTR = reachFor(u, r.Day)
				}
				v.UpdatedAt, changed = now, true
			}
			for _, d := range ReviewDays {
				if hasReview(v, d) {
					continue
				}
				r, ok := review(u, d, sync.Uploads, now)
				if !ok {
					continue
				}
				if r.TitleScore, err = s.scoreOf(ctx, channelID, v, u); err != nil {
					return err
				}
				s.retention(ctx, owner, channelID, u, sync, &r, rep)
				v.Reviews = append(v.Reviews, r)
				v.UpdatedAt, changed = now, true
				ev, err := webhooks.NewEvent(s.c.Repo.NewID(), webhooks.VideoReviewed, channelID, now, reviewed{Video: v, Review: r})
				if err != nil {
					return err
				}
				evs = append(evs, ev)
				rep.Reviews++
			}
		}
		if !changed {
			continue
		}
		if err := s.c.Repo.UpdateVideo(ctx, channelID, v, version, evs...); err != nil {
			if apperr.CodeOf(err) == apperr.Conflict {
				s.c.Log.Warn("ownperf: video changed during the sync; the next sync links or reviews it", "videoId", v.ID)
				continue
			}
			return err
		}
		if s.c.Publisher != nil && len(evs) > 0 {
			s.c.Publisher.PublishEvents(ctx, evs...)
		}
	}
	return nil
}
