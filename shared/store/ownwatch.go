package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// The connected channel's early-warning state (decision 54): `CH#<channel>|WATCH`, apart from the sync's
// record so the hourly read writes a few KB, not the uploads; it is written with the events it emits.
const skOwnWatch = "WATCH"

// OwnWatch returns the channel's early-warning state and its version (0 before any).
func (s *Store) OwnWatch(ctx context.Context, channelID string) (ownperf.Watch, int64, error) {
	var w ownperf.Watch
	v, err := s.getJSON(ctx, channelKey(channelID, skOwnWatch), &w)
	if errors.Is(err, ErrNotFound) {
		return ownperf.Watch{}, 0, nil
	}
	if err != nil {
		return ownperf.Watch{}, 0, fmt.Errorf("own watch of %s: %w", channelID, err)
	}
	return w, v, nil
}

// SaveOwnWatch writes the state and queues evs in the outbox, in one transaction, if the stored version is
// still was (0: none yet); CONFLICT otherwise, and nothing is written.
func (s *Store) SaveOwnWatch(ctx context.Context, channelID string, w ownperf.Watch, was int64, evs ...webhooks.Event) error {
	item, err := encode(channelKey(channelID, skOwnWatch), w)
	if err != nil {
		return err
	}
	outbox, err := outboxOps(evs)
	if err != nil {
		return err
	}
	if err := s.write(ctx, append([]Op{versioned(item, was)}, outbox...)...); err != nil {
		if FailedOp(err) == 0 {
			return apperr.Conflictf("the early-warning state of channel %s was changed concurrently", channelID)
		}
		return fmt.Errorf("save own watch: %w", err)
	}
	return nil
}

// OwnCaptions returns the cached caption track of one of the channel's own videos (decision 41), as the
// transcript service cached it; ok is false when none is.
func (s *Store) OwnCaptions(ctx context.Context, channelID, videoID string) (string, bool, error) {
	if videoID == "" || strings.Contains(videoID, "#") {
		return "", false, nil
	}
	items, err := s.queryAll(ctx, channelPK(channelID), prefixCaption+videoID+"#", false)
	if err != nil {
		return "", false, fmt.Errorf("cached captions: %w", err)
	}
	for _, it := range items {
		var r captionRecord
		if err := decode(it, &r); err != nil {
			return "", false, err
		}
		if r.Text != "" {
			return r.Text, true, nil
		}
	}
	return "", false, nil
}
