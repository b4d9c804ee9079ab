package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/quota"
)

// The connected channel's sync (decision 43): `CH#<channel>|OWN` holds the sync's record, and
// `OWNUP#<nnn>` its uploads in chunks of up to chunkBytes (a 500-upload channel is one chunk), so one
// query under the prefix "OWN" reads it all and one transaction writes it.
const (
	skOwnSync        = "OWN"
	prefixOwnUploads = "OWNUP#"
)

// ownSyncRecord is the sync's record, format 2: the Sync's fields and how many upload chunks it has.
type ownSyncRecord struct {
	ownperf.Sync
	Chunks int `json:"chunks"`
}

// OwnSync returns the channel's sync with its uploads, and its version (0 before any).
func (s *Store) OwnSync(ctx context.Context, channelID string) (ownperf.Sync, int64, error) {
	items, err := s.queryAll(ctx, channelPK(channelID), skOwnSync, false)
	if err != nil {
		return ownperf.Sync{}, 0, err
	}
	var rec ownSyncRecord
	var version int64
	var chunks []Item
	for _, it := range items {
		switch {
		case it.SK == skOwnSync:
			if err := decode(it, &rec); err != nil {
				return ownperf.Sync{}, 0, err
			}
			version = it.Version
		case strings.HasPrefix(it.SK, prefixOwnUploads):
			chunks = append(chunks, it)
		}
	}
	if version == 0 {
		return ownperf.Sync{}, 0, nil
	}
	if len(chunks) < rec.Chunks {
		return ownperf.Sync{}, 0, fmt.Errorf("own sync of %s: %d of %d upload chunks", channelID, len(chunks), rec.Chunks)
	}
	raw, err := unchunk(chunks[:rec.Chunks])
	if err != nil {
		return ownperf.Sync{}, 0, err
	}
	sync := rec.Sync
	sync.Uploads = make([]ownperf.Upload, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &sync.Uploads[i]); err != nil {
			return ownperf.Sync{}, 0, fmt.Errorf("own sync of %s: upload: %w", channelID, err)
		}
	}
	return sync, version, nil
}

// SaveOwnSync writes the channel's sync with its uploads if its stored version is still was (0: none
// yet), in one transaction; CONFLICT otherwise.
func (s *Store) SaveOwnSync(ctx context.Context, channelID string, sync ownperf.Sync, was int64) error {
	prev, _, err := s.ownSyncChunks(ctx, channelID)
	if err != nil {
		return err
	}
	records := make([]json.RawMessage, len(sync.Uploads))
	for i, u := range sync.Uploads {
		if records[i], err = json.Marshal(u); err != nil {
			return err
		}
	}
	chunks, err := chunk(records)
	if err != nil {
		return err
	}
	if len(chunks)+max(prev-len(chunks), 0)+1 > MaxTransactOps {
		return fmt.Errorf("own sync of %s: %d upload chunks are more than one write holds", channelID, len(chunks))
	}
	item, err := encode(channelKey(channelID, skOwnSync), ownSyncRecord{Sync: sync, Chunks: len(chunks)})
	if err != nil {
		return err
	}
	ops := []Op{versioned(item, was)}
	for i, data := range chunks {
		ops = append(ops, Put(Item{Key: channelKey(channelID, chunkSK(prefixOwnUploads, i)), Data: data}, Always))
	}
	for i := len(chunks); i < prev; i++ {
		ops = append(ops, Delete(channelKey(channelID, chunkSK(prefixOwnUploads, i)), Always))
	}
	if err := s.write(ctx, ops...); err != nil {
		if FailedOp(err) == 0 {
			return apperr.Conflictf("the YouTube sync of channel %s was changed concurrently", channelID)
		}
		return fmt.Errorf("save own sync: %w", err)
	}
	return nil
}

// ownSyncChunks returns the stored sync's chunk count and version.
func (s *Store) ownSyncChunks(ctx context.Context, channelID string) (int, int64, error) {
	var rec ownSyncRecord
	v, err := s.getJSON(ctx, channelKey(channelID, skOwnSync), &rec)
	if errors.Is(err, ErrNotFound) {
		return 0, 0, nil
	}
	return rec.Chunks, v, err
}

// DeleteOwnSync removes the channel's sync and its uploads.
func (s *Store) DeleteOwnSync(ctx context.Context, channelID string) error {
	ops, err := s.ownSyncDeletes(ctx, channelID)
	if err != nil {
		return err
	}
	return s.write(ctx, ops...)
}

// ownSyncDeletes are the deletes of the channel's sync record and its upload chunks.
func (s *Store) ownSyncDeletes(ctx context.Context, channelID string) ([]Op, error) {
	chunks, _, err := s.ownSyncChunks(ctx, channelID)
	if err != nil {
		return nil, err
	}
	ops := []Op{Delete(channelKey(channelID, skOwnSync), Always), Delete(channelKey(channelID, skOwnWatch), Always)}
	for i := range chunks {
		ops = append(ops, Delete(channelKey(channelID, chunkSK(prefixOwnUploads, i)), Always))
	}
	return ops, nil
}

// ReserveQuota moves a budget day's reservation by delta, bucket by bucket: the positive amounts within
// limit's and unless the API said that bucket ran out that day, the negative ones given back (never below
// 0); all or nothing, false when a bucket has no room. The own sync spends the same daily budget research
// does (decision 46: as a scheduled refresh, it may use the whole of it).
func (s *Store) ReserveQuota(ctx context.Context, day string, delta, limit quota.Cost) (bool, error) {
	return s.reserve(ctx, s.budgetOps(day, delta, limit))
}
