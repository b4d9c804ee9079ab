package notes_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

var now = time.Date(2026, 11, 20, 9, 30, 0, 123456789, time.UTC)

func service(t testing.TB) *notes.Service {
	n := 0
	st := store.New(memstore.New(t), store.WithIDs(func() string { n++; return fmt.Sprintf("0190a000-0000-7000-8000-%012d", n) }))
	return notes.NewService(st, func() time.Time { return now })
}

func TestCreateAndList(t *testing.T) {
	ctx := context.Background()
	s := service(t)
	a, err := s.Create(ctx, "ch", contract.NoteCreate{Category: "insight", Content: "Shorts do best on Tuesdays"}, notes.FromMCP)
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != notes.FromMCP || !a.CreatedAt.Equal(now.Truncate(time.Millisecond)) || a.ID == "" {
		t.Fatalf("created %+v", a)
	}
	b, _ := s.Create(ctx, "ch", contract.NoteCreate{Category: "style", Content: "No jump cuts"}, notes.FromApp)
	c, _ := s.Create(ctx, "ch", contract.NoteCreate{Category: "insight", Content: "Hooks under 5 s"}, notes.FromApp)
	if _, err := s.Create(ctx, "other", contract.NoteCreate{Category: "insight", Content: "elsewhere"}, notes.FromApp); err != nil {
		t.Fatal(err)
	}

	all, err := s.List(ctx, "ch", "")
	if err != nil || len(all) != 3 || all[0].ID != c.ID || all[1].ID != b.ID || all[2].ID != a.ID {
		t.Fatalf("List = %+v, %v; want the three notes newest first", all, err)
	}
	if all[2] != a {
		t.Fatalf("stored %+v; created %+v", all[2], a)
	}
	insights, _ := s.List(ctx, "ch", "insight")
	if len(insights) != 2 || insights[0].ID != c.ID || insights[1].ID != a.ID {
		t.Fatalf("List(insight) = %+v", insights)
	}
	if none, _ := s.List(ctx, "ch", "decision"); len(none) != 0 {
		t.Fatalf("List(decision) = %+v", none)
	}

	if err := s.Delete(ctx, "ch", b.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "ch", b.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("second delete: %v", err)
	}
	if err := s.Delete(ctx, "other", a.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("delete through another channel: %v", err)
	}
}

func TestLimit(t *testing.T) {
	ctx := context.Background()
	s := service(t)
	var first notes.Note
	for i := range notes.MaxNotes {
		n, err := s.Create(ctx, "ch", contract.NoteCreate{Category: "general", Content: fmt.Sprint(i)}, notes.FromApp)
		if err != nil {
			t.Fatalf("note %d: %v", i, err)
		}
		if i == 0 {
			first = n
		}
	}
	if _, err := s.Create(ctx, "ch", contract.NoteCreate{Category: "general", Content: "one more"}, notes.FromApp); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("note %d: %v; want VALIDATION_ERROR", notes.MaxNotes+1, err)
	}
	if _, err := s.Create(ctx, "other", contract.NoteCreate{Category: "general", Content: "x"}, notes.FromApp); err != nil {
		t.Fatalf("the limit is per channel: %v", err)
	}
	if err := s.Delete(ctx, "ch", first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "ch", contract.NoteCreate{Category: "general", Content: "in its place"}, notes.FromApp); err != nil {
		t.Fatalf("a deleted note gives its place back: %v", err)
	}
}

// TestCreateChecksItsInput: the service holds the contract's rules itself, so a caller that never went
// through REST (an MCP tool, a worker) gets the same refusal, and nothing is stored.
func TestCreateChecksItsInput(t *testing.T) {
	ctx := context.Background()
	s := service(t)
	for _, in := range []contract.NoteCreate{
		{Category: "diary", Content: "x"},
		{Category: "general", Content: ""},
		{Category: "general", Content: strings.Repeat("é", 2001)},
	} {
		_, err := s.Create(ctx, "ch", in, notes.FromMCP)
		if e, ok := apperr.As(err); !ok || e.Code != apperr.Validation || e.Field == "" {
			t.Errorf("Create(%.40v) = %v; want a VALIDATION_ERROR naming the field", in, err)
		}
	}
	if _, err := s.Create(ctx, "ch", contract.NoteCreate{Category: "general", Content: strings.Repeat("é", 2000)}, notes.FromMCP); err != nil {
		t.Errorf("2,000 characters: %v", err)
	}
	if all, _ := s.List(ctx, "ch", ""); len(all) != 1 {
		t.Errorf("%d notes stored, want 1", len(all))
	}
}

// failingNotes fails every call with err.
type failingNotes struct {
	notes.Repository
	err error
}

func (f failingNotes) NewID() string { return "0190a000-0000-7000-8000-000000000001" }
func (f failingNotes) ListNotes(context.Context, string) ([]notes.Note, error) {
	return nil, f.err
}
func (f failingNotes) CreateNote(context.Context, string, notes.Note, int) error { return f.err }

// TestTableErrorsPassThrough: a failing table is the caller's error, with or without a category.
func TestTableErrorsPassThrough(t *testing.T) {
	ctx := context.Background()
	down := errors.New("table down")
	s := notes.NewService(failingNotes{err: down}, time.Now)
	for _, category := range []string{"", "insight"} {
		if got, err := s.List(ctx, "ch", category); !errors.Is(err, down) || got != nil {
			t.Errorf("List(%q) = %v, %v; want the table's error", category, got, err)
		}
	}
	if n, err := s.Create(ctx, "ch", contract.NoteCreate{Category: "insight", Content: "x"}, notes.FromApp); !errors.Is(err, down) || n != (notes.Note{}) {
		t.Errorf("Create = %+v, %v; want the table's error", n, err)
	}
}
