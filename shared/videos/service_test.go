package videos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/videos"
)

type fixture struct {
	st     *store.Store
	v      *videos.Service
	series *planning.SeriesService
	now    time.Time
}

func newFixture(t testing.TB) *fixture {
	n := 0
	f := &fixture{now: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	f.st = store.New(memstore.New(t), store.WithIDs(func() string { n++; return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }))
	clock := func() time.Time { return f.now }
	f.v = videos.NewService(f.st, clock)
	f.series = planning.NewSeriesService(f.st, clock)
	return f
}

func (f *fixture) listed(t *testing.T, filter videos.Filter) []videos.Video {
	t.Helper()
	raw, err := f.v.List(context.Background(), "ch", filter)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]videos.Video, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestCommitCountsTheVideoInItsSeries(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	se, err := f.series.Create(ctx, "ch", contract.SeriesCreate{Name: "Budget Bites"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.v.CommitVideo(ctx, "ch", commit("A", "Long", contract.Some(se.ID)))
	if err != nil || v.Status != videos.Planned || len(v.StatusHistory) != 1 || *v.SeriesID != se.ID {
		t.Fatalf("CommitVideo = %+v, %v", v, err)
	}
	idea := videos.Idea{ID: f.st.NewID(), Title: "From the backlog", ContentType: "Short", FormulaType: "g"}
	if err := f.st.PutIdea(ctx, "ch", idea); err != nil {
		t.Fatal(err)
	}
	fromIdea, err := f.v.CommitVideo(ctx, "ch", contract.CommitVideoRequest{IdeaID: &idea.ID, SeriesID: contract.Some(se.ID)})
	if err != nil || fromIdea.Title != idea.Title || fromIdea.ContentType != "Short" {
		t.Fatalf("commit idea = %+v, %v", fromIdea, err)
	}
	if _, err := f.v.CommitVideo(ctx, "ch", commit("No series", "Long", contract.Optional[string]{Set: true})); err != nil {
		t.Fatalf("an empty seriesId means none: %v", err)
	}
	got, _, err := f.st.GetSeries(ctx, "ch", se.ID)
	if err != nil || got.VideoCount != 2 {
		t.Fatalf("series %+v, %v; want videoCount 2", got, err)
	}

	// Refused commits change nothing: not the series, not the backlog, not the pipeline.
	missing := "0190a000-0000-7000-8000-999999999999"
	if _, err := f.v.CommitVideo(ctx, "ch", commit("B", "Long", contract.Some(missing))); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("unknown series: %v", err)
	}
	if _, err := f.v.CommitVideo(ctx, "other", commit("B", "Long", contract.Some(se.ID))); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another channel's series: %v", err)
	}
	if _, err := f.v.CommitVideo(ctx, "ch", contract.CommitVideoRequest{IdeaID: &idea.ID}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("an idea committed twice: %v", err)
	}
	if n := len(f.listed(t, videos.Filter{})); n != 3 {
		t.Fatalf("%d videos; want 3", n)
	}
	if got, _, _ := f.st.GetSeries(ctx, "ch", se.ID); got.VideoCount != 2 {
		t.Fatalf("videoCount %d after refused commits; want 2", got.VideoCount)
	}
}

func TestStatusFiltersAndOrder(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var made []videos.Video
	for i, ct := range []string{"Long", "Short", "Long"} {
		v, err := f.v.CommitVideo(ctx, "ch", commit(fmt.Sprint("V", i), ct, contract.Optional[string]{}))
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, v)
	}
	f.now = f.now.Add(time.Hour)
	v, changed, err := f.v.SetStatus(ctx, "ch", contract.VideoStatusUpdate{VideoID: made[0].ID, Status: contract.VideoStatusPublished})
	if err != nil || !changed || v.Status != videos.Published || len(v.StatusHistory) != 2 || !v.UpdatedAt.Equal(f.now) {
		t.Fatalf("SetStatus = %+v %t, %v", v, changed, err)
	}
	if v, changed, err := f.v.SetStatus(ctx, "ch", contract.VideoStatusUpdate{VideoID: made[0].ID, Status: contract.VideoStatusPublished}); err != nil || changed || len(v.StatusHistory) != 2 {
		t.Fatalf("the same status again: %+v %t, %v; want a no-op", v, changed, err)
	}
	if _, _, err := f.v.SetStatus(ctx, "other", contract.VideoStatusUpdate{VideoID: made[0].ID, Status: contract.VideoStatusEdited}); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another channel's video: %v", err)
	}

	all := f.listed(t, videos.Filter{})
	if len(all) != 3 || all[0].ID != made[2].ID || all[2].ID != made[0].ID {
		t.Fatalf("not newest first: %+v", all)
	}
	if got := f.listed(t, videos.Filter{Status: videos.Published}); len(got) != 1 || got[0].ID != made[0].ID {
		t.Fatalf("status filter: %+v", got)
	}
	if got := f.listed(t, videos.Filter{ContentType: "Long", Status: videos.Planned}); len(got) != 1 || got[0].ID != made[2].ID {
		t.Fatalf("both filters: %+v", got)
	}
	if got := f.listed(t, videos.Filter{ContentType: "Podcast"}); len(got) != 0 {
		t.Fatalf("no match: %+v", got)
	}
}

func TestIdeasPaging(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var ids []string
	for i := range 25 {
		ct := "Long"
		if i%5 == 0 {
			ct = "Short"
		}
		idea := videos.Idea{ID: f.st.NewID(), Title: fmt.Sprint("I", i), ContentType: ct, FormulaType: "f"}
		if err := f.st.PutIdea(ctx, "ch", idea); err != nil {
			t.Fatal(err)
		}
		ids = append([]string{idea.ID}, ids...) // newest first
	}
	page, total, err := f.v.ListIdeas(ctx, "ch", "", 20, 0)
	if err != nil || total != 25 || len(page) != 20 || page[0].ID != ids[0] || page[19].ID != ids[19] {
		t.Fatalf("first page: %d ideas, total %d, %v", len(page), total, err)
	}
	if page, total, _ := f.v.ListIdeas(ctx, "ch", "", 20, 20); total != 25 || len(page) != 5 || page[4].ID != ids[24] {
		t.Fatalf("last page: %d ideas, total %d", len(page), total)
	}
	if page, total, _ := f.v.ListIdeas(ctx, "ch", "", 20, 25); total != 25 || page == nil || len(page) != 0 {
		t.Fatalf("past the end: %v, total %d; want [] and the total", page, total)
	}
	if page, total, _ := f.v.ListIdeas(ctx, "ch", "Short", 2, 1); total != 5 || len(page) != 2 || page[0].ContentType != "Short" {
		t.Fatalf("contentType filter: %+v, total %d", page, total)
	}
	if err := f.v.DeleteIdea(ctx, "ch", ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := f.v.DeleteIdea(ctx, "ch", ids[0]); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("second delete: %v", err)
	}
	if _, total, _ := f.v.ListIdeas(ctx, "ch", "", 20, 0); total != 24 {
		t.Fatalf("after delete: total %d", total)
	}
}

// commit is the body of a video committed from scratch.
func commit(title, contentType string, seriesID contract.Optional[string]) contract.CommitVideoRequest {
	return contract.CommitVideoRequest{Title: &title, ContentType: contract.Ptr(contract.ContentType(contentType)),
		FormulaType: contract.Ptr("f"), SeriesID: seriesID}
}

// failingRepo is the store with some calls failing or raced.
type failingRepo struct {
	*store.Store
	err error
	// race, when set, changes the video between the service's read and its write.
	race bool
}

func (r failingRepo) ListVideos(ctx context.Context, channelID string) ([]videos.Stored, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.Store.ListVideos(ctx, channelID)
}

func (r failingRepo) ListIdeas(ctx context.Context, channelID string) ([]videos.Idea, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.Store.ListIdeas(ctx, channelID)
}

func (r failingRepo) GetVideo(ctx context.Context, channelID, id string) (videos.Video, int64, error) {
	v, version, err := r.Store.GetVideo(ctx, channelID, id)
	if err == nil && r.race {
		other := v
		other.Title = "changed elsewhere"
		if err := r.Store.UpdateVideo(ctx, channelID, other, version); err != nil {
			return videos.Video{}, 0, err
		}
	}
	return v, version, err
}

// TestTableErrorsAreNotSwallowed: a failing table is an error, filter or no filter.
func TestTableErrorsAreNotSwallowed(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	down := errors.New("table down")
	s := videos.NewService(failingRepo{Store: f.st, err: down}, time.Now)
	for _, filter := range []videos.Filter{{}, {Status: videos.Planned}, {ContentType: "Long"}} {
		if got, err := s.List(ctx, "ch", filter); !errors.Is(err, down) {
			t.Errorf("List(%+v) = %v, %v; want the table's error", filter, got, err)
		}
	}
	for _, ct := range []string{"", "Short"} {
		if got, total, err := s.ListIdeas(ctx, "ch", ct, 20, 0); !errors.Is(err, down) {
			t.Errorf("ListIdeas(%q) = %v, %d, %v; want the table's error", ct, got, total, err)
		}
	}
}

// TestIdeasContentTypeFilter: the filter keeps exactly the ideas of that type, newest first, and the total
// counts them alone.
func TestIdeasContentTypeFilter(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	want := map[string][]string{}
	types := []string{"Long", "Short", "Podcast", "Short", "Long", "Short"}
	for i, ct := range types {
		idea := videos.Idea{ID: f.st.NewID(), Title: fmt.Sprint("I", i), ContentType: ct, FormulaType: "f"}
		if err := f.st.PutIdea(ctx, "ch", idea); err != nil {
			t.Fatal(err)
		}
		want[ct] = append([]string{idea.ID}, want[ct]...)
	}
	for _, ct := range []string{"Long", "Short", "Podcast", "Film"} {
		page, total, err := f.v.ListIdeas(ctx, "ch", ct, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, i := range page {
			got = append(got, i.ID)
		}
		if total != len(want[ct]) || fmt.Sprint(got) != fmt.Sprint(want[ct]) {
			t.Errorf("ListIdeas(%s) = %v (total %d); want %v", ct, got, total, want[ct])
		}
	}
	if _, total, _ := f.v.ListIdeas(ctx, "ch", "", 2, 0); total != len(types) {
		t.Errorf("no filter: total %d, want %d", total, len(types))
	}
}

// TestRefusalsChangeNothing: bad input and a lost race are refused, and nothing is written.
func TestRefusalsChangeNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	v, err := f.v.CommitVideo(ctx, "ch", commit("A", "Long", contract.Optional[string]{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.v.CommitVideo(ctx, "ch", commit("", "Long", contract.Optional[string]{})); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("empty title: %v", err)
	}
	if _, err := f.v.CommitVideo(ctx, "ch", contract.CommitVideoRequest{}); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("neither an idea nor a video: %v", err)
	}
	if _, _, err := f.v.SetStatus(ctx, "ch", contract.VideoStatusUpdate{VideoID: v.ID, Status: "released"}); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("an unknown status: %v", err)
	}
	racing := videos.NewService(failingRepo{Store: f.st, race: true}, time.Now)
	if _, changed, err := racing.SetStatus(ctx, "ch", contract.VideoStatusUpdate{VideoID: v.ID, Status: contract.VideoStatusFilmed}); apperr.CodeOf(err) != apperr.Conflict || changed {
		t.Errorf("a lost race: changed %t, %v; want CONFLICT", changed, err)
	}
	all := f.listed(t, videos.Filter{})
	if len(all) != 1 || all[0].Status != videos.Planned || len(all[0].StatusHistory) != 1 || all[0].Title != "changed elsewhere" {
		t.Errorf("after refusals: %+v; want the one video, planned, as the other writer left it", all)
	}
}
