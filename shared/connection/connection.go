// Package connection is a channel's YouTube connection (decision 42): the owner's OAuth 2.0 consent
// (authorization code with PKCE S256), the sealed refresh token, and the authorized HTTP client every
// owner-only YouTube call goes through (captions for transcripts, decision 41; uploads and analytics for
// the daily sync, decision 43). It speaks to no outside system itself: the store, the sealing key, the
// channel lookup, the revocation and the events are ports. It imports net/http only for the client it
// hands out (OwnerClient), which golang.org/x/oauth2 builds.
package connection

import (
	"context"
	"errors"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
)

// Status is a connection's state as GET /youtube/connection reports it.
type Status string

const (
	NotConnected   Status = "not_connected"
	Connected      Status = "connected"
	NeedsReconnect Status = "needs_reconnect"
)

// Scopes are what the consent asks for: reading the channel, its captions (force-ssl is the scope
// captions.download accepts) and its analytics (yt-analytics.readonly: Analytics' reports and the Reporting
// API's reach reports, decision 51).
var Scopes = []string{
	"https://www.googleapis.com/auth/youtube.readonly",
	"https://www.googleapis.com/auth/youtube.force-ssl",
	"https://www.googleapis.com/auth/yt-analytics.readonly",
}

// StateTTL is how long an authorization URL's state stays valid (decision 42).
const StateTTL = 10 * time.Minute

// Events (decision 42).
const (
	EventConnected    = "youtube.connected"
	EventDisconnected = "youtube.disconnected"
)

// Connection is a channel's stored connection.
type Connection struct {
	ChannelID           string
	Status              Status
	YouTubeChannelID    string
	YouTubeChannelTitle string
	// Language is the YouTube channel's default language (BCP-47, "" when it sets none): the caption
	// track in it is preferred (decision 41).
	Language string
	Scopes   []string
	// SealedRefreshToken is the refresh token sealed with the channel id as associated data.
	SealedRefreshToken []byte
	ConnectedAt        time.Time
	LastSyncAt         *time.Time
}

// PendingState is an authorization in progress: what the callback needs, stored under the hash of the
// state parameter until it is used or expires.
type PendingState struct {
	// Hash is the SHA-256 (hex) of the state parameter; the state itself is never stored.
	Hash      string
	ChannelID string
	// SealedVerifier is the PKCE code verifier, sealed with the channel id as associated data.
	SealedVerifier []byte
	// BrowserHash is the SHA-256 (hex) of the binding the start step set as a cookie in the browser that
	// opened it; "" until then. The callback is accepted only from that browser (decision 50).
	BrowserHash string
	ExpiresAt   time.Time
}

var (
	// ErrNotConnected: the channel has no YouTube connection.
	ErrNotConnected = errors.New("connection: the channel has no YouTube connection")
	// ErrNeedsReconnect: Google refused the stored grant (revoked, or expired); the owner must connect again.
	ErrNeedsReconnect = errors.New("connection: the YouTube grant was refused; the channel must be connected again")
	// ErrStateNotFound is what a store answers for a state that is unknown, used or expired.
	ErrStateNotFound = errors.New("connection: no such authorization state")
	// ErrStateBound is what a store answers for binding a state a browser is bound to already.
	ErrStateBound = errors.New("connection: the authorization state is bound to a browser already")
)

// Store keeps connections and pending states (*store.Store).
type Store interface {
	// PutOAuthState stores a pending state (until its ExpiresAt).
	PutOAuthState(ctx context.Context, st PendingState) error
	// TakeOAuthState returns the live pending state with hash and deletes it, atomically: of concurrent
	// takers, one gets it, the others ErrStateNotFound (as for an unknown or expired state).
	TakeOAuthState(ctx context.Context, hash string) (PendingState, error)
	// BindOAuthState records browserHash on the stored state with hash that has none yet, atomically, and
	// returns it: ErrStateNotFound for an unknown state, ErrStateBound when one is recorded already.
	BindOAuthState(ctx context.Context, hash, browserHash string) (PendingState, error)
	// GetConnection returns the channel's connection, or ErrNotConnected.
	GetConnection(ctx context.Context, channelID string) (Connection, error)
	// SaveConnection writes the channel's connection whole (created or replaced) and lists it among the
	// connected channels while its Status is Connected.
	SaveConnection(ctx context.Context, c Connection) error
	// UpdateConnection applies change to the stored connection under optimistic locking (ErrNotConnected
	// when there is none).
	UpdateConnection(ctx context.Context, channelID string, change func(*Connection) error) (Connection, error)
	// DeleteConnection removes the connection (no error when there is none).
	DeleteConnection(ctx context.Context, channelID string) error
	// ConnectedChannels lists the channels whose connection is Connected.
	ConnectedChannels(ctx context.Context) ([]string, error)
	// YouTubeChannelConnections lists the channels whose connection (of any status) is to the YouTube
	// channel youtubeChannelID.
	YouTubeChannelConnections(ctx context.Context, youtubeChannelID string) ([]string, error)
}

// Channels reads a service channel: its account and name (*store.Store).
type Channels interface {
	GetChannel(ctx context.Context, channelID string) (accounts.Channel, error)
}

// Cipher seals secrets at rest (AES-256-GCM, in the webhook secrets' format, with the refresh tokens' own key).
type Cipher interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// Emitter records an event for the channel's webhooks (webhooks.OutboxEmitter).
type Emitter interface {
	Emit(ctx context.Context, channelID string, event string, data any) error
}

// SyncRequester asks for a channel's sync (decision 43: a channel is synced when it connects). Optional.
type SyncRequester interface {
	RequestSync(ctx context.Context, channelID string) error
}
