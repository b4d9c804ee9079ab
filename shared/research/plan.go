package research

import (
	"fmt"
	"time"
	_ "time/tzdata" // the quota day is Pacific time; Lambda's runtime has no zoneinfo

	"github.com/creatorstrategy/css/shared/quota"
)

// Plan is how a run spends quota, as an expert would with YouTube's three buckets (shared/quota): search
// calls are the scarcest (100 a day per project), so they only find a niche's channels; the channels'
// uploads playlists and batched channels.list and videos.list calls (1 unit per 50 items) fill the rest, and
// the statistics of videos whose snippet research read recently come from videos:batchGetStats (its own
// bucket). A niche whose channels are known (found by a discovery less than KnownChannelsFor ago) is
// refreshed without searching (Discovery).
type Plan struct {
	// Searches is the number of search.list calls (one page of 50 each) that discover a new niche, at most
	// len(searchOrders()).
	Searches int
	// Channels is how many of the channels found are expanded (the most hits first).
	Channels int
	// UploadsPerChannel is how many of a channel's most recent uploads are read: the videos of the niche,
	// and the sample its median views are taken over.
	UploadsPerChannel int
}

// DefaultPlan reads 20 channels' last 50 uploads after 3 searches: up to 1,150 videos to score for the
// 500 kept.
func DefaultPlan() Plan { return Plan{Searches: 3, Channels: 20, UploadsPerChannel: 50} }

// Discovery is how a run finds its niche's channels.
type Discovery string

const (
	// DiscoverNew: the niche's channels are not known; Plan.Searches searches find them.
	DiscoverNew Discovery = "new"
	// DiscoverKnown: the channels of the niche's last discovery are read again; no search.
	DiscoverKnown Discovery = "known"
	// DiscoverMore: the known channels, and one search for channels new to the niche, because the last
	// discovery is older than RediscoverAfter.
	DiscoverMore Discovery = "rediscover"
)

const (
	// KnownChannelsFor is how long a niche's channels, as a discovery found them, are kept: other
	// channels' data is deleted 28 days after its fetch (the 30 days of YouTube's Developer Policies, less
	// a margin for the table's expiry to act).
	KnownChannelsFor = DataLifetime
	// RediscoverAfter: a refresh of a niche discovered longer ago than this spends one search for new
	// channels, so a weekly niche is discovered again before its channels are forgotten.
	RediscoverAfter = 21 * 24 * time.Hour
	// SnippetFreshFor: a kept video whose snippet (title, description, tags) was read more recently than
	// this has only its statistics read again (videos:batchGetStats); an older one is read whole
	// (videos.list). A set of videos counts its age from its oldest snippet, so a weekly refresh's set
	// (snippets at most 14 days old) outlives the week to the next refresh within the data's lifetime.
	SnippetFreshFor = 14 * 24 * time.Hour
)

// searchOrders are the searches a new niche's run makes, in turn: the niche's most viewed videos of the
// window, the most relevant ones (to the focused niche when the profile names one), and the most recent
// ones (the channels active now). A rediscovery makes only the last: it looks for channels new to the niche.
func searchOrders() []string { return []string{OrderViewCount, OrderRelevance, OrderDate} }

// orders returns the searches a discovery of kind d makes.
func (p Plan) orders(d Discovery) []string {
	switch d {
	case DiscoverKnown:
		return nil
	case DiscoverMore:
		return []string{OrderDate}
	}
	return searchOrders()[:p.Searches]
}

// Validate checks the plan's bounds.
func (p Plan) Validate() error {
	switch {
	case p.Searches < 1 || p.Searches > len(searchOrders()):
		return fmt.Errorf("research plan: searches must be 1..%d, not %d", len(searchOrders()), p.Searches)
	case p.Channels < 1 || p.Channels > MaxResults*len(searchOrders()):
		return fmt.Errorf("research plan: channels must be 1..%d, not %d", MaxResults*len(searchOrders()), p.Channels)
	case p.UploadsPerChannel < 1 || p.UploadsPerChannel > 500:
		return fmt.Errorf("research plan: uploads per channel must be 1..500, not %d", p.UploadsPerChannel)
	}
	return nil
}

// StepCeiling is the most a step of the plan can spend, for a discovery of kind d.
func (p Plan) StepCeiling(step string, d Discovery) quota.Cost {
	pages := (p.UploadsPerChannel + MaxResults - 1) / MaxResults
	switch step {
	case StepDiscover:
		return quota.SearchCall.Times(len(p.orders(d)))
	case StepExpand:
		return quota.ListCall.Times(CallsFor(p.Channels) + p.Channels*pages)
	case StepEnrich:
		// Every id found (uploads, search hits, the videos kept last time) may need videos.list; the kept
		// ones, batchGetStats.
		ids := p.Channels*p.UploadsPerChannel + len(p.orders(d))*MaxResults + MaxVideos
		return quota.ListCall.Times(CallsFor(ids)).Add(quota.StatsCall.Times(CallsFor(MaxVideos)))
	default:
		return quota.Cost{}
	}
}

// CeilingFrom is the most the steps from `step` on can spend, for a discovery of kind d.
func (p Plan) CeilingFrom(step string, d Discovery) quota.Cost {
	var total quota.Cost
	for _, name := range StepNames()[max(stepIndex(step), 0):] {
		total = total.Add(p.StepCeiling(name, d))
	}
	return total
}

// Ceiling is the most a whole run can spend: a new niche's.
func (p Plan) Ceiling() quota.Cost { return p.CeilingFrom(StepDiscover, DiscoverNew) }

// fetching says whether a step calls the source.
func fetching(step string) bool {
	return step == StepDiscover || step == StepExpand || step == StepEnrich
}

// QuotaZone is where the Data API's daily quota resets: midnight Pacific time.
const QuotaZone = "America/Los_Angeles"

// Clock tells budget days.
type Clock struct{ zone *time.Location }

// NewClock returns the clock of the quota's time zone.
func NewClock() (Clock, error) {
	z, err := time.LoadLocation(QuotaZone)
	if err != nil {
		return Clock{}, fmt.Errorf("research: quota time zone: %w", err)
	}
	return Clock{zone: z}, nil
}

// Day is the budget day of t, YYYY-MM-DD.
func (c Clock) Day(t time.Time) string { return t.In(c.zone).Format(time.DateOnly) }

// NextDay is when the budget day after t's starts.
func (c Clock) NextDay(t time.Time) time.Time {
	l := t.In(c.zone)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, c.zone).UTC()
}
