// Package research holds what research learned about a niche: pattern insights per content kind.
package research

import "context"

// Patterns is ResearchPatterns in the API: each field a text of pattern insights.
type Patterns struct {
	Titles       string `json:"titles,omitempty"`
	Thumbnails   string `json:"thumbnails,omitempty"`
	LongScripts  string `json:"longScripts,omitempty"`
	ShortScripts string `json:"shortScripts,omitempty"`
	Descriptions string `json:"descriptions,omitempty"`
	Ideas        string `json:"ideas,omitempty"`
}

// Repository is what research insights need from storage.
type Repository interface {
	// GetPatterns returns the stored patterns; a channel that has none has empty patterns (no error).
	GetPatterns(ctx context.Context, channelID string) (Patterns, error)
}

// Service reads research insights.
type Service struct{ repo Repository }

// NewService returns a Service.
func NewService(repo Repository) *Service { return &Service{repo: repo} }

// Insights returns the channel's research patterns (empty until research has run).
func (s *Service) Insights(ctx context.Context, channelID string) (Patterns, error) {
	return s.repo.GetPatterns(ctx, channelID)
}
