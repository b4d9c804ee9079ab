package research

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/videos"
)

// Emitter sends a channel's webhook event (shared/webhooks). Research emits research.step when a step
// finishes and research.completed when a run succeeds.
type Emitter interface {
	Emit(ctx context.Context, channelID, event string, data any) error
}

// OnceEmitter is an Emitter that sends an event of a given key at most once (an outbox item written only
// if absent, say). With one, a message delivered again after a crash between sending an event and
// recording it never sends the event twice; with a plain Emitter that window gives at-least-once.
type OnceEmitter interface {
	EmitOnce(ctx context.Context, channelID, event, key string, data any) error
}

// Events research emits.
const (
	EventStep      = "research.step"
	EventCompleted = "research.completed"
)

// Pipeline runs research steps: it is the research queue's handler. Each message names a run and a step;
// the step reads what the steps before it stored, does its work and commits its output with the run in
// one transaction, then queues the next step. A message delivered again (after a crash, a timeout or as a
// duplicate) finds its step done and only finishes what followed the commit (events, the next message),
// or finds the step claimed by another message and leaves it, so a run ends the same whatever crashed.
type Pipeline struct {
	repo     Repository
	source   Source
	queue    queue.Sender
	emitter  Emitter
	patterns PatternWriter
	ideas    IdeaWriter
	cfg      Config
	now      func() time.Time
	clock    Clock
	log      *slog.Logger
}

// PipelineOption configures a Pipeline.
type PipelineOption func(*Pipeline)

// WithEmitter sends research's webhook events through e (without one, none are sent).
func WithEmitter(e Emitter) PipelineOption { return func(p *Pipeline) { p.emitter = e } }

// WithPatternWriter analyses patterns with w instead of Statistics.
func WithPatternWriter(w PatternWriter) PipelineOption { return func(p *Pipeline) { p.patterns = w } }

// WithIdeaWriter writes ideas with w instead of Statistics.
func WithIdeaWriter(w IdeaWriter) PipelineOption { return func(p *Pipeline) { p.ideas = w } }

// WithLogger logs to l.
func WithLogger(l *slog.Logger) PipelineOption { return func(p *Pipeline) { p.log = l } }

// NewPipeline returns the pipeline over a source; q is the research queue the next steps go to.
func NewPipeline(repo Repository, source Source, q queue.Sender, cfg Config, now func() time.Time, opts ...PipelineOption) (*Pipeline, error) {
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
	p := &Pipeline{repo: repo, source: source, queue: q, cfg: cfg, now: now, clock: clock,
		patterns: Statistics{}, ideas: Statistics{}, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// staleRetries bounds how often a message looks at its run again after losing a race to another writer.
const staleRetries = 4

// Handle handles one research queue message (a queue.Handler).
func (p *Pipeline) Handle(ctx context.Context, m queue.Message) error {
	var msg stepMessage
	if err := json.Unmarshal(m.Body, &msg); err != nil || msg.RunID == "" || msg.ChannelID == "" || stepIndex(msg.Step) < 0 {
		p.log.Error("research: malformed message dropped", "messageId", m.ID, "body", truncate(string(m.Body), 200))
		return nil
	}
	for attempt := 0; ; attempt++ {
		err := p.handle(ctx, m, msg)
		if !errors.Is(err, ErrStale) || attempt+1 == staleRetries {
			return err
		}
	}
}

func (p *Pipeline) handle(ctx context.Context, m queue.Message, msg stepMessage) error {
	run, err := p.repo.ResearchRun(ctx, msg.ChannelID, msg.RunID)
	if apperr.CodeOf(err) == apperr.NotFound {
		p.log.Warn("research: message for an unknown run dropped", "runId", msg.RunID)
		return nil
	}
	if err != nil {
		return err
	}
	k := stepIndex(msg.Step)
	now := p.now().UTC().Truncate(time.Millisecond)
	switch {
	case k < run.Next || !run.Status.Active():
		return p.followUp(ctx, &run, m.ID, now)
	case k > run.Next:
		p.log.Warn("research: message for a step not reached yet dropped", "runId", run.ID, "step", msg.Step, "next", run.Next)
		return nil
	case run.Status == WaitingQuota:
		return nil // the scheduler queues the step again when the next budget day starts
	case run.Claim.MessageID != "" && run.Claim.MessageID != m.ID && now.Before(run.Claim.Until):
		return nil // another delivery works on the step; should it die, its own redelivery takes it up again
	}

	run.Status, run.Steps[k].Status, run.UpdatedAt = Running, StepRunning, now
	run.Claim = Claim{MessageID: m.ID, Until: now.Add(p.cfg.ClaimFor)}
	if err := p.repo.SaveResearchRun(ctx, &run, nil); err != nil {
		return err
	}
	if msg.Step == StepComplete {
		return p.complete(ctx, &run, now)
	}
	var units meter
	res, err := p.step(msg.Step)(ctx, &run, &units, now)
	if err != nil {
		return p.stepFailed(ctx, m, &run, k, units.c, err, now)
	}

	step := &run.Steps[k]
	step.Status, step.Counts, step.FinishedAt = StepSucceeded, res.counts, &now
	step.spend(units.c)
	run.Spent = run.Spent.Add(units.c)
	run.Next = k + 1
	for run.Next < len(run.Steps) && slices.Contains(res.skip, run.Steps[run.Next].Name) {
		run.Steps[run.Next].Status, run.Steps[run.Next].FinishedAt = StepSkipped, &now
		run.Next++
	}
	run.Claim, run.CommittedBy, run.UpdatedAt = Claim{}, m.ID, now
	c := res.commit
	if !run.Reserved.Cost.IsZero() {
		run.Reserved.Spent = run.Reserved.Spent.Add(units.c)
		if !fetching(run.Steps[run.Next].Name) {
			// The last step that calls the source is done: what it did not spend goes back to the budget.
			c.Budget = giveBack(run.Reserved, quota.Cost{})
			run.Reserved = Reservation{}
		}
	}
	if !run.Charged.Cost.IsZero() && (run.Next == len(run.Steps) || !fetching(run.Steps[run.Next].Name)) {
		settleCharge(&run, &c)
	}
	if err := p.repo.SaveResearchRun(ctx, &run, &c); err != nil {
		return err
	}
	p.log.Info("research: step done", "runId", run.ID, "channelId", run.ChannelID, "step", msg.Step,
		"counts", res.counts, "spent", units.c, "runSpent", run.Spent)
	return p.followUp(ctx, &run, m.ID, now)
}

// followUp finishes what follows a committed step: the events not sent yet, the replaced video set's
// deletion, and, for the message that committed the step, the next step's message when nothing has taken
// the next step up yet.
func (p *Pipeline) followUp(ctx context.Context, run *Run, messageID string, now time.Time) error {
	if err := p.flush(ctx, run); err != nil {
		return err
	}
	tidy := false
	if run.Status == Succeeded && run.Replaced != "" {
		if err := p.repo.DeleteChannelResearchVideos(ctx, run.ChannelID, run.Replaced); err != nil {
			return err
		}
		run.Replaced, tidy = "", true
	}
	if !run.Status.Active() && !run.Patterns.Empty() {
		// Its events are sent and the channel's state holds the patterns now: the run keeps none of other
		// channels' data, which only the state's sweep would find (decision 49).
		run.Patterns, tidy = Patterns{}, true
	}
	if tidy {
		run.UpdatedAt = now
		if err := p.repo.SaveResearchRun(ctx, run, nil); err != nil {
			return err
		}
	}
	if (run.Status == Queued || run.Status == Running) && messageID == run.CommittedBy {
		if next := run.Steps[run.Next]; next.Status == StepPending && run.Claim.MessageID == "" {
			return send(ctx, p.queue, *run, next.Name)
		}
	}
	return nil
}

// flush sends the run's events that are due and not sent yet, in order: research.step for each finished
// step, then research.completed once the run ended (succeeded or failed).
func (p *Pipeline) flush(ctx context.Context, run *Run) error {
	if p.emitter == nil {
		return nil
	}
	type event struct {
		name string
		data any
	}
	var due []event
	for _, s := range run.Steps {
		if s.Status != StepSucceeded && s.Status != StepSkipped {
			break
		}
		due = append(due, event{EventStep, stepEvent{RunID: run.ID, Step: s.Name, Status: s.Status, Counts: s.Counts,
			UnitsSpent: s.UnitsSpent, SearchCallsSpent: s.SearchCallsSpent, StatsCallsSpent: s.StatsCallsSpent,
			FinishedAt: s.FinishedAt, Source: run.Source}})
	}
	if run.Status == Succeeded || run.Status == Failed {
		due = append(due, event{name: EventCompleted})
	}
	if run.Emitted >= len(due) {
		return nil
	}
	if last := &due[len(due)-1]; last.name == EventCompleted {
		done, err := p.completedEvent(ctx, run)
		if err != nil {
			return err
		}
		last.data = done
	}
	once, _ := p.emitter.(OnceEmitter)
	for i, e := range due[run.Emitted:] {
		var err error
		if once != nil {
			err = once.EmitOnce(ctx, run.ChannelID, e.name, fmt.Sprintf("research/%s/%d", run.ID, run.Emitted+i), e.data)
		} else {
			err = p.emitter.Emit(ctx, run.ChannelID, e.name, e.data)
		}
		if err != nil {
			return fmt.Errorf("research: emit %s: %w", e.name, err)
		}
	}
	run.Emitted = len(due)
	return p.repo.SaveResearchRun(ctx, run, nil)
}

// stepEvent is the data of research.step (the contract's ResearchStepEventData).
type stepEvent struct {
	RunID            string         `json:"runId"`
	Step             string         `json:"step"`
	Status           StepStatus     `json:"status"`
	Counts           map[string]int `json:"counts"`
	UnitsSpent       int            `json:"unitsSpent"`
	SearchCallsSpent int            `json:"searchCallsSpent"`
	StatsCallsSpent  int            `json:"statsCallsSpent"`
	FinishedAt       *time.Time     `json:"finishedAt"`
	Source           string         `json:"source"`
}

// completedEvent is the data of research.completed (the contract's ResearchCompletedEventData): how the
// run ended and, when it succeeded, its strongest outliers, the patterns and the number of ideas it added,
// so a receiver needs no second call.
type completedEvent struct {
	RunID           string       `json:"runId"`
	Status          Status       `json:"status"`
	Source          string       `json:"source"`
	VideoCount      int          `json:"videoCount"`
	UnitsSpent      int          `json:"unitsSpent"`
	SearchCalls     int          `json:"searchCallsSpent"`
	StatsCalls      int          `json:"statsCallsSpent"`
	FinishedAt      *time.Time   `json:"finishedAt"`
	Message         string       `json:"message,omitempty"`
	Reused          bool         `json:"reused"`
	Keywords        []string     `json:"keywords"`
	ContentLanguage string       `json:"contentLanguage"`
	TopVideos       []eventVideo `json:"topVideos"`
	Patterns        *Patterns    `json:"patterns,omitempty"`
	IdeasAdded      int          `json:"ideasAdded"`
	// DerivedMetrics says whether topVideos and patterns are shown (decision 48).
	DerivedMetrics DerivedMetrics `json:"derivedMetrics"`
}

// eventVideo is an outlier as research.completed lists it.
type eventVideo struct {
	Title        string  `json:"title"`
	URL          string  `json:"url"`
	Views        int64   `json:"views"`
	OutlierScore float64 `json:"outlierScore"`
	ContentType  string  `json:"contentType"`
}

// completedTopVideos is how many outliers research.completed carries.
const completedTopVideos = 5

func (p *Pipeline) completedEvent(ctx context.Context, run *Run) (completedEvent, error) {
	e := completedEvent{RunID: run.ID, Status: run.Status, Source: run.Source, VideoCount: run.VideoCount,
		UnitsSpent: run.Spent.Units, SearchCalls: run.Spent.Searches, StatsCalls: run.Spent.Stats, FinishedAt: run.FinishedAt, Message: run.Message, Reused: run.Reused,
		Keywords: run.Niche.Keywords, ContentLanguage: run.Niche.Language, TopVideos: []eventVideo{},
		IdeasAdded: run.Steps[stepIndex(StepIdeas)].Counts["ideas"], DerivedMetrics: p.cfg.Derived()}
	if run.Status != Succeeded || run.Set == nil || !p.cfg.DerivedMetrics {
		return e, nil
	}
	vs, err := p.repo.ChannelResearchVideos(ctx, run.ChannelID, *run.Set)
	if err != nil && !errors.Is(err, ErrStale) {
		return completedEvent{}, err
	}
	for _, v := range vs[:min(len(vs), completedTopVideos)] {
		e.TopVideos = append(e.TopVideos, eventVideo{Title: v.Title, URL: v.URL, Views: v.Views, OutlierScore: v.OutlierScore, ContentType: v.ContentType})
	}
	pats := run.Patterns
	e.Patterns = &pats
	return e, nil
}

// stepFailed decides what a step's failure means: the quota spent (wait for the next day), throttling or
// another passing failure (try again), or a failure that trying again will not mend (the run fails).
func (p *Pipeline) stepFailed(ctx context.Context, m queue.Message, run *Run, k int, units quota.Cost, cause error, now time.Time) error {
	switch {
	case errors.Is(cause, ErrQuotaExceeded):
		b := BucketOf(cause)
		if err := p.repo.MarkQuotaExhausted(ctx, p.clock.Day(now), b); err != nil {
			return err
		}
		return p.wait(ctx, run, k, units, fmt.Sprintf("the YouTube Data API answered quotaExceeded for its %s", b.Describe()), now)
	case errors.Is(cause, ErrBudget):
		return p.wait(ctx, run, k, units, fmt.Sprintf("the day's budget (%s) has no room for the %s this run needs",
			p.limitOf(run), p.cfg.Plan.CeilingFrom(run.Steps[k].Name, run.Discovery)), now)
	case errors.Is(cause, ErrStale):
		return cause
	case errors.Is(cause, ErrSourceFailed) || apperr.CodeOf(cause) == apperr.Validation || m.Attempt >= p.cfg.MaxAttempts:
		// Another try will not mend it, or this was the queue's last try before dead-lettering the message.
		p.log.Error("research: run failed", "runId", run.ID, "step", run.Steps[k].Name, "attempt", m.Attempt, "error", cause.Error())
		return p.fail(ctx, run, k, units, fmt.Sprintf("%s failed: %v", run.Steps[k].Name, cause), now)
	case errors.Is(cause, ErrThrottled):
		p.keepUnits(ctx, run, k, units, now)
		return queue.RetryAfter(time.Minute, cause)
	default:
		p.keepUnits(ctx, run, k, units, now)
		return cause
	}
}

// keepUnits records the units a failed attempt spent, so the run reports what it cost; the attempt's claim
// stays (its redelivery continues). Best effort: the error that brought us here is what the queue sees.
func (p *Pipeline) keepUnits(ctx context.Context, run *Run, k int, units quota.Cost, now time.Time) {
	if units.IsZero() {
		return
	}
	run.Steps[k].spend(units)
	run.Spent = run.Spent.Add(units)
	run.Reserved.Spent = run.Reserved.Spent.Add(units)
	run.UpdatedAt = now
	if err := p.repo.SaveResearchRun(ctx, run, nil); err != nil {
		p.log.Warn("research: could not record the quota of a failed attempt", "runId", run.ID, "spent", units, "error", err.Error())
	}
}

// wait parks the run until the next budget day: the scheduler queues its step again then.
func (p *Pipeline) wait(ctx context.Context, run *Run, k int, units quota.Cost, why string, now time.Time) error {
	until := p.clock.NextDay(now)
	return p.settle(ctx, run, k, units, now, func(st *State) {
		run.Status, run.WaitingUntil = WaitingQuota, &until
		run.Message = why + "; the run waits for the next quota day (midnight Pacific time) and goes on by itself"
		run.Steps[k].Status = StepPending
		if st.ActiveRun == run.ID {
			st.LeaseUntil, st.DueAt = until.Add(p.cfg.Lease), until
		}
	})
}

// fail ends the run as failed; the scheduler tries the channel again after RetryFailedAfter.
func (p *Pipeline) fail(ctx context.Context, run *Run, k int, units quota.Cost, why string, now time.Time) error {
	err := p.settle(ctx, run, k, units, now, func(st *State) {
		run.Status, run.Message, run.FinishedAt = Failed, why, &now
		run.Patterns = Patterns{} // its event carries none, and no state will (decision 49)
		run.Steps[k].Status = StepFailed
		if st.ActiveRun == run.ID {
			st.ActiveRun, st.LeaseUntil, st.DueAt = "", time.Time{}, now.Add(p.cfg.RetryFailedAfter)
		}
	})
	if err == nil && run.Set != nil {
		if err := p.repo.DeleteChannelResearchVideos(ctx, run.ChannelID, run.ID); err != nil {
			p.log.Warn("research: could not delete a failed run's videos", "runId", run.ID, "error", err.Error())
		}
	}
	return err
}

// settle stores a run that stops (waits or fails) after spending units in step k: change applies the new
// state to the run and the channel. The units the run reserved and did not spend go back to the budget.
// The channel's state is written first: should the second write not happen, the message comes again and
// the step runs again, which leads here again.
func (p *Pipeline) settle(ctx context.Context, run *Run, k int, units quota.Cost, now time.Time, change func(*State)) error {
	st, err := p.repo.ResearchState(ctx, run.ChannelID)
	if err != nil {
		return err
	}
	run.Steps[k].spend(units)
	run.Spent = run.Spent.Add(units)
	run.Claim, run.UpdatedAt = Claim{}, now
	var c Commit
	if !run.Reserved.Cost.IsZero() {
		c.Budget = giveBack(run.Reserved, units)
		run.Reserved = Reservation{}
	}
	settleCharge(run, &c)
	wasActive := st.ActiveRun
	change(&st)
	if st.ActiveRun != wasActive || !st.DueAt.IsZero() {
		if err := p.repo.SaveResearchState(ctx, run.ChannelID, st); err != nil {
			return err
		}
	}
	if err := p.repo.SaveResearchRun(ctx, run, &c); err != nil {
		return err
	}
	return p.flush(ctx, run)
}

// complete makes the run's research the channel's: patterns and videos replace the old ones in one write.
func (p *Pipeline) complete(ctx context.Context, run *Run, now time.Time) error {
	k := stepIndex(StepComplete)
	st, err := p.repo.ResearchState(ctx, run.ChannelID)
	if err != nil {
		return err
	}
	if st.ActiveRun != run.ID {
		return p.fail(ctx, run, k, quota.Cost{}, "superseded: a newer run took the channel over after this one's lease ended", now)
	}
	if st.Set != nil && st.Set.RunID != run.ID {
		run.Replaced = st.Set.RunID
	}
	st.Patterns, st.Set = run.Patterns, run.Set
	st.ActiveRun, st.LeaseUntil = "", time.Time{}
	st.DueAt, st.ResearchedAt, st.LastRunID = refreshAt(run.ChannelID, now.Add(p.cfg.Interval)), now, run.ID
	run.Status, run.FinishedAt, run.Next, run.Claim, run.UpdatedAt, run.Message = Succeeded, &now, len(run.Steps), Claim{}, now, ""
	run.Steps[k] = Step{Name: StepComplete, Status: StepSucceeded, FinishedAt: &now, Counts: map[string]int{
		"videos": run.VideoCount, "ideas": run.Steps[stepIndex(StepIdeas)].Counts["ideas"]}}
	if err := p.repo.SaveResearchRunAndState(ctx, run, st); err != nil {
		return err
	}
	p.log.Info("research: run succeeded", "runId", run.ID, "channelId", run.ChannelID, "videos", run.VideoCount,
		"spent", run.Spent, "discovery", run.Discovery, "source", run.Source, "reused", run.Reused)
	return p.followUp(ctx, run, "", now)
}

// meter adds up what a step spends.
type meter struct{ c quota.Cost }

func (m *meter) add(c quota.Cost) { m.c = m.c.Add(c) }

// giveBack is the budget change that returns what a reservation did not spend (beyond also, spent by the
// attempt that stops); nil when nothing goes back.
func giveBack(r Reservation, also quota.Cost) *BudgetChange {
	back := r.Cost.Sub(r.Spent).Sub(also).AtLeast0()
	if back.IsZero() {
		return nil
	}
	return &BudgetChange{Day: r.Day, Delta: back.Times(-1)}
}

// stepResult is what a step did: its counts, what it commits, and the later steps it makes unnecessary.
type stepResult struct {
	counts map[string]int
	commit Commit
	skip   []string
}

type stepFunc func(ctx context.Context, run *Run, m *meter, now time.Time) (stepResult, error)

func (p *Pipeline) step(name string) stepFunc {
	switch name {
	case StepDiscover:
		return p.discover
	case StepExpand:
		return p.expand
	case StepEnrich:
		return p.enrich
	case StepScore:
		return p.score
	case StepPatterns:
		return p.analysePatterns
	default:
		return p.writeIdeas
	}
}

// settleCharge settles an on-demand run's charge against its account's share once the run calls the source
// no more (its fetching steps are done, or it stops): what it did not spend of the ceiling counted when it
// started goes back, in the write that clears the charge, so the share measures real spend (decision 46). A
// run that waits for the next quota day spends what it still needs outside the share.
func settleCharge(run *Run, c *Commit) {
	if run.Charged.Cost.IsZero() {
		return
	}
	if back := run.Charged.Cost.Sub(run.Spent).AtLeast0(); !back.IsZero() {
		c.Account = &AccountChange{Account: run.Charged.Account, Day: run.Charged.Day, Cost: back}
	}
	run.Charged = AccountCharge{}
}

// reserve holds what the run's steps from `step` on may spend, before its first call of the day, so
// concurrent runs never spend past the budget together. ErrBudget when a bucket of the day has no room.
func (p *Pipeline) reserve(ctx context.Context, run *Run, step string, now time.Time) error {
	if !p.source.Metered() || !run.Reserved.Cost.IsZero() {
		return nil
	}
	day, cost := p.clock.Day(now), p.cfg.Plan.CeilingFrom(step, run.Discovery)
	run.Reserved = Reservation{Day: day, Cost: cost}
	err := p.repo.SaveResearchRun(ctx, run, &Commit{Budget: &BudgetChange{Day: day, Delta: cost, Limit: p.limitOf(run)}})
	if err != nil {
		run.Reserved = Reservation{}
	}
	return err
}

// limitOf is the part of the day's budget the run may reserve: a scheduled refresh all of it, an
// on-demand run what the scheduled refreshes' reserve leaves (decision 46).
func (p *Pipeline) limitOf(run *Run) quota.Cost {
	if run.Trigger != TriggerSchedule {
		return p.cfg.OnDemand()
	}
	return p.cfg.Daily
}

// discoverOutput is what discover stores: the seed videos the searches found and the channels to expand,
// the most hits first.
type discoverOutput struct {
	Seeds    []SearchHit `json:"seeds"`
	Channels []string    `json:"channels"`
}

func (p *Pipeline) discover(ctx context.Context, run *Run, m *meter, now time.Time) (stepResult, error) {
	run.Source = p.source.Label()
	run.NicheKey = run.Niche.Key(run.Source)
	shared, ok, err := p.repo.NicheResearch(ctx, run.NicheKey)
	if err != nil {
		return stepResult{}, err
	}
	if ok && now.Sub(shared.Set.FetchedAt) < p.cfg.Freshness {
		run.Reused = true
		return stepResult{counts: map[string]int{"reusedVideos": shared.Set.Videos}, skip: []string{StepExpand, StepEnrich}}, nil
	}
	run.Reused = false
	known, ok, err := p.repo.NicheChannels(ctx, run.NicheKey)
	if err != nil {
		return stepResult{}, err
	}
	run.Discovery = discoveryOf(known, ok, now)
	if run.Discovery == DiscoverKnown && now.Sub(known.DiscoveredAt) >= RediscoverAfter {
		// One search for channels new to the niche, when the day's searches have room for it; else the
		// known channels alone (they are forgotten KnownChannelsFor after their discovery, and the next
		// run discovers the niche anew).
		run.Discovery = DiscoverMore
		if err := p.reserve(ctx, run, StepDiscover, now); errors.Is(err, ErrBudget) {
			run.Discovery = DiscoverKnown
		} else if err != nil {
			return stepResult{}, err
		}
	}
	if err := p.reserve(ctx, run, StepDiscover, now); err != nil {
		return stepResult{}, err
	}
	var out discoverOutput
	seen := map[string]bool{}
	hits := map[string]int{}
	first := map[string]int{}
	orders := p.cfg.Plan.orders(run.Discovery)
	for i, order := range orders {
		terms := run.Niche.Keywords
		if order == OrderRelevance && run.Niche.Focus != "" {
			terms = []string{run.Niche.Focus}
		}
		page, err := p.source.Search(ctx, SearchQuery{Niche: run.Niche, Terms: terms, Language: LanguageCode(run.Niche.Language),
			PublishedAfter: now.Add(-p.cfg.Window), Order: order, MaxResults: MaxResults})
		m.add(page.Cost.Add(CostOf(err)))
		if err != nil {
			return stepResult{}, fmt.Errorf("search %d: %w", i+1, err)
		}
		for _, h := range page.Hits {
			if _, ok := first[h.ChannelID]; !ok {
				first[h.ChannelID] = len(first)
			}
			hits[h.ChannelID]++
			if !seen[h.VideoID] {
				seen[h.VideoID] = true
				out.Seeds = append(out.Seeds, h)
			}
		}
	}
	found := slices.Collect(maps.Keys(first))
	slices.SortFunc(found, func(a, b string) int { return cmp.Or(cmp.Compare(hits[b], hits[a]), cmp.Compare(first[a], first[b])) })
	out.Channels = channelsOf(run.Discovery, known.IDs, found, p.cfg.Plan.Channels)
	rec, err := json.Marshal(out)
	if err != nil {
		return stepResult{}, err
	}
	c := Commit{Step: StepDiscover, Work: []json.RawMessage{rec}}
	if run.Discovery != DiscoverKnown {
		c.Channels = &KnownChannels{Key: run.NicheKey, IDs: out.Channels, DiscoveredAt: now}
	}
	return stepResult{
		counts: map[string]int{"searches": len(orders), "seedVideos": len(out.Seeds), "channels": len(out.Channels)},
		commit: c,
	}, nil
}

// channelsOf returns the channels a run expands, at most n: those the searches found (the most hits
// first) for a new niche; the known ones for a refresh; for a rediscovery, the known ones with up to a
// quarter of the places given to channels the search found that were not known.
func channelsOf(d Discovery, known, found []string, n int) []string {
	switch d {
	case DiscoverNew:
		return found[:min(len(found), n)]
	case DiscoverKnown:
		return known[:min(len(known), n)]
	}
	var fresh []string
	for _, id := range found {
		if !slices.Contains(known, id) && len(fresh) < max(n/4, 1) {
			fresh = append(fresh, id)
		}
	}
	out := slices.Clone(known[:min(len(known), n-len(fresh))])
	return append(out, fresh...)
}

// expandedChannel is what expand stores per channel: its most recent uploads, newest first.
type expandedChannel struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Uploads []string `json:"uploads"`
}

func (p *Pipeline) expand(ctx context.Context, run *Run, m *meter, now time.Time) (stepResult, error) {
	var disc discoverOutput
	if err := readWork(ctx, p, run, StepDiscover, func(d discoverOutput) { disc = d }); err != nil {
		return stepResult{}, err
	}
	if err := p.reserve(ctx, run, StepExpand, now); err != nil {
		return stepResult{}, err
	}
	chs, err := p.source.Channels(ctx, ChannelsQuery{Niche: run.Niche, IDs: disc.Channels})
	m.add(chs.Cost.Add(CostOf(err)))
	if err != nil {
		return stepResult{}, fmt.Errorf("channels: %w", err)
	}
	byID := map[string]Channel{}
	for _, c := range chs.Channels {
		byID[c.ID] = c
	}
	var work []json.RawMessage
	uploads := 0
	for _, id := range disc.Channels {
		c, ok := byID[id]
		if !ok || c.UploadsPlaylistID == "" {
			continue
		}
		ec := expandedChannel{ID: c.ID, Title: c.Title}
		token := ""
		for len(ec.Uploads) < p.cfg.Plan.UploadsPerChannel {
			page, err := p.source.Uploads(ctx, UploadsQuery{Niche: run.Niche, PlaylistID: c.UploadsPlaylistID,
				MaxResults: min(MaxResults, p.cfg.Plan.UploadsPerChannel-len(ec.Uploads)), PageToken: token})
			m.add(page.Cost.Add(CostOf(err)))
			if err != nil {
				return stepResult{}, fmt.Errorf("uploads of %s: %w", c.ID, err)
			}
			ec.Uploads = append(ec.Uploads, page.VideoIDs...)
			if token = page.NextPageToken; token == "" || len(page.VideoIDs) == 0 {
				break
			}
		}
		ec.Uploads = ec.Uploads[:min(len(ec.Uploads), p.cfg.Plan.UploadsPerChannel)]
		uploads += len(ec.Uploads)
		rec, err := json.Marshal(ec)
		if err != nil {
			return stepResult{}, err
		}
		work = append(work, rec)
	}
	return stepResult{
		counts: map[string]int{"channels": len(work), "uploads": uploads},
		commit: Commit{Step: StepExpand, Work: work},
	}, nil
}

func (p *Pipeline) enrich(ctx context.Context, run *Run, m *meter, now time.Time) (stepResult, error) {
	var disc discoverOutput
	if err := readWork(ctx, p, run, StepDiscover, func(d discoverOutput) { disc = d }); err != nil {
		return stepResult{}, err
	}
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if err := readWork(ctx, p, run, StepExpand, func(ec expandedChannel) {
		for _, id := range ec.Uploads {
			add(id)
		}
	}); err != nil {
		return stepResult{}, err
	}
	for _, s := range disc.Seeds {
		add(s.VideoID)
	}
	kept, err := p.keptVideos(ctx, run)
	if err != nil {
		return stepResult{}, err
	}
	for _, v := range kept {
		add(v.VideoID) // the videos kept last time: their statistics are read again too
	}
	if err := p.reserve(ctx, run, StepEnrich, now); err != nil {
		return stepResult{}, err
	}
	// A kept video whose snippet was read recently needs only its statistics (videos:batchGetStats, its
	// own bucket); the others are read whole (videos.list), so no snippet is kept unrefreshed for long.
	byID := make(map[string]Video, len(kept))
	for _, v := range kept {
		if now.Sub(v.SnippetAt) < SnippetFreshFor {
			byID[v.VideoID] = v
		}
	}
	var whole, statsOnly []string
	for _, id := range ids {
		if _, ok := byID[id]; ok {
			statsOnly = append(statsOnly, id)
		} else {
			whole = append(whole, id)
		}
	}
	page, err := p.source.Videos(ctx, VideosQuery{Niche: run.Niche, IDs: whole})
	m.add(page.Cost.Add(CostOf(err)))
	if err != nil {
		return stepResult{}, fmt.Errorf("videos: %w", err)
	}
	fetched := page.Videos
	for i := range fetched {
		fetched[i].SnippetAt = now
	}
	if len(statsOnly) > 0 {
		stats, err := p.source.VideoStats(ctx, VideosQuery{Niche: run.Niche, IDs: statsOnly})
		m.add(stats.Cost.Add(CostOf(err)))
		if err != nil {
			return stepResult{}, fmt.Errorf("video stats: %w", err)
		}
		for _, st := range stats.Stats {
			if v, ok := byID[st.ID]; ok {
				fetched = append(fetched, refreshed(v, st))
			}
		}
	}
	work := make([]json.RawMessage, 0, len(fetched))
	long := 0
	for _, v := range fetched {
		v.Description = truncate(v.Description, DescriptionChars)
		v.Tags = v.Tags[:min(len(v.Tags), MaxTags)]
		rec, err := json.Marshal(v)
		if err != nil {
			return stepResult{}, err
		}
		work = append(work, rec)
		if v.DurationSeconds > ShortMaxSeconds {
			long++
		}
	}
	return stepResult{
		counts: map[string]int{"videos": len(work), "long": long, "short": len(work) - long, "statsOnly": len(statsOnly)},
		commit: Commit{Step: StepEnrich, Work: work},
	}, nil
}

// keptVideos returns the videos the channel's current research keeps, when that research is of the run's
// niche (from its source): what a refresh knows already. None when there are none, or they were replaced
// or deleted meanwhile.
func (p *Pipeline) keptVideos(ctx context.Context, run *Run) ([]Video, error) {
	st, err := p.repo.ResearchState(ctx, run.ChannelID)
	if err != nil || st.Set == nil || st.LastRunID == "" {
		return nil, err
	}
	last, err := p.repo.ResearchRun(ctx, run.ChannelID, st.LastRunID)
	if apperr.CodeOf(err) == apperr.NotFound || (err == nil && last.NicheKey != run.NicheKey) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	vs, err := p.repo.ChannelResearchVideos(ctx, run.ChannelID, *st.Set)
	if errors.Is(err, ErrStale) {
		return nil, nil
	}
	return vs, err
}

// oldestSnippet is when the oldest snippet of vs was read, if before now.
func oldestSnippet(vs []Video, now time.Time) time.Time {
	oldest := now
	for _, v := range vs {
		if !v.SnippetAt.IsZero() && v.SnippetAt.Before(oldest) {
			oldest = v.SnippetAt
		}
	}
	return oldest
}

// refreshed is a kept video with the statistics just read.
func refreshed(v Video, st VideoStat) SourceVideo {
	out := SourceVideo{ID: v.VideoID, ChannelID: v.ChannelID, ChannelTitle: v.ChannelTitle, Title: v.Title,
		Description: v.Description, Tags: v.Tags, PublishedAt: v.PublishedAt, DurationSeconds: v.DurationSeconds,
		Views: st.Views, Likes: st.Likes, Comments: st.Comments, ThumbnailURL: v.ThumbnailURL, URL: v.URL, SnippetAt: v.SnippetAt}
	if !st.PublishedAt.IsZero() {
		out.PublishedAt = st.PublishedAt
	}
	if st.DurationSeconds > 0 {
		out.DurationSeconds = st.DurationSeconds
	}
	return out
}

func (p *Pipeline) score(ctx context.Context, run *Run, _ *meter, now time.Time) (stepResult, error) {
	var (
		vs []Video
		c  Commit
	)
	if run.Reused {
		shared, ok, err := p.repo.NicheResearch(ctx, run.NicheKey)
		if err != nil {
			return stepResult{}, err
		}
		if !ok {
			return stepResult{}, apperr.Invalid("", "the niche's shared research expired while this run waited; start a new run")
		}
		if vs, err = p.repo.NicheResearchVideos(ctx, shared); err != nil {
			return stepResult{}, err
		}
		run.Set = &SetRef{RunID: run.ID, Videos: len(vs), Source: shared.Set.Source, FetchedAt: shared.Set.FetchedAt, DataAt: shared.Set.DataAt}
		run.Source = shared.Set.Source
		c.VideosExpire = DataExpiry(shared.Set.DataFetched()) // reused videos are as old as their fetch
	} else {
		var fetched []SourceVideo
		if err := readWork(ctx, p, run, StepEnrich, func(v SourceVideo) { fetched = append(fetched, v) }); err != nil {
			return stepResult{}, err
		}
		keep := SortOutlier
		if !p.cfg.DerivedMetrics {
			keep = SortViews // which videos are kept is not ranked by a score not accepted (decision 48)
		}
		vs = Score(fetched, run.Source, now.Add(-p.cfg.Window), now, MaxVideos, keep)
		run.Set = &SetRef{RunID: run.ID, Videos: len(vs), Source: run.Source, FetchedAt: now, DataAt: oldestSnippet(vs, now)}
		c.Niche = &NicheResearch{Key: run.NicheKey, Set: *run.Set, ChannelID: run.ChannelID}
		// The set's data is as old as its oldest snippet (a kept video whose statistics alone were read
		// again), and the niche's copy expires no later.
		c.VideosExpire = DataExpiry(run.Set.DataFetched())
		c.NicheExpires = now.Add(p.cfg.Freshness + 24*time.Hour)
		if c.NicheExpires.After(c.VideosExpire) {
			c.NicheExpires = c.VideosExpire
		}
	}
	run.VideoCount = len(vs)
	c.Videos = vs
	set := run.Set
	c.Finish = func(c *Commit) { set.Chunks = c.Chunks }
	channels := map[string]bool{}
	long := 0
	for _, v := range vs {
		channels[v.ChannelID] = true
		if v.ContentType == Long {
			long++
		}
	}
	res := stepResult{
		counts: map[string]int{"videos": len(vs), "long": long, "short": len(vs) - long, "channels": len(channels)},
		commit: c,
	}
	if !p.cfg.DerivedMetrics {
		// Patterns are written from the strongest outliers and their scores, and each idea is inspired by
		// one: none is written until derived metrics are accepted (decision 48).
		res.skip = []string{StepPatterns, StepIdeas}
	}
	return res, nil
}

func (p *Pipeline) analysePatterns(ctx context.Context, run *Run, _ *meter, _ time.Time) (stepResult, error) {
	vs, prof, err := p.runVideos(ctx, run)
	if err != nil {
		return stepResult{}, err
	}
	in := PatternInput{Niche: run.Niche, Profile: prof, Videos: vs}
	pats, usage, err := writeWithin(ctx, p, run, "pattern", p.patterns.WritePatterns, Statistics{}.WritePatterns, in)
	if err != nil {
		return stepResult{}, fmt.Errorf("analyse patterns: %w", err)
	}
	// Patterns are written from other creators' text: stored only as GuardPatterns leaves them (issue 19).
	pats = GuardPatterns(pats, vs)
	// Stored with the videos each kind was written from (issue 19: shown as data, with their sources): the
	// writer's, when it names them, else the strongest of those the kind learns from; none for a kind
	// whose text the guard left empty.
	if pats.Sources != nil {
		pats.Sources = SourcesFrom(pats, pats.Sources.Of)
	} else {
		pats.Sources = SourcesOf(pats, vs)
	}
	run.Patterns = pats
	written := 0
	for _, t := range []string{pats.Titles, pats.Thumbnails, pats.LongScripts, pats.ShortScripts, pats.Descriptions, pats.Ideas} {
		written += b2i(strings.TrimSpace(t) != "")
	}
	return stepResult{counts: map[string]int{"videos": len(vs), "patterns": written, "modelCalls": usage.ModelCalls,
		"inputTokens": usage.InputTokens, "outputTokens": usage.OutputTokens}}, nil
}

// writeWithin writes with write within WriterDeadline. A writer that fails because it ran past it (not
// because the worker is stopping) is logged and the step writes with statistics instead, so a slow model
// costs the run its model texts, not the quota its videos spent (a failed run's videos are deleted).
func writeWithin[In, Out any](ctx context.Context, p *Pipeline, run *Run, writer string,
	write, statistics func(context.Context, In) (Out, Usage, error), in In) (Out, Usage, error) {
	wctx, cancel := context.WithTimeout(ctx, p.cfg.WriterDeadline)
	out, usage, err := write(wctx, in)
	cancel()
	if err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
		p.log.Warn("research: the "+writer+" writer did not answer in time; the statistics write instead",
			"runId", run.ID, "deadline", p.cfg.WriterDeadline.String(), "error", err.Error())
		out, _, err = statistics(ctx, in)
	}
	return out, usage, err
}

// ideaOutliers is how many of the strongest outliers the idea writer chooses from.
const ideaOutliers = 40

func (p *Pipeline) writeIdeas(ctx context.Context, run *Run, _ *meter, now time.Time) (stepResult, error) {
	vs, prof, err := p.runVideos(ctx, run)
	if err != nil {
		return stepResult{}, err
	}
	taken, err := p.repo.TakenTitles(ctx, run.ChannelID)
	if err != nil {
		return stepResult{}, err
	}
	SortVideos(vs, SortOutlier)
	in := IdeaInput{Niche: run.Niche, Profile: prof, Patterns: run.Patterns,
		Outliers: vs[:min(len(vs), ideaOutliers)], Count: p.cfg.IdeasPerRun, Taken: taken}
	drafts, usage, err := writeWithin(ctx, p, run, "idea", p.ideas.WriteIdeas, Statistics{}.WriteIdeas, in)
	if err != nil {
		return stepResult{}, fmt.Errorf("write ideas: %w", err)
	}
	var ideas []videos.Idea
	for _, d := range drafts[:min(len(drafts), p.cfg.IdeasPerRun)] {
		if idea, ok := ideaOf(d, p.repo.NewID(), now); ok {
			ideas = append(ideas, idea)
		}
	}
	counts := map[string]int{"drafted": len(drafts), "ideas": 0, "modelCalls": usage.ModelCalls,
		"inputTokens": usage.InputTokens, "outputTokens": usage.OutputTokens}
	c := Commit{Ideas: ideas, MaxBacklog: videos.MaxBacklog}
	c.Finish = func(c *Commit) { counts["ideas"] = len(c.Added) }
	return stepResult{counts: counts, commit: c}, nil
}

// ideaOf turns a draft into a backlog idea, or refuses one the API could not show: a title outside
// 1..200 characters, an unknown content type, a formula over 200 characters.
func ideaOf(d IdeaDraft, id string, now time.Time) (videos.Idea, bool) {
	title := strings.TrimSpace(d.Title)
	n := len([]rune(title))
	if n < 1 || n > 200 || !validContentType(d.ContentType) || len([]rune(d.FormulaType)) > 200 {
		return videos.Idea{}, false
	}
	idea := videos.Idea{ID: id, Title: title, ContentType: d.ContentType, FormulaType: cmp.Or(d.FormulaType, FormulaOf(d.Inspiration.Title)),
		CreatedAt: now}
	if d.Inspiration.VideoID != "" {
		by := truncate(d.Inspiration.Title, 200) + " (" + d.Inspiration.URL + ")"
		views := float64(d.Inspiration.Views)
		idea.InspiredBy, idea.ViewCount = &by, &views
	}
	return idea, true
}

func validContentType(t string) bool {
	switch t {
	case "Long", "Short", "Live Stream", "Podcast", "Community Post", "Film":
		return true
	}
	return false
}

// runVideos reads the run's scored videos and the channel's profile.
func (p *Pipeline) runVideos(ctx context.Context, run *Run) ([]Video, profile.NicheProfile, error) {
	if run.Set == nil {
		return nil, profile.NicheProfile{}, errors.New("research: the run has no scored videos")
	}
	vs, err := p.repo.ChannelResearchVideos(ctx, run.ChannelID, *run.Set)
	if err != nil {
		return nil, profile.NicheProfile{}, err
	}
	prof, err := p.repo.GetProfile(ctx, run.ChannelID)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return nil, profile.NicheProfile{}, err
	}
	prof.ContentLanguage = cmp.Or(prof.ContentLanguage, run.Niche.Language)
	return vs, prof, nil
}

// readWork passes each record a step of the run committed, decoded, to each.
func readWork[T any](ctx context.Context, p *Pipeline, run *Run, step string, each func(T)) error {
	recs, err := p.repo.ResearchWork(ctx, run.ChannelID, run.ID, step)
	if err != nil {
		return err
	}
	for _, r := range recs {
		var v T
		if err := json.Unmarshal(r, &v); err != nil {
			return fmt.Errorf("research: read %s output: %w", step, err)
		}
		each(v)
	}
	return nil
}
