package store

import (
	"context"
	"errors"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/notes"
)

func noteKey(channelID, id string) Key { return channelKey(channelID, prefixNote+id) }

// ListNotes returns the channel's notes, newest first.
func (s *Store) ListNotes(ctx context.Context, channelID string) ([]notes.Note, error) {
	return queryEach(ctx, s, channelPK(channelID), prefixNote, true, func(r noteRecord) notes.Note { return notes.Note(r) })
}

// CreateNote counts the note against the channel's limit and stores it, in one transaction.
func (s *Store) CreateNote(ctx context.Context, channelID string, n notes.Note, max int) error {
	item, err := encode(noteKey(channelID, n.ID), noteRecord(n))
	if err != nil {
		return err
	}
	err = s.write(ctx, Incr(channelCounter(channelID, "notes"), 1, int64(max)), Put(item, IfNotExists))
	switch FailedOp(err) {
	case -1:
		return err
	case 0:
		return apperr.Invalid("", "maximum of %d notes reached", max)
	default:
		return apperr.Conflictf("note %s exists already", n.ID)
	}
}

// DeleteNote removes a note and gives its place back, in one transaction.
func (s *Store) DeleteNote(ctx context.Context, channelID, id string) error {
	err := s.write(ctx, Delete(noteKey(channelID, id), IfExists), Incr(channelCounter(channelID, "notes"), -1, 0))
	if errors.Is(err, ErrConditionFailed) {
		return apperr.NotFoundf("note %s not found", id)
	}
	return err
}
