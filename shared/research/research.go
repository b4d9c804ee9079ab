// Package research studies what works in a channel's niche: up to 500 recent videos of the niche, each
// scored as an outlier against its own channel, the pattern insights of six content kinds, and backlog
// ideas inspired by the strongest outliers. A run is a chain of steps on the research queue (pipeline.go)
// that survives a crash at any point; the scheduler (scheduler.go) starts runs when research gets old,
// within the deployment's daily YouTube quota budget (three buckets: shared/quota).
package research

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/quota"
)

// Patterns is ResearchPatterns in the API: each field a text of pattern insights.
type Patterns struct {
	Titles       string `json:"titles,omitempty"`
	Thumbnails   string `json:"thumbnails,omitempty"`
	LongScripts  string `json:"longScripts,omitempty"`
	ShortScripts string `json:"shortScripts,omitempty"`
	Descriptions string `json:"descriptions,omitempty"`
	Ideas        string `json:"ideas,omitempty"`
	// Sources are the research videos each text was written from (issue 19: patterns are data from other
	// channels' videos, shown with their sources); nil in patterns stored before sources were kept.
	Sources *PatternSources `json:"sources,omitempty"`
}

// PatternSources are the source videos of each pattern kind, strongest outliers first, at most
// MaxPatternSources each.
type PatternSources struct {
	Titles       []PatternSource `json:"titles,omitempty"`
	Thumbnails   []PatternSource `json:"thumbnails,omitempty"`
	LongScripts  []PatternSource `json:"longScripts,omitempty"`
	ShortScripts []PatternSource `json:"shortScripts,omitempty"`
	Descriptions []PatternSource `json:"descriptions,omitempty"`
	Ideas        []PatternSource `json:"ideas,omitempty"`
}

// PatternSource is a research video a pattern text was written from: another channel's video, shown as data.
type PatternSource struct {
	VideoID      string  `json:"videoId"`
	Title        string  `json:"title"`
	ChannelTitle string  `json:"channelTitle,omitempty"`
	URL          string  `json:"url,omitempty"`
	Views        int64   `json:"views"`
	OutlierScore float64 `json:"outlierScore"`
}

// MaxPatternSources is the most source videos a pattern kind lists.
const MaxPatternSources = 10

// KindVideos are the videos a pattern kind learns from, in the order of vs (the run's videos, strongest
// outliers first): Long videos for longScripts, Shorts for shortScripts, all of them for the other kinds;
// at most n (all when n <= 0).
func KindVideos(vs []Video, kind string, n int) []Video {
	want := kindContentType(kind)
	var out []Video
	for _, v := range vs {
		if n > 0 && len(out) == n {
			break
		}
		if want == "" || v.ContentType == want {
			out = append(out, v)
		}
	}
	return out
}

// kindContentType is the content type of the videos a pattern kind learns from ("" for all of them).
func kindContentType(kind string) string {
	return map[string]string{"longScripts": Long, "shortScripts": Short}[kind]
}

// SourcesOf returns the source videos of p's texts written from the run's videos vs (strongest outliers
// first): for each kind with a text, the strongest MaxPatternSources of the videos the kind learns from
// (KindVideos), which both writers read first. Nil when no kind has a text.
func SourcesOf(p Patterns, vs []Video) *PatternSources {
	return SourcesFrom(p, func(kind string) []PatternSource {
		var out []PatternSource
		for _, v := range KindVideos(vs, kind, MaxPatternSources) {
			out = append(out, SourceOf(v))
		}
		return out
	})
}

// SourceOf is a research video as a pattern's source.
func SourceOf(v Video) PatternSource {
	return PatternSource{VideoID: v.VideoID, Title: v.Title, ChannelTitle: v.ChannelTitle, URL: v.URL, Views: v.Views,
		OutlierScore: v.OutlierScore}
}

// SourcesFrom returns, for each kind of p with a text, the first MaxPatternSources of of(kind); nil when
// no kind has a text with sources.
func SourcesFrom(p Patterns, of func(kind string) []PatternSource) *PatternSources {
	var s PatternSources
	any := false
	for _, k := range []struct {
		kind string
		text string
		dst  *[]PatternSource
	}{{"titles", p.Titles, &s.Titles}, {"thumbnails", p.Thumbnails, &s.Thumbnails},
		{"longScripts", p.LongScripts, &s.LongScripts}, {"shortScripts", p.ShortScripts, &s.ShortScripts},
		{"descriptions", p.Descriptions, &s.Descriptions}, {"ideas", p.Ideas, &s.Ideas}} {
		if strings.TrimSpace(k.text) == "" {
			continue
		}
		if vs := of(k.kind); len(vs) > 0 {
			*k.dst = slices.Clone(vs[:min(len(vs), MaxPatternSources)])
			any = true
		}
	}
	if !any {
		return nil
	}
	return &s
}

// Of returns the sources of a kind (none when s is nil).
func (s *PatternSources) Of(kind string) []PatternSource {
	if s == nil {
		return nil
	}
	return map[string][]PatternSource{"titles": s.Titles, "thumbnails": s.Thumbnails, "longScripts": s.LongScripts,
		"shortScripts": s.ShortScripts, "descriptions": s.Descriptions, "ideas": s.Ideas}[kind]
}

// Config is research's configuration (shared/config reads it from the environment).
type Config struct {
	// Source labels new runs ("youtube" or "offline sample"); the worker's source decides in the end.
	Source string
	// Daily is the deployment's YouTube quota budget per quota day, per bucket (CSS_YOUTUBE_DAILY_UNITS,
	// CSS_YOUTUBE_DAILY_SEARCHES, CSS_YOUTUBE_DAILY_STATS_CALLS).
	Daily quota.Cost
	// Freshness: a niche's research fetched less than this long ago is reused (CSS_RESEARCH_FRESH_DAYS).
	Freshness time.Duration
	// Interval: a channel's research older than this is run again (CSS_RESEARCH_INTERVAL_DAYS).
	Interval time.Duration
	// Window: research covers videos published in the last Window (CSS_RESEARCH_WINDOW_DAYS).
	Window time.Duration
	// Lease: how long a run holds its channel without finishing before another may take over.
	Lease time.Duration
	// ClaimFor: how long a message holds a step it works on before a duplicate may take it over.
	ClaimFor time.Duration
	// RetryFailedAfter: when the scheduler tries a channel again after a failed run.
	RetryFailedAfter time.Duration
	// MaxAttempts is the research queue's receive count before dead-lettering (queue.Specs): the last
	// attempt of a failing step fails the run instead of leaving it running.
	MaxAttempts int
	Plan        Plan
	// IdeasPerRun is the most ideas a run adds to the backlog (decision 32).
	IdeasPerRun int
	// WriterDeadline bounds the pattern writer's and the idea writer's model calls in a step: past it the
	// step writes with Statistics (DefaultWriterDeadline: within the research worker's 5-minute timeout).
	WriterDeadline time.Duration
	// AccountShare is the percentage of each bucket of Daily one account's on-demand runs may reserve per
	// budget day (each counts the plan's ceiling when it starts); ChannelRunsPerDay the most on-demand runs
	// a channel starts per budget day. Scheduled refreshes count against neither (decision 46).
	AccountShare      int
	ChannelRunsPerDay int
	// ScheduledReserve is the percentage of each bucket of Daily kept for scheduled refreshes: on-demand
	// runs may not reserve into it, scheduled runs may use the whole budget (decision 46).
	ScheduledReserve int
	// DerivedMetrics: the project's owner has accepted YouTube's derived-metrics amendment
	// (CSS_YOUTUBE_DERIVED_METRICS). Until then research stores videos but shows and uses nothing computed
	// from other channels' data: no scores, no patterns, no ideas, no outlier order (decision 48).
	DerivedMetrics bool
}

// Defaults of the configuration.
const (
	DefaultFreshDays    = 7
	DefaultIntervalDays = 7
	DefaultWindowDays   = 365
	DefaultIdeasPerRun  = 20
	// DefaultWriterDeadline leaves a step a minute of the research worker's 5 minutes after its writer.
	DefaultWriterDeadline = 4 * time.Minute
	// Decision 46: an account's daily share of each bucket of the budget for on-demand runs, and a channel's
	// on-demand runs per day.
	DefaultAccountShare      = 20
	DefaultChannelRunsPerDay = 3
	// DefaultScheduledReserve is the part of the daily budget kept for scheduled refreshes (decision 46).
	DefaultScheduledReserve = 30
)

// DefaultConfig returns the defaults, for the given source label. A configuration built in code (tests,
// tools) shows derived metrics; a deployment's comes from ConfigFrom, where they are off until accepted.
func DefaultConfig(source string) Config {
	day := 24 * time.Hour
	return Config{Source: source, Daily: quota.DefaultDaily, Freshness: DefaultFreshDays * day,
		Interval: DefaultIntervalDays * day, Window: DefaultWindowDays * day, Lease: 2 * time.Hour,
		ClaimFor: 15 * time.Minute, RetryFailedAfter: day, MaxAttempts: queue.Specs()[queue.Research].MaxReceiveCount,
		Plan: DefaultPlan(), IdeasPerRun: DefaultIdeasPerRun, WriterDeadline: DefaultWriterDeadline, AccountShare: DefaultAccountShare,
		ChannelRunsPerDay: DefaultChannelRunsPerDay, ScheduledReserve: DefaultScheduledReserve, DerivedMetrics: true}
}

// ConfigFrom returns research's configuration from the service's; a setting left zero (a configuration
// built in code) keeps its default, and without a source named the source is the offline sample.
func ConfigFrom(r config.Research) Config {
	label := SourceOffline
	if r.Source == config.SourceYouTube {
		label = SourceYouTube
	}
	c := DefaultConfig(label)
	set := func(dst *int, v int) {
		if v > 0 {
			*dst = v
		}
	}
	days := func(dst *time.Duration, n int) {
		if n > 0 {
			*dst = time.Duration(n) * 24 * time.Hour
		}
	}
	set(&c.Daily.Units, r.DailyUnits)
	set(&c.Daily.Searches, r.DailySearches)
	set(&c.Daily.Stats, r.DailyStatsCalls)
	days(&c.Freshness, r.FreshDays)
	days(&c.Interval, r.IntervalDays)
	days(&c.Window, r.WindowDays)
	set(&c.AccountShare, r.AccountSharePercent)
	set(&c.ChannelRunsPerDay, r.ChannelRunsPerDay)
	c.DerivedMetrics = r.DerivedMetrics
	if r.DailyUnits > 0 {
		// Read from the environment (where 0 turns the reserve off), not built in code with it left zero.
		c.ScheduledReserve = r.ScheduledReservePercent
	}
	return c
}

// AccountQuota is an account's daily share of the budget for on-demand runs: AccountShare percent of
// each bucket of Daily, and at least one run's ceiling, so every account can research once a day.
func (c Config) AccountQuota() quota.Cost {
	return quota.Max(c.Daily.Percent(c.AccountShare), c.Plan.Ceiling())
}

// OnDemand is the part of Daily on-demand runs (POST /research, keyword changes) may reserve together:
// all but the ScheduledReserve percent of each bucket kept for scheduled refreshes, and at least one run's
// ceiling (within the budget).
func (c Config) OnDemand() quota.Cost {
	return quota.Min(quota.Max(c.Daily.Sub(c.Daily.Percent(c.ScheduledReserve)), c.Plan.Ceiling()), c.Daily)
}

// Source labels (decision 30).
const (
	SourceYouTube = "youtube"
	SourceOffline = "offline sample"
)

// Validate checks the configuration's bounds.
func (c Config) Validate() error {
	switch {
	case c.Source == "":
		return errors.New("research: no source label")
	case !c.Plan.Ceiling().Within(c.Daily):
		return fmt.Errorf("research: the daily budget (%s) is less than the %s a run may need", c.Daily, c.Plan.Ceiling())
	case c.Freshness <= 0 || c.Interval <= 0 || c.Window <= 0 || c.Lease <= 0 || c.ClaimFor <= 0 || c.RetryFailedAfter <= 0 || c.WriterDeadline <= 0:
		return errors.New("research: freshness, interval, window, lease, claim, retry and writer times must be positive")
	case c.Freshness+24*time.Hour > DataLifetime:
		// A niche's shared research is kept a day past the freshness window, within other channels' data's
		// lifetime (decision 49).
		return fmt.Errorf("research: a freshness window of %s keeps a niche's research past the %s other channels' data may be kept", c.Freshness, DataLifetime)
	case c.MaxAttempts < 1:
		return fmt.Errorf("research: max attempts must be positive, not %d", c.MaxAttempts)
	case c.AccountShare < 1 || c.AccountShare > 100:
		return fmt.Errorf("research: an account's share must be 1..100 percent, not %d", c.AccountShare)
	case c.ScheduledReserve < 0 || c.ScheduledReserve > 90:
		return fmt.Errorf("research: the scheduled refreshes' reserve must be 0..90 percent, not %d", c.ScheduledReserve)
	case c.ChannelRunsPerDay < 1:
		return fmt.Errorf("research: a channel's runs per day must be positive, not %d", c.ChannelRunsPerDay)
	case c.IdeasPerRun < 0 || c.IdeasPerRun > 20:
		return fmt.Errorf("research: ideas per run must be 0..20 (decision 32), not %d", c.IdeasPerRun)
	}
	return c.Plan.Validate()
}

// Service is research as the API and the scheduler use it.
type Service struct {
	repo  Repository
	queue queue.Sender
	cfg   Config
	now   func() time.Time
	clock Clock
}

// NewService returns a Service. q is the research queue; without one (a function that only reads
// research), Start fails.
func NewService(repo Repository, q queue.Sender, cfg Config, now func() time.Time) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	clock, err := NewClock()
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Service{repo: repo, queue: q, cfg: cfg, now: now, clock: clock}, nil
}

// DerivedMetrics is the deployment's derived-metrics status (decision 48).
func (s *Service) DerivedMetrics() DerivedMetrics { return s.cfg.Derived() }

// Insights returns the channel's research patterns (empty until research has run and once it expired),
// guarded again (GuardStored) in case they were stored before patterns were; none while derived metrics
// are not accepted, whenever they were written (decision 48).
func (s *Service) Insights(ctx context.Context, channelID string) (Patterns, error) {
	if !s.cfg.DerivedMetrics {
		return Patterns{}, nil
	}
	st, err := s.repo.ResearchState(ctx, channelID)
	return GuardStored(st.Current(s.now()).Patterns), err
}

// InsightsView returns GET /research-insights' answer: Insights with the derived-metrics status.
func (s *Service) InsightsView(ctx context.Context, channelID string) (InsightsView, error) {
	p, err := s.Insights(ctx, channelID)
	if err != nil {
		return InsightsView{}, err
	}
	return InsightsView{Patterns: p, DerivedMetrics: s.cfg.Derived()}, nil
}

// View returns the run as the API shows it, with the deployment's derived-metrics status.
func (s *Service) View(r Run) RunView {
	v := r.View()
	d := s.cfg.Derived()
	v.DerivedMetrics = &d
	return v
}

// Start starts a research run of the channel: 400 naming `keywords` when its profile has none, 409 when a
// run holds the channel already (decision 30).
func (s *Service) Start(ctx context.Context, channelID, trigger string) (Run, error) {
	if s.queue == nil {
		return Run{}, errors.New("research: no research queue configured")
	}
	p, err := s.repo.GetProfile(ctx, channelID)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return Run{}, err
	}
	n, err := NicheOf(p)
	if err != nil {
		return Run{}, err
	}
	st, err := s.repo.ResearchState(ctx, channelID)
	if err != nil {
		return Run{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	day := s.clock.Day(now)
	onDemand := trigger != TriggerSchedule
	if onDemand && st.RunsDay == day && st.RunsOnDay >= s.cfg.ChannelRunsPerDay {
		return Run{}, s.usageLimit(now, fmt.Sprintf("this channel has started its %d research runs of the day (keyword changes included)", s.cfg.ChannelRunsPerDay))
	}
	var superseded *Run
	if st.ActiveRun != "" {
		old, err := s.repo.ResearchRun(ctx, channelID, st.ActiveRun)
		if err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return Run{}, err
		}
		if err == nil && old.Status.Active() {
			if st.Holds(now) {
				return Run{}, apperr.Conflictf("research run %s is %s; wait for it to finish", old.ID, old.Status)
			}
			// The old run made no progress within its lease (its messages were lost or dead-lettered). It
			// keeps no patterns (decision 49); its videos, if it scored any, expire by themselves.
			old.Status, old.Message, old.FinishedAt, old.UpdatedAt = Failed, "stopped: no progress within "+s.cfg.Lease.String(), &now, now
			old.Patterns = Patterns{}
			superseded = &old
		}
	}
	run := NewRun(s.repo.NewID(), channelID, trigger, s.cfg.Source, n, now)
	st.ActiveRun, st.LeaseUntil, st.StartedAt = run.ID, now.Add(s.cfg.Lease), now
	st.DueAt = st.LeaseUntil // the scheduler looks again should the run stall
	refund := func() {}
	if onDemand {
		if st.RunsDay != day {
			st.RunsDay, st.RunsOnDay = day, 0
		}
		st.RunsOnDay++ // stored with the run, under the state's version: concurrent starts count once each
		if refund, run.Charged, err = s.chargeAccount(ctx, channelID, day, now); err != nil {
			return Run{}, err
		}
	}
	if err := s.repo.StartResearchRun(ctx, st, run, superseded); err != nil {
		refund()
		if errors.Is(err, ErrStale) {
			return Run{}, apperr.Conflictf("a research run of this channel was started concurrently")
		}
		return Run{}, err
	}
	if err := send(ctx, s.queue, run, StepDiscover); err != nil {
		refund()
		s.abandon(ctx, run, now)
		return Run{}, fmt.Errorf("research: queue run %s: %w", run.ID, err)
	}
	return run, nil
}

// chargeAccount counts an on-demand run's ceiling against its account's daily share of the budget
// (decision 46), and returns what gives it back should the run not start, and the charge the run carries
// until the pipeline settles it against what the run spent. An unmetered source (the offline sample)
// spends no units and is not charged.
func (s *Service) chargeAccount(ctx context.Context, channelID, day string, now time.Time) (func(), AccountCharge, error) {
	if s.cfg.Source != SourceYouTube {
		return func() {}, AccountCharge{}, nil
	}
	account, err := s.repo.ChannelAccount(ctx, channelID)
	if err != nil {
		return nil, AccountCharge{}, err
	}
	account = cmp.Or(account, "channel:"+channelID) // a channel without an account record is its own account
	cost := s.cfg.Plan.Ceiling()
	share := s.cfg.AccountQuota()
	ok, err := s.repo.AddAccountQuota(ctx, account, day, cost, share)
	if err != nil {
		return nil, AccountCharge{}, err
	}
	if !ok {
		return nil, AccountCharge{}, s.usageLimit(now, fmt.Sprintf("the account's daily share of YouTube quota (%d%% of the deployment's: %s) has no room for another run of up to %s",
			s.cfg.AccountShare, share, cost))
	}
	return func() {
		_, _ = s.repo.AddAccountQuota(context.WithoutCancel(ctx), account, day, cost.Times(-1), share) // best effort: the share is a bound, and the day ends
	}, AccountCharge{Account: account, Day: day, Cost: cost}, nil
}

// SpendQuota counts YouTube quota the channel spends outside research runs (a transcript's captions.list
// and captions.download, from the units bucket) in the day's on-demand budget and its account's share
// (decision 46): past either, 429 USAGE_LIMIT until the next quota day, and nothing is counted.
func (s *Service) SpendQuota(ctx context.Context, channelID string, cost quota.Cost) error {
	now := s.now()
	account, err := s.repo.ChannelAccount(ctx, channelID)
	if err != nil {
		return err
	}
	account = cmp.Or(account, "channel:"+channelID)
	share := s.cfg.AccountQuota()
	switch err := s.repo.SpendQuota(ctx, s.clock.Day(now), cost, s.cfg.OnDemand(), account, share); {
	case errors.Is(err, ErrBudget):
		return s.usageLimit(now, fmt.Sprintf("the deployment's daily YouTube budget has no room for %s more", cost))
	case errors.Is(err, ErrAccountShare):
		return s.usageLimit(now, fmt.Sprintf("the account's daily share of YouTube quota (%s) has no room for %s more", share, cost))
	default:
		return err
	}
}

// usageLimit is the 429 USAGE_LIMIT of a research limit, with when it resets: the next budget day.
func (s *Service) usageLimit(now time.Time, why string) error {
	next := s.clock.NextDay(now)
	return &apperr.Error{Code: apperr.UsageLimit, RetryAfter: int(next.Sub(now).Seconds()) + 1,
		Message: fmt.Sprintf("%s; on-demand research resets at %s (the next YouTube quota day)", why, next.Format(time.RFC3339))}
}

// abandon fails a run whose first message could not be sent and frees its channel, so the client may
// start again at once. Best effort: should this fail too, the run's lease ends and the scheduler takes the
// channel over.
func (s *Service) abandon(ctx context.Context, run Run, now time.Time) {
	stored, err := s.repo.ResearchRun(ctx, run.ChannelID, run.ID)
	if err != nil {
		return
	}
	st, err := s.repo.ResearchState(ctx, run.ChannelID)
	if err != nil || st.ActiveRun != run.ID || stored.Status != Queued {
		return
	}
	stored.Status, stored.Message, stored.FinishedAt, stored.UpdatedAt = Failed, "the run could not be queued; start it again", &now, now
	st.ActiveRun, st.LeaseUntil, st.DueAt = "", time.Time{}, now.Add(s.cfg.RetryFailedAfter)
	_ = s.repo.SaveResearchRunAndState(ctx, &stored, st)
}

// Run returns a run of the channel (404 for another channel's).
func (s *Service) Run(ctx context.Context, channelID, runID string) (Run, error) {
	return s.repo.ResearchRun(ctx, channelID, runID)
}

// LastRun returns the channel's most recent run (the one holding it, else the last completed), nil before
// any.
func (s *Service) LastRun(ctx context.Context, channelID string) (*Run, error) {
	st, err := s.repo.ResearchState(ctx, channelID)
	if err != nil {
		return nil, err
	}
	id := cmp.Or(st.ActiveRun, st.LastRunID)
	if id == "" {
		return nil, nil
	}
	run, err := s.repo.ResearchRun(ctx, channelID, id)
	if err != nil {
		return nil, err
	}
	return &run, nil
}

// VideoQuery selects research videos (decision 31).
type VideoQuery struct {
	ContentType string // "" for all
	Sort        string // SortOutlier, SortViews, SortRecent; "": SortOutlier, SortViews while derived metrics are not accepted
	Limit       int
	Offset      int
}

// Videos returns a page of the channel's research videos and how many match. While derived metrics are
// not accepted (decision 48) the videos carry no figure computed from other channels' data, the default
// order is SortViews, and SortOutlier is a VALIDATION_ERROR naming `sort`.
func (s *Service) Videos(ctx context.Context, channelID string, q VideoQuery) ([]Video, int, error) {
	if q.Sort == "" {
		q.Sort = SortOutlier
		if !s.cfg.DerivedMetrics {
			q.Sort = SortViews
		}
	}
	if q.Sort == SortOutlier && !s.cfg.DerivedMetrics {
		return nil, 0, apperr.Invalid("sort", "sort=outlier is not available: %s", derivedWithheldReason)
	}
	all, err := s.current(ctx, channelID)
	if err != nil {
		return nil, 0, err
	}
	matching := make([]Video, 0, len(all))
	for _, v := range all {
		if q.ContentType == "" || v.ContentType == q.ContentType {
			matching = append(matching, v)
		}
	}
	SortVideos(matching, q.Sort)
	total := len(matching)
	start := min(max(q.Offset, 0), total)
	end := min(start+max(q.Limit, 0), total)
	page := matching[start:end]
	if !s.cfg.DerivedMetrics {
		for i := range page {
			page[i] = withoutDerived(page[i])
		}
	}
	return page, total, nil
}

// TopVideos returns the channel's n strongest outliers (GET /performance's topResearchVideos); none while
// derived metrics are not accepted (decision 48).
func (s *Service) TopVideos(ctx context.Context, channelID string, n int) ([]Video, error) {
	if !s.cfg.DerivedMetrics {
		return nil, nil
	}
	vs, _, err := s.Videos(ctx, channelID, VideoQuery{Sort: SortOutlier, Limit: n})
	return vs, err
}

// Outliers returns the channel's n strongest outliers for a content kind of ResearchPatterns: Long videos
// for longScripts, Shorts for shortScripts, all for the others (titles, thumbnails, descriptions, ideas).
// Generation quotes them in its prompts; none while derived metrics are not accepted (decision 48).
func (s *Service) Outliers(ctx context.Context, channelID, kind string, n int) ([]Video, error) {
	if !s.cfg.DerivedMetrics {
		return nil, nil
	}
	vs, _, err := s.Videos(ctx, channelID, VideoQuery{ContentType: kindContentType(kind), Sort: SortOutlier, Limit: n})
	return vs, err
}

// current reads the channel's current videos; a set deleted between reading the state and its items (a
// newer run completed just then) is read again from the newer state.
func (s *Service) current(ctx context.Context, channelID string) ([]Video, error) {
	for attempt := 0; ; attempt++ {
		st, err := s.repo.ResearchState(ctx, channelID)
		if err != nil {
			return nil, err
		}
		if st = st.Current(s.now()); st.Set == nil {
			return nil, nil
		}
		vs, err := s.repo.ChannelResearchVideos(ctx, channelID, *st.Set)
		if errors.Is(err, ErrStale) && attempt < 2 {
			continue
		}
		return vs, err
	}
}

// stepMessage is a research queue message: run a step of a run.
type stepMessage struct {
	RunID     string `json:"runId"`
	ChannelID string `json:"channelId"`
	Step      string `json:"step"`
}

func send(ctx context.Context, q queue.Sender, run Run, step string) error {
	body, err := json.Marshal(stepMessage{RunID: run.ID, ChannelID: run.ChannelID, Step: step})
	if err != nil {
		return err
	}
	return q.Send(ctx, queue.Outgoing{Body: body, Attributes: map[string]string{"runId": run.ID, "step": step}})
}
