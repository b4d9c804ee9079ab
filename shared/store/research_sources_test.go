package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/research"
)

// TestPatternSourcesStored (issue 19 item 1): patterns are stored with their source videos, and patterns
// stored before sources were kept (no sources member) still read, without sources.
func TestPatternSourcesStored(t *testing.T) {
	ctx := context.Background()
	key := researchKey("ch")
	fetched := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	old := Item{Key: key, Data: append([]byte{format2}, `{"titles":"Numbers in titles","ideas":"Budget angles","activeRun":"",`+
		`"set":{"runId":"r1","chunks":0,"videos":0,"source":"youtube","fetchedAt":"2026-11-01T00:00:00Z"}}`...), Version: 2}
	s := New(&memTable{items: map[Key]Item{key: old}}, WithClock(func() time.Time { return fetched.Add(time.Hour) }))
	got, err := s.GetPatterns(ctx, "ch")
	if want := (research.Patterns{Titles: "Numbers in titles", Ideas: "Budget angles"}); err != nil || got != want {
		t.Fatalf("patterns stored before sources read as %+v, %v; want %+v", got, err, want)
	}

	p := research.Patterns{Titles: "Numbers in titles", Sources: &research.PatternSources{
		Titles: []research.PatternSource{{VideoID: "v1", Title: "7 vegan meals", ChannelTitle: "Greens", URL: "https://www.youtube.com/watch?v=v1v1v1v1", Views: 900, OutlierScore: 4.5}},
	}}
	item, err := encode(key, researchStateRecordOf(research.State{Patterns: p, Set: &research.SetRef{RunID: "r2", FetchedAt: fetched}}))
	if err != nil {
		t.Fatal(err)
	}
	s = New(&memTable{items: map[Key]Item{key: item}}, WithClock(func() time.Time { return fetched.Add(time.Hour) }))
	if got, err := s.GetPatterns(ctx, "ch"); err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("patterns read back as %+v (sources %+v), %v; want %+v", got, got.Sources, err, p)
	}
}
