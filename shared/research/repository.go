package research

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/videos"
)

var (
	// ErrStale: what was read changed before the write (a concurrent writer got in first).
	ErrStale = errors.New("research: changed concurrently")
	// ErrBudget: a bucket of the day's quota budget cannot take the reservation (or the API's quota of
	// that bucket is spent today).
	ErrBudget = errors.New("research: daily quota budget reached")
	// ErrAccountShare: the account's daily share of the quota budget cannot take the cost (decision 46).
	ErrAccountShare = errors.New("research: the account's daily share of the quota budget reached")
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
	// NicheChannels returns the niche's channels as its last discovery found them, if they are stored and
	// younger than KnownChannelsFor.
	NicheChannels(ctx context.Context, key string) (KnownChannels, bool, error)
	// TakenTitles returns the titles of the channel's backlog and pipeline.
	TakenTitles(ctx context.Context, channelID string) ([]string, error)
	// ChannelAccount returns the account that owns the channel ("" when the channel has no record).
	ChannelAccount(ctx context.Context, channelID string) (string, error)
	// AddAccountQuota adds delta to what an account's on-demand runs reserved on a budget day, unless a
	// bucket would pass limit's: then it returns false and adds nothing.
	AddAccountQuota(ctx context.Context, accountID, day string, delta, limit quota.Cost) (bool, error)
	// SpendQuota counts quota spent outside research runs (a transcript's captions calls) in a budget day,
	// within dayLimit and unless a bucket it spends from ran out that day (else ErrBudget), and in the
	// account's share, within share (else ErrAccountShare): all or nothing, in one write.
	SpendQuota(ctx context.Context, day string, cost, dayLimit quota.Cost, accountID string, share quota.Cost) error
	// QuotaUsed returns what was reserved on a budget day and the buckets the API said were spent.
	QuotaUsed(ctx context.Context, day string) (quota.Usage, error)
	// MarkQuotaExhausted makes every later reservation of the day from bucket b fail.
	MarkQuotaExhausted(ctx context.Context, day string, b quota.Bucket) error
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
	// Channels, when set, replaces the niche's known channels (a discovery's), kept KnownChannelsFor.
	Channels *KnownChannels
	// Ideas are added to the backlog, except those whose title the backlog or the pipeline holds already
	// and those past MaxBacklog; Added is set to the ones added.
	Ideas      []videos.Idea
	MaxBacklog int
	Added      []videos.Idea
	// Budget reserves (the positive buckets of Delta, within Limit and unless the day's quota of that
	// bucket ran out: else ErrBudget) or gives back (its negative buckets) quota of a budget day.
	Budget *BudgetChange
	// Account gives back units of an account's daily share (decision 46), in the same write.
	Account *AccountChange
	// Finish, if set, is called once Added and Chunks are known, before the run is written: the step
	// records them in the run.
	Finish func(*Commit)
}

// BudgetChange moves a budget day's reserved quota.
type BudgetChange struct {
	Day   string
	Delta quota.Cost
	Limit quota.Cost
}

// AccountChange gives back Cost of an account's share of a budget day.
type AccountChange struct {
	Account string
	Day     string
	Cost    quota.Cost
}

// KnownChannels are a niche's channels as its last discovery found them (the most search hits first), for
// refreshes that spend no search.
type KnownChannels struct {
	Key          string // the niche's key
	IDs          []string
	DiscoveredAt time.Time
}

// Due is an entry of the scheduler's index: look at the channel at At. Kick entries are keyword changes
// asking for a run (decision 33).
type Due struct {
	ChannelID string
	At        time.Time
	Kick      bool
}
