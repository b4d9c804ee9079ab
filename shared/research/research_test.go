package research_test

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/memtable"
)

func TestInsights(t *testing.T) {
	ctx := context.Background()
	st := store.New(memtable.New())
	s, err := research.NewService(st, nil, research.DefaultConfig(research.SourceOffline), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Insights(ctx, "ch"); err != nil || got != (research.Patterns{}) {
		t.Fatalf("before research: %+v, %v; want empty patterns", got, err)
	}
	p := research.Patterns{Titles: "Numbers in titles", Ideas: "Budget angles"}
	if err := st.PutPatterns(ctx, "ch", p); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Insights(ctx, "ch"); err != nil || got != p {
		t.Fatalf("Insights = %+v, %v; want %+v", got, err, p)
	}
	if got, _ := s.Insights(ctx, "other"); got != (research.Patterns{}) {
		t.Fatalf("another channel sees %+v", got)
	}
}
