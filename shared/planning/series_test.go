package planning_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

func TestSeriesRules(t *testing.T) {
	ctx := context.Background()
	n := 0
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	st := store.New(memstore.New(t), store.WithIDs(func() string { n++; return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }))
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

// TestSeriesUpdateFields: each field present changes alone; the others, and createdAt, stay.
func TestSeriesUpdateFields(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	st := store.New(memstore.New(t))
	s := planning.NewSeriesService(st, func() time.Time { return now })
	orig, err := s.Create(ctx, "ch", contract.SeriesCreate{Name: "N", Description: "D", ScriptFormula: "F"})
	if err != nil {
		t.Fatal(err)
	}
	off := false
	tests := []struct {
		name  string
		patch contract.SeriesUpdate
		want  string // name|description|scriptFormula|isActive
	}{
		{"name", contract.SeriesUpdate{Name: contract.Ptr("N2")}, "N2|D|F|true"},
		{"description", contract.SeriesUpdate{Description: contract.Ptr("D2")}, "N|D2|F|true"},
		{"empty description", contract.SeriesUpdate{Description: contract.Ptr("")}, "N||F|true"},
		{"script formula", contract.SeriesUpdate{ScriptFormula: contract.Ptr("F2")}, "N|D|F2|true"},
		{"isActive", contract.SeriesUpdate{IsActive: &off}, "N|D|F|false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case starts from the original series.
			_, v, err := st.GetSeries(ctx, "ch", orig.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.UpdateSeries(ctx, "ch", orig, v); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Minute)
			up, err := s.Update(ctx, "ch", orig.ID, tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := st.GetSeries(ctx, "ch", orig.ID)
			for _, se := range []planning.Series{up, got} {
				if s := fmt.Sprintf("%s|%s|%s|%t", se.Name, se.Description, se.ScriptFormula, se.IsActive); s != tt.want {
					t.Errorf("%s, want %s", s, tt.want)
				}
				if !se.UpdatedAt.Equal(now) || !se.CreatedAt.Equal(orig.CreatedAt) || se.ID != orig.ID {
					t.Errorf("times/id: %+v", se)
				}
			}
		})
	}
}

// racingSeries changes a series between the service's read and its write, as a concurrent request would.
type racingSeries struct {
	*store.Store
	fail error
}

func (r racingSeries) GetSeries(ctx context.Context, channelID, id string) (planning.Series, int64, error) {
	se, v, err := r.Store.GetSeries(ctx, channelID, id)
	if err == nil {
		other := se
		other.Name = "changed elsewhere"
		if err := r.Store.UpdateSeries(ctx, channelID, other, v); err != nil {
			return planning.Series{}, 0, err
		}
	}
	return se, v, err
}

func (r racingSeries) ListSeries(ctx context.Context, channelID string) ([]planning.Series, error) {
	if r.fail != nil {
		return nil, r.fail
	}
	return r.Store.ListSeries(ctx, channelID)
}

func (r racingSeries) CreateSeries(ctx context.Context, channelID string, s planning.Series, max int) error {
	if r.fail != nil {
		return r.fail
	}
	return r.Store.CreateSeries(ctx, channelID, s, max)
}

// TestSeriesRefusals: bad input and a lost race are refused, and change nothing; the table's errors pass
// through.
func TestSeriesRefusals(t *testing.T) {
	ctx := context.Background()
	st := store.New(memstore.New(t))
	s := planning.NewSeriesService(st, time.Now)
	se, err := s.Create(ctx, "ch", contract.SeriesCreate{Name: "N"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "ch", contract.SeriesCreate{Name: ""}); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("empty name: %v", err)
	}
	if _, err := s.Update(ctx, "ch", se.ID, contract.SeriesUpdate{}); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("empty patch: %v", err)
	}
	if _, err := s.Update(ctx, "ch", se.ID, contract.SeriesUpdate{Name: contract.Ptr("")}); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("empty name: %v", err)
	}
	racing := planning.NewSeriesService(racingSeries{Store: st}, time.Now)
	if _, err := racing.Update(ctx, "ch", se.ID, contract.SeriesUpdate{Name: contract.Ptr("mine")}); apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("a lost race: %v; want CONFLICT", err)
	}
	if got, _, _ := st.GetSeries(ctx, "ch", se.ID); got.Name != "changed elsewhere" {
		t.Errorf("after a lost race the series is %q; want the other writer's", got.Name)
	}
	if list, _ := s.List(ctx, "ch"); len(list) != 1 {
		t.Errorf("%d series after refusals, want 1", len(list))
	}
	down := errors.New("table down")
	failing := planning.NewSeriesService(racingSeries{Store: st, fail: down}, time.Now)
	if _, err := failing.Create(ctx, "ch", contract.SeriesCreate{Name: "N"}); !errors.Is(err, down) {
		t.Errorf("Create on a failing table: %v", err)
	}
	if _, err := failing.List(ctx, "ch"); !errors.Is(err, down) {
		t.Errorf("List on a failing table: %v", err)
	}
}
