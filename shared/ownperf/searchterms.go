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

// OwnSearchTermsSource labels demand taken from the channel's own search terms.
const OwnSearchTermsSource = "own search terms"

// Demand is an idea's evidence of demand: an own search term that brought views in a period.
type Demand struct {
	Source string `json:"source"`
	Term   string `json:"term"`
	Views  int64  `json:"views"`
	Period string `json:"period"` // "YYYY-MM-DD/YYYY-MM-DD"
}

// Period is the sync's window as Demand writes it.
func (s Sync) Period() string { return s.PeriodStart + "/" + s.PeriodEnd }
