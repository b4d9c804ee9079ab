package research

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/videos"
)

var (
	// ErrStale: what was read changed before the write (a concurrent writer got in first).
	ErrStale = errors.New("research: changed concurrently")
	// ErrBudget: the day's unit budget cannot take the reservation (or the API's quota is spent today).
	ErrBudget = errors.New("research: daily unit budget reached")
	// ErrAccountShare: the account's daily share of the unit budget cannot take the units (decision 46).
	ErrAccountShare = errors.New("research: the account's daily share of the unit budget reached")
)

// Repository is what research needs from storage (*store.Store). Every write is one transaction.
type Repository interface {
	NewID() string
	GetProfile(ctx context.Context, channelID string) (profile.NicheProfile, error)

	// ResearchState returns the channel's state; the zero State (Version 0) before any.
	ResearchState(ctx context.Context, channelID string) (State, error)
	// SaveResearchState stores st if still at st.Version (else ErrStale).
	SaveResearchState(ctx context.Context, channelID string, st State) error
	// StartResearchRun stores a new run and st (naming it) if st is still at st.Version (else ErrStale);
	// superseded, if given, is an earlier run stored (failed) in the same write.
	StartResearchRun(ctx context.Context, st State, run Run, superseded *Run) error
	// ResearchRun returns a run of the channel (NOT_FOUND if none).
	ResearchRun(ctx context.Context, channelID, runID string) (Run, error)
	// ResearchRuns returns every run of the channel.
	ResearchRuns(ctx context.Context, channelID string) ([]Run, error)
	// SaveResearchRun stores run if still at run.Version (else ErrStale) with c, and updates run.Version.
	SaveResearchRun(ctx context.Context, run *Run, c *Commit) error
	// SaveResearchRunAndState stores run and st, each if still at its version (else ErrStale).
	SaveResearchRunAndState(ctx context.Context, run *Run, st State) error
	// ResearchWork returns the records a step of a run committed (Commit.Work), in order.
	ResearchWork(ctx context.Context, channelID, runID, step string) ([]json.RawMessage, error)
	// ChannelResearchVideos returns a set of the channel's videos (ErrStale if deleted since).
	ChannelResearchVideos(ctx context.Context, channelID string, set SetRef) ([]Video, error)
	// ResearchSetRuns returns the runs whose video sets the channel has stored.
	ResearchSetRuns(ctx context.Context, channelID string) ([]string, error)
	// DeleteChannelResearchVideos deletes the set of a run, once no state names it.
	DeleteChannelResearchVideos(ctx context.Context, channelID, runID string) error
	// NicheResearch returns the niche's shared research, if some is stored and unexpired.
	NicheResearch(ctx context.Context, key string) (NicheResearch, bool, error)
	// NicheResearchVideos returns its videos (ErrStale if they expired since).
	NicheResearchVideos(ctx context.Context, n NicheResearch) ([]Video, error)
	// TakenTitles returns the titles of the channel's backlog and pipeline.
	TakenTitles(ctx context.Context, channelID string) ([]string, error)
	// ChannelAccount returns the account that owns the channel ("" when the channel has no record).
	ChannelAccount(ctx context.Context, channelID string) (string, error)
	// AddAccountUnits adds delta to the units an account's on-demand runs reserved on a budget day, unless
	// that would pass limit: then it returns false.
	AddAccountUnits(ctx context.Context, accountID, day string, delta, limit int) (bool, error)
	// SpendUnits counts units spent outside research runs (a transcript's captions calls) in a budget
	// day's units, within dayLimit and unless the day's quota ran out (else ErrBudget), and in the
	// account's share, within share (else ErrAccountShare): both or neither, in one write.
	SpendUnits(ctx context.Context, day string, units, dayLimit int, accountID string, share int) error
	// BudgetUsed returns the units reserved on a budget day and whether the API's quota ran out that day.
	BudgetUsed(ctx context.Context, day string) (int, bool, error)
	// MarkQuotaExhausted makes every later reservation of the day fail.
	MarkQuotaExhausted(ctx context.Context, day string) error
	// DueResearch returns the scheduler's entries due by `until`, oldest first, at most limit.
	DueResearch(ctx context.Context, until time.Time, limit int) ([]Due, error)
	// DeleteResearchDue removes an entry of the scheduler's index.
	DeleteResearchDue(ctx context.Context, d Due) error
}

// Commit is what a step stores with its run, in the same transaction.
type Commit struct {
	// Step and Work: the step's output records, read back by later steps (ResearchWork).
	Step string
	Work []json.RawMessage
	// Videos, when not nil, are the run's scored videos, stored as the run's set (the channel's research
	// once the run completes) until VideosExpire (DataExpiry of their fetch; required with Videos). Chunks
	// is set to the number of items they took.
	Videos       []Video
	VideosExpire time.Time
	Chunks       int
	// Niche, with Videos, also stores them as the niche's shared research, until NicheExpires (no later
	// than VideosExpire).
	Niche        *NicheResearch
	NicheExpires time.Time
	// Ideas are added to the backlog, except those whose title the backlog or the pipeline holds already
	// and those past MaxBacklog; Added is set to the ones added.
	Ideas      []videos.Idea
	MaxBacklog int
	Added      []videos.Idea
	// Budget reserves (Delta > 0, within Limit and unless the day's quota ran out: else ErrBudget) or gives
	// back (Delta < 0) units of a budget day.
	Budget *BudgetChange
	// Account gives back units of an account's daily share (decision 46), in the same write.
	Account *AccountChange
	// Finish, if set, is called once Added and Chunks are known, before the run is written: the step
	// records them in the run.
	Finish func(*Commit)
}

// BudgetChange moves a budget day's reserved units.
type BudgetChange struct {
	Day   string
	Delta int
	Limit int
}

// AccountChange gives back Units of an account's share of a budget day.
type AccountChange struct {
	Account string
	Day     string
	Units   int
}

// Due is an entry of the scheduler's index: look at the channel at At. Kick entries are keyword changes
// asking for a run (decision 33).
type Due struct {
	ChannelID string
	At        time.Time
	Kick      bool
}
