package ownperf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// The early warning's numbers (decision 54).
const (
	// WatchHours is how long after publishing an upload's views are read hourly.
	WatchHours = 72
	// MinBaseline is how many earlier uploads with a curve at the same age a signal needs.
	MinBaseline = 5
	// LowPercentile and HighPercentile: below the first is video.underperforming, above the second
	// video.outperforming.
	LowPercentile  = 30
	HighPercentile = 70
	// BaselineUploads is how many of the most recent earlier uploads (of the last BaselineDays) a young
	// upload is compared with.
	BaselineUploads = 20
	// dailyDays is how many days of Analytics views a fallback curve reads: from the publishing day,
	// enough to cover 72 hours from any hour of it.
	dailyDays = 4
	// keepWatched bounds the uploads the watch keeps (the young ones and the baseline's curves).
	keepWatched = 40
)

// Signals of an evaluation.
const (
	SignalUnder  = "underperforming"
	SignalOver   = "outperforming"
	SignalUsual  = "within usual"
	SignalNone   = "no signal"
	srcHourly    = "hourly snapshots"
	srcDaily     = "analytics daily views"
	hourFormat   = "2006-01-02T15"
	watchMessage = "youtube.watch"
)

// Snapshot is an upload's views m minutes after publishing, as an hourly read saw them.
type Snapshot struct {
	Minutes int   `json:"m"`
	Views   int64 `json:"v"`
}

// Evaluation is a young upload's comparison with the channel's earlier uploads at the same age.
type Evaluation struct {
	At       time.Time `json:"at"`
	AgeHours float64   `json:"ageHours"`
	Views    int64     `json:"views"`
	// Percentile is where the views fall among the baseline's (0..100); nil without a signal.
	Percentile   *float64 `json:"percentile"`
	BaselineSize int      `json:"baselineSize"`
	Baseline     string   `json:"baseline,omitempty"` // where the baseline's curves came from
	Signal       string   `json:"signal"`
	Reason       string   `json:"reason,omitempty"` // why there is no signal
}

// Watched is an upload the hourly read follows, or an earlier one whose curve a baseline uses.
type Watched struct {
	ID          string     `json:"id"`
	Title       string     `json:"title,omitempty"`
	PublishedAt time.Time  `json:"publishedAt"`
	Hourly      []Snapshot `json:"hourly,omitempty"`
	// Daily is Analytics' views per UTC day from the publishing day (the fallback curve), once read.
	Daily     []int64     `json:"daily,omitempty"`
	DailyRead bool        `json:"dailyRead,omitempty"`
	Last      *Evaluation `json:"last,omitempty"`
	// Emitted are the early-warning events emitted for it: each at most once.
	Emitted []string `json:"emitted,omitempty"`
}

// Watch is the channel's early-warning state (`CH#<channel>|WATCH`), written version-checked with the
// events it emits, so two reads never emit twice.
type Watch struct {
	// Requested is the hour (UTC, "2006-01-02T15") a read was last queued for: one an hour.
	Requested string     `json:"requested,omitempty"`
	ReadAt    *time.Time `json:"readAt,omitempty"`
	Stopped   string     `json:"stopped,omitempty"` // why the last read stopped: "budget", "quota"
	Videos    []Watched  `json:"videos,omitempty"`
}

// Percentile is where v falls among xs: the share below it, ties counted half, in percent (one decimal).
func Percentile(v int64, xs []int64) float64 {
	var below float64
	for _, x := range xs {
		switch {
		case x < v:
			below++
		case x == v:
			below += 0.5
		}
	}
	return math.Round(below/float64(len(xs))*1000) / 10
}

// SignalOf is the signal of a percentile over a baseline of n uploads ("" for none: n is short).
func SignalOf(p float64, n int) string {
	switch {
	case n < MinBaseline:
		return ""
	case p < LowPercentile:
		return SignalUnder
	case p > HighPercentile:
		return SignalOver
	}
	return SignalUsual
}

// viewsAt is the upload's views m minutes after publishing by its curve: the hourly snapshots (from 0 at
// publishing, linear between reads), else the Analytics days (each day's views spread evenly over the
// part of the UTC day after publishing); ok is false when neither covers m.
func (w Watched) viewsAt(m int) (int64, string, bool) {
	if n := len(w.Hourly); n > 0 && w.Hourly[n-1].Minutes >= m {
		prev := Snapshot{}
		for _, s := range w.Hourly {
			if s.Minutes >= m {
				if s.Minutes == prev.Minutes {
					return s.Views, srcHourly, true
				}
				f := float64(m-prev.Minutes) / float64(s.Minutes-prev.Minutes)
				return prev.Views + int64(math.Round(f*float64(s.Views-prev.Views))), srcHourly, true
			}
			prev = s
		}
	}
	if len(w.Daily) == 0 {
		return 0, "", false
	}
	pub := w.PublishedAt.UTC()
	at := pub.Add(time.Duration(m) * time.Minute)
	day0 := pub.Truncate(24 * time.Hour)
	if at.After(day0.AddDate(0, 0, len(w.Daily))) {
		return 0, "", false
	}
	var views float64
	for i, n := range w.Daily {
		from, to := day0.AddDate(0, 0, i), day0.AddDate(0, 0, i+1)
		if from.Before(pub) {
			from = pub
		}
		if !at.After(from) {
			break
		}
		end := to
		if at.Before(to) {
			end = at
		}
		views += float64(n) * float64(end.Sub(from)) / float64(to.Sub(from))
	}
	return int64(math.Round(views)), srcDaily, true
}

// evaluate compares the young upload u, with views at now, with the earlier uploads' curves.
func evaluate(u Watched, views int64, earlier []Watched, now time.Time) Evaluation {
	age := now.Sub(u.PublishedAt)
	m := int(age / time.Minute)
	e := Evaluation{At: now, AgeHours: math.Round(age.Hours()*10) / 10, Views: views, Signal: SignalNone}
	var xs []int64
	sources := map[string]bool{}
	for _, o := range earlier {
		if v, src, ok := o.viewsAt(m); ok {
			xs = append(xs, v)
			sources[src] = true
		}
	}
	e.BaselineSize = len(xs)
	var srcs []string
	for _, s := range []string{srcHourly, srcDaily} {
		if sources[s] {
			srcs = append(srcs, s)
		}
	}
	e.Baseline = strings.Join(srcs, " and ")
	if len(xs) < MinBaseline {
		e.Reason = fmt.Sprintf("%d of the channel's earlier uploads have a views curve at %.0f hours (hourly snapshots, or "+
			"Analytics daily views as the fallback); %d are needed", len(xs), age.Hours(), MinBaseline)
		return e
	}
	p := Percentile(views, xs)
	e.Percentile, e.Signal = &p, SignalOf(p, len(xs))
	return e
}

// earlyWarning is the data of video.underperforming and video.outperforming.
type earlyWarning struct {
	YouTubeVideoID string    `json:"youtubeVideoId"`
	Title          string    `json:"title,omitempty"`
	URL            string    `json:"url"`
	PublishedAt    time.Time `json:"publishedAt"`
	AgeHours       float64   `json:"ageHours"`
	Views          int64     `json:"views"`
	Percentile     float64   `json:"percentile"`
	BaselineSize   int       `json:"baselineSize"`
	Baseline       string    `json:"baseline"`
}

// WatchReport says what a read did.
type WatchReport struct {
	Stopped   string `json:"stopped,omitempty"`
	Young     int    `json:"young"`
	Units     int    `json:"units"`
	Stats     int    `json:"stats"`
	Queries   int    `json:"queries"`
	Events    int    `json:"events"`
	Conflicts int    `json:"conflicts,omitempty"`
}

// scheduleWatch queues the channel's hourly read once per UTC hour (version-checked, as the sync's daily
// mark); false when this hour's is queued already (or another pass won the mark).
func (s *Service) scheduleWatch(ctx context.Context, channelID string, now time.Time) (bool, error) {
	w, ver, err := s.c.Repo.OwnWatch(ctx, channelID)
	if err != nil {
		return false, err
	}
	hour := now.UTC().Format(hourFormat)
	if w.Requested >= hour {
		return false, nil
	}
	w.Requested = hour
	if err := s.c.Repo.SaveOwnWatch(ctx, channelID, w, ver); err != nil {
		if apperr.CodeOf(err) == apperr.Conflict {
			return false, nil
		}
		return false, err
	}
	return true, s.send(ctx, watchMessage, channelID)
}

// Watch is the channel's hourly read (decision 54): its newest uploads (playlistItems.list, 1 unit), the
// views of those younger than WatchHours (videos.list for one first seen, then videos:batchGetStats in the
// stats bucket, 50 ids a call), each compared with the channel's earlier uploads at the same age; a
// crossing emits its event, at most once per upload and type, in the same write as the state.
func (s *Service) Watch(ctx context.Context, channelID string) (WatchReport, error) {
	if s.c.Access == nil {
		return WatchReport{}, apperr.NotFoundf("no YouTube connection is configured")
	}
	now := s.c.Now().UTC().Truncate(time.Millisecond)
	day := s.c.Clock.Day(now)
	w, ver, err := s.c.Repo.OwnWatch(ctx, channelID)
	if err != nil {
		return WatchReport{}, err
	}
	sync, _, err := s.c.Repo.OwnSync(ctx, channelID)
	if err != nil {
		return WatchReport{}, err
	}
	owner, err := s.c.Access.Owner(ctx, channelID)
	if err != nil {
		return WatchReport{}, err
	}
	rep := WatchReport{}
	stop := func(err error) (WatchReport, error) {
		var st errStop
		if !errors.As(err, &st) {
			return rep, err
		}
		rep.Stopped, w.Stopped = st.reason, st.reason
		if err := s.c.Repo.SaveOwnWatch(ctx, channelID, w, ver); err != nil && apperr.CodeOf(err) != apperr.Conflict {
			return rep, err
		}
		return rep, nil
	}
	call := func(cost quota.Cost, f func() (quota.Cost, error)) error {
		if err := s.reserve(ctx, day, cost); err != nil {
			return err
		}
		spent, err := f()
		if back := cost.Sub(spent); !back.IsZero() {
			if _, gerr := s.c.Repo.ReserveQuota(ctx, day, back.Times(-1), quota.Cost{}); gerr != nil {
				return gerr
			}
		}
		rep.Units, rep.Stats = rep.Units+spent.Units, rep.Stats+spent.Stats
		return s.stopOnQuota(ctx, day, err)
	}

	// The newest uploads: the uploads playlist is the channel's id with "UU" for "UC".
	var page research.UploadsPage
	if err := call(quota.ListCall, func() (quota.Cost, error) {
		var err error
		page, err = owner.Data.Uploads(ctx, research.UploadsQuery{PlaylistID: "UU" + strings.TrimPrefix(owner.YouTubeChannelID, "UC"), MaxResults: maxIDs})
		return page.Cost.Add(research.CostOf(err)), err
	}); err != nil {
		return stop(err)
	}
	known := map[string]int{}
	for i, v := range w.Videos {
		known[v.ID] = i
	}
	published := map[string]time.Time{}
	titles := map[string]string{}
	for _, u := range sync.Uploads {
		published[u.ID], titles[u.ID] = u.PublishedAt, u.Title
	}
	for _, v := range w.Videos {
		published[v.ID] = v.PublishedAt
	}
	young := func(t time.Time) bool { return now.Sub(t) < WatchHours*time.Hour && !t.After(now) }
	var fresh, stats []string
	for _, id := range page.VideoIDs {
		t, seen := published[id]
		switch {
		case !seen:
			fresh = append(fresh, id)
		case young(t):
			stats = append(stats, id)
		}
	}
	views := map[string]int64{}
	if len(fresh) > 0 {
		var vp research.VideosPage
		if err := call(quota.ListCall.Times(research.CallsFor(len(fresh))), func() (quota.Cost, error) {
			var err error
			vp, err = owner.Data.Videos(ctx, research.VideosQuery{IDs: fresh})
			return vp.Cost.Add(research.CostOf(err)), err
		}); err != nil {
			return stop(err)
		}
		for _, v := range vp.Videos {
			published[v.ID], titles[v.ID], views[v.ID] = v.PublishedAt, v.Title, v.Views
		}
	}
	if len(stats) > 0 {
		var sp research.StatsPage
		if err := call(quota.StatsCall.Times(research.CallsFor(len(stats))), func() (quota.Cost, error) {
			var err error
			sp, err = owner.Data.VideoStats(ctx, research.VideosQuery{IDs: stats})
			return sp.Cost.Add(research.CostOf(err)), err
		}); err != nil {
			return stop(err)
		}
		for _, v := range sp.Stats {
			views[v.ID] = v.Views
		}
	}
	// Each young upload's snapshot.
	var watched []int
	for _, id := range page.VideoIDs {
		n, read := views[id]
		if !read || !young(published[id]) {
			continue
		}
		i, ok := known[id]
		if !ok {
			w.Videos = append(w.Videos, Watched{ID: id, Title: titles[id], PublishedAt: published[id]})
			i = len(w.Videos) - 1
			known[id] = i
		}
		m := int(now.Sub(published[id]) / time.Minute)
		if h := w.Videos[i].Hourly; len(h) == 0 || h[len(h)-1].Minutes < m {
			w.Videos[i].Hourly = append(h, Snapshot{Minutes: m, Views: n})
		}
		watched = append(watched, i)
	}
	rep.Young = len(watched)

	var evs []webhooks.Event
	if len(watched) > 0 {
		// The baseline's uploads: the most recent earlier ones of the last BaselineDays, the sync's and the watch's.
		// Those the sync listed, the watch keeps (young ones too: their snapshots so far are a curve), or this
		// read saw first (a read before the first sync has them).
		var earlier []Watched
		for id, t := range published {
			switch i, ok := known[id]; {
			case t.After(now) || t.Before(now.AddDate(0, 0, -BaselineDays)) || young(t) && !ok:
			case ok:
				earlier = append(earlier, w.Videos[i])
			default:
				earlier = append(earlier, Watched{ID: id, Title: titles[id], PublishedAt: t})
			}
		}
		slices.SortFunc(earlier, func(a, b Watched) int { return cmp.Or(b.PublishedAt.Compare(a.PublishedAt), cmp.Compare(a.ID, b.ID)) })
		earlier = earlier[:min(len(earlier), BaselineUploads)]
		// The fallback: Analytics' daily views of an earlier upload without an hourly curve, read once.
		for i := range earlier {
			e := &earlier[i]
			full := len(e.Hourly) > 0 && e.Hourly[len(e.Hourly)-1].Minutes >= (WatchHours-1)*60
			if full || e.DailyRead || owner.Analytics == nil || sync.Analytics == AnalyticsUnavailable ||
				now.Before(e.PublishedAt.UTC().Truncate(24*time.Hour).AddDate(0, 0, dailyDays+1)) {
				continue
			}
			from := e.PublishedAt.UTC()
			rep.Queries++
			days, err := owner.Analytics.VideoDays(ctx, e.ID, from.Format(time.DateOnly), from.AddDate(0, 0, dailyDays-1).Format(time.DateOnly))
			if err != nil && !errors.Is(err, ErrAnalyticsForbidden) {
				s.c.Log.Warn("ownperf: daily views of an earlier upload unread; the next read tries again", "videoId", e.ID, "error", err.Error())
				continue
			}
			// Analytics has no row for a day without views, nor for a video it has no data of: four empty days
			// are no curve, not a curve of zeros.
			e.DailyRead, e.Daily = true, nil
			var sum int64
			for d := range dailyDays {
				n := days[from.AddDate(0, 0, d).Format(time.DateOnly)]
				e.Daily, sum = append(e.Daily, n), sum+n
			}
			if sum == 0 {
				e.Daily = nil
			}
			if j, ok := known[e.ID]; ok {
				w.Videos[j] = *e
			} else {
				w.Videos = append(w.Videos, *e)
				known[e.ID] = len(w.Videos) - 1
			}
		}
		for _, i := range watched {
			v := &w.Videos[i]
			var before []Watched
			for _, e := range earlier {
				if e.PublishedAt.Before(v.PublishedAt) {
					before = append(before, e)
				}
			}
			ev := evaluate(*v, v.Hourly[len(v.Hourly)-1].Views, before, now)
			v.Last = &ev
			typ := map[string]string{SignalUnder: webhooks.VideoUnderperforming, SignalOver: webhooks.VideoOutperforming}[ev.Signal]
			if typ == "" || slices.Contains(v.Emitted, typ) {
				continue
			}
			e, err := webhooks.NewEvent(s.c.Repo.NewID(), typ, channelID, now, earlyWarning{YouTubeVideoID: v.ID, Title: v.Title,
				URL: Upload{ID: v.ID}.URL(), PublishedAt: v.PublishedAt, AgeHours: ev.AgeHours, Views: ev.Views,
				Percentile: *ev.Percentile, BaselineSize: ev.BaselineSize, Baseline: ev.Baseline})
			if err != nil {
				return rep, err
			}
			v.Emitted = append(v.Emitted, typ)
			evs = append(evs, e)
		}
	}
	// Keep the young uploads and the most recent curves.
	slices.SortStableFunc(w.Videos, func(a, b Watched) int { return cmp.Compare(b.PublishedAt.UnixNano(), a.PublishedAt.UnixNano()) })
	w.Videos = w.Videos[:min(len(w.Videos), keepWatched)]
	w.ReadAt, w.Stopped = &now, ""
	if err := s.c.Repo.SaveOwnWatch(ctx, channelID, w, ver, evs...); err != nil {
		if apperr.CodeOf(err) == apperr.Conflict {
			// Another read of the same hour wrote first: its state and events stand, these are dropped.
			rep.Conflicts++
			return rep, nil
		}
		return rep, err
	}
	rep.Events = len(evs)
	if s.c.Publisher != nil && len(evs) > 0 {
		s.c.Publisher.PublishEvents(ctx, evs...)
	}
	return rep, nil
}

// Young returns the watch's uploads younger than WatchHours at now with their last evaluation, newest
// first (GET /performance's ownChannel.earlyWarning).
func (w Watch) Young(now time.Time) []Watched {
	var out []Watched
	for _, v := range w.Videos {
		if v.Last != nil && now.Sub(v.PublishedAt) < WatchHours*time.Hour {
			out = append(out, v)
		}
	}
	return out
}
