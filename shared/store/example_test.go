package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
)

// An access pattern on the in-memory table: notes are counted against the channel's limit in the same
// transaction that writes them (decision 9), and live in the channel's own partition.
func ExampleStore_CreateNote() {
	ctx := context.Background()
	table, err := pebble.OpenMemory()
	if err != nil {
		panic(err)
	}
	defer table.Close()
	n := 0
	ids := func() string { n++; return fmt.Sprintf("0193a000-0000-7000-8000-%012d", n) } // time-ordered, as UUIDv7s are
	s := store.New(table, store.WithIDs(ids))
	const channel = "01a21e02-cb20-7a19-b4a0-d5046e55ca04"
	const limit = 2 // the service's limit is 500; 2 keeps the example short

	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for i, content := range []string{"Shorts do best on Tuesdays", "Hooks under 5 s", "One too many"} {
		note := notes.Note{ID: s.NewID(), Category: "insight", Content: content, Source: notes.FromApp, CreatedAt: at.Add(time.Duration(i) * time.Minute)}
		fmt.Println(content+":", s.CreateNote(ctx, channel, note, limit))
	}

	list, _ := s.ListNotes(ctx, channel) // newest first
	for _, n := range list {
		fmt.Println(n.Content)
	}

	// What the table holds: the notes and their counter, under the channel's partition key.
	page, _ := table.Query(ctx, store.Query{PK: "CH#" + channel})
	for _, it := range page.Items {
		fmt.Printf("%s %s count=%d\n", it.PK[:7]+"…", it.SK, it.Count)
	}

	fmt.Println(s.DeleteNote(ctx, channel, list[0].ID))
	fmt.Println(s.DeleteNote(ctx, channel, list[0].ID))
	// Output:
	// Shorts do best on Tuesdays: <nil>
	// Hooks under 5 s: <nil>
	// One too many: VALIDATION_ERROR: maximum of 2 notes reached
	// Hooks under 5 s
	// Shorts do best on Tuesdays
	// CH#01a2… COUNT#notes count=2
	// CH#01a2… NOTE#0193a000-0000-7000-8000-000000000001 count=0
	// CH#01a2… NOTE#0193a000-0000-7000-8000-000000000002 count=0
	// <nil>
	// NOT_FOUND: note 0193a000-0000-7000-8000-000000000002 not found
}
