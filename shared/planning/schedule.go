// Package planning holds the weekly schedule (a template of slots plus per-week video assignments) and
// the recurring content series.
package planning

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/contract"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// SlotType is what a slot of the week is for.
type SlotType string

const (
	Publish   SlotType = "publish"
	BatchFilm SlotType = "batch_film"
	Edit      SlotType = "edit"
	Prep      SlotType = "prep"
	Rest      SlotType = "rest"
)

// MaxSlots bounds the weekly template, which is stored as one item (7 days x 5 slot types leaves room
// for several publish times a day).
const MaxSlots = 100

// Slot is one slot of the weekly template (ScheduleSlot in the API). AssignedVideoID is the video
// assigned to it in the week being looked at.
type Slot struct {
	DayOfWeek       int      `json:"dayOfWeek"`
	SlotType        SlotType `json:"slotType"`
	ContentType     *string  `json:"contentType"`
	PublishTime     *string  `json:"publishTime"`
	AssignedVideoID *string  `json:"assignedVideoId"`
}

// Identity is what tells slots apart (decision 13): day, type and publish time.
func (s Slot) Identity() string {
	return fmt.Sprintf("%d|%s|%s", s.DayOfWeek, s.SlotType, contract.Value(s.PublishTime))
}

// Template is the stored weekly template.
type Template struct {
	Slots []Slot `json:"slots"`
}

// Week holds one week's assignments: slot identity -> video id.
type Week struct {
	Start       string            `json:"start"`
	Assignments map[string]string `json:"assignments"`
}

// ScheduleRepository is what the schedule needs from storage.
type ScheduleRepository interface {
	// LoadSchedule reads the template and one week (empty values when absent), with their versions.
	LoadSchedule(ctx context.Context, channelID, weekStart string) (Template, int64, Week, int64, error)
	// SaveSchedule writes the template (and the week when week != nil) if both are still at the versions
	// read, and puts evs into the outbox; checkVideo, when set, must be a video of the channel. CONFLICT
	// when a version moved, NOT_FOUND when the video does not exist.
	SaveSchedule(ctx context.Context, channelID string, t Template, tWas int64, week *Week, wWas int64, checkVideo string, evs ...webhooks.Event) error
	// VideosByID returns the channel's videos with these ids (missing ones left out).
	VideosByID(ctx context.Context, channelID string, ids []string) ([]videos.Video, error)
}

// Publisher sends events on once the write that put them into the outbox committed (webhooks.Relay).
type Publisher interface {
	PublishEvents(ctx context.Context, evs ...webhooks.Event)
}

// IDs makes event ids (the store's NewID).
type IDs interface{ NewID() string }

// Schedule is the schedule service.
type Schedule struct {
	repo    ScheduleRepository
	now     func() time.Time
	ids     IDs
	publish Publisher
}

// ScheduleOption configures the schedule service.
type ScheduleOption func(*Schedule)

// WithPublisher publishes schedule.updated as soon as it is written (without it, the event waits in the
// outbox for its sweep).
func WithPublisher(p Publisher) ScheduleOption { return func(s *Schedule) { s.publish = p } }

// NewSchedule returns the schedule service. When repo also makes ids (the store does), events get
// time-ordered ids from it.
func NewSchedule(repo ScheduleRepository, now func() time.Time, opts ...ScheduleOption) *Schedule {
	s := &Schedule{repo: repo, now: now}
	if ids, ok := repo.(IDs); ok {
		s.ids = ids
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// ScheduleChange says what a schedule.updated event reports.
type ScheduleChange string

const (
	SlotSaved   ScheduleChange = "slot_saved"
	SlotDeleted ScheduleChange = "slot_deleted"
)

// scheduleUpdated is the data of schedule.updated.
type scheduleUpdated struct {
	Change ScheduleChange `json:"change"`
	Slot   Slot           `json:"slot"`
	// WeekStart is the week whose assignment Slot.AssignedVideoID shows (null for a deleted slot), and
	// AssignmentChanged whether the request set or cleared it.
	WeekStart         *string `json:"weekStart"`
	AssignmentChanged bool    `json:"assignmentChanged"`
}

func (s *Schedule) event(channelID string, at time.Time, data scheduleUpdated) (webhooks.Event, error) {
	id := ""
	if s.ids != nil {
		id = s.ids.NewID()
	} else {
		id = uuid.Must(uuid.NewV7()).String()
	}
	return webhooks.NewEvent(id, webhooks.ScheduleUpdated, channelID, at, data)
}

func (s *Schedule) published(ctx context.Context, ev webhooks.Event) {
	if s.publish != nil {
		s.publish.PublishEvents(ctx, ev)
	}
}

// firstWeek is the first Sunday of the contract's dates (1900-01-01 on): the week of 1900-01-01..06 starts
// on 1899-12-31, a date no answer may carry.
const firstWeek = "1900-01-07"

// WeekOf normalises a YYYY-MM-DD date to the Sunday on or before it; "" means the current week in UTC.
func WeekOf(date string, now time.Time) (string, error) {
	d := now.UTC()
	if date != "" {
		var err error
		if d, err = time.Parse(time.DateOnly, date); err != nil {
			return "", apperr.Invalid("weekStart", "must be a date (YYYY-MM-DD)")
		}
	}
	week := d.AddDate(0, 0, -int(d.Weekday())).Format(time.DateOnly)
	if week < firstWeek {
		return "", apperr.Invalid("weekStart", "must be %s or later: the week of %s starts on %s, before 1900", firstWeek, date, week)
	}
	return week, nil
}

// View is a week of the schedule as GET /schedule shows it.
type View struct {
	WeekStart    string         `json:"weekStart"`
	Slots        []Slot         `json:"slots"`
	WeeklyVideos []videos.Video `json:"weeklyVideos"`
}

// Get returns the template with the week's assignments and the week's videos.
func (s *Schedule) Get(ctx context.Context, channelID, weekStart string) (View, error) {
	week, err := WeekOf(weekStart, s.now())
	if err != nil {
		return View{}, err
	}
	t, _, w, _, err := s.repo.LoadSchedule(ctx, channelID, week)
	if err != nil {
		return View{}, err
	}
	slots := make([]Slot, 0, len(t.Slots))
	var ids []string
	seen := map[string]bool{}
	for _, sl := range t.Slots {
		if id, ok := w.Assignments[sl.Identity()]; ok {
			sl.AssignedVideoID = &id
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		slots = append(slots, sl)
	}
	vids, err := s.repo.VideosByID(ctx, channelID, ids)
	if err != nil {
		return View{}, err
	}
	return View{WeekStart: week, Slots: slots, WeeklyVideos: vids}, nil
}

// saveAttempts bounds the read-modify-write retries of a schedule change that raced another one.
const saveAttempts = 5

// Upsert creates the slot, or updates the one with the same identity, applies the assignment, and emits
// schedule.updated.
// AssignedVideoID assigns a video to the slot for WeekStart's week; an explicit null clears it.
func (s *Schedule) Upsert(ctx context.Context, channelID string, in contract.ScheduleSlotInput) (Slot, error) {
	if err := in.Validate(); err != nil {
		return Slot{}, err
	}
	var contentType *string
	if in.ContentType != nil {
		contentType = contract.Ptr(string(*in.ContentType))
	}
	slot := Slot{DayOfWeek: in.DayOfWeek, SlotType: SlotType(in.SlotType), ContentType: contentType, PublishTime: in.PublishTime.Value}
	if err := checkSlot(slot, in.AssignedVideoID); err != nil {
		return Slot{}, err
	}
	week, err := WeekOf(contract.Value(in.WeekStart), s.now())
	if err != nil {
		return Slot{}, err
	}
	for attempt := 0; ; attempt++ {
		t, tv, w, wv, err := s.repo.LoadSchedule(ctx, channelID, week)
		if err != nil {
			return Slot{}, err
		}
		t, err = t.upsert(slot)
		if err != nil {
			return Slot{}, err
		}
		var weekWrite *Week
		checkVideo := ""
		if in.AssignedVideoID.Set {
			w.Start = week
			if w.Assignments == nil {
				w.Assignments = map[string]string{}
			}
			if in.AssignedVideoID.Value != nil {
				w.Assignments[slot.Identity()] = *in.AssignedVideoID.Value
				checkVideo = *in.AssignedVideoID.Value
			} else {
				delete(w.Assignments, slot.Identity())
			}
			weekWrite = &w
		}
		saved := slot
		if id, ok := w.Assignments[slot.Identity()]; ok {
			saved.AssignedVideoID = &id
		}
		ev, err := s.event(channelID, s.now(), scheduleUpdated{Change: SlotSaved, Slot: saved, WeekStart: &week,
			AssignmentChanged: in.AssignedVideoID.Set})
		if err != nil {
			return Slot{}, err
		}
		err = s.repo.SaveSchedule(ctx, channelID, t, tv, weekWrite, wv, checkVideo, ev)
		if apperr.CodeOf(err) == apperr.Conflict && attempt+1 < saveAttempts {
			continue
		}
		if err != nil {
			return Slot{}, err
		}
		s.published(ctx, ev)
		return saved, nil
	}
}

// Delete removes the slot with this identity from the template and emits schedule.updated.
func (s *Schedule) Delete(ctx context.Context, channelID string, day int, slotType SlotType, publishTime *string) error {
	target := Slot{DayOfWeek: day, SlotType: slotType, PublishTime: publishTime}.Identity()
	for attempt := 0; ; attempt++ {
		t, tv, _, _, err := s.repo.LoadSchedule(ctx, channelID, "")
		if err != nil {
			return err
		}
		kept := t.Slots[:0:0]
		var removed *Slot
		for _, sl := range t.Slots {
			if sl.Identity() != target {
				kept = append(kept, sl)
			} else {
				removed = &sl
			}
		}
		if removed == nil {
			return apperr.NotFoundf("schedule slot not found")
		}
		ev, err := s.event(channelID, s.now(), scheduleUpdated{Change: SlotDeleted, Slot: *removed})
		if err != nil {
			return err
		}
		err = s.repo.SaveSchedule(ctx, channelID, Template{Slots: kept}, tv, nil, 0, "", ev)
		if apperr.CodeOf(err) == apperr.Conflict && attempt+1 < saveAttempts {
			continue
		}
		if err != nil {
			return err
		}
		s.published(ctx, ev)
		return nil
	}
}

// checkSlot applies the rules the schema cannot say: publish slots need a content type and a time, and
// only publish slots carry either, or an assigned video.
func checkSlot(s Slot, assigned contract.Optional[string]) error {
	if s.SlotType == Publish {
		if s.ContentType == nil {
			return apperr.Invalid("contentType", "is required for publish slots")
		}
		if s.PublishTime == nil {
			return apperr.Invalid("publishTime", "is required for publish slots")
		}
		return nil
	}
	if s.ContentType != nil {
		return apperr.Invalid("contentType", "is only for publish slots")
	}
	if s.PublishTime != nil {
		return apperr.Invalid("publishTime", "is only for publish slots")
	}
	if assigned.Set && assigned.Value != nil {
		return apperr.Invalid("assignedVideoId", "videos are assigned to publish slots only")
	}
	return nil
}

// upsert returns the template with slot added or replaced, in day/time/type order.
func (t Template) upsert(slot Slot) (Template, error) {
	slot.AssignedVideoID = nil
	slots := make([]Slot, 0, len(t.Slots)+1)
	replaced := false
	for _, sl := range t.Slots {
		if sl.Identity() == slot.Identity() {
			sl, replaced = slot, true
		}
		slots = append(slots, sl)
	}
	if !replaced {
		if len(slots) >= MaxSlots {
			return Template{}, apperr.Invalid("", "the schedule holds at most %d slots", MaxSlots)
		}
		slots = append(slots, slot)
	}
	slices.SortStableFunc(slots, func(a, b Slot) int {
		return cmp.Or(cmp.Compare(a.DayOfWeek, b.DayOfWeek), cmp.Compare(contract.Value(a.PublishTime), contract.Value(b.PublishTime)),
			cmp.Compare(a.SlotType, b.SlotType))
	})
	return Template{Slots: slots}, nil
}
