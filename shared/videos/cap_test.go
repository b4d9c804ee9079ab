package videos_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/videos"
)

// Issue 19 item 18: a channel's pipeline holds at most CSS_MAX_VIDEOS videos; past it, committing answers
// 400 VALIDATION_ERROR naming the limit, from scratch and from an idea (which stays in the backlog).
func TestThePipelineIsCapped(t *testing.T) {
	if videos.DefaultMaxVideos != config.DefaultMaxVideos {
		t.Fatalf("videos.DefaultMaxVideos %d, config.DefaultMaxVideos %d", videos.DefaultMaxVideos, config.DefaultMaxVideos)
	}
	ctx := context.Background()
	f := newFixture(t)
	capped := videos.NewService(f.st, func() time.Time { return f.now }, videos.WithMaxVideos(3))
	commit := func(title string) error {
		_, err := capped.CommitVideo(ctx, "ch", contract.CommitVideoRequest{Title: contract.Ptr(title),
			ContentType: contract.Ptr(contract.ContentType("Long")), FormulaType: contract.Ptr("story")})
		return err
	}
	for _, title := range []string{"one", "two", "three"} {
		if err := commit(title); err != nil {
			t.Fatalf("%s: %v", title, err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.Validation || !strings.Contains(e.Message, "3 videos") || !strings.Contains(e.Message, "CSS_MAX_VIDEOS") {
			t.Errorf("%s: %v, want VALIDATION_ERROR naming the limit of 3", what, err)
		}
	}
	refused("the 4th", commit("four"))
	idea := videos.Idea{ID: f.st.NewID(), Title: "an idea", ContentType: "Long", FormulaType: "story", CreatedAt: f.now}
	if err := f.st.PutIdea(ctx, "ch", idea); err != nil {
		t.Fatal(err)
	}
	_, err := capped.CommitVideo(ctx, "ch", contract.CommitVideoRequest{IdeaID: contract.Ptr(idea.ID)})
	refused("an idea past the cap", err)
	if ideas, _ := f.st.ListIdeas(ctx, "ch"); len(ideas) != 1 {
		t.Errorf("the refused idea left the backlog: %d ideas", len(ideas))
	}
	if all, _ := capped.List(ctx, "ch", videos.Filter{}); len(all) != 3 {
		t.Errorf("%d videos, want 3", len(all))
	}
	if err := commit("other channel"); err == nil {
		t.Error("the cap did not hold")
	}
	if _, err := capped.CommitVideo(ctx, "ch2", contract.CommitVideoRequest{Title: contract.Ptr("theirs"),
		ContentType: contract.Ptr(contract.ContentType("Long")), FormulaType: contract.Ptr("story")}); err != nil {
		t.Errorf("another channel: %v", err)
	}
}
