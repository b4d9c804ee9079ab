package research

import (
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/quota"
)

// Status is the state of a research run (decision 30).
type Status string

const (
	Queued       Status = "queued"
	Running      Status = "running"
	WaitingQuota Status = "waiting_quota"
	Succeeded    Status = "succeeded"
	Failed       Status = "failed"
)

// Active says whether a run in this state still holds its channel (a second start answers 409).
func (s Status) Active() bool { return s == Queued || s == Running || s == WaitingQuota }

// StepStatus is the state of one step of a run.
type StepStatus string

const (
	StepPending   StepStatus = "pending"
	StepRunning   StepStatus = "running"
	StepSucceeded StepStatus = "succeeded"
	// StepSkipped: the step had nothing to do (the niche's research was fresh and is reused).
	StepSkipped StepStatus = "skipped"
	StepFailed  StepStatus = "failed"
)

// The steps of a run, in order; each is one message on the research queue.
const (
	StepDiscover = "discover"         // keyword searches find the niche's channels and seed videos
	StepExpand   = "expand"           // the channels' uploads playlists
	StepEnrich   = "enrich"           // statistics, duration, Long vs Short of every video found
	StepScore    = "score"            // outlier scores; the run's (at most 500) videos are stored
	StepPatterns = "analyse_patterns" // the six ResearchPatterns texts
	StepIdeas    = "write_ideas"      // backlog ideas inspired by the strongest outliers
	StepComplete = "complete"         // the channel's research is replaced by the run's, at once
)

// StepNames are the steps of every run, in order.
func StepNames() []string {
	return []string{StepDiscover, StepExpand, StepEnrich, StepScore, StepPatterns, StepIdeas, StepComplete}
}

func stepIndex(name string) int { return slices.Index(StepNames(), name) }

// Step is one step of a run as the API shows it: what it spent in each quota bucket.
type Step struct {
	Name             string         `json:"name"`
	Status           StepStatus     `json:"status"`
	Counts           map[string]int `json:"counts"`
	UnitsSpent       int            `json:"unitsSpent"`
	SearchCallsSpent int            `json:"searchCallsSpent"`
	StatsCallsSpent  int            `json:"statsCallsSpent"`
	FinishedAt       *time.Time     `json:"finishedAt"`
}

// Spent is what the step spent.
func (s Step) Spent() quota.Cost {
	return quota.Cost{Units: s.UnitsSpent, Searches: s.SearchCallsSpent, Stats: s.StatsCallsSpent}
}

func (s *Step) spend(c quota.Cost) {
	s.UnitsSpent, s.SearchCallsSpent, s.StatsCallsSpent = s.UnitsSpent+c.Units, s.SearchCallsSpent+c.Searches, s.StatsCallsSpent+c.Stats
}

// Triggers: what started a run.
const (
	TriggerAPI      = "api"      // POST /api/v1/research
	TriggerSchedule = "schedule" // the scheduler: the channel's research was older than the interval
	TriggerProfile  = "profile"  // the niche profile's keywords changed (decision 33)
)

// Run is one research run of a channel: its state, its steps and what the pipeline needs to resume it.
type Run struct {
	ID        string
	ChannelID string
	Status    Status
	Trigger   string
	Source    string // the source's label: "youtube" or "offline sample"
	Niche     Niche
	NicheKey  string // Niche.Key(Source), fixed by the discover step
	// Reused: the niche's research, fetched by another run less than the freshness window ago, was
	// reused instead of spending units again.
	Reused bool
	// Discovery is how the run found the niche's channels (fixed by the discover step; "" before).
	Discovery    Discovery
	Steps        []Step
	Spent        quota.Cost
	VideoCount   int
	WaitingUntil *time.Time // while waiting_quota: when the next budget day starts
	Message      string     // why the run waits or failed
	CreatedAt    time.Time
	UpdatedAt    time.Time
	FinishedAt   *time.Time

	// Next is the index of the next step to run (len(Steps) once complete).
	Next int
	// Claim names the queue message working on step Next, until when; another message for the same step
	// finds it taken and leaves it (a duplicate delivery never runs a step twice at once).
	Claim Claim
	// CommittedBy is the message that committed the last step: only its redelivery queues the next step
	// again (after a crash between the commit and the send), so duplicates cannot multiply.
	CommittedBy string
	// Emitted counts the events sent so far: one research.step per finished step, in order, then
	// research.completed. A redelivered message sends only the ones after it.
	Emitted int
	// Reserved is the budget this run has reserved and not yet settled.
	Reserved Reservation
	// Charged is what an on-demand run counted against its account's daily share when it started (the
	// plan's ceiling), until settled against what it spent (decision 46).
	Charged AccountCharge
	// Patterns are the analysed patterns, kept until complete makes them the channel's; Set names the
	// scored videos, likewise.
	Patterns Patterns
	Set      *SetRef
	// Replaced is the set this run's replaced when it completed, deleted right after.
	Replaced string
	// Version is the stored version (optimistic locking); the store sets it.
	Version int64
}

// Claim is a message's hold on a run's next step.
type Claim struct {
	MessageID string
	Until     time.Time
}

// Reservation is quota of one budget day held by a run: reserved before its first call of that day, spent
// as its calls go, the rest given back when the fetching steps end.
type Reservation struct {
	Day   string     // budget day, YYYY-MM-DD in the API's quota time zone
	Cost  quota.Cost // reserved
	Spent quota.Cost // spent of it so far
}

// AccountCharge is quota of an account's daily share held by an on-demand run.
type AccountCharge struct {
	Account string
	Day     string // budget day
	Cost    quota.Cost
}

// NewRun returns a queued run with every step pending.
func NewRun(id, channelID, trigger, source string, n Niche, now time.Time) Run {
	r := Run{ID: id, ChannelID: channelID, Status: Queued, Trigger: trigger, Source: source, Niche: n,
		CreatedAt: now, UpdatedAt: now}
	for _, name := range StepNames() {
		r.Steps = append(r.Steps, Step{Name: name, Status: StepPending, Counts: map[string]int{}})
	}
	return r
}

// RunView is a run as the API shows it (ResearchRun).
type RunView struct {
	ID              string     `json:"id"`
	Status          Status     `json:"status"`
	Source          string     `json:"source"`
	Trigger         string     `json:"trigger"`
	Keywords        []string   `json:"keywords"`
	ContentLanguage string     `json:"contentLanguage"`
	Reused          bool       `json:"reused"`
	Discovery       Discovery  `json:"discovery,omitempty"`
	Steps           []Step     `json:"steps"`
	UnitsSpent      int        `json:"unitsSpent"`
	SearchCalls     int        `json:"searchCallsSpent"`
	StatsCalls      int        `json:"statsCallsSpent"`
	VideoCount      int        `json:"videoCount"`
	WaitingUntil    *time.Time `json:"waitingUntil,omitempty"`
	Message         string     `json:"message,omitempty"`
	CreatedAt       time.Time  `json:"createdAt"`
	FinishedAt      *time.Time `json:"finishedAt"`
	// DerivedMetrics says why analyse_patterns and write_ideas are skipped while derived metrics are not
	// accepted (decision 48); Service.View sets it.
	DerivedMetrics *DerivedMetrics `json:"derivedMetrics,omitempty"`
}

// View returns the run as the API shows it.
func (r Run) View() RunView {
	return RunView{ID: r.ID, Status: r.Status, Source: r.Source, Trigger: r.Trigger, Keywords: r.Niche.Keywords,
		ContentLanguage: r.Niche.Language, Reused: r.Reused, Discovery: r.Discovery, Steps: r.Steps, UnitsSpent: r.Spent.Units,
		SearchCalls: r.Spent.Searches, StatsCalls: r.Spent.Stats, VideoCount: r.VideoCount, WaitingUntil: r.WaitingUntil, Message: r.Message, CreatedAt: r.CreatedAt,
		FinishedAt: r.FinishedAt}
}

// State is a channel's research: the patterns and videos of its last completed run, the run holding the
// channel now, and when the scheduler should look at the channel next. One item, replaced whole under
// optimistic locking, so a run's results become visible at once (decision 29's "never half-visible").
type State struct {
	Patterns Patterns
	// Set is the channel's current research videos (nil before the first completed run).
	Set *SetRef
	// ActiveRun holds the channel while it is queued, running or waiting for quota, until LeaseUntil:
	// past it, a new run may take over (the old one stopped making progress).
	ActiveRun  string
	LeaseUntil time.Time
	// DueAt is when the scheduler looks at the channel next (zero: never, e.g. no keywords).
	DueAt time.Time
	// StartedAt is when the last run was started: a keyword change asked for before it is answered by it.
	StartedAt time.Time
	// ResearchedAt is when the current research completed; LastRunID the run that produced it.
	ResearchedAt time.Time
	LastRunID    string
	// RunsDay and RunsOnDay count the on-demand runs started on a budget day (decision 46).
	RunsDay   string
	RunsOnDay int
	// OldRunsSwept: what builds before decision 49 left beside the state (patterns in ended runs, video
	// sets without an expiry that nothing names) was swept, once per channel.
	OldRunsSwept bool
	Version      int64
}

// Holds says whether a run holds the channel at now.
func (s State) Holds(now time.Time) bool { return s.ActiveRun != "" && now.Before(s.LeaseUntil) }

// SetRef names a stored set of research videos: the run that scored them and how they were stored.
type SetRef struct {
	RunID     string
	Chunks    int // stored items, so a reader can tell a set that is being deleted
	Videos    int
	Source    string
	FetchedAt time.Time
	// DataAt is when its oldest data was read (a kept video's snippet, decision 47), when before FetchedAt;
	// the set's data expires from it (decision 49).
	DataAt time.Time
}

// DataFetched is when the set's oldest data was fetched: what its expiry counts from.
func (s SetRef) DataFetched() time.Time {
	if !s.DataAt.IsZero() && s.DataAt.Before(s.FetchedAt) {
		return s.DataAt
	}
	return s.FetchedAt
}

// NicheResearch is a niche's shared research: the videos one run fetched and scored, reused by every
// channel of the niche while fresher than the freshness window.
type NicheResearch struct {
	Key       string
	Set       SetRef
	ChannelID string // the channel whose run fetched it
}
