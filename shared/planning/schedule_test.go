package planning

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
)

func TestWeekOf(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 30, 0, 0, time.FixedZone("x", -5*3600)) // Sunday 04:30 UTC
	for in, want := range map[string]string{
		"":           "2026-11-22",
		"2026-11-22": "2026-11-22", // a Sunday stays
		"2026-11-28": "2026-11-22", // Saturday
		"2026-11-21": "2026-11-15",
		"2027-01-01": "2026-12-27", // across a year
		"2024-03-01": "2024-02-25", // across a leap day
		"1900-01-07": "1900-01-07", // the first week that starts in the contract's dates
		"9999-12-24": "9999-12-19", // the last date
	} {
		got, err := WeekOf(in, now)
		if err != nil || got != want {
			t.Errorf("WeekOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// 1900-01-01..06: their week starts on 1899-12-31, before the contract's dates.
	for _, bad := range []string{"2026-02-30", "2026-13-01", "21/11/2026", "2026-11-2", "1900-01-01", "1900-01-06"} {
		if _, err := WeekOf(bad, now); apperr.CodeOf(err) != apperr.Validation {
			t.Errorf("WeekOf(%q): %v", bad, err)
		}
	}
}

func ptr(s string) *string { return &s }

func TestTemplateUpsert(t *testing.T) {
	var tpl Template
	var err error
	for _, s := range []Slot{
		{DayOfWeek: 3, SlotType: Publish, ContentType: ptr("Long"), PublishTime: ptr("15:00")},
		{DayOfWeek: 1, SlotType: Rest},
		{DayOfWeek: 3, SlotType: Publish, ContentType: ptr("Short"), PublishTime: ptr("09:00")},
		{DayOfWeek: 3, SlotType: Publish, ContentType: ptr("Short"), PublishTime: ptr("15:00")}, // replaces the first
		{DayOfWeek: 1, SlotType: Edit},
		{DayOfWeek: 0, SlotType: Prep},
	} {
		if tpl, err = tpl.upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, s := range tpl.Slots {
		ids = append(ids, s.Identity())
	}
	// Day, then time (untimed first), then type.
	got := fmt.Sprint(strings.Join(ids, " "), " ", *tpl.Slots[4].ContentType)
	if want := "0|prep| 1|edit| 1|rest| 3|publish|09:00 3|publish|15:00 Short"; got != want {
		t.Errorf("order/replace: %s, want %s", got, want)
	}
	full := Template{}
	for i := 0; i < MaxSlots; i++ {
		full.Slots = append(full.Slots, Slot{DayOfWeek: i % 7, SlotType: Publish, PublishTime: ptr(fmt.Sprintf("%02d:%02d", i/60, i%60))})
	}
	if _, err := full.upsert(Slot{DayOfWeek: 0, SlotType: Rest}); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("slot %d accepted: %v", MaxSlots+1, err)
	}
	if _, err := full.upsert(full.Slots[5]); err != nil {
		t.Errorf("updating a slot of a full template: %v", err)
	}
}

func TestSlotRules(t *testing.T) {
	set := contract.Optional[string]{Set: true, Value: ptr("v")}
	for name, c := range map[string]struct {
		s     Slot
		a     contract.Optional[string]
		field string
	}{
		"publish needs a type":   {Slot{SlotType: Publish, PublishTime: ptr("10:00")}, contract.Optional[string]{}, "contentType"},
		"publish needs a time":   {Slot{SlotType: Publish, ContentType: ptr("Long")}, contract.Optional[string]{}, "publishTime"},
		"rest has no type":       {Slot{SlotType: Rest, ContentType: ptr("Long")}, contract.Optional[string]{}, "contentType"},
		"edit has no time":       {Slot{SlotType: Edit, PublishTime: ptr("10:00")}, contract.Optional[string]{}, "publishTime"},
		"prep takes no video":    {Slot{SlotType: Prep}, set, "assignedVideoId"},
		"prep may clear a video": {Slot{SlotType: Prep}, contract.Optional[string]{Set: true}, ""},
		"a full publish slot":    {Slot{SlotType: Publish, ContentType: ptr("Long"), PublishTime: ptr("10:00")}, set, ""},
	} {
		err := checkSlot(c.s, c.a)
		e, _ := apperr.As(err)
		if (c.field == "" && err != nil) || (c.field != "" && (e == nil || e.Field != c.field)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
