package planning_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/memtable"
)

func TestSeriesRules(t *testing.T) {
	ctx := context.Background()
	n := 0
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	st := store.New(memtable.New(), store.WithIDs(func() string { n++; return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }))
	s := planning.NewSeriesService(st, func() time.Time { return now })

	off := false
	first, err := s.Create(ctx, "ch", contract.SeriesCreate{Name: "A", Description: "d", ScriptFormula: "f"})
	if err != nil || !first.IsActive || first.VideoCount != 0 || !first.CreatedAt.Equal(now) {
		t.Fatalf("Create = %+v, %v; want active by default", first, err)
	}
	second, _ := s.Create(ctx, "ch", contract.SeriesCreate{Name: "B", IsActive: &off})
	if second.IsActive {
		t.Fatal("isActive false was not kept")
	}
	for i := 2; i < planning.MaxSeries; i++ {
		if _, err := s.Create(ctx, "ch", contract.SeriesCreate{Name: fmt.Sprint(i)}); err != nil {
			t.Fatalf("series %d: %v", i+1, err)
		}
	}
	if _, err := s.Create(ctx, "ch", contract.SeriesCreate{Name: "one too many"}); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("series %d: %v; want VALIDATION_ERROR", planning.MaxSeries+1, err)
	}
	list, err := s.List(ctx, "ch")
	if err != nil || len(list) != planning.MaxSeries || list[0].ID != first.ID || list[1].ID != second.ID {
		t.Fatalf("List: %d series, %v; want %d, oldest first", len(list), err, planning.MaxSeries)
	}

	now = now.Add(time.Hour)
	name := "A, renamed"
	up, err := s.Update(ctx, "ch", first.ID, contract.SeriesUpdate{Name: &name, IsActive: &off})
	if err != nil || up.Name != name || up.IsActive || up.Description != "d" || up.ScriptFormula != "f" ||
		!up.UpdatedAt.Equal(now) || !up.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("Update = %+v, %v; want only the fields present changed", up, err)
	}
	if _, err := s.Update(ctx, "other", first.ID, contract.SeriesUpdate{Name: &name}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another channel's series: %v", err)
	}
	if err := s.Delete(ctx, "ch", second.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "ch", second.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Create(ctx, "ch", contract.SeriesCreate{Name: "in its place"}); err != nil {
		t.Fatalf("a deleted series gives its place back: %v", err)
	}
}
