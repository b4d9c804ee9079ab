package store

import (
	"context"
	"errors"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/profile"
)

// GetProfile returns the channel's niche profile, NOT_FOUND when none was written.
func (s *Store) GetProfile(ctx context.Context, channelID string) (profile.NicheProfile, error) {
	var p profileRecord
	_, err := s.getJSON(ctx, channelKey(channelID, skProfile), &p)
	if errors.Is(err, ErrNotFound) {
		return profile.NicheProfile{}, apperr.NotFoundf("no niche profile")
	}
	return profile.NicheProfile(p), err
}

// PutProfile replaces the channel's niche profile.
func (s *Store) PutProfile(ctx context.Context, channelID string, p profile.NicheProfile) error {
	item, err := encode(channelKey(channelID, skProfile), profileRecord(p))
	if err != nil {
		return err
	}
	return s.write(ctx, Put(item, Always))
}
