package videos

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// storedVideos is a repository that only lists (the other methods are not called).
type storedVideos struct {
	Repository
	all []Stored
}

func (s storedVideos) ListVideos(context.Context, string) ([]Stored, error) {
	return slices.Clone(s.all), nil
}

// TestListFiltersStoredVideos checks the filters read the top-level fields of the stored JSON: not the
// statuses in statusHistory, not look-alike text inside a title.
func TestListFiltersStoredVideos(t *testing.T) {
	at := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	mk := func(id, title, contentType string, history ...Status) Stored {
		v := Video{ID: id, Title: title, ContentType: contentType, FormulaType: "f", CreatedAt: at, UpdatedAt: at}
		for _, st := range history {
			v.Status = st
			v.StatusHistory = append(v.StatusHistory, StatusChange{Status: st, At: at})
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	all := []Stored{
		mk("a", `"status":"published","contentType":"Short"`, "Long", Planned, Published, Scripted),
		mk("b", "plain", "Short", Planned, Published),
		mk("c", "plain", "Long", Planned),
	}
	s := NewService(storedVideos{all: all}, time.Now)
	for _, tc := range []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{"a", "b", "c"}},
		{Filter{Status: Published}, []string{"b"}},
		{Filter{Status: Scripted}, []string{"a"}},
		{Filter{Status: Edited}, nil},
		{Filter{ContentType: "Short"}, []string{"b"}},
		{Filter{ContentType: "Long"}, []string{"a", "c"}},
		{Filter{Status: Planned, ContentType: "Long"}, []string{"c"}},
		{Filter{Status: Planned, ContentType: "Short"}, nil},
	} {
		got, err := s.List(context.Background(), "ch", tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, v := range got {
			var dec Video
			if err := json.Unmarshal(v, &dec); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, dec.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("List(%+v) = %v, want %v", tc.f, ids, tc.want)
		}
	}
}
