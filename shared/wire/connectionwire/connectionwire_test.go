package connectionwire_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/wire/connectionwire"
)

// The refresh tokens' key is not the webhook secrets' key (decision 50), even from the same material: what
// one seals the other does not open. Locally its material is a file of its own in the data folder.
func TestTokenKeyIsNotTheWebhookKey(t *testing.T) {
	ctx := t.Context()
	material := strings.Repeat("m", 40)
	for _, cfg := range []config.Config{
		{Mode: config.Production, WebhookKey: material, YouTubeTokenKey: config.Secret(material)},
		{Mode: config.Development, DataDir: t.TempDir()},
	} {
		token, legacy, err := connectionwire.Ciphers(cfg)
		if err != nil || token == nil || legacy == nil {
			t.Fatalf("%s: ciphers %v %v %v", cfg.Mode, token, legacy, err)
		}
		webhookKey, _ := sealkey.Cipher(cfg)
		sealed, err := token.Seal(ctx, []byte("refresh"), []byte("aad"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := webhookKey.Open(ctx, sealed, []byte("aad")); err == nil {
			t.Fatalf("%s: the webhook key opens a refresh token", cfg.Mode)
		}
		if got, err := token.Open(ctx, sealed, []byte("aad")); err != nil || string(got) != "refresh" {
			t.Fatalf("%s: %q %v", cfg.Mode, got, err)
		}
		if cfg.Mode == config.Development {
			a, errA := os.ReadFile(filepath.Join(cfg.DataDir, "youtube-token-key"))
			b, errB := os.ReadFile(filepath.Join(cfg.DataDir, "webhook-key"))
			if errA != nil || errB != nil || string(a) == string(b) {
				t.Fatalf("local key files: %v %v", errA, errB)
			}
		}
	}
	// Production without the tokens' key: none, and a configured connection then refuses to start.
	if c, err := connectionwire.TokenCipher(config.Config{Mode: config.Production, WebhookKey: material}); err != nil || c != nil {
		t.Fatalf("no tokens' key: %v %v", c, err)
	}
	if _, err := connectionwire.TokenCipher(config.Config{YouTubeTokenKey: "short"}); err == nil {
		t.Fatal("a short material was taken")
	}
}
