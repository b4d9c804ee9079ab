package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/webhooks"
)

func scheduleKey(channelID string) Key    { return channelKey(channelID, skSchedule) }
func weekKey(channelID, start string) Key { return channelKey(channelID, prefixWeek+start) }

// LoadSchedule reads the template and, when weekStart is set, that week, in one batch read.
func (s *Store) LoadSchedule(ctx context.Context, channelID, weekStart string) (planning.Template, int64, planning.Week, int64, error) {
	keys := []Key{scheduleKey(channelID)}
	if weekStart != "" {
		keys = append(keys, weekKey(channelID, weekStart))
	}
	items, err := s.t.GetMany(ctx, keys)
	if err != nil {
		return planning.Template{}, 0, planning.Week{}, 0, fmt.Errorf("load schedule: %w", err)
	}
	var (
		t      templateRecord
		w      = weekRecord{Start: weekStart}
		tv, wv int64
	)
	for _, it := range items {
		switch it.SK {
		case skSchedule:
			if err := decode(it, &t); err != nil {
				return planning.Template{}, 0, planning.Week{}, 0, err
			}
			tv = it.Version
		default:
			if err := decode(it, &w); err != nil {
				return planning.Template{}, 0, planning.Week{}, 0, err
			}
			wv = it.Version
		}
	}
	return t.template(), tv, planning.Week(w), wv, nil
}

// SaveSchedule writes the template and optionally a week, each guarded by the version read (0: must not
// exist yet), checks the assigned video belongs to the channel and puts evs into the outbox — one
// transaction.
func (s *Store) SaveSchedule(ctx context.Context, channelID string, t planning.Template, tWas int64, week *planning.Week, wWas int64, checkVideo string, evs ...webhooks.Event) error {
	tItem, err := encode(scheduleKey(channelID), templateRecordOf(t))
	if err != nil {
		return err
	}
	ops := []Op{versioned(tItem, tWas)}
	if week != nil {
		wItem, err := encode(weekKey(channelID, week.Start), weekRecord(*week))
		if err != nil {
			return err
		}
		ops = append(ops, versioned(wItem, wWas))
	}
	videoOp := -1
	if checkVideo != "" {
		videoOp = len(ops)
		ops = append(ops, Check(videoKey(channelID, checkVideo), IfExists))
	}
	outbox, err := outboxOps(evs)
	if err != nil {
		return err
	}
	ops = append(ops, outbox...)
	err = s.write(ctx, ops...)
	if failed := FailedOp(err); failed >= 0 {
		if failed == videoOp {
			return apperr.NotFoundf("video %s not found", checkVideo)
		}
		return apperr.Conflictf("the schedule was changed concurrently; try again")
	}
	return err
}

// versioned puts item if the stored one is at version was, or, for was == 0, if there is none yet.
func versioned(item Item, was int64) Op {
	if was == 0 {
		return putNew(item)
	}
	return PutIfVersion(item, was)
}

// putNew puts item at version 1 if there is none yet.
func putNew(item Item) Op {
	item.Version = 1
	return Put(item, IfNotExists)
}

// ListSeries returns the channel's series, oldest first.
func (s *Store) ListSeries(ctx context.Context, channelID string) ([]planning.Series, error) {
	return queryEach(ctx, s, channelPK(channelID), prefixSeries, false,
		func(r seriesRecord) planning.Series { return planning.Series(r) })
}

// GetSeries returns a series and its version.
func (s *Store) GetSeries(ctx context.Context, channelID, id string) (planning.Series, int64, error) {
	var se seriesRecord
	version, err := s.getJSON(ctx, seriesKey(channelID, id), &se)
	return planning.Series(se), version, orNotFound(err, "series %s not found", id)
}

// CreateSeries counts the series against the channel's limit and stores it, in one transaction.
func (s *Store) CreateSeries(ctx context.Context, channelID string, se planning.Series, max int) error {
	item, err := encode(seriesKey(channelID, se.ID), seriesRecord(se))
	if err != nil {
		return err
	}
	err = s.write(ctx, Incr(channelCounter(channelID, "series"), 1, int64(max)), putNew(item))
	switch FailedOp(err) {
	case -1:
		return err
	case 0:
		return apperr.Invalid("", "maximum of %d series reached", max)
	default:
		return apperr.Conflictf("series %s exists already", se.ID)
	}
}

// UpdateSeries replaces a series if it is still at version was.
func (s *Store) UpdateSeries(ctx context.Context, channelID string, se planning.Series, was int64) error {
	item, err := encode(seriesKey(channelID, se.ID), seriesRecord(se))
	if err != nil {
		return err
	}
	if err := s.write(ctx, PutIfVersion(item, was)); err != nil {
		if errors.Is(err, ErrConditionFailed) {
			return apperr.Conflictf("series %s was changed concurrently; read it again", se.ID)
		}
		return fmt.Errorf("update series: %w", err)
	}
	return nil
}

// DeleteSeries removes a series and gives its place back to the channel's limit, in one transaction.
func (s *Store) DeleteSeries(ctx context.Context, channelID, id string) error {
	err := s.write(ctx, Delete(seriesKey(channelID, id), IfExists), Incr(channelCounter(channelID, "series"), -1, 0))
	if errors.Is(err, ErrConditionFailed) {
		return apperr.NotFoundf("series %s not found", id)
	}
	return err
}
