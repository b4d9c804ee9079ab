// Package sealkey finds the key that seals webhook signing secrets at rest, from the configuration. Only the
// functions that seal or open secrets (webhooks, webhook-dispatcher), those using the YouTube connection
// (to open refresh tokens sealed with it before decision 50) and the local stack import it, so the Secrets
// Manager client is linked into those alone.
package sealkey

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/secrets"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// keyFile is where the local stack keeps its generated sealing key material, inside the data folder.
const keyFile = "webhook-key"

// Cipher returns the cipher that seals webhook signing secrets, from the first of:
//   - CSS_WEBHOOK_KEY_SECRET_ARN: the material is read from Secrets Manager on first use (the cloud);
//   - CSS_WEBHOOK_KEY: the material itself;
//   - in development mode, DataDir/webhook-key, generated (random, mode 0600) when missing.
//
// In production without either variable it returns nil: registering a webhook then fails, saying why.
func Cipher(cfg config.Config) (webhooks.Cipher, error) {
	return KeyCipher(cfg, cfg.WebhookKeySecretARN, cfg.WebhookKey, keyFile, webhooks.DeriveKey)
}

// KeyCipher returns the cipher whose key derive makes from the material found first: in the Secrets
// Manager secret arn (read on first use), in material itself, or in development mode in DataDir/file
// (generated when missing). nil without any.
func KeyCipher(cfg config.Config, arn, material, file string, derive func(material string) ([]byte, error)) (webhooks.Cipher, error) {
	switch {
	case arn != "":
		reader, err := secrets.New(cfg.SecretsEndpoint, cfg.Region)
		if err != nil {
			return nil, err
		}
		return webhooks.NewLazyCipher(func(ctx context.Context) ([]byte, error) {
			material, err := reader.String(ctx, arn)
			if err != nil {
				return nil, err
			}
			return derive(material)
		}), nil
	case material == "" && cfg.Mode != config.Development:
		return nil, nil
	case material == "":
		var err error
		if material, err = LocalKeyFile(cfg.DataDir, file); err != nil {
			return nil, err
		}
	}
	key, err := derive(material)
	if err != nil {
		return nil, err
	}
	return webhooks.NewAESGCM(key)
}

// LocalKeyFile returns the key material kept in dataDir/name, creating it (random, mode 0600) when
// missing, so registrations made by one run of the local stack still sign in the next (the webhook
// secrets' key is webhook-key; the YouTube refresh tokens' is another file: decision 50).
func LocalKeyFile(dataDir, name string) (string, error) {
	path := filepath.Join(dataDir, name)
	if b, err := os.ReadFile(path); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("key file %s is empty: what was sealed with it can no longer be opened", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read key file: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	material := base64.StdEncoding.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LocalKeyFile(dataDir, name) // made by another process meanwhile: use it
	}
	if err != nil {
		return "", fmt.Errorf("create key file: %w", err)
	}
	if _, err := f.WriteString(material + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("write key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write key file: %w", err)
	}
	return material, nil
}
