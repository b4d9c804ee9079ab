// Package connectionwire builds the YouTube connection and the transcript source from the configuration,
// for the functions that serve them (integrations, generation) and the local stack. Kept apart from
// shared/wire so only they link the YouTube client.
package connectionwire

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/transcript"
	"github.com/creatorstrategy/css/shared/youtube"
)

// CallbackPath is the OAuth redirect's path (GET /api/youtube/oauth/callback).
const CallbackPath = "/api/youtube/oauth/callback"

// Deps is what the service is built over.
type Deps struct {
	Store   *store.Store
	Cipher  connection.Cipher
	Emitter connection.Emitter
	Sync    connection.SyncRequester
	// ReadSecret reads an SSM SecureString (the client secret in the cloud); nil when none is configured.
	ReadSecret func(ctx context.Context, name string) (config.Secret, error)
	Now        func() time.Time
	Log        *slog.Logger
}

// Service returns the connection service. Without a client id (or secret) it is built unconfigured: its
// operations answer 503 naming what is missing.
func Service(ctx context.Context, cfg config.Config, d Deps) (*connection.Service, error) {
	g := cfg.Research.Google
	c := connection.Config{Store: d.Store, Cipher: d.Cipher, Emitter: d.Emitter, Sync: d.Sync, Now: d.Now, Log: d.Log,
		Identity: youtube.Owner{Endpoint: cfg.Research.YouTubeEndpoint},
		Revoker:  youtube.Revoker{Endpoint: g.RevokeEndpoint},
		Missing:  g.Missing(),
	}
	if g.ClientID != "" {
		secret := g.ClientSecret
		if secret == "" && g.ClientSecretParam != "" && d.ReadSecret != nil {
			var err error
			if secret, err = d.ReadSecret(ctx, g.ClientSecretParam); err != nil {
				return nil, fmt.Errorf("connection: the client secret: %w", err)
			}
		}
		if secret != "" {
			if cfg.PublicURL == "" {
				return nil, fmt.Errorf("connection: CSS_PUBLIC_URL is required with CSS_GOOGLE_CLIENT_ID (the callback URL is built from it)")
			}
			if d.Cipher == nil {
				return nil, fmt.Errorf("connection: no sealing key for refresh tokens (CSS_WEBHOOK_KEY_SECRET_ARN in the cloud)")
			}
			c.OAuth = connection.OAuthConfig(connection.OAuthSettings{ClientID: g.ClientID, ClientSecret: string(secret),
				AuthURL: g.AuthEndpoint, TokenURL: g.TokenEndpoint, RedirectURL: cfg.PublicURL + CallbackPath})
			c.Missing = nil
		}
	}
	c.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	return connection.New(c), nil
}

// Transcripts returns the transcript source of the connected channels' own videos (decision 41), its
// units counted by budget.
func Transcripts(cfg config.Config, st *store.Store, conns *connection.Service, budget transcript.Budget) *transcript.Service {
	return &transcript.Service{Connections: conns, Captions: youtube.Owner{Endpoint: cfg.Research.YouTubeEndpoint},
		Cache: st, Budget: budget}
}
