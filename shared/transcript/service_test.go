package transcript_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/connectiontest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/transcript"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/youtube/owner"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

var channels = connectiontest.Channels{"chan-a": {ID: "chan-a", AccountID: "acct-1", Name: "A"}}

const vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:20.000\nwelcome\n\n00:01:00.000 --> 00:01:20.000\nthe recipe\n"

// The units of each transcript count in the day's budget and the account's share (decision 46): past
// the share, 429 USAGE_LIMIT and nothing more is fetched; a cached track costs only captions.list.
func TestTranscriptsSpendTheBudget(t *testing.T) {
	google := connectiontest.Start(t)
	google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "en")
	for _, v := range []string{"video000001", "video000002"} {
		google.YouTube.AddCaptions("UCaaaaaaaaaaaaaaaaaaaaaa", v,
			youtubetest.CaptionTrack{ID: "t-" + v, Language: "en", Kind: "standard", LastUpdated: "2026-11-01T00:00:00Z", VTT: vtt})
	}
	st := store.New(memstore.New(t))
	key, _ := webhooks.DeriveKey(strings.Repeat("k", 32))
	cipher, _ := webhooks.NewAESGCM(key)
	conns := connection.New(connection.Config{Store: st, Cipher: cipher, Channels: channels,
		OAuth: google.OAuthConfig("http://127.0.0.1:1/api/youtube/oauth/callback"), StartURL: "http://127.0.0.1:1/api/youtube/oauth/start",
		Identity: owner.Client{Endpoint: google.YouTube.Endpoint()}, Revoker: owner.Revoker{Endpoint: google.RevokeURL()}})
	cfg := research.DefaultConfig(research.SourceYouTube)
	cfg.Daily.Units = 1700 // the account's share is then 20%: 340 units
	budget, err := research.NewService(st, nil, cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	svc := &transcript.Service{Connections: conns, Captions: owner.Client{Endpoint: google.YouTube.Endpoint()}, Cache: st, Budget: budget}
	ctx := t.Context()

	if _, err := svc.Transcript(ctx, "chan-a", "https://youtu.be/video000001"); apperr.CodeOf(err) != apperr.Validation || !strings.Contains(err.Error(), "videoUrl") {
		t.Fatalf("before connecting: %v", err)
	}
	connectiontest.Connect(t, conns, "chan-a", "owner-a")
	base := google.YouTube.Units() // channels.list mine=true
	text, err := svc.Transcript(ctx, "chan-a", "https://youtu.be/video000001")
	if err != nil || text != "0:00:01 welcome\n0:01:00 the recipe\n0:01:20 (end of video)\n" {
		t.Fatalf("transcript %q %v", text, err)
	}
	if got := google.YouTube.Units() - base; got != transcript.ListCost.Add(transcript.DownloadCost).Units {
		t.Fatalf("one transcript spent %d units", got)
	}
	if _, err := svc.Transcript(ctx, "chan-a", "https://www.youtube.com/watch?v=video000001"); err != nil {
		t.Fatal(err)
	}
	if got := google.YouTube.Units() - base; got != 300 {
		t.Fatalf("a cached transcript spent %d more units, want 50", got-250)
	}
	// 300 spent of a 340-unit share: the next captions.list (50) does not fit.
	_, err = svc.Transcript(ctx, "chan-a", "https://youtu.be/video000002")
	if e, ok := apperr.As(err); !ok || e.Code != apperr.UsageLimit || e.RetryAfter <= 0 {
		t.Fatalf("past the account's share: %v", err)
	}
	if got := google.YouTube.Units() - base; got != 300 {
		t.Fatalf("a refused transcript still spent %d units", got-300)
	}
	if errors.Is(err, transcript.ErrNoTranscript) {
		t.Fatal("a limit reported as no transcript")
	}
}

// The owner revokes the grant while the service holds a cached access token: YouTube answers 401, the one
// refresh is refused, and the transcript answers the documented 400 naming videoUrl (not a 500); the
// connection is needs_reconnect.
func TestRevokedGrantWithACachedTokenAnswersTheRefusal(t *testing.T) {
	google := connectiontest.Start(t)
	google.Owns("owner-a", "UCaaaaaaaaaaaaaaaaaaaaaa", "A", "en")
	for _, v := range []string{"video000001", "video000002"} {
		google.YouTube.AddCaptions("UCaaaaaaaaaaaaaaaaaaaaaa", v,
			youtubetest.CaptionTrack{ID: "t-" + v, Language: "en", Kind: "standard", LastUpdated: "2026-11-01T00:00:00Z", VTT: vtt})
	}
	st := store.New(memstore.New(t))
	key, _ := webhooks.DeriveKey(strings.Repeat("k", 32))
	cipher, _ := webhooks.NewAESGCM(key)
	conns := connection.New(connection.Config{Store: st, Cipher: cipher, Channels: channels,
		OAuth: google.OAuthConfig("http://127.0.0.1:1/api/youtube/oauth/callback"), StartURL: "http://127.0.0.1:1/api/youtube/oauth/start",
		Identity: owner.Client{Endpoint: google.YouTube.Endpoint()}, Revoker: owner.Revoker{Endpoint: google.RevokeURL()}})
	budget, err := research.NewService(st, nil, research.DefaultConfig(research.SourceYouTube), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	svc := &transcript.Service{Connections: conns, Captions: owner.Client{Endpoint: google.YouTube.Endpoint()}, Cache: st, Budget: budget}
	ctx := t.Context()
	connectiontest.Connect(t, conns, "chan-a", "owner-a")
	if _, err := svc.Transcript(ctx, "chan-a", "https://youtu.be/video000001"); err != nil {
		t.Fatal(err)
	}
	google.YouTube.RevokeIssued()
	_, err = svc.Transcript(ctx, "chan-a", "https://youtu.be/video000002")
	if apperr.CodeOf(err) != apperr.Validation || !strings.Contains(err.Error(), "needs reconnecting") {
		t.Fatalf("a revoked grant's cached token: %v", err)
	}
	if c, _ := conns.Get(ctx, "chan-a"); c.Status != connection.NeedsReconnect {
		t.Fatalf("status %s", c.Status)
	}
}
