package store

import (
	"context"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/research"
)

// GetProfile returns the channel's niche profile, NOT_FOUND when none was written.
func (s *Store) GetProfile(ctx context.Context, channelID string) (profile.NicheProfile, error) {
	var p profileRecord
	_, err := s.getJSON(ctx, channelKey(channelID, skProfile), &p)
	return profile.NicheProfile(p), orNotFound(err, "no niche profile")
}

// PutProfile replaces the channel's niche profile. When the new profile's keywords (or language) name
// another niche than the stored one's, the same write asks the research scheduler for a run (decision 33).
func (s *Store) PutProfile(ctx context.Context, channelID string, p profile.NicheProfile) error {
	item, err := encode(channelKey(channelID, skProfile), profileRecord(p))
	if err != nil {
		return err
	}
	ops := []Op{Put(item, Always)}
	if next, err := research.NicheOf(p); err == nil {
		old, err := s.GetProfile(ctx, channelID)
		if err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		if was, err := research.NicheOf(old); err != nil || was.Key("") != next.Key("") {
			ops = append(ops, s.kickOp(channelID))
		}
	}
	return s.write(ctx, ops...)
}
