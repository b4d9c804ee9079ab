package research

import (
	"fmt"
	"time"
	_ "time/tzdata" // the quota day is Pacific time; Lambda's runtime has no zoneinfo
)

// Plan is how a run spends quota, as an expert would: a few keyword searches (100 units each) find the
// niche's channels and seed videos; the channels' uploads playlists and batched videos.list and
// channels.list calls (1 unit per 50 items) fill the rest. A naive run of searches alone would spend
// 100 units per 50 videos, 1,000 for 500.
type Plan struct {
	// Searches is the number of search.list calls (one page of 50 each), at most len(searchOrders()).
	Searches int
	// Channels is how many of the channels found are expanded (the most hits first).
	Channels int
	// UploadsPerChannel is how many of a channel's most recent uploads are read: the videos of the niche,
	// and the sample its median views are taken over.
	UploadsPerChannel int
}

// DefaultPlan reads 20 channels' last 50 uploads after 3 searches: up to 1,150 videos to score for the
// 500 kept, at most 344 units (Ceiling).
func DefaultPlan() Plan { return Plan{Searches: 3, Channels: 20, UploadsPerChannel: 50} }

// searchOrders are the searches a run makes, in turn: the niche's most viewed videos of the window, the
// most relevant ones (to the focused niche when the profile names one), and the most recent ones (the
// channels active now).
func searchOrders() []string { return []string{OrderViewCount, OrderRelevance, OrderDate} }

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

// StepCeiling is the most units a step of the plan can spend.
func (p Plan) StepCeiling(step string) int {
	pages := (p.UploadsPerChannel + MaxResults - 1) / MaxResults
	switch step {
	case StepDiscover:
		return p.Searches * SearchCost
	case StepExpand:
		return CallsFor(p.Channels)*ListCost + p.Channels*pages*ListCost
	case StepEnrich:
		return CallsFor(p.Channels*p.UploadsPerChannel+p.Searches*MaxResults) * ListCost
	default:
		return 0
	}
}

// CeilingFrom is the most units the steps from `step` on can spend.
func (p Plan) CeilingFrom(step string) int {
	total := 0
	for _, name := range StepNames()[max(stepIndex(step), 0):] {
		total += p.StepCeiling(name)
	}
	return total
}

// Ceiling is the most units a whole run can spend.
func (p Plan) Ceiling() int { return p.CeilingFrom(StepDiscover) }

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
