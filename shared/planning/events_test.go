package planning_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// recorder is a Publisher that keeps each call's events.
type recorder struct{ calls [][]webhooks.Event }

func (r *recorder) PublishEvents(_ context.Context, evs ...webhooks.Event) {
	r.calls = append(r.calls, evs)
}

// TestScheduleEvents: each change of the schedule publishes its one schedule.updated, with the store's
// time-ordered id, once written; a refusal publishes nothing.
func TestScheduleEvents(t *testing.T) {
	ctx := context.Background()
	f := newSchedule(t)
	v := f.video(t, "A")
	rec := &recorder{}
	s := planning.NewSchedule(f.repo, func() time.Time { return f.now }, planning.WithPublisher(rec))
	wednesday := "2026-11-25"
	assigned := publish(2, "15:00", "Long")
	assigned.AssignedVideoID, assigned.WeekStart = contract.Some(v.ID), &wednesday

	for _, tc := range []struct {
		name  string
		do    func() error
		races int
		code  apperr.Code // the refusal expected, "" for none
		// data is the schedule.updated published, as JSON; "" for none.
		data string
	}{
		{"a slot assigned a video", func() error { _, err := s.Upsert(ctx, ch, assigned); return err }, 0, "",
			`{"change":"slot_saved","slot":{"dayOfWeek":2,"slotType":"publish","contentType":"Long","publishTime":"15:00","assignedVideoId":"` + v.ID + `"},"weekStart":"2026-11-22","assignmentChanged":true}`},
		{"the slot saved again, its video kept", func() error { _, err := s.Upsert(ctx, ch, publish(2, "15:00", "Short")); return err }, 0, "",
			`{"change":"slot_saved","slot":{"dayOfWeek":2,"slotType":"publish","contentType":"Short","publishTime":"15:00","assignedVideoId":"` + v.ID + `"},"weekStart":"2026-11-22","assignmentChanged":false}`},
		{"a slot saved after two lost races", func() error {
			_, err := s.Upsert(ctx, ch, contract.ScheduleSlotInput{DayOfWeek: 1, SlotType: contract.SlotTypeRest})
			return err
		}, 2, "",
			`{"change":"slot_saved","slot":{"dayOfWeek":1,"slotType":"rest","contentType":null,"publishTime":null,"assignedVideoId":null},"weekStart":"2026-11-22","assignmentChanged":false}`},
		{"a slot deleted", func() error { return s.Delete(ctx, ch, 1, planning.Rest, nil) }, 0, "",
			`{"change":"slot_deleted","slot":{"dayOfWeek":1,"slotType":"rest","contentType":null,"publishTime":null,"assignedVideoId":null},"weekStart":null,"assignmentChanged":false}`},
		{"a slot that is not there", func() error { return s.Delete(ctx, ch, 1, planning.Rest, nil) }, 0, apperr.NotFound, ""},
		{"a refused slot", func() error {
			_, err := s.Upsert(ctx, ch, contract.ScheduleSlotInput{DayOfWeek: 1, SlotType: contract.SlotTypeRest, PublishTime: contract.Some("10:00")})
			return err
		}, 0, apperr.Validation, ""},
		{"every race lost", func() error { _, err := s.Upsert(ctx, ch, publish(3, "09:00", "Short")); return err }, 5, apperr.Conflict, ""},
		{"a deletion losing every race", func() error { return s.Delete(ctx, ch, 2, planning.Publish, contract.Ptr("15:00")) }, 5, apperr.Conflict, ""},
	} {
		f.repo.races, f.repo.interfering, f.repo.conflicts = tc.races, 0, 0
		before := len(rec.calls)
		err := tc.do()
		if (tc.code == "" && err != nil) || apperr.CodeOf(err) != tc.code {
			t.Fatalf("%s: %v; want %q", tc.name, err, tc.code)
		}
		if tc.data == "" {
			if len(rec.calls) != before {
				t.Errorf("%s published %v; want nothing", tc.name, rec.calls[before:])
			}
			continue
		}
		if len(rec.calls) != before+1 || len(rec.calls[before]) != 1 {
			t.Fatalf("%s: %d calls, %v; want one call with one event", tc.name, len(rec.calls)-before, rec.calls[before:])
		}
		ev := rec.calls[before][0]
		if ev.Type != webhooks.ScheduleUpdated || ev.ChannelID != ch || !ev.Time.Equal(f.now) {
			t.Errorf("%s published %s for %s at %s", tc.name, ev.Type, ev.ChannelID, ev.Time)
		}
		if !strings.HasPrefix(ev.ID, "0190a000-0000-7000-8000-") {
			t.Errorf("%s: event id %s; want one of the store's", tc.name, ev.ID)
		}
		if !jsonEqual(t, ev.Data, tc.data) {
			t.Errorf("%s: data %s\nwant %s", tc.name, ev.Data, tc.data)
		}
	}
}

// TestScheduleEventIDsWithoutTheStore: a repository that makes no ids leaves the events with UUIDv7 ids
// of their own.
func TestScheduleEventIDsWithoutTheStore(t *testing.T) {
	f := newSchedule(t)
	rec := &recorder{}
	repo := struct{ planning.ScheduleRepository }{f.repo} // the store's NewID hidden
	s := planning.NewSchedule(repo, func() time.Time { return f.now }, planning.WithPublisher(rec))
	if _, err := s.Upsert(context.Background(), ch, publish(2, "15:00", "Long")); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || len(rec.calls[0]) != 1 {
		t.Fatalf("published %v; want one event", rec.calls)
	}
	if id, err := uuid.Parse(rec.calls[0][0].ID); err != nil || id.Version() != 7 {
		t.Fatalf("event id %q (%v); want a UUIDv7", rec.calls[0][0].ID, err)
	}
}

func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}
