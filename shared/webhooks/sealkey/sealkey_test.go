package sealkey_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/testkit/secretstest"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
)

func roundTrip(t *testing.T, cfg config.Config) []byte {
	t.Helper()
	c, err := sealkey.Cipher(cfg)
	if err != nil || c == nil {
		t.Fatalf("Cipher = %v, %v", c, err)
	}
	ctx := context.Background()
	sealed, err := c.Seal(ctx, []byte("key"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Open(ctx, sealed, []byte("aad")); err != nil || string(got) != "key" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	return sealed
}

func TestCipherFromSecretsManager(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:key"
	srv := secretstest.Start(t, map[string]string{arn: "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01"})
	cfg := config.Config{Mode: config.Production, Region: "us-east-1", WebhookKeySecretARN: arn, SecretsEndpoint: srv.Endpoint()}
	c, err := sealkey.Cipher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Reads() != 0 {
		t.Fatal("the key was read before it was needed (cold start)")
	}
	ctx := context.Background()
	sealed, err := c.Seal(ctx, []byte("k"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Open(ctx, sealed, nil); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Reads() != 1 {
		t.Errorf("%d reads of the key, want 1", srv.Reads())
	}
	// The same material gives the same key, whichever way it is configured.
	direct, err := sealkey.Cipher(config.Config{Mode: config.Production, WebhookKey: "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := direct.Open(ctx, sealed, nil); err != nil || string(got) != "k" {
		t.Errorf("the configured material does not open what the secret's sealed: %v", err)
	}
	missing, _ := sealkey.Cipher(config.Config{Mode: config.Production, Region: "us-east-1", WebhookKeySecretARN: "nope", SecretsEndpoint: srv.Endpoint()})
	if _, err := missing.Seal(ctx, []byte("k"), nil); err == nil {
		t.Error("sealing with an unreadable key succeeded")
	}
}

func TestLocalKeyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := config.Config{Mode: config.Development, DataDir: dir}
	sealed := roundTrip(t, cfg)
	fi, err := os.Stat(filepath.Join(dir, "webhook-key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode())
	}
	// The next start reads the same key: what one run sealed, the next opens.
	c, _ := sealkey.Cipher(cfg)
	if _, err := c.Open(context.Background(), sealed, []byte("aad")); err != nil {
		t.Fatalf("a restart cannot open what was sealed: %v", err)
	}
	if c, err := sealkey.Cipher(config.Config{Mode: config.Production}); c != nil || err != nil {
		t.Errorf("production without a key: %v, %v; want none (registering then fails, saying why)", c, err)
	}
}
