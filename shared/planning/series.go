package planning

import (
	"context"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
)

// MaxSeries is the most series a channel holds (rest-api.md Limits).
const MaxSeries = 10

// Series is a recurring content series (ContentSeries in the API).
type Series struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	ScriptFormula string    `json:"scriptFormula"`
	IsActive      bool      `json:"isActive"`
	VideoCount    int       `json:"videoCount"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// SeriesRepository is what series need from storage.
type SeriesRepository interface {
	NewID() string
	ListSeries(ctx context.Context, channelID string) ([]Series, error)
	GetSeries(ctx context.Context, channelID, id string) (Series, int64, error)
	// CreateSeries stores s unless the channel has MaxSeries already (VALIDATION_ERROR), atomically.
	CreateSeries(ctx context.Context, channelID string, s Series, max int) error
	// UpdateSeries replaces s if still at version was (CONFLICT otherwise).
	UpdateSeries(ctx context.Context, channelID string, s Series, was int64) error
	DeleteSeries(ctx context.Context, channelID, id string) error
}

// SeriesService holds the series rules.
type SeriesService struct {
	repo SeriesRepository
	now  func() time.Time
}

// NewSeriesService returns the series service.
func NewSeriesService(repo SeriesRepository, now func() time.Time) *SeriesService {
	return &SeriesService{repo: repo, now: now}
}

// List returns the channel's series, oldest first.
func (s *SeriesService) List(ctx context.Context, channelID string) ([]Series, error) {
	return s.repo.ListSeries(ctx, channelID)
}

// Create adds a series, at most MaxSeries per channel.
func (s *SeriesService) Create(ctx context.Context, channelID string, in contract.SeriesCreate) (Series, error) {
	if err := in.Validate(); err != nil {
		return Series{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	active := *in.IsActive // Validate applied the default
	se := Series{
		ID: s.repo.NewID(), Name: in.Name, Description: in.Description, ScriptFormula: in.ScriptFormula,
		IsActive: active, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.repo.CreateSeries(ctx, channelID, se, MaxSeries); err != nil {
		return Series{}, err
	}
	return se, nil
}

// Update changes the fields present in p.
func (s *SeriesService) Update(ctx context.Context, channelID, id string, p contract.SeriesUpdate) (Series, error) {
	if err := p.Validate(); err != nil {
		return Series{}, err
	}
	se, version, err := s.repo.GetSeries(ctx, channelID, id)
	if err != nil {
		return Series{}, err
	}
	if p.Name != nil {
		se.Name = *p.Name
	}
	if p.Description != nil {
		se.Description = *p.Description
	}
	if p.ScriptFormula != nil {
		se.ScriptFormula = *p.ScriptFormula
	}
	if p.IsActive != nil {
		se.IsActive = *p.IsActive
	}
	se.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
	if err := s.repo.UpdateSeries(ctx, channelID, se, version); err != nil {
		return Series{}, err
	}
	return se, nil
}

// Delete removes a series; videos keep their seriesId as a record of where they came from.
func (s *SeriesService) Delete(ctx context.Context, channelID, id string) error {
	return s.repo.DeleteSeries(ctx, channelID, id)
}

// Get returns one of the channel's series; NOT_FOUND for an unknown id or another channel's series.
func (s *SeriesService) Get(ctx context.Context, channelID, id string) (Series, error) {
	sr, _, err := s.repo.GetSeries(ctx, channelID, id)
	return sr, err
}
