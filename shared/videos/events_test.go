package videos_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// recorder is a Publisher that keeps each call's events.
type recorder struct{ calls [][]webhooks.Event }

func (r *recorder) PublishEvents(_ context.Context, evs ...webhooks.Event) {
	r.calls = append(r.calls, evs)
}

// TestEventsArePublishedOnceWritten: each change publishes its one event, the one it put into the outbox,
// right after writing it; a no-op or a refusal publishes nothing.
func TestEventsArePublishedOnceWritten(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	rec := &recorder{}
	s := videos.NewService(f.st, func() time.Time { return f.now }, videos.WithPublisher(rec))
	racing := videos.NewService(failingRepo{Store: f.st, race: true}, func() time.Time { return f.now }, videos.WithPublisher(rec))

	idea := videos.Idea{ID: f.st.NewID(), Title: "From the backlog", ContentType: "Short", FormulaType: "g"}
	if err := f.st.PutIdea(ctx, "ch", idea); err != nil {
		t.Fatal(err)
	}
	var first videos.Video
	missing := "0190a000-0000-7000-8000-999999999999"
	for _, tc := range []struct {
		name string
		do   func() (videos.Video, error)
		code apperr.Code // the refusal expected, "" for none
		// typ is the event type published, "" for none; data are fields its data must hold.
		typ  string
		data map[string]string
	}{
		{"commit from scratch", func() (videos.Video, error) {
			v, err := s.CommitVideo(ctx, "ch", commit("A", "Long", contract.Optional[string]{}))
			first = v
			return v, err
		}, "", webhooks.VideoCommitted, map[string]string{"title": "A", "status": "planned"}},
		{"commit an idea", func() (videos.Video, error) {
			return s.CommitVideo(ctx, "ch", contract.CommitVideoRequest{IdeaID: &idea.ID})
		}, "", webhooks.VideoCommitted, map[string]string{"title": idea.Title, "contentType": "Short"}},
		{"a status change", func() (videos.Video, error) {
			v, _, err := s.SetStatus(ctx, "ch", contract.VideoStatusUpdate{VideoID: first.ID, Status: contract.VideoStatusScripted})
			return v, err
		}, "", webhooks.VideoStatusChanged, map[string]string{"status": "scripted", "previousStatus": "planned"}},
		{"the same status again", func() (videos.Video, error) {
			_, _, err := s.SetStatus(ctx, "ch", contract.VideoStatusUpdate{VideoID: first.ID, Status: contract.VideoStatusScripted})
			return videos.Video{}, err
		}, "", "", nil},
		{"an unknown series", func() (videos.Video, error) {
			_, err := s.CommitVideo(ctx, "ch", commit("B", "Long", contract.Some(missing)))
			return videos.Video{}, err
		}, apperr.NotFound, "", nil},
		{"an idea committed twice", func() (videos.Video, error) {
			_, err := s.CommitVideo(ctx, "ch", contract.CommitVideoRequest{IdeaID: &idea.ID})
			return videos.Video{}, err
		}, apperr.NotFound, "", nil},
		{"a lost race", func() (videos.Video, error) {
			_, _, err := racing.SetStatus(ctx, "ch", contract.VideoStatusUpdate{VideoID: first.ID, Status: contract.VideoStatusFilmed})
			return videos.Video{}, err
		}, apperr.Conflict, "", nil},
	} {
		before := len(rec.calls)
		v, err := tc.do()
		if (tc.code == "" && err != nil) || apperr.CodeOf(err) != tc.code {
			t.Fatalf("%s: %v; want %q", tc.name, err, tc.code)
		}
		if tc.typ == "" {
			if len(rec.calls) != before {
				t.Errorf("%s published %v; want nothing", tc.name, rec.calls[before:])
			}
			continue
		}
		if len(rec.calls) != before+1 || len(rec.calls[before]) != 1 {
			t.Fatalf("%s: %d calls, %v; want one call with one event", tc.name, len(rec.calls)-before, rec.calls[before:])
		}
		ev := rec.calls[before][0]
		var data map[string]any
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		if ev.Type != tc.typ || ev.ChannelID != "ch" || !ev.Time.Equal(f.now) || data["id"] != v.ID {
			t.Errorf("%s published %s for %s at %s about %v; want %s for ch at %s about %s", tc.name, ev.Type, ev.ChannelID, ev.Time, data["id"], tc.typ, f.now, v.ID)
		}
		for k, want := range tc.data {
			if data[k] != want {
				t.Errorf("%s: data.%s = %v, want %q", tc.name, k, data[k], want)
			}
		}
		if !inOutbox(t, f, ev.ID) {
			t.Errorf("%s published event %s, which is not in the outbox", tc.name, ev.ID)
		}
	}
}

func inOutbox(t *testing.T, f *fixture, id string) bool {
	t.Helper()
	msgs, err := f.st.OldOutbox(context.Background(), f.now.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.ID == id {
			return true
		}
	}
	return false
}
