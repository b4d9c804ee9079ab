package store_test

import (
	"errors"
	"testing"

	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

var (
	connectionAt = store.Key{PK: "YTCONN#chan-a", SK: "YTCONN"}
	legacyAt     = store.Key{PK: "CH#chan-a", SK: "YTCONN"}
)

// toLegacy moves chan-a's connection item to where it was kept before decision 50, in the channel's
// partition.
func toLegacy(t *testing.T, table store.Table) {
	t.Helper()
	it, err := table.Get(t.Context(), connectionAt)
	if err != nil {
		t.Fatal(err)
	}
	it.Key = legacyAt
	if err := table.Write(t.Context(), store.Put(it, store.Always), store.Delete(connectionAt, store.Always)); err != nil {
		t.Fatal(err)
	}
}

// A connection lives outside the channel partition (which the webhook dispatcher reads); one kept there
// before is read there, and moved out when next written or deleted with the connection.
func TestConnectionKeptOutsideTheChannelPartition(t *testing.T) {
	table := memstore.New(t)
	st := store.New(table)
	ctx := t.Context()
	c := connection.Connection{ChannelID: "chan-a", Status: connection.Connected, YouTubeChannelID: "UC1", SealedRefreshToken: []byte("sealed")}
	if err := st.SaveConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Get(ctx, legacyAt); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the connection is in the channel partition: %v", err)
	}

	toLegacy(t, table)
	got, err := st.GetConnection(ctx, "chan-a")
	if err != nil || string(got.SealedRefreshToken) != "sealed" {
		t.Fatalf("a legacy connection: %+v %v", got, err)
	}
	if _, err := st.UpdateConnection(ctx, "chan-a", func(c *connection.Connection) error { c.SealedRefreshToken = []byte("resealed"); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Get(ctx, legacyAt); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the legacy item stays after an update: %v", err)
	}
	if got, err := st.GetConnection(ctx, "chan-a"); err != nil || string(got.SealedRefreshToken) != "resealed" {
		t.Fatalf("after moving: %+v %v", got, err)
	}

	toLegacy(t, table)
	if err := st.SaveConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Get(ctx, legacyAt); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the legacy item stays after a save: %v", err)
	}

	toLegacy(t, table)
	if err := st.DeleteConnection(ctx, "chan-a"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []store.Key{legacyAt, connectionAt} {
		if _, err := table.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%v after deleting: %v", k, err)
		}
	}
	if ids, _ := st.YouTubeChannelConnections(ctx, "UC1"); len(ids) != 0 {
		t.Fatalf("UC1 lists %v", ids)
	}
}
