package connection_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/connectiontest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/transcript"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/youtube/owner"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

type event struct{ channel, name, ytChannel, reason string }

type recorder struct {
	mu     sync.Mutex
	events []event
	syncs  []string
}

func (r *recorder) Emit(_ context.Context, channelID, name string, data any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := data.(map[string]any)
	reason, _ := m["reason"].(string)
	r.events = append(r.events, event{channelID, name, m["youtubeChannelId"].(string), reason})
	return nil
}

func (r *recorder) RequestSync(_ context.Context, channelID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs = append(r.syncs, channelID)
	return nil
}

func (r *recorder) snapshot() ([]event, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events), slices.Clone(r.syncs)
}

// channels are the service channels: chan-a, chan-a2 and chan-b of account acct-1, chan-x of acct-2.
type channels map[string]accounts.Channel

func (c channels) GetChannel(_ context.Context, id string) (accounts.Channel, error) {
	if ch, ok := c[id]; ok {
		return ch, nil
	}
	return accounts.Channel{}, apperr.NotFoundf("channel not found")
}

var serviceChannels = channels{
	"chan-a":  {ID: "chan-a", AccountID: "acct-1", Name: "Vegan Bites HQ"},
	"chan-a2": {ID: "chan-a2", AccountID: "acct-1", Name: "Vegan Bites Shorts"},
	"chan-b":  {ID: "chan-b", AccountID: "acct-1", Name: "B"},
	"chan-x":  {ID: "chan-x", AccountID: "acct-2", Name: "Someone else"},
}

type fixture struct {
	google *connectiontest.Google
	table  *pebble.Table
	st     *store.Store
	rec    *recorder
	cipher webhooks.Cipher
	// legacy is the webhook secrets' key, which sealed refresh tokens before decision 50.
	legacy webhooks.Cipher
	now    atomic.Pointer[time.Time]
}

const (
	redirect = "http://127.0.0.1:1/api/youtube/oauth/callback"
	startURL = "http://127.0.0.1:1/api/youtube/oauth/start"
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{google: connectiontest.Start(t), table: memstore.New(t), rec: &recorder{}}
	f.st = store.New(f.table)
	key, _ := webhooks.DeriveKey(strings.Repeat("k", 32))
	f.legacy, _ = webhooks.NewAESGCM(key)
	f.cipher, _ = webhooks.NewAESGCM([]byte(strings.Repeat("t", webhooks.KeyBytes)))
	start := time.Now()
	f.now.Store(&start)
	return f
}

// service returns a new service over the fixture's store (a new instance: no cached token).
func (f *fixture) service() *connection.Service {
	return connection.New(connection.Config{
		Store: f.st, Cipher: f.cipher, LegacyCipher: f.legacy, Channels: serviceChannels, OAuth: f.google.OAuthConfig(redirect), StartURL: startURL,
		Identity: owner.Client{Endpoint: f.google.YouTube.Endpoint()},
		Revoker:  owner.Revoker{Endpoint: f.google.RevokeURL()},
		Emitter:  f.rec, Sync: f.rec, Now: func() time.Time { return *f.now.Load() },
	})
}

func (f *fixture) advance(d time.Duration) {
	t := f.now.Load().Add(d)
	f.now.Store(&t)
}

// callbackOf is Google's redirect u arriving in a browser carrying the binding browser ("": none).
func callbackOf(u *url.URL, browser string) connection.Callback {
	q := u.Query()
	return connection.Callback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), Browser: browser}
}

// stateOf reads the state of a start link.
func stateOf(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, startURL+"?") {
		t.Fatalf("start link %q", link)
	}
	return u.Query().Get("state")
}

// begin starts channelID's connection and opens the start link in a browser: Google's consent URL and
// that browser's binding.
func begin(t testing.TB, svc *connection.Service, channelID string) connection.Begun {
	t.Helper()
	link, _, err := svc.Start(t.Context(), channelID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.Begin(t.Context(), stateOf(t, link))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	return b
}

// consented runs the flow up to Google's redirect back for channelID as the owner subject, in the browser
// that opened the start link.
func consented(t testing.TB, svc *connection.Service, channelID, subject string) connection.Callback {
	t.Helper()
	b := begin(t, svc, channelID)
	return callbackOf(connectiontest.Consent(t, b.AuthorizationURL, subject), b.Browser)
}

// connect runs the whole flow for channelID as the owner subject.
func (f *fixture) connect(t *testing.T, svc *connection.Service, channelID, subject string) connection.Completed {
	t.Helper()
	c, err := svc.Complete(t.Context(), consented(t, svc, channelID, subject))
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	return c
}

func refusal(t *testing.T, err error) string {
	t.Helper()
	var re *connection.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a refusal", err)
	}
	return re.Message
}

func TestConnectUseAndDisconnect(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "Vegan Bites", "en")
	svc := f.service()

	link, expiresAt, err := svc.Start(t.Context(), "chan-a")
	if err != nil {
		t.Fatal(err)
	}
	if want := f.now.Load().Add(10 * time.Minute); expiresAt.Before(want.Add(-time.Second)) || expiresAt.After(want) {
		t.Fatalf("expiresAt %v, want %v", expiresAt, want)
	}
	begun, err := svc.Begin(t.Context(), stateOf(t, link))
	if err != nil || begun.ChannelName != "Vegan Bites HQ" || len(begun.Browser) < 40 {
		t.Fatalf("begin: %+v %v", begun, err)
	}
	authURL := begun.AuthorizationURL
	u, _ := url.Parse(authURL)
	q := u.Query()
	for k, want := range map[string]string{"code_challenge_method": "S256", "access_type": "offline", "prompt": "consent",
		"response_type": "code", "redirect_uri": redirect, "client_id": "css-test-client"} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	for _, sc := range connection.Scopes {
		if !slices.Contains(strings.Fields(q.Get("scope")), sc) {
			t.Errorf("scope %q missing from %q", sc, q.Get("scope"))
		}
	}
	if len(q.Get("state")) < 40 || len(q.Get("code_challenge")) != 43 {
		t.Fatalf("state %q, code_challenge %q", q.Get("state"), q.Get("code_challenge"))
	}

	c, err := svc.Complete(t.Context(), callbackOf(connectiontest.Consent(t, authURL, "owner-a"), begun.Browser))
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != connection.Connected || c.YouTubeChannelID != "UCaaaaaaaaaaaaaaaaaaaaaa" || c.YouTubeChannelTitle != "Vegan Bites" || c.Language != "en" ||
		c.ChannelName != "Vegan Bites HQ" {
		t.Fatalf("connection %+v", c)
	}
	got, err := svc.Get(t.Context(), "chan-a")
	if err != nil || got.Status != connection.Connected || !slices.Equal(got.Scopes, connection.Scopes) {
		t.Fatalf("get: %+v %v", got, err)
	}
	if ids, _ := svc.Connected(t.Context()); !slices.Equal(ids, []string{"chan-a"}) {
		t.Fatalf("connected %v", ids)
	}
	evs, syncs := f.rec.snapshot()
	if len(evs) != 1 || evs[0] != (event{"chan-a", connection.EventConnected, "UCaaaaaaaaaaaaaaaaaaaaaa", ""}) || !slices.Equal(syncs, []string{"chan-a"}) {
		t.Fatalf("events %v, syncs %v", evs, syncs)
	}

	// The owner's client reads the channel as its own, through a refreshed access token.
	client, ytID, err := f.service().OwnerClient(t.Context(), "chan-a")
	if err != nil || ytID != "UCaaaaaaaaaaaaaaaaaaaaaa" {
		t.Fatalf("owner client: %q %v", ytID, err)
	}
	mine, err := owner.Client{Endpoint: f.google.YouTube.Endpoint()}.OwnedChannel(t.Context(), client)
	if err != nil || mine.ID != ytID {
		t.Fatalf("mine: %+v %v", mine, err)
	}
	at := f.now.Load().Add(time.Hour)
	if err := svc.MarkSynced(t.Context(), "chan-a", at); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Get(t.Context(), "chan-a"); got.LastSyncAt == nil || !got.LastSyncAt.Equal(at.UTC().Truncate(time.Millisecond)) {
		t.Fatalf("lastSyncAt %v", got.LastSyncAt)
	}

	if err := svc.Disconnect(t.Context(), "chan-a"); err != nil {
		t.Fatal(err)
	}
	revoked := f.google.YouTube.Revoked()
	if len(revoked) != 1 || revoked[0] == "" {
		t.Fatalf("revoked %v", revoked)
	}
	if got, _ := svc.Get(t.Context(), "chan-a"); got.Status != connection.NotConnected {
		t.Fatalf("after disconnect: %+v", got)
	}
	if _, _, err := svc.OwnerClient(t.Context(), "chan-a"); !errors.Is(err, connection.ErrNotConnected) {
		t.Fatalf("owner client after disconnect: %v", err)
	}
	if err := svc.Disconnect(t.Context(), "chan-a"); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("second disconnect: %v", err)
	}
	evs, _ = f.rec.snapshot()
	if evs[len(evs)-1] != (event{"chan-a", connection.EventDisconnected, "UCaaaaaaaaaaaaaaaaaaaaaa", "disconnected"}) {
		t.Fatalf("events %v", evs)
	}
}

func TestRefreshTokenSealedAtRest(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	svc := f.service()
	f.connect(t, svc, "chan-a", "owner-a")
	c, _ := f.st.GetConnection(t.Context(), "chan-a")
	if err := svc.Disconnect(t.Context(), "chan-a"); err != nil {
		t.Fatal(err)
	}
	token := f.google.YouTube.Revoked()[0]
	if bytes.Contains(c.SealedRefreshToken, []byte(token)) {
		t.Fatal("the refresh token is stored in the clear")
	}
	// Sealed for chan-a: it does not open as another channel's.
	if _, err := f.cipher.Open(t.Context(), c.SealedRefreshToken, []byte("youtube-refresh-token\x00chan-b")); err == nil {
		t.Fatal("chan-a's sealed token opens for chan-b")
	}
	if pt, err := f.cipher.Open(t.Context(), c.SealedRefreshToken, []byte("youtube-refresh-token\x00chan-a")); err != nil || string(pt) != token {
		t.Fatalf("sealed token does not open for its channel: %v", err)
	}
}

func TestCallbackRefusals(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	svc := f.service()
	ctx := t.Context()
	nothingStored := func(t *testing.T) {
		t.Helper()
		if _, err := f.st.GetConnection(ctx, "chan-a"); !errors.Is(err, connection.ErrNotConnected) {
			t.Fatalf("a connection was stored: %v", err)
		}
	}

	t.Run("unknown state", func(t *testing.T) {
		_, err := svc.Complete(ctx, connection.Callback{State: "not-a-state-we-issued", Code: "x"})
		if msg := refusal(t, err); !strings.Contains(msg, "not valid") {
			t.Fatalf("message %q", msg)
		}
		nothingStored(t)
	})
	t.Run("no state", func(t *testing.T) {
		refusal(t, func() error { _, err := svc.Complete(ctx, connection.Callback{Code: "x"}); return err }())
		nothingStored(t)
	})
	t.Run("denied consent", func(t *testing.T) {
		b := begin(t, svc, "chan-a")
		u, _ := url.Parse(b.AuthorizationURL)
		_, err := svc.Complete(ctx, connection.Callback{State: u.Query().Get("state"), Error: "access_denied", Browser: b.Browser})
		if msg := refusal(t, err); !strings.Contains(msg, "not granted") {
			t.Fatalf("message %q", msg)
		}
		nothingStored(t)
		// The state is spent: the same link cannot be completed afterwards.
		if _, err := svc.Complete(ctx, connection.Callback{State: u.Query().Get("state"), Code: "x", Browser: b.Browser}); !strings.Contains(refusal(t, err), "used already") {
			t.Fatal("a denied state could be used again")
		}
	})
	t.Run("expired state", func(t *testing.T) {
		cb := consented(t, svc, "chan-a", "owner-a")
		f.advance(10*time.Minute + time.Second)
		defer f.advance(-(10*time.Minute + time.Second))
		if msg := refusal(t, func() error { _, err := svc.Complete(ctx, cb); return err }()); !strings.Contains(msg, "expired") {
			t.Fatalf("message %q", msg)
		}
		nothingStored(t)
	})
	t.Run("state of another channel", func(t *testing.T) {
		// The state item rewritten to name chan-b: its sealed verifier is chan-a's and does not open.
		cb := consented(t, svc, "chan-a", "owner-a")
		st, err := f.st.TakeOAuthState(ctx, connection.HashState(cb.State))
		if err != nil {
			t.Fatal(err)
		}
		st.ChannelID = "chan-b"
		if err := f.st.PutOAuthState(ctx, st); err != nil {
			t.Fatal(err)
		}
		refusal(t, func() error { _, err := svc.Complete(ctx, cb); return err }())
		if _, err := f.st.GetConnection(ctx, "chan-b"); !errors.Is(err, connection.ErrNotConnected) {
			t.Fatal("chan-b got connected with chan-a's state")
		}
		nothingStored(t)
	})
	t.Run("wrong code", func(t *testing.T) {
		cb := consented(t, svc, "chan-a", "owner-a")
		// mock-oauth2-server issues a token (for a subject nobody owns) even for a code it never gave; Google
		// would answer invalid_grant. Either way nothing is connected.
		cb.Code = "forged-" + cb.Code
		refusal(t, func() error { _, err := svc.Complete(ctx, cb); return err }())
		nothingStored(t)
	})
	t.Run("no refresh token", func(t *testing.T) {
		f.google.YouTube.OmitRefreshTokens(true)
		defer f.google.YouTube.OmitRefreshTokens(false)
		cb := consented(t, svc, "chan-a", "owner-a")
		if msg := refusal(t, func() error { _, err := svc.Complete(ctx, cb); return err }()); !strings.Contains(msg, "no refresh token") {
			t.Fatalf("message %q", msg)
		}
		nothingStored(t)
	})
	t.Run("reused state", func(t *testing.T) {
		cb := consented(t, svc, "chan-a", "owner-a")
		if _, err := svc.Complete(ctx, cb); err != nil {
			t.Fatal(err)
		}
		if msg := refusal(t, func() error { _, err := svc.Complete(ctx, cb); return err }()); !strings.Contains(msg, "used already") {
			t.Fatalf("message %q", msg)
		}
	})
	evs, _ := f.rec.snapshot()
	if len(evs) != 1 {
		t.Fatalf("refused callbacks emitted events: %v", evs)
	}
}

func TestConcurrentCallbacksConnectOnce(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	svc := f.service()
	cb := consented(t, svc, "chan-a", "owner-a")
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := svc.Complete(t.Context(), cb)
			var re *connection.RefusedError
			switch {
			case err == nil:
				ok.Add(1)
			case errors.As(err, &re):
				refused.Add(1)
			default:
				t.Errorf("complete: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 7 {
		t.Fatalf("%d callbacks connected, %d refused; want 1 and 7", ok.Load(), refused.Load())
	}
	if evs, _ := f.rec.snapshot(); len(evs) != 1 {
		t.Fatalf("events %v", evs)
	}
}

func TestRevokedGrantNeedsReconnect(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	f.google.Owns("owner-b", "UCbbbbbbbbbbbbbbbbbbbbbb", "B", "")
	svc := f.service()
	f.connect(t, svc, "chan-a", "owner-a")
	f.connect(t, svc, "chan-b", "owner-b")
	// The owner of A removes the app's access in their Google account.
	c, _ := f.st.GetConnection(t.Context(), "chan-a")
	token, _ := f.cipher.Open(t.Context(), c.SealedRefreshToken, []byte("youtube-refresh-token\x00chan-a"))
	if err := (owner.Revoker{Endpoint: f.google.RevokeURL()}).Revoke(t.Context(), string(token)); err != nil {
		t.Fatal(err)
	}
	fresh := f.service()
	if _, _, err := fresh.OwnerClient(t.Context(), "chan-a"); !errors.Is(err, connection.ErrNeedsReconnect) {
		t.Fatalf("owner client of a revoked grant: %v", err)
	}
	if got, _ := fresh.Get(t.Context(), "chan-a"); got.Status != connection.NeedsReconnect {
		t.Fatalf("status %s", got.Status)
	}
	if _, _, err := fresh.OwnerClient(t.Context(), "chan-a"); !errors.Is(err, connection.ErrNeedsReconnect) {
		t.Fatalf("again: %v", err)
	}
	evs, _ := f.rec.snapshot()
	var refusedEvents int
	for _, e := range evs {
		if e.name == connection.EventDisconnected {
			refusedEvents++
			if e != (event{"chan-a", connection.EventDisconnected, "UCaaaaaaaaaaaaaaaaaaaaaa", "refused"}) {
				t.Fatalf("event %+v", e)
			}
		}
	}
	if refusedEvents != 1 {
		t.Fatalf("%d youtube.disconnected events, want 1: %v", refusedEvents, evs)
	}
	// Nothing else breaks: B still works, and A is off the sync's list.
	if ids, _ := fresh.Connected(t.Context()); !slices.Equal(ids, []string{"chan-b"}) {
		t.Fatalf("connected %v", ids)
	}
	if _, yt, err := fresh.OwnerClient(t.Context(), "chan-b"); err != nil || yt != "UCbbbbbbbbbbbbbbbbbbbbbb" {
		t.Fatalf("chan-b: %q %v", yt, err)
	}
	// Connecting again restores it.
	f.connect(t, fresh, "chan-a", "owner-a")
	if _, _, err := fresh.OwnerClient(t.Context(), "chan-a"); err != nil {
		t.Fatalf("after reconnecting: %v", err)
	}
}

func TestTenantIsolation(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "en")
	f.google.Owns("owner-b", "UCbbbbbbbbbbbbbbbbbbbbbb", "B", "en")
	f.google.YouTube.AddCaptions("UCaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaa", testTrack("ta"))
	f.google.YouTube.AddCaptions("UCbbbbbbbbbbbbbbbbbbbbbb", "bbbbbbbbbbb", testTrack("tb"))
	svc := f.service()
	f.connect(t, svc, "chan-a", "owner-a")
	f.connect(t, svc, "chan-b", "owner-b")
	ytc := owner.Client{Endpoint: f.google.YouTube.Endpoint()}
	for _, tc := range []struct{ channel, yt, own, foreign string }{
		{"chan-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaa", "bbbbbbbbbbb"},
		{"chan-b", "UCbbbbbbbbbbbbbbbbbbbbbb", "bbbbbbbbbbb", "aaaaaaaaaaa"},
	} {
		client, yt, err := svc.OwnerClient(t.Context(), tc.channel)
		if err != nil || yt != tc.yt {
			t.Fatalf("%s: %q %v", tc.channel, yt, err)
		}
		mine, err := ytc.OwnedChannel(t.Context(), client)
		if err != nil || mine.ID != tc.yt {
			t.Fatalf("%s's token reads channel %q (%v), want %s", tc.channel, mine.ID, err, tc.yt)
		}
		if tracks, err := ytc.List(t.Context(), client, tc.own); err != nil || len(tracks) != 1 {
			t.Fatalf("%s's own captions: %v %v", tc.channel, tracks, err)
		}
		if _, err := ytc.List(t.Context(), client, tc.foreign); !errors.Is(err, transcript.ErrNotOwnVideo) {
			t.Fatalf("%s read the other channel's captions: %v", tc.channel, err)
		}
	}
}

func testTrack(id string) youtubetest.CaptionTrack {
	return youtubetest.CaptionTrack{ID: id, Language: "en", Kind: "standard", Name: "English", LastUpdated: "2026-11-01T00:00:00Z",
		VTT: "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nhello\n"}
}

func TestNotConfigured(t *testing.T) {
	svc := connection.New(connection.Config{Missing: []string{"CSS_GOOGLE_CLIENT_ID", "CSS_GOOGLE_CLIENT_SECRET"}})
	_, _, err := svc.Start(t.Context(), "chan-a")
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.Unavailable || !strings.Contains(e.Message, "CSS_GOOGLE_CLIENT_ID") {
		t.Fatalf("start without configuration: %v", err)
	}
	for _, err := range []error{
		func() error { _, err := svc.Get(t.Context(), "c"); return err }(),
		svc.Disconnect(t.Context(), "c"),
		func() error { _, err := svc.Complete(t.Context(), connection.Callback{State: "s"}); return err }(),
		func() error { _, _, err := svc.OwnerClient(t.Context(), "c"); return err }(),
	} {
		if apperr.CodeOf(err) != apperr.Unavailable {
			t.Fatalf("got %v, want SERVICE_UNAVAILABLE", err)
		}
	}
}

// BenchmarkConnect: one whole connect on loopback (state stored, consent page and sign-in at
// mock-oauth2-server, code exchange with PKCE, channels.list mine=true, the sealed token saved).
func BenchmarkConnect(b *testing.B) {
	f := &fixture{google: connectiontest.Start(b), table: memstore.New(b), rec: &recorder{}}
	f.st = store.New(f.table)
	key, _ := webhooks.DeriveKey(strings.Repeat("k", 32))
	f.cipher, _ = webhooks.NewAESGCM(key)
	now := time.Now()
	f.now.Store(&now)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	svc := f.service()
	ctx := b.Context()
	for b.Loop() {
		if _, err := svc.Complete(ctx, consented(b, svc, "chan-a", "owner-a")); err != nil {
			b.Fatal(err)
		}
	}
}

// The connect-link attack (issue 32): a tenant starts a connection and passes Google's consent link to a
// creator, who consents in their own browser. That browser never opened the start link, so it carries no
// binding: the callback connects nothing, and the link is spent. The start link itself works once.
func TestConsentLinkWorksOnlyInTheBrowserThatStarted(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("creator", "UCcreatorcccccccccccccccc", "Creator", "")
	svc := f.service()
	ctx := t.Context()
	link, _, err := svc.Start(ctx, "chan-x")
	if err != nil {
		t.Fatal(err)
	}
	attacker, err := svc.Begin(ctx, stateOf(t, link))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Begin(ctx, stateOf(t, link)); !strings.Contains(refusal(t, err), "opened already") {
		t.Fatalf("the start link opened twice: %v", err)
	}
	redirect := connectiontest.Consent(t, attacker.AuthorizationURL, "creator")
	for _, browser := range []string{"", "a-binding-of-another-browser"} {
		_, err := svc.Complete(ctx, callbackOf(redirect, browser))
		if msg := refusal(t, err); !strings.Contains(msg, "another browser") && !strings.Contains(msg, "used already") {
			t.Fatalf("browser %q: %q", browser, msg)
		}
	}
	// The link is spent by the refused callback: even the attacker's own browser cannot finish with it.
	if _, err := svc.Complete(ctx, callbackOf(redirect, attacker.Browser)); !strings.Contains(refusal(t, err), "used already") {
		t.Fatalf("the refused link was usable again: %v", err)
	}
	if _, err := f.st.GetConnection(ctx, "chan-x"); !errors.Is(err, connection.ErrNotConnected) {
		t.Fatalf("a connection was stored: %v", err)
	}
	if evs, _ := f.rec.snapshot(); len(evs) != 0 {
		t.Fatalf("events %v", evs)
	}
	// An expired start link does not start.
	link, _, _ = svc.Start(ctx, "chan-x")
	f.advance(connection.StateTTL + time.Second)
	if _, err := svc.Begin(ctx, stateOf(t, link)); !strings.Contains(refusal(t, err), "expired") {
		t.Fatalf("an expired start link: %v", err)
	}
}

// One YouTube channel belongs to one account: another account's channel connecting it is refused (nothing
// stored, and the grant the first connection holds is not revoked); the account's other channels may share
// it, and disconnecting one of them leaves the shared grant alone.
func TestYouTubeChannelOfAnotherAccountIsRefused(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "Vegan Bites", "")
	svc := f.service()
	ctx := t.Context()
	f.connect(t, svc, "chan-a", "owner-a")

	_, err := svc.Complete(ctx, consented(t, svc, "chan-x", "owner-a"))
	var re *connection.RefusedError
	if !errors.As(err, &re) || !re.Conflict || !strings.Contains(re.Message, "“Vegan Bites”") || strings.Contains(re.Message, "Vegan Bites HQ") {
		t.Fatalf("another account's channel: %v", err)
	}
	if _, err := f.st.GetConnection(ctx, "chan-x"); !errors.Is(err, connection.ErrNotConnected) {
		t.Fatalf("chan-x got connected: %v", err)
	}
	if got := f.google.YouTube.Revoked(); len(got) != 0 {
		t.Fatalf("revoked %v", got)
	}
	if _, _, err := svc.OwnerClient(ctx, "chan-a"); err != nil {
		t.Fatalf("chan-a after the refusal: %v", err)
	}

	// The same account's second channel shares it.
	if c := f.connect(t, svc, "chan-a2", "owner-a"); c.YouTubeChannelID != "UCaaaaaaaaaaaaaaaaaaaaaa" {
		t.Fatalf("chan-a2: %+v", c)
	}
	if err := svc.Disconnect(ctx, "chan-a2"); err != nil {
		t.Fatal(err)
	}
	if got := f.google.YouTube.Revoked(); len(got) != 0 {
		t.Fatalf("disconnecting one of two channels sharing the grant revoked it: %v", got)
	}
	// The last one revokes it, and the YouTube channel is free for another account.
	if err := svc.Disconnect(ctx, "chan-a"); err != nil {
		t.Fatal(err)
	}
	if got := f.google.YouTube.Revoked(); len(got) != 1 {
		t.Fatalf("revoked %v", got)
	}
	if c := f.connect(t, svc, "chan-x", "owner-a"); c.ChannelName != "Someone else" {
		t.Fatalf("chan-x after chan-a left: %+v", c)
	}
}

// Reconnecting to another YouTube channel revokes the replaced grant; reconnecting the same YouTube channel
// does not (it is the same grant at Google, which the new connection uses).
func TestReconnectRevokesTheReplacedGrant(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	f.google.Owns("owner-b", "UCbbbbbbbbbbbbbbbbbbbbbb", "B", "")
	svc := f.service()
	ctx := t.Context()
	f.connect(t, svc, "chan-a", "owner-a")
	first, _ := f.st.GetConnection(ctx, "chan-a")
	firstToken, _ := f.cipher.Open(ctx, first.SealedRefreshToken, []byte("youtube-refresh-token\x00chan-a"))

	f.connect(t, svc, "chan-a", "owner-a")
	if got := f.google.YouTube.Revoked(); len(got) != 0 {
		t.Fatalf("reconnecting the same YouTube channel revoked %v", got)
	}
	second, _ := f.st.GetConnection(ctx, "chan-a")
	secondToken, _ := f.cipher.Open(ctx, second.SealedRefreshToken, []byte("youtube-refresh-token\x00chan-a"))

	f.connect(t, svc, "chan-a", "owner-b")
	if got := f.google.YouTube.Revoked(); !slices.Equal(got, []string{string(secondToken)}) || string(firstToken) == string(secondToken) {
		t.Fatalf("revoked %v, want the replaced grant's token", got)
	}
	// The YouTube channel it left is free: it lists chan-a no more.
	if ids, _ := f.st.YouTubeChannelConnections(ctx, "UCaaaaaaaaaaaaaaaaaaaaaa"); len(ids) != 0 {
		t.Fatalf("UCaaaa still lists %v", ids)
	}
	if _, yt, err := svc.OwnerClient(ctx, "chan-a"); err != nil || yt != "UCbbbbbbbbbbbbbbbbbbbbbb" {
		t.Fatalf("after reconnecting: %q %v", yt, err)
	}
}

// Disconnecting deletes the transcripts cached with the owner's grant, of that channel only.
func TestDisconnectDeletesCachedTranscripts(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	f.google.Owns("owner-b", "UCbbbbbbbbbbbbbbbbbbbbbb", "B", "")
	svc := f.service()
	ctx := t.Context()
	f.connect(t, svc, "chan-a", "owner-a")
	f.connect(t, svc, "chan-b", "owner-b")
	for i := range 30 { // more than one page of deletions
		if err := f.st.PutTranscript(ctx, "chan-a", fmt.Sprintf("video%06d", i), "t", "v1", "words"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.st.PutTranscript(ctx, "chan-b", "video000000", "t", "v1", "b's words"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Disconnect(ctx, "chan-a"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if text, _, err := f.st.CachedTranscript(ctx, "chan-a", fmt.Sprintf("video%06d", i), "t", "v1"); err != nil || text != "" {
			t.Fatalf("transcript %d after disconnecting: %q %v", i, text, err)
		}
	}
	if text, hit, err := f.st.CachedTranscript(ctx, "chan-b", "video000000", "t", "v1"); err != nil || !hit || text != "b's words" {
		t.Fatalf("chan-b's transcript: %q %v %v", text, hit, err)
	}
}

// A grant revoked while its access token is cached: YouTube answers 401 to the cached token. The client
// drops it and tries one refresh, which Google refuses, so the call answers ErrNeedsReconnect (not a 500),
// the connection is needs_reconnect and youtube.disconnected emitted once.
func TestRevokedWhileTheAccessTokenIsCached(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	f.google.YouTube.AddCaptions("UCaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaa", testTrack("ta"))
	svc := f.service()
	ctx := t.Context()
	f.connect(t, svc, "chan-a", "owner-a")
	ytc := owner.Client{Endpoint: f.google.YouTube.Endpoint()}
	client, _, err := svc.OwnerClient(ctx, "chan-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ytc.List(ctx, client, "aaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	f.google.YouTube.RevokeIssued() // the owner removes the app's access at Google

	// The same instance: its access token is cached, both in the client handed out and for the next one.
	_, err = ytc.List(ctx, client, "aaaaaaaaaaa")
	if !errors.Is(err, connection.ErrNeedsReconnect) {
		t.Fatalf("captions.list with a revoked grant's cached token: %v", err)
	}
	if got, _ := svc.Get(ctx, "chan-a"); got.Status != connection.NeedsReconnect {
		t.Fatalf("status %s", got.Status)
	}
	if _, _, err := svc.OwnerClient(ctx, "chan-a"); !errors.Is(err, connection.ErrNeedsReconnect) {
		t.Fatalf("owner client afterwards: %v", err)
	}
	evs, _ := f.rec.snapshot()
	if n := len(evs); n != 2 || evs[1] != (event{"chan-a", connection.EventDisconnected, "UCaaaaaaaaaaaaaaaaaaaaaa", "refused"}) {
		t.Fatalf("events %v", evs)
	}
}

// A 401 that a refresh cures (the cached token alone was refused) is sent again with the fresh token.
func TestA401IsRetriedWithAFreshToken(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	f.google.YouTube.AddCaptions("UCaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaa", testTrack("ta"))
	svc := f.service()
	ctx := t.Context()
	f.connect(t, svc, "chan-a", "owner-a")
	client, _, err := svc.OwnerClient(ctx, "chan-a")
	if err != nil {
		t.Fatal(err)
	}
	ytc := owner.Client{Endpoint: f.google.YouTube.Endpoint()}
	if _, err := ytc.List(ctx, client, "aaaaaaaaaaa"); err != nil {
		t.Fatal(err)
	}
	f.google.YouTube.RevokeAccessTokens() // Google drops the access tokens, the grant stands
	if tracks, err := ytc.List(ctx, client, "aaaaaaaaaaa"); err != nil || len(tracks) != 1 {
		t.Fatalf("after the access token was refused: %v %v", tracks, err)
	}
	if got, _ := svc.Get(ctx, "chan-a"); got.Status != connection.Connected {
		t.Fatalf("status %s", got.Status)
	}
}

// Refresh tokens have their own key (decision 50): the webhook secrets' key, which the webhook dispatcher
// holds, does not open them. One sealed with that key before still works, and is sealed again with the
// tokens' own key at its first use.
func TestRefreshTokensHaveTheirOwnKey(t *testing.T) {
	f := newFixture(t)
	f.google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "")
	svc := f.service()
	ctx := t.Context()
	f.connect(t, svc, "chan-a", "owner-a")
	c, _ := f.st.GetConnection(ctx, "chan-a")
	aad := []byte("youtube-refresh-token\x00chan-a")
	if _, err := f.legacy.Open(ctx, c.SealedRefreshToken, aad); err == nil {
		t.Fatal("the webhook secrets' key opens a refresh token")
	}
	token, err := f.cipher.Open(ctx, c.SealedRefreshToken, aad)
	if err != nil {
		t.Fatal(err)
	}

	// As stored before decision 50.
	old, _ := f.legacy.Seal(ctx, token, aad)
	if _, err := f.st.UpdateConnection(ctx, "chan-a", func(c *connection.Connection) error { c.SealedRefreshToken = old; return nil }); err != nil {
		t.Fatal(err)
	}
	fresh := f.service()
	if _, yt, err := fresh.OwnerClient(ctx, "chan-a"); err != nil || yt != "UCaaaaaaaaaaaaaaaaaaaaaa" {
		t.Fatalf("a legacy sealed token: %q %v", yt, err)
	}
	c, _ = f.st.GetConnection(ctx, "chan-a")
	if got, err := f.cipher.Open(ctx, c.SealedRefreshToken, aad); err != nil || string(got) != string(token) {
		t.Fatalf("not sealed again with the tokens' key: %v", err)
	}
	// Without the legacy key configured, a legacy token does not open.
	if _, err := f.st.UpdateConnection(ctx, "chan-a", func(c *connection.Connection) error { c.SealedRefreshToken = old; return nil }); err != nil {
		t.Fatal(err)
	}
	noLegacy := connection.New(connection.Config{Store: f.st, Cipher: f.cipher, Channels: serviceChannels,
		OAuth: f.google.OAuthConfig(redirect), StartURL: startURL, Identity: owner.Client{Endpoint: f.google.YouTube.Endpoint()},
		Revoker: owner.Revoker{Endpoint: f.google.RevokeURL()}})
	if _, _, err := noLegacy.OwnerClient(ctx, "chan-a"); err == nil {
		t.Fatal("a legacy token opened without the legacy key")
	}
}
