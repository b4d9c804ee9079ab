// Package quota is YouTube's API quota as Google meters it since 2026: three daily buckets per project.
// search.list has its own bucket of 100 calls; videos:batchGetStats its own of 10,000 calls (and 600 a
// minute); every other call shares the 10,000 units (videos.list, channels.list and playlistItems.list 1
// unit a call, captions.list 50, captions.download 200). A Cost counts one amount per bucket, so research,
// the owner's sync and transcripts reserve, spend and give back each bucket on its own, and a bucket that
// runs out stops only the calls charged to it.
package quota

import (
	"fmt"
	"slices"
	"strings"
)

// Bucket names one of the daily buckets.
type Bucket string

const (
	Units    Bucket = "units"    // the shared 10,000 units
	Searches Bucket = "searches" // search.list calls
	Stats    Bucket = "stats"    // videos:batchGetStats calls
)

// Buckets are the buckets, in a fixed order.
func Buckets() []Bucket { return []Bucket{Units, Searches, Stats} }

// Cost is an amount of quota in each bucket: what a call costs, what a run spent or reserved, a budget.
type Cost struct {
	Units    int `json:"units,omitempty"`
	Searches int `json:"searches,omitempty"`
	Stats    int `json:"stats,omitempty"`
}

// Prices of the calls the service makes (developers.google.com/youtube/v3/determine_quota_cost).
var (
	SearchCall       = Cost{Searches: 1}
	ListCall         = Cost{Units: 1} // videos.list, channels.list, playlistItems.list
	StatsCall        = Cost{Stats: 1} // videos:batchGetStats, up to 50 ids
	CaptionsList     = Cost{Units: 50}
	CaptionsDownload = Cost{Units: 200}
)

// DefaultDaily is the deployment's default daily budget: a little under Google's default quota of 10,000
// units, 100 searches and 10,000 stats calls, so calls the service does not count (a developer's own
// tries with the same project) do not end the day early.
var DefaultDaily = Cost{Units: 9000, Searches: 90, Stats: 9000}

// Of returns the amount in bucket b.
func (c Cost) Of(b Bucket) int {
	switch b {
	case Searches:
		return c.Searches
	case Stats:
		return c.Stats
	}
	return c.Units
}

// With returns c with bucket b set to n.
func (c Cost) With(b Bucket, n int) Cost {
	switch b {
	case Searches:
		c.Searches = n
	case Stats:
		c.Stats = n
	default:
		c.Units = n
	}
	return c
}

// Add returns c + d, bucket by bucket.
func (c Cost) Add(d Cost) Cost {
	return Cost{Units: c.Units + d.Units, Searches: c.Searches + d.Searches, Stats: c.Stats + d.Stats}
}

// Sub returns c - d, bucket by bucket.
func (c Cost) Sub(d Cost) Cost { return c.Add(d.Times(-1)) }

// Times returns c with every bucket multiplied by n.
func (c Cost) Times(n int) Cost {
	return Cost{Units: c.Units * n, Searches: c.Searches * n, Stats: c.Stats * n}
}

// Percent returns p percent of c, rounded down, bucket by bucket.
func (c Cost) Percent(p int) Cost {
	return Cost{Units: c.Units * p / 100, Searches: c.Searches * p / 100, Stats: c.Stats * p / 100}
}

// AtLeast0 returns c with negative buckets set to 0.
func (c Cost) AtLeast0() Cost { return Max(c, Cost{}) }

// IsZero says whether every bucket is 0.
func (c Cost) IsZero() bool { return c == Cost{} }

// Within says whether every bucket of c is at most limit's.
func (c Cost) Within(limit Cost) bool {
	return c.Units <= limit.Units && c.Searches <= limit.Searches && c.Stats <= limit.Stats
}

// Max returns the larger amount of each bucket.
func Max(a, b Cost) Cost {
	return Cost{Units: max(a.Units, b.Units), Searches: max(a.Searches, b.Searches), Stats: max(a.Stats, b.Stats)}
}

// Min returns the smaller amount of each bucket.
func Min(a, b Cost) Cost {
	return Cost{Units: min(a.Units, b.Units), Searches: min(a.Searches, b.Searches), Stats: min(a.Stats, b.Stats)}
}

// String says c in words, leaving out empty buckets: "44 units, 3 search calls".
func (c Cost) String() string {
	var parts []string
	for _, b := range Buckets() {
		if n := c.Of(b); n != 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, b.noun()))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func (b Bucket) noun() string {
	switch b {
	case Searches:
		return "search calls"
	case Stats:
		return "stats calls"
	}
	return "units"
}

// Describe names the bucket as a reader of a message knows it.
func (b Bucket) Describe() string {
	switch b {
	case Searches:
		return "search.list calls"
	case Stats:
		return "videos:batchGetStats calls"
	}
	return "units"
}

// Usage is a budget day's quota: what was reserved in each bucket, and the buckets the API said were
// spent (quotaExceeded), from which nothing more is spent that day.
type Usage struct {
	Used      Cost
	Exhausted []Bucket
}

// Out says whether bucket b ran out.
func (u Usage) Out(b Bucket) bool { return slices.Contains(u.Exhausted, b) }
