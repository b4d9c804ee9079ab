package ownperf

// SearchTermRows is how many of the channel's YouTube search terms a sync reads (the API's most for
// insightTrafficSourceDetail; decision 53).
const SearchTermRows = 25

// SearchTerm is a term viewers searched YouTube with before watching the channel, and the views it
// brought over the sync's window.
type SearchTerm struct {
	Term  string `json:"term"`
	Views int64  `json:"views"`
}

// Period is the sync's window, "YYYY-MM-DD/YYYY-MM-DD".
func (s Sync) Period() string { return s.PeriodStart + "/" + s.PeriodEnd }
