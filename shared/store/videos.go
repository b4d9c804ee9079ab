package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

func videoKey(channelID, id string) Key  { return channelKey(channelID, prefixVideo+id) }
func ideaKey(channelID, id string) Key   { return channelKey(channelID, prefixIdea+id) }
func seriesKey(channelID, id string) Key { return channelKey(channelID, prefixSeries+id) }

// ListVideos returns the channel's videos as stored, newest first (one Query; ids are time-ordered).
func (s *Store) ListVideos(ctx context.Context, channelID string) ([]videos.Stored, error) {
	items, err := s.queryAll(ctx, channelPK(channelID), prefixVideo, true)
	if err != nil {
		return nil, err
	}
	out := make([]videos.Stored, len(items))
	for i, it := range items {
		if out[i], err = storedVideo(it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// VideoPage returns the videos [offset, offset+limit) that match accepts (nil: every video), newest first,
// and how many match. Without match only the page's items are read and decoded, the rest counted; with
// it, the partition is read a table page at a time and only the matching page kept.
func (s *Store) VideoPage(ctx context.Context, channelID string, match func(videos.Stored) bool, limit, offset int) ([]videos.Stored, int, error) {
	pk := channelPK(channelID)
	var window []Item
	total := 0
	if match == nil {
		var err error
		if window, total, err = s.newestPage(ctx, pk, prefixVideo, limit, offset); err != nil {
			return nil, 0, err
		}
	} else {
		q := Query{PK: pk, Prefix: prefixVideo, Desc: true}
		for {
			page, err := s.t.Query(ctx, q)
			if err != nil {
				return nil, 0, fmt.Errorf("query %s %s: %w", pk, prefixVideo, err)
			}
			for _, it := range page.Items {
				v, err := storedVideo(it)
				if err != nil {
					return nil, 0, err
				}
				if !match(v) {
					continue
				}
				if total >= offset && len(window) < limit {
					window = append(window, it)
				}
				total++
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	out := make([]videos.Stored, len(window))
	for i, it := range window {
		var err error
		if out[i], err = storedVideo(it); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// storedVideo returns a video's MyVideo JSON: the stored JSON itself when the item is in the current
// format (whose JSON is that shape), else the video converted from its older format.
func storedVideo(it Item) (videos.Stored, error) {
	if format, body := formatOf(it.Data); format == format2 {
		return body, nil
	}
	v, err := decodeVideo(it)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// decodeVideo reads a video of any format this build knows.
func decodeVideo(it Item) (videos.Video, error) {
	var r videoRecord
	if err := decode(it, &r); err != nil {
		return videos.Video{}, err
	}
	return r.video(), nil
}

// GetVideo returns a video and its version.
func (s *Store) GetVideo(ctx context.Context, channelID, videoID string) (videos.Video, int64, error) {
	it, err := s.t.Get(ctx, videoKey(channelID, videoID))
	if errors.Is(err, ErrNotFound) {
		return videos.Video{}, 0, apperr.NotFoundf("video %s not found", videoID)
	}
	if err != nil {
		return videos.Video{}, 0, err
	}
	v, err := decodeVideo(it)
	return v, it.Version, err
}

// VideosByID returns the channel's videos with these ids, in the order given, missing ones left out.
func (s *Store) VideosByID(ctx context.Context, channelID string, ids []string) ([]videos.Video, error) {
	keys := make([]Key, len(ids))
	for i, id := range ids {
		keys[i] = videoKey(channelID, id)
	}
	items, err := s.getAll(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("get videos: %w", err)
	}
	return decodeEach(items, videoRecord.video)
}

// CreateVideo stores a new video and, when it has a series, adds seriesDelta to that series' videoCount,
// and puts evs into the outbox, in one transaction.
func (s *Store) CreateVideo(ctx context.Context, channelID string, v videos.Video, seriesDelta, maxVideos int, evs ...webhooks.Event) error {
	_, _, err := s.commitVideo(ctx, channelID, "", v.SeriesID, seriesDelta, maxVideos, func(videos.Idea) (videos.Video, []webhooks.Event, error) {
		return v, evs, nil
	})
	return err
}

// CommitIdea moves an idea out of the backlog into the pipeline: the idea is deleted and the video build
// makes of it put (its series' videoCount moved by seriesDelta, and the events build returns put into the
// outbox) in one transaction, so the idea is committed at most once.
func (s *Store) CommitIdea(ctx context.Context, channelID, ideaID string, seriesID *string, seriesDelta, maxVideos int, build func(videos.Idea) (videos.Video, []webhooks.Event, error)) (videos.Video, []webhooks.Event, error) {
	return s.commitVideo(ctx, channelID, ideaID, seriesID, seriesDelta, maxVideos, build)
}

// commitVideo reads the idea (when ideaID is set) and the series (when seriesID is set) in one batch,
// then writes the video, deletes the idea, moves the series' videoCount by seriesDelta under the series'
// version and puts the events into the outbox in one transaction, reading again when another write to the
// series got in first.
func (s *Store) commitVideo(ctx context.Context, channelID, ideaID string, seriesID *string, seriesDelta, maxVideos int, build func(videos.Idea) (videos.Video, []webhooks.Event, error)) (videos.Video, []webhooks.Event, error) {
	var keys []Key
	if ideaID != "" {
		keys = append(keys, ideaKey(channelID, ideaID))
	}
	if seriesID != nil {
		keys = append(keys, seriesKey(channelID, *seriesID))
	}
	for attempt := 0; ; attempt++ {
		var (
			idea      ideaRecord
			se        seriesRecord
			seVersion int64
			foundIdea bool
			foundSe   bool
		)
		if len(keys) > 0 {
			items, err := s.t.GetMany(ctx, keys)
			if err != nil {
				return videos.Video{}, nil, fmt.Errorf("commit video: %w", err)
			}
			for _, it := range items {
				var err error
				if strings.HasPrefix(it.SK, prefixIdea) {
					foundIdea, err = true, decode(it, &idea)
				} else {
					foundSe, seVersion, err = true, it.Version, decode(it, &se)
				}
				if err != nil {
					return videos.Video{}, nil, err
				}
			}
		}
		if ideaID != "" && !foundIdea {
			return videos.Video{}, nil, apperr.NotFoundf("idea %s not found", ideaID)
		}
		if seriesID != nil && !foundSe {
			return videos.Video{}, nil, apperr.NotFoundf("series %s not found", *seriesID)
		}
		v, evs, err := build(videos.Idea(idea))
		if err != nil {
			return videos.Video{}, nil, err
		}
		item, err := encode(videoKey(channelID, v.ID), videoRecordOf(v))
		if err != nil {
			return videos.Video{}, nil, err
		}
		// The channel's videos are counted as they are committed (they are never deleted), the count
		// bounded by maxVideos in the same transaction (issue 19 item 18).
		ops := []Op{Put(item, IfNotExists), Incr(channelCounter(channelID, "videos"), 1, int64(maxVideos))}
		const countOp = 1
		ideaOp, seriesOp := -1, -1
		if ideaID != "" {
			ideaOp = len(ops)
			ops = append(ops, Delete(ideaKey(channelID, ideaID), IfExists))
		}
		if seriesID != nil {
			se.VideoCount += seriesDelta
			seItem, err := encode(seriesKey(channelID, se.ID), se)
			if err != nil {
				return videos.Video{}, nil, err
			}
			seriesOp = len(ops)
			ops = append(ops, PutIfVersion(seItem, seVersion))
		}
		outbox, err := outboxOps(evs)
		if err != nil {
			return videos.Video{}, nil, err
		}
		ops = append(ops, outbox...)
		err = s.write(ctx, ops...)
		switch failed := FailedOp(err); {
		case err == nil:
			return v, evs, nil
		case failed < 0:
			return videos.Video{}, nil, fmt.Errorf("commit video: %w", err)
		case failed == countOp:
			return videos.Video{}, nil, apperr.Invalid("", "the pipeline holds %d videos, its most (CSS_MAX_VIDEOS); no more can be committed", maxVideos)
		case failed == ideaOp:
			return videos.Video{}, nil, apperr.NotFoundf("idea %s not found", ideaID)
		case failed == seriesOp && attempt+1 < conflictRetries:
			continue // the series changed (or went) since it was read
		case failed == seriesOp:
			return videos.Video{}, nil, apperr.Conflictf("series %s is being changed concurrently; try again", *seriesID)
		default:
			return videos.Video{}, nil, apperr.Conflictf("video %s exists already", v.ID)
		}
	}
}

// UpdateVideo replaces a video if it is still at version was, and puts evs into the outbox, in one
// transaction.
func (s *Store) UpdateVideo(ctx context.Context, channelID string, v videos.Video, was int64, evs ...webhooks.Event) error {
	item, err := encode(videoKey(channelID, v.ID), videoRecordOf(v))
	if err != nil {
		return err
	}
	outbox, err := outboxOps(evs)
	if err != nil {
		return err
	}
	if err := s.write(ctx, append([]Op{PutIfVersion(item, was)}, outbox...)...); err != nil {
		if FailedOp(err) == 0 {
			return apperr.Conflictf("video %s was changed concurrently; read it again", v.ID)
		}
		return fmt.Errorf("update video: %w", err)
	}
	return nil
}

// ListIdeas returns the channel's backlog, newest first.
func (s *Store) ListIdeas(ctx context.Context, channelID string) ([]videos.Idea, error) {
	return queryEach(ctx, s, channelPK(channelID), prefixIdea, true, func(r ideaRecord) videos.Idea { return videos.Idea(r) })
}

// PutIdea stores a backlog idea (research and generation create them; tests seed them).
func (s *Store) PutIdea(ctx context.Context, channelID string, i videos.Idea) error {
	item, err := encode(ideaKey(channelID, i.ID), ideaRecord(i))
	if err != nil {
		return err
	}
	return s.write(ctx, Put(item, Always))
}

// DeleteIdea removes an idea; NOT_FOUND when there is none.
func (s *Store) DeleteIdea(ctx context.Context, channelID, ideaID string) error {
	err := s.write(ctx, Delete(ideaKey(channelID, ideaID), IfExists))
	if errors.Is(err, ErrConditionFailed) {
		return apperr.NotFoundf("idea %s not found", ideaID)
	}
	return err
}
