// Package profile holds the channel's niche profile: who the channel is for and how it speaks.
package profile

import (
	"cmp"
	"context"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
)

// DefaultLanguage is the content language of a profile that names none.
const DefaultLanguage = "english"

// NicheProfile is the channel's niche profile. No field is required; keywords, when present, are exactly 4
// (the contract enforces shapes).
type NicheProfile struct {
	BroadNiche       string   `json:"broadNiche,omitempty"`
	FocusedNiche     string   `json:"focusedNiche,omitempty"`
	Slogan           string   `json:"slogan,omitempty"`
	NicheStatement   string   `json:"nicheStatement,omitempty"`
	Mission          string   `json:"mission,omitempty"`
	Purpose          string   `json:"purpose,omitempty"`
	Passion          string   `json:"passion,omitempty"`
	Keywords         []string `json:"keywords,omitempty"`
	InsiderTerms     []string `json:"insiderTerms,omitempty"`
	TargetAudience   string   `json:"targetAudience,omitempty"`
	ChannelGoals     string   `json:"channelGoals,omitempty"`
	PainPoints       string   `json:"painPoints,omitempty"`
	ProfitModel      string   `json:"profitModel,omitempty"`
	TopCompetitors   []string `json:"topCompetitors,omitempty"`
	Conferences      []string `json:"conferences,omitempty"`
	IndustrySpeakers []string `json:"industrySpeakers,omitempty"`
	Podcasters       []string `json:"podcasters,omitempty"`
	Sponsors         []string `json:"sponsors,omitempty"`
	ContentLanguage  string   `json:"contentLanguage"`
}

// Repository is what the profile needs from storage.
type Repository interface {
	// GetProfile returns the stored profile, or NOT_FOUND when none was written.
	GetProfile(ctx context.Context, channelID string) (NicheProfile, error)
	PutProfile(ctx context.Context, channelID string, p NicheProfile) error
}

// Service reads and replaces profiles.
type Service struct{ repo Repository }

// NewService returns a Service.
func NewService(repo Repository) *Service { return &Service{repo: repo} }

// Get returns the channel's profile; a channel that has written none has an empty one in the default
// language.
func (s *Service) Get(ctx context.Context, channelID string) (NicheProfile, error) {
	p, err := s.repo.GetProfile(ctx, channelID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return NicheProfile{ContentLanguage: DefaultLanguage}, nil
		}
		return NicheProfile{}, err
	}
	p.ContentLanguage = cmp.Or(p.ContentLanguage, DefaultLanguage)
	return p, nil
}

// Put replaces the profile whole (decision 16).
func (s *Service) Put(ctx context.Context, channelID string, in contract.NicheProfile) (NicheProfile, error) {
	if err := in.Validate(); err != nil {
		return NicheProfile{}, err
	}
	v := contract.Value[string]
	p := NicheProfile{
		BroadNiche: v(in.BroadNiche), FocusedNiche: v(in.FocusedNiche), Slogan: v(in.Slogan),
		NicheStatement: v(in.NicheStatement), Mission: v(in.Mission), Purpose: v(in.Purpose), Passion: v(in.Passion),
		Keywords: in.Keywords, InsiderTerms: in.InsiderTerms, TargetAudience: v(in.TargetAudience),
		ChannelGoals: v(in.ChannelGoals), PainPoints: v(in.PainPoints), ProfitModel: v(in.ProfitModel),
		TopCompetitors: in.TopCompetitors, Conferences: in.Conferences, IndustrySpeakers: in.IndustrySpeakers,
		Podcasters: in.Podcasters, Sponsors: in.Sponsors, ContentLanguage: string(contract.Value(in.ContentLanguage)),
	}
	if err := s.repo.PutProfile(ctx, channelID, p); err != nil {
		return NicheProfile{}, err
	}
	return p, nil
}
