// Package connectionwire builds the YouTube connection and the transcript source from the configuration,
// for the functions that serve them (integrations, generation) and the local stack. Kept apart from
// shared/wire so only they link the YouTube client.
package connectionwire

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/secrets"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/transcript"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/youtube/owner"
)

// CallbackPath is the OAuth redirect's path (GET /api/youtube/oauth/callback); StartPath the start step's,
// which the owner's browser opens first (decision 50).
const (
	CallbackPath = "/api/youtube/oauth/callback"
	StartPath    = "/api/youtube/oauth/start"
)

// Deps is what the service is built over.
type Deps struct {
	Store *store.Store
	// Cipher seals refresh tokens (TokenCipher); LegacyCipher opens those sealed before decision 50.
	Cipher       connection.Cipher
	LegacyCipher connection.Cipher
	Emitter      connection.Emitter
	Sync         connection.SyncRequester
	// ReadSecret reads a Secrets Manager secret (the client secret in the cloud); nil when none is configured.
	ReadSecret func(ctx context.Context, name string) (config.Secret, error)
	Now        func() time.Time
	Log        *slog.Logger
}

// Service returns the connection service. Without a client id (or secret) it is built unconfigured: its
// operations answer 503 naming what is missing.
func Service(ctx context.Context, cfg config.Config, d Deps) (*connection.Service, error) {
	g := cfg.Research.Google
	c := connection.Config{Store: d.Store, Channels: d.Store, Cipher: d.Cipher, LegacyCipher: d.LegacyCipher,
		Emitter: d.Emitter, Sync: d.Sync, Now: d.Now, Log: d.Log,
		Identity: owner.Client{Endpoint: cfg.Research.YouTubeEndpoint},
		Revoker:  owner.Revoker{Endpoint: g.RevokeEndpoint},
		Missing:  g.Missing(),
	}
	if g.ClientID != "" {
		secret := g.ClientSecret
		if secret == "" && g.ClientSecretARN != "" && d.ReadSecret != nil {
			var err error
			if secret, err = d.ReadSecret(ctx, g.ClientSecretARN); err != nil {
				return nil, fmt.Errorf("connection: the client secret: %w", err)
			}
		}
		if secret != "" {
			if cfg.PublicURL == "" {
				return nil, fmt.Errorf("connection: CSS_PUBLIC_URL is required with CSS_GOOGLE_CLIENT_ID (the callback URL is built from it)")
			}
			if d.Cipher == nil {
				return nil, fmt.Errorf("connection: no sealing key for refresh tokens (CSS_YOUTUBE_TOKEN_KEY_SECRET_ARN in the cloud)")
			}
			c.OAuth = connection.OAuthConfig(connection.OAuthSettings{ClientID: g.ClientID, ClientSecret: string(secret),
				AuthURL: g.AuthEndpoint, TokenURL: g.TokenEndpoint, RedirectURL: cfg.PublicURL + CallbackPath})
			c.StartURL = cfg.PublicURL + StartPath
			c.Missing = nil
		}
	}
	c.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	return connection.New(c), nil
}

// Transcripts returns the transcript source of the connected channels' own videos (decision 41), its
// units counted by budget.
func Transcripts(cfg config.Config, st *store.Store, conns *connection.Service, budget transcript.Budget) *transcript.Service {
	return &transcript.Service{Connections: conns, Captions: owner.Client{Endpoint: cfg.Research.YouTubeEndpoint},
		Cache: st, Budget: budget}
}

// tokenKeyFile is where the local stack keeps the refresh tokens' key material, in the data folder.
const tokenKeyFile = "youtube-token-key"

// tokenKeyInfo labels the refresh tokens' key derived from its material (HKDF-SHA256).
const tokenKeyInfo = "css youtube refresh token sealing key v1"

// TokenCipher returns the cipher that seals the connection's refresh tokens with their own key (decision
// 47), from the first of:
//   - CSS_YOUTUBE_TOKEN_KEY_SECRET_ARN: the material is read from Secrets Manager on first use (the cloud,
//     where only the functions using the connection may read it: the webhook dispatcher cannot);
//   - CSS_YOUTUBE_TOKEN_KEY: the material itself;
//   - in development mode, DataDir/youtube-token-key, generated (random, mode 0600) when missing.
//
// nil without any: a configured connection then refuses to start, saying so.
func TokenCipher(cfg config.Config) (connection.Cipher, error) {
	return sealkey.KeyCipher(cfg, cfg.YouTubeTokenKeySecretARN, string(cfg.YouTubeTokenKey), tokenKeyFile, tokenKey)
}

// tokenKey derives the AES-256 key from the material.
func tokenKey(material string) ([]byte, error) {
	material = strings.TrimSpace(material)
	if len(material) < 32 {
		return nil, fmt.Errorf("connection: the refresh token key material must be at least 32 characters, not %d", len(material))
	}
	return hkdf.Key(sha256.New, []byte(material), nil, tokenKeyInfo, webhooks.KeyBytes)
}

// Ciphers returns the refresh tokens' cipher (TokenCipher) and, where the webhook secrets' key is
// configured, that key's cipher, which opens what was sealed with it before decision 50.
func Ciphers(cfg config.Config) (token, legacy connection.Cipher, err error) {
	if token, err = TokenCipher(cfg); err != nil {
		return nil, nil, err
	}
	if legacy, err = sealkey.Cipher(cfg); err != nil {
		return nil, nil, err
	}
	return token, legacy, nil
}

// FromConfig builds the service as a function does: the refresh tokens' key and the legacy one (Ciphers)
// and, in the cloud, the client secret read once from its Secrets Manager secret.
func FromConfig(ctx context.Context, cfg config.Config, st *store.Store, emitter connection.Emitter, sync connection.SyncRequester,
	now func() time.Time, log *slog.Logger) (*connection.Service, error) {
	token, legacy, err := Ciphers(cfg)
	if err != nil {
		return nil, err
	}
	d := Deps{Store: st, Cipher: token, LegacyCipher: legacy, Emitter: emitter, Sync: sync, Now: now, Log: log}
	if g := cfg.Research.Google; g.ClientID != "" && g.ClientSecret == "" && g.ClientSecretARN != "" {
		reader, err := secrets.New(cfg.SecretsEndpoint, cfg.Region)
		if err != nil {
			return nil, err
		}
		d.ReadSecret = func(ctx context.Context, arn string) (config.Secret, error) {
			v, err := reader.String(ctx, arn)
			return config.Secret(v), err
		}
	}
	return Service(ctx, cfg, d)
}

// TranscriptsFromConfig builds the transcript source as a function does (FromConfig's connection, the
// units counted in the research budget), or nil when the connection is not configured: a videoUrl then
// answers 400 naming it.
func TranscriptsFromConfig(ctx context.Context, cfg config.Config, st *store.Store, emitter connection.Emitter,
	now func() time.Time, log *slog.Logger) (*transcript.Service, error) {
	if len(cfg.Research.Google.Missing()) > 0 {
		return nil, nil
	}
	conns, err := FromConfig(ctx, cfg, st, emitter, nil, now, log)
	if err != nil {
		return nil, err
	}
	budget, err := research.NewService(st, nil, research.ConfigFrom(cfg.Research), now)
	if err != nil {
		return nil, err
	}
	return Transcripts(cfg, st, conns, budget), nil
}
