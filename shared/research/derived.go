package research

import "encoding/json"

// Derived-metrics statuses (decision 48).
const (
	DerivedAccepted    = "accepted"
	DerivedNotAccepted = "not_accepted"
)

// DerivedMetrics says, in the answers that would carry them, whether the figures research computes from
// other channels' YouTube data are shown (DerivedMetrics in the API, decision 48). YouTube's derived-metrics
// policy allows them only once the project's owner has accepted the amendment to the YouTube API Developer
// Policies, and only as the service's own estimate, never as YouTube's figure.
type DerivedMetrics struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// Accepted says whether the derived figures are shown.
func (d DerivedMetrics) Accepted() bool { return d.Status == DerivedAccepted }

// Reasons the answers give.
const (
	derivedShownReason = "outlierScore, channelMedianViews, sampleSize, viewsPerDay, the research patterns and " +
		"the outlier order are the service's own estimates computed from YouTube Data API figures, not YouTube's figures."
	derivedWithheldReason = "The service's scores computed from other channels' YouTube data (outlierScore, " +
		"channelMedianViews, sampleSize, viewsPerDay), the research patterns and everything ranked by those scores " +
		"are left out until the service's operator accepts the amendment to the YouTube API Developer Policies " +
		"on derived metrics; views, likes and comments are YouTube's own figures."
)

// Derived is the configuration's derived-metrics status.
func (c Config) Derived() DerivedMetrics {
	if c.DerivedMetrics {
		return DerivedMetrics{Status: DerivedAccepted, Reason: derivedShownReason}
	}
	return DerivedMetrics{Status: DerivedNotAccepted, Reason: derivedWithheldReason}
}

// InsightsView is the channel's research patterns as GET /research-insights answers them: no texts and no
// sources while derived metrics are not accepted.
type InsightsView struct {
	Patterns
	DerivedMetrics DerivedMetrics `json:"derivedMetrics"`
}

// withoutDerived returns v with the figures computed from other channels' data cleared and marked left
// out of its JSON (decision 48).
func withoutDerived(v Video) Video {
	v.OutlierScore, v.ChannelMedianViews, v.SampleSize, v.ViewsPerDay = 0, 0, 0, 0
	v.withheld = true
	return v
}

// MarshalJSON writes the ResearchVideo of the API; a video whose derived figures are withheld has none of
// them (absent rather than 0, which would read as a score).
func (v Video) MarshalJSON() ([]byte, error) {
	type plain Video
	if !v.withheld {
		return json.Marshal(plain(v))
	}
	// The outer fields, shallower than the embedded ones of the same names, replace them; nil, they are
	// left out.
	return json.Marshal(struct {
		plain
		OutlierScore       *float64 `json:"outlierScore,omitempty"`
		ChannelMedianViews *float64 `json:"channelMedianViews,omitempty"`
		SampleSize         *int     `json:"sampleSize,omitempty"`
		ViewsPerDay        *float64 `json:"viewsPerDay,omitempty"`
	}{plain: plain(v)})
}
