package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/store"
)

// RunConnection runs the conformance suite of the YouTube connection's access patterns
// (shared/store/connection.go) over a table whose expiry follows now.
func RunConnection(t *testing.T, newTable func(t *testing.T, now func() time.Time) store.Table) {
	t.Helper()
	groups := []struct {
		name string
		run  func(t *testing.T, st *store.Store, advance func(time.Duration))
	}{
		{"StateTakenOnce", testStateTakenOnce},
		{"StateTakenOnceConcurrently", testStateConcurrent},
		{"StateExpires", testStateExpires},
		{"ConnectionAndIndex", testConnectionIndex},
		{"StateBoundOnceConcurrently", testStateBound},
		{"YouTubeChannelIndex", testYouTubeChannelIndex},
		{"TranscriptsDeletedWithTheConnection", testTranscriptsDeleted},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			at := time.Now().UTC().Truncate(time.Second)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
			advance := func(d time.Duration) { mu.Lock(); at = at.Add(d); mu.Unlock() }
			g.run(t, store.New(newTable(t, now), store.WithClock(now)), advance)
		})
	}
}

func pending(st *store.Store, hash, channelID string, ttl time.Duration) connection.PendingState {
	return connection.PendingState{Hash: hash, ChannelID: channelID, SealedVerifier: []byte("sealed-" + hash),
		ExpiresAt: st.Now().Add(ttl)}
}

func testStateTakenOnce(t *testing.T, st *store.Store, _ func(time.Duration)) {
	ctx := t.Context()
	want := pending(st, "h1", "chan-a", 10*time.Minute)
	if err := st.PutOAuthState(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := st.PutOAuthState(ctx, want); err == nil {
		t.Fatal("a second state with the same hash was stored")
	}
	got, err := st.TakeOAuthState(ctx, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ChannelID != "chan-a" || string(got.SealedVerifier) != "sealed-h1" || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("took %+v, want %+v", got, want)
	}
	if _, err := st.TakeOAuthState(ctx, "h1"); !errors.Is(err, connection.ErrStateNotFound) {
		t.Fatalf("second take: %v, want ErrStateNotFound", err)
	}
	if _, err := st.TakeOAuthState(ctx, "unknown"); !errors.Is(err, connection.ErrStateNotFound) {
		t.Fatalf("unknown state: %v, want ErrStateNotFound", err)
	}
}

func testStateConcurrent(t *testing.T, st *store.Store, _ func(time.Duration)) {
	ctx := t.Context()
	for round := range 5 {
		hash := "race-" + string(rune('a'+round))
		if err := st.PutOAuthState(ctx, pending(st, hash, "chan-a", 10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		var won, lost atomic.Int32
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				_, err := st.TakeOAuthState(ctx, hash)
				switch {
				case err == nil:
					won.Add(1)
				case errors.Is(err, connection.ErrStateNotFound):
					lost.Add(1)
				default:
					t.Errorf("take: %v", err)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 || lost.Load() != 15 {
			t.Fatalf("round %d: %d callbacks took the state, %d were refused; want 1 and 15", round, won.Load(), lost.Load())
		}
	}
}

func testStateExpires(t *testing.T, st *store.Store, advance func(time.Duration)) {
	ctx := t.Context()
	if err := st.PutOAuthState(ctx, pending(st, "old", "chan-a", 10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	advance(10*time.Minute + time.Second)
	if _, err := st.TakeOAuthState(ctx, "old"); !errors.Is(err, connection.ErrStateNotFound) {
		t.Fatalf("expired state: %v, want ErrStateNotFound", err)
	}
}

func testConnectionIndex(t *testing.T, st *store.Store, _ func(time.Duration)) {
	ctx := t.Context()
	if _, err := st.GetConnection(ctx, "chan-a"); !errors.Is(err, connection.ErrNotConnected) {
		t.Fatalf("no connection yet: %v", err)
	}
	if _, err := st.UpdateConnection(ctx, "chan-a", func(*connection.Connection) error { return nil }); !errors.Is(err, connection.ErrNotConnected) {
		t.Fatalf("update without a connection: %v", err)
	}
	at := st.Now()
	for _, ch := range []string{"chan-a", "chan-b"} {
		c := connection.Connection{ChannelID: ch, Status: connection.Connected, YouTubeChannelID: "UC-" + ch,
			YouTubeChannelTitle: "Title " + ch, Language: "en", Scopes: connection.Scopes,
			SealedRefreshToken: []byte("sealed " + ch), ConnectedAt: at}
		if err := st.SaveConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.GetConnection(ctx, "chan-a")
	if err != nil {
		t.Fatal(err)
	}
	if got.YouTubeChannelID != "UC-chan-a" || string(got.SealedRefreshToken) != "sealed chan-a" ||
		!got.ConnectedAt.Equal(at) || got.LastSyncAt != nil || !slices.Equal(got.Scopes, connection.Scopes) || got.Language != "en" {
		t.Fatalf("got %+v", got)
	}
	if ids, err := st.ConnectedChannels(ctx); err != nil || !slices.Equal(ids, []string{"chan-a", "chan-b"}) {
		t.Fatalf("connected: %v %v", ids, err)
	}
	synced := at.Add(time.Hour)
	if _, err := st.UpdateConnection(ctx, "chan-a", func(c *connection.Connection) error { c.LastSyncAt = &synced; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateConnection(ctx, "chan-b", func(c *connection.Connection) error { c.Status = connection.NeedsReconnect; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetConnection(ctx, "chan-a"); got.LastSyncAt == nil || !got.LastSyncAt.Equal(synced) {
		t.Fatalf("lastSyncAt %v, want %v", got.LastSyncAt, synced)
	}
	if ids, err := st.ConnectedChannels(ctx); err != nil || !slices.Equal(ids, []string{"chan-a"}) {
		t.Fatalf("connected after chan-b needs reconnecting: %v %v", ids, err)
	}
	// Concurrent updates are all applied (optimistic locking with retries).
	var wg sync.WaitGroup
	var n atomic.Int32
	for range 4 {
		wg.Go(func() {
			if _, err := st.UpdateConnection(ctx, "chan-a", func(c *connection.Connection) error {
				c.Scopes = append(slices.Clone(c.Scopes), "x")
				return nil
			}); err == nil {
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if got, _ := st.GetConnection(ctx, "chan-a"); len(got.Scopes) != len(connection.Scopes)+int(n.Load()) {
		t.Fatalf("%d updates succeeded but the stored scopes are %v", n.Load(), got.Scopes)
	}
	// Reconnecting replaces the connection whole.
	if err := st.SaveConnection(ctx, connection.Connection{ChannelID: "chan-b", Status: connection.Connected,
		YouTubeChannelID: "UC-new", SealedRefreshToken: []byte("new"), ConnectedAt: at}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetConnection(ctx, "chan-b"); got.YouTubeChannelID != "UC-new" || got.Status != connection.Connected {
		t.Fatalf("reconnected: %+v", got)
	}
	if err := st.DeleteConnection(ctx, "chan-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetConnection(ctx, "chan-a"); !errors.Is(err, connection.ErrNotConnected) {
		t.Fatalf("after delete: %v", err)
	}
	if ids, err := st.ConnectedChannels(ctx); err != nil || !slices.Equal(ids, []string{"chan-b"}) {
		t.Fatalf("connected after delete: %v %v", ids, err)
	}
}

// Of concurrent binders of one state exactly one records its browser; the others get ErrStateBound, and
// the state the callback takes carries the winner's hash.
func testStateBound(t *testing.T, st *store.Store, advance func(time.Duration)) {
	ctx := t.Context()
	if _, err := st.BindOAuthState(ctx, "nope", "b"); !errors.Is(err, connection.ErrStateNotFound) {
		t.Fatalf("binding an unknown state: %v", err)
	}
	if err := st.PutOAuthState(ctx, pending(st, "hb", "chan-a", 10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	winner := make(chan string, 16)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			browser := fmt.Sprintf("browser-%d", i)
			got, err := st.BindOAuthState(ctx, "hb", browser)
			switch {
			case err == nil:
				won.Add(1)
				winner <- browser
				if got.ChannelID != "chan-a" || got.BrowserHash != browser {
					t.Errorf("bound %+v", got)
				}
			case !errors.Is(err, connection.ErrStateBound):
				t.Errorf("bind: %v", err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d binders won, want 1", won.Load())
	}
	got, err := st.TakeOAuthState(ctx, "hb")
	if err != nil || got.BrowserHash != <-winner {
		t.Fatalf("took %+v %v", got, err)
	}
	// A bound state still expires.
	if err := st.PutOAuthState(ctx, pending(st, "hc", "chan-a", time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.BindOAuthState(ctx, "hc", "b"); err != nil {
		t.Fatal(err)
	}
	advance(time.Minute + time.Second)
	if _, err := st.TakeOAuthState(ctx, "hc"); !errors.Is(err, connection.ErrStateNotFound) {
		t.Fatalf("an expired bound state: %v", err)
	}
}

// The channels connected to a YouTube channel: listed whatever their status, moved when a channel is
// connected to another YouTube channel, gone with the connection.
func testYouTubeChannelIndex(t *testing.T, st *store.Store, _ func(time.Duration)) {
	ctx := t.Context()
	for _, id := range []string{"chan-a", "chan-b"} {
		if err := st.SaveConnection(ctx, connection.Connection{ChannelID: id, Status: connection.Connected, YouTubeChannelID: "UC1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.UpdateConnection(ctx, "chan-b", func(c *connection.Connection) error { c.Status = connection.NeedsReconnect; return nil }); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.YouTubeChannelConnections(ctx, "UC1"); err != nil || !slices.Equal(ids, []string{"chan-a", "chan-b"}) {
		t.Fatalf("UC1: %v %v", ids, err)
	}
	if err := st.SaveConnection(ctx, connection.Connection{ChannelID: "chan-a", Status: connection.Connected, YouTubeChannelID: "UC2"}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := st.YouTubeChannelConnections(ctx, "UC1"); !slices.Equal(ids, []string{"chan-b"}) {
		t.Fatalf("UC1 after chan-a moved: %v", ids)
	}
	if ids, _ := st.YouTubeChannelConnections(ctx, "UC2"); !slices.Equal(ids, []string{"chan-a"}) {
		t.Fatalf("UC2: %v", ids)
	}
	if err := st.DeleteConnection(ctx, "chan-b"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := st.YouTubeChannelConnections(ctx, "UC1"); len(ids) != 0 {
		t.Fatalf("UC1 after chan-b was deleted: %v", ids)
	}
}

// Deleting a connection deletes its channel's cached transcripts (more than one page of them), and no
// other channel's.
func testTranscriptsDeleted(t *testing.T, st *store.Store, _ func(time.Duration)) {
	ctx := t.Context()
	if err := st.SaveConnection(ctx, connection.Connection{ChannelID: "chan-a", Status: connection.Connected, YouTubeChannelID: "UC1"}); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if err := st.PutTranscript(ctx, "chan-a", fmt.Sprintf("v%010d", i), "t", "1", "words"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutTranscript(ctx, "chan-b", "v0000000000", "t", "1", "b"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteConnection(ctx, "chan-a"); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if text, _, err := st.CachedTranscript(ctx, "chan-a", fmt.Sprintf("v%010d", i), "t", "1"); err != nil || text != "" {
			t.Fatalf("transcript %d: %q %v", i, text, err)
		}
	}
	if text, _, _ := st.CachedTranscript(ctx, "chan-b", "v0000000000", "t", "1"); text != "b" {
		t.Fatalf("chan-b's transcript: %q", text)
	}
}
