package planning_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

const ch = "ch"

// scheduleFixture is the schedule service over the in-memory table, on Thursday 2026-11-26 (the week of
// Sunday 2026-11-22).
type scheduleFixture struct {
	st    *store.Store
	repo  *racingRepo
	sched *planning.Schedule
	now   time.Time
}

func newSchedule(t *testing.T) *scheduleFixture {
	t.Helper()
	n := 0
	f := &scheduleFixture{now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
	f.st = store.New(memstore.New(t), store.WithIDs(func() string { n++; return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }))
	f.repo = &racingRepo{Store: f.st, t: t}
	f.sched = planning.NewSchedule(f.repo, func() time.Time { return f.now })
	return f
}

// racingRepo is the store with another writer: for each of the next `races` loads it changes the template
// between the service's read and its write, as a concurrent request would, so the service's write meets a
// real version conflict on the table. It counts loads and saves.
type racingRepo struct {
	*store.Store
	t            *testing.T
	races        int
	loads, saves int
	conflicts    int // in a row
	interfering  int
	failLoad     error
}

func (r *racingRepo) LoadSchedule(ctx context.Context, channelID, week string) (planning.Template, int64, planning.Week, int64, error) {
	r.loads++
	if r.failLoad != nil {
		return planning.Template{}, 0, planning.Week{}, 0, r.failLoad
	}
	if r.conflicts > 10 {
		// A retry loop that does not stop: end it here so the test fails rather than hangs.
		return planning.Template{}, 0, planning.Week{}, 0, errors.New("too many attempts")
	}
	tpl, tv, w, wv, err := r.Store.LoadSchedule(ctx, channelID, week)
	if err == nil && r.races > 0 {
		r.races--
		r.interfering++
		slots := append(append([]planning.Slot{}, tpl.Slots...), planning.Slot{DayOfWeek: 6, SlotType: planning.Prep})
		if r.interfering > 1 {
			slots = append(slots, planning.Slot{DayOfWeek: r.interfering - 2, SlotType: planning.Edit})
		}
		if err := r.Store.SaveSchedule(ctx, channelID, planning.Template{Slots: dedupe(slots)}, tv, nil, 0, ""); err != nil {
			r.t.Fatalf("interfering write: %v", err)
		}
	}
	return tpl, tv, w, wv, err
}

func (r *racingRepo) SaveSchedule(ctx context.Context, channelID string, t planning.Template, tWas int64, week *planning.Week, wWas int64, checkVideo string, evs ...webhooks.Event) error {
	r.saves++
	err := r.Store.SaveSchedule(ctx, channelID, t, tWas, week, wWas, checkVideo, evs...)
	if apperr.CodeOf(err) == apperr.Conflict {
		r.conflicts++
	} else {
		r.conflicts = 0
	}
	return err
}

func dedupe(slots []planning.Slot) []planning.Slot {
	seen := map[string]bool{}
	var out []planning.Slot
	for _, s := range slots {
		if !seen[s.Identity()] {
			seen[s.Identity()] = true
			out = append(out, s)
		}
	}
	return out
}

func publish(day int, at, contentType string) contract.ScheduleSlotInput {
	return contract.ScheduleSlotInput{DayOfWeek: day, SlotType: contract.SlotTypePublish,
		ContentType: contract.Ptr(contract.ContentType(contentType)), PublishTime: contract.Some(at)}
}

func (f *scheduleFixture) video(t *testing.T, title string) videos.Video {
	t.Helper()
	v, err := videos.NewService(f.st, func() time.Time { return f.now }).CommitVideo(context.Background(), ch,
		contract.CommitVideoRequest{Title: &title, ContentType: contract.Ptr(contract.ContentTypeLong), FormulaType: contract.Ptr("f")})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// identities lists a view's slots as "day|type|time=video".
func identities(v planning.View) string {
	var out []string
	for _, s := range v.Slots {
		id := s.Identity()
		if s.AssignedVideoID != nil {
			id += "=" + *s.AssignedVideoID
		}
		out = append(out, id)
	}
	return strings.Join(out, " ")
}

func TestScheduleGet(t *testing.T) {
	ctx := context.Background()
	f := newSchedule(t)
	a, b := f.video(t, "A"), f.video(t, "B")
	week := "2026-11-22"
	for _, in := range []contract.ScheduleSlotInput{
		publish(2, "15:00", "Long"), publish(4, "09:00", "Short"), publish(4, "18:00", "Short"),
		{DayOfWeek: 1, SlotType: contract.SlotTypeBatchFilm},
	} {
		if _, err := f.sched.Upsert(ctx, ch, in); err != nil {
			t.Fatal(err)
		}
	}
	// The same video in two slots of the week, another one in a third.
	for _, as := range []struct {
		in contract.ScheduleSlotInput
		id string
	}{{publish(2, "15:00", "Long"), a.ID}, {publish(4, "09:00", "Short"), a.ID}, {publish(4, "18:00", "Short"), b.ID}} {
		as.in.AssignedVideoID, as.in.WeekStart = contract.Some(as.id), &week
		if _, err := f.sched.Upsert(ctx, ch, as.in); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.sched.Get(ctx, ch, "2026-11-28") // the Saturday of that week
	if err != nil {
		t.Fatal(err)
	}
	want := "1|batch_film| 2|publish|15:00=" + a.ID + " 4|publish|09:00=" + a.ID + " 4|publish|18:00=" + b.ID
	if got.WeekStart != week || identities(got) != want {
		t.Fatalf("Get = %s %s\nwant  %s %s", got.WeekStart, identities(got), week, want)
	}
	if len(got.WeeklyVideos) != 2 || got.WeeklyVideos[0].ID != a.ID || got.WeeklyVideos[1].ID != b.ID {
		t.Fatalf("weeklyVideos = %+v; want A then B, once each", got.WeeklyVideos)
	}

	// The current week (no date: today's, in UTC) has the template but none of that week's assignments...
	f.now = time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)
	cur, err := f.sched.Get(ctx, ch, "")
	if err != nil {
		t.Fatal(err)
	}
	if cur.WeekStart != "2026-11-29" || strings.Contains(identities(cur), "=") || cur.WeeklyVideos == nil || len(cur.WeeklyVideos) != 0 {
		t.Fatalf("next week = %s %s %v; want the template alone and weeklyVideos []", cur.WeekStart, identities(cur), cur.WeeklyVideos)
	}
	// ...and another channel has nothing at all.
	other, err := f.sched.Get(ctx, "other", week)
	if err != nil || len(other.Slots) != 0 || other.Slots == nil || len(other.WeeklyVideos) != 0 {
		t.Fatalf("another channel = %+v, %v; want empty lists", other, err)
	}
	if _, err := f.sched.Get(ctx, ch, "2026-02-30"); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("an impossible date: %v", err)
	}
	f.repo.failLoad = errors.New("table down")
	if _, err := f.sched.Get(ctx, ch, week); !errors.Is(err, f.repo.failLoad) {
		t.Fatalf("a failing table: %v", err)
	}
}

func TestScheduleUpsert(t *testing.T) {
	ctx := context.Background()
	f := newSchedule(t)
	v := f.video(t, "A")
	week := "2026-11-25" // a Wednesday: normalised to Sunday 2026-11-22

	in := publish(2, "15:00", "Long")
	slot, err := f.sched.Upsert(ctx, ch, in)
	if err != nil || slot.Identity() != "2|publish|15:00" || *slot.ContentType != "Long" || slot.AssignedVideoID != nil {
		t.Fatalf("Upsert = %+v, %v", slot, err)
	}
	// Same identity: replaced, not added.
	slot, err = f.sched.Upsert(ctx, ch, publish(2, "15:00", "Short"))
	if err != nil || *slot.ContentType != "Short" {
		t.Fatalf("replace = %+v, %v", slot, err)
	}
	// Assigned for a week: the answer carries the video, the week shows it, other weeks do not.
	in.AssignedVideoID, in.WeekStart = contract.Some(v.ID), &week
	slot, err = f.sched.Upsert(ctx, ch, in)
	if err != nil || slot.AssignedVideoID == nil || *slot.AssignedVideoID != v.ID {
		t.Fatalf("assign = %+v, %v", slot, err)
	}
	view, _ := f.sched.Get(ctx, ch, week)
	if identities(view) != "2|publish|15:00="+v.ID || len(view.WeeklyVideos) != 1 {
		t.Fatalf("after assigning: %s", identities(view))
	}
	// Absent: the assignment stays, and the answer still shows it.
	in.AssignedVideoID = contract.Optional[string]{}
	if slot, err = f.sched.Upsert(ctx, ch, in); err != nil || slot.AssignedVideoID == nil {
		t.Fatalf("assignedVideoId absent = %+v, %v; want the assignment kept", slot, err)
	}
	// Explicit null: cleared.
	in.AssignedVideoID = contract.Optional[string]{Set: true}
	if slot, err = f.sched.Upsert(ctx, ch, in); err != nil || slot.AssignedVideoID != nil {
		t.Fatalf("assignedVideoId null = %+v, %v; want cleared", slot, err)
	}
	if view, _ := f.sched.Get(ctx, ch, week); identities(view) != "2|publish|15:00" {
		t.Fatalf("after clearing: %s", identities(view))
	}
	// Without weekStart, the assignment goes to the current week.
	in.AssignedVideoID, in.WeekStart = contract.Some(v.ID), nil
	if _, err := f.sched.Upsert(ctx, ch, in); err != nil {
		t.Fatal(err)
	}
	if view, _ := f.sched.Get(ctx, ch, "2026-11-22"); identities(view) != "2|publish|15:00="+v.ID {
		t.Fatalf("no weekStart: %s; want this week's assignment", identities(view))
	}

	// Refusals change nothing.
	before, _ := f.sched.Get(ctx, ch, week)
	missing := "0190a000-0000-7000-8000-999999999999"
	bad := []struct {
		name string
		in   contract.ScheduleSlotInput
		code apperr.Code
	}{
		{"day 7", publish(7, "15:00", "Long"), apperr.Validation},
		{"publish without a type", contract.ScheduleSlotInput{DayOfWeek: 1, SlotType: contract.SlotTypePublish, PublishTime: contract.Some("10:00")}, apperr.Validation},
		{"rest with a time", contract.ScheduleSlotInput{DayOfWeek: 1, SlotType: contract.SlotTypeRest, PublishTime: contract.Some("10:00")}, apperr.Validation},
		{"an unknown video", func() contract.ScheduleSlotInput {
			i := publish(5, "10:00", "Long")
			i.AssignedVideoID = contract.Some(missing)
			return i
		}(), apperr.NotFound},
		{"an impossible week", func() contract.ScheduleSlotInput {
			i := publish(5, "10:00", "Long")
			i.WeekStart = contract.Ptr("2026-02-30")
			return i
		}(), apperr.Validation},
	}
	for _, b := range bad {
		if _, err := f.sched.Upsert(ctx, ch, b.in); apperr.CodeOf(err) != b.code {
			t.Errorf("%s: %v; want %s", b.name, err, b.code)
		}
	}
	if after, _ := f.sched.Get(ctx, ch, week); identities(after) != identities(before) {
		t.Errorf("refused upserts changed the schedule: %s, was %s", identities(after), identities(before))
	}
	f.repo.failLoad = errors.New("table down")
	if _, err := f.sched.Upsert(ctx, ch, publish(5, "10:00", "Long")); !errors.Is(err, f.repo.failLoad) {
		t.Fatalf("a failing table: %v", err)
	}
}

// TestScheduleSlotLimit: the 100th slot is stored, the 101st refused; replacing a slot of a full schedule
// is still allowed.
func TestScheduleSlotLimit(t *testing.T) {
	ctx := context.Background()
	f := newSchedule(t)
	for i := range planning.MaxSlots {
		if _, err := f.sched.Upsert(ctx, ch, publish(i%7, fmt.Sprintf("%02d:%02d", i/60, i%60), "Long")); err != nil {
			t.Fatalf("slot %d: %v", i+1, err)
		}
	}
	if _, err := f.sched.Upsert(ctx, ch, contract.ScheduleSlotInput{DayOfWeek: 0, SlotType: contract.SlotTypeRest}); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("slot %d: %v; want VALIDATION_ERROR", planning.MaxSlots+1, err)
	}
	if _, err := f.sched.Upsert(ctx, ch, publish(0, "00:00", "Short")); err != nil {
		t.Fatalf("replacing a slot of a full schedule: %v", err)
	}
	if v, _ := f.sched.Get(ctx, ch, ""); len(v.Slots) != planning.MaxSlots {
		t.Fatalf("%d slots, want %d", len(v.Slots), planning.MaxSlots)
	}
}

// TestScheduleRetriesConflicts: a change that races another one is read again and reapplied, up to five
// attempts, without losing the other writer's change; the fifth lost race answers CONFLICT.
func TestScheduleRetriesConflicts(t *testing.T) {
	ctx := context.Background()
	for _, races := range []int{0, 1, 4, 5} {
		t.Run(fmt.Sprint(races, " races"), func(t *testing.T) {
			f := newSchedule(t)
			f.repo.races = races
			_, err := f.sched.Upsert(ctx, ch, publish(2, "15:00", "Long"))
			attempts := min(races+1, 5)
			if f.repo.loads != attempts || f.repo.saves != attempts {
				t.Fatalf("%d loads, %d saves; want %d of each", f.repo.loads, f.repo.saves, attempts)
			}
			view, _ := f.sched.Get(ctx, ch, "")
			if races == 5 {
				if apperr.CodeOf(err) != apperr.Conflict {
					t.Fatalf("Upsert = %v; want CONFLICT after 5 attempts", err)
				}
				if strings.Contains(identities(view), "publish") {
					t.Fatalf("the refused slot was stored: %s", identities(view))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Ours and every interfering writer's slots are all there.
			if got := len(view.Slots); got != 1+min(races, 1)+max(races-1, 0) {
				t.Fatalf("after %d races: %s", races, identities(view))
			}
		})
	}
	for _, races := range []int{0, 1, 4, 5} {
		t.Run(fmt.Sprint("delete after ", races, " races"), func(t *testing.T) {
			f := newSchedule(t)
			if _, err := f.sched.Upsert(ctx, ch, publish(2, "15:00", "Long")); err != nil {
				t.Fatal(err)
			}
			f.repo.loads, f.repo.saves, f.repo.races = 0, 0, races
			err := f.sched.Delete(ctx, ch, 2, planning.Publish, contract.Ptr("15:00"))
			attempts := min(races+1, 5)
			if f.repo.loads != attempts || f.repo.saves != attempts {
				t.Fatalf("%d loads, %d saves; want %d of each", f.repo.loads, f.repo.saves, attempts)
			}
			view, _ := f.sched.Get(ctx, ch, "")
			if races == 5 {
				if apperr.CodeOf(err) != apperr.Conflict || !strings.Contains(identities(view), "2|publish|15:00") {
					t.Fatalf("Delete = %v, schedule %s; want CONFLICT and the slot kept", err, identities(view))
				}
				return
			}
			if err != nil || strings.Contains(identities(view), "publish") {
				t.Fatalf("Delete = %v, schedule %s", err, identities(view))
			}
		})
	}
}

func TestScheduleDelete(t *testing.T) {
	ctx := context.Background()
	f := newSchedule(t)
	for _, in := range []contract.ScheduleSlotInput{publish(2, "15:00", "Long"), publish(2, "18:00", "Long"),
		{DayOfWeek: 2, SlotType: contract.SlotTypeEdit}} {
		if _, err := f.sched.Upsert(ctx, ch, in); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		day   int
		typ   planning.SlotType
		at    *string
		ok    bool
		after string
	}{
		{"another time", 2, planning.Publish, contract.Ptr("16:00"), false, "2|edit| 2|publish|15:00 2|publish|18:00"},
		{"another day", 3, planning.Publish, contract.Ptr("15:00"), false, "2|edit| 2|publish|15:00 2|publish|18:00"},
		{"a publish slot", 2, planning.Publish, contract.Ptr("15:00"), true, "2|edit| 2|publish|18:00"},
		{"a slot without a time", 2, planning.Edit, nil, true, "2|publish|18:00"},
		{"the same slot again", 2, planning.Edit, nil, false, "2|publish|18:00"},
	}
	for _, tt := range tests {
		err := f.sched.Delete(ctx, ch, tt.day, tt.typ, tt.at)
		if tt.ok != (err == nil) || (!tt.ok && apperr.CodeOf(err) != apperr.NotFound) {
			t.Errorf("%s: %v; want deleted %t (else NOT_FOUND)", tt.name, err, tt.ok)
		}
		if v, _ := f.sched.Get(ctx, ch, ""); identities(v) != tt.after {
			t.Errorf("%s: schedule %s; want %s", tt.name, identities(v), tt.after)
		}
	}
	if err := f.sched.Delete(ctx, "other", 2, planning.Publish, contract.Ptr("18:00")); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("another channel's slot: %v", err)
	}
	f.repo.failLoad = errors.New("table down")
	if err := f.sched.Delete(ctx, ch, 2, planning.Publish, contract.Ptr("18:00")); !errors.Is(err, f.repo.failLoad) {
		t.Fatalf("a failing table: %v", err)
	}
}
