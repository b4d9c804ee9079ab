package videos_test

import (
	"slices"
	"testing"

	"github.com/creatorstrategy/css/shared/videos"
)

// TestNewIdeas: a candidate joins the backlog unless its title is taken (case and surrounding space
// ignored) or empty, and no more than room of them join, in the order given.
func TestNewIdeas(t *testing.T) {
	ideas := func(titles ...string) []videos.Idea {
		out := make([]videos.Idea, len(titles))
		for i, title := range titles {
			out[i] = videos.Idea{ID: title, Title: title}
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		candidates []videos.Idea
		taken      []string
		room       int
		want       []string
	}{
		{"all fit", ideas("a", "b", "c"), nil, 3, []string{"a", "b", "c"}},
		{"room for one fewer", ideas("a", "b", "c"), nil, 2, []string{"a", "b"}},
		{"room for one", ideas("a", "b"), nil, 1, []string{"a"}},
		{"no room", ideas("a", "b"), nil, 0, nil},
		{"a full backlog", ideas("a"), nil, -1, nil},
		{"room to spare", ideas("a", "b"), nil, 200, []string{"a", "b"}},
		{"taken titles", ideas("Budget meals", "b", " budget MEALS  "), []string{"BUDGET MEALS"}, 5, []string{"b"}},
		{"taken with space around", ideas("meal prep", "c"), []string{"  Meal Prep\t"}, 5, []string{"c"}},
		{"given twice", ideas("x", " X", "y", "x"), nil, 5, []string{"x", "y"}},
		{"empty titles", ideas("", "  ", "z"), nil, 5, []string{"z"}},
		// Only ideas that join take room: the duplicates ahead do not use it up.
		{"duplicates ahead of the room", ideas("t", "T", "u", "v", "w"), []string{"t"}, 2, []string{"u", "v"}},
		{"more taken than candidates", ideas("p", "q"), []string{"a", "b", "c", "d", "p"}, 5, []string{"q"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, i := range videos.NewIdeas(tc.candidates, tc.taken, tc.room) {
				got = append(got, i.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("NewIdeas = %q, want %q", got, tc.want)
			}
		})
	}
}
