package connection

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/creatorstrategy/css/shared/apperr"
)

// OwnedChannel is the YouTube channel an owner's token reads as its own (channels.list mine=true).
type OwnedChannel struct {
	ID, Title, Language string
}

// Identity reads the channel a token belongs to (shared/youtube).
type Identity interface {
	OwnedChannel(ctx context.Context, client *http.Client) (OwnedChannel, error)
}

// Revoker revokes a token at Google (shared/youtube). A token Google no longer knows is not an error.
type Revoker interface {
	Revoke(ctx context.Context, token string) error
}

// Config is what the service needs. OAuth nil (no client id configured) leaves every operation answering
// 503 naming Missing.
type Config struct {
	Store    Store
	Cipher   Cipher
	OAuth    *oauth2.Config
	Identity Identity
	Revoker  Revoker
	// HTTPClient carries the token requests (default: http.DefaultClient with a timeout).
	HTTPClient *http.Client
	Emitter    Emitter
	// Sync is asked for a sync after each connect (nil: none).
	Sync SyncRequester
	// Missing names the configuration that is absent when OAuth is nil.
	Missing []string
	Now     func() time.Time
	Log     *slog.Logger
}

// Service runs the connection flows.
type Service struct {
	c   Config
	now func() time.Time
	log *slog.Logger

	// sources keeps each channel's token source, so an access token serves its hour instead of a refresh
	// per call; keyed by channel and by the sealed refresh token it was built from (a reconnect changes it).
	mu      sync.Mutex
	sources map[string]cachedSource
}

type cachedSource struct {
	sealed string
	ts     oauth2.TokenSource
}

// New returns the service.
func New(c Config) *Service {
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{c: c, now: now, log: log, sources: map[string]cachedSource{}}
}

// Configured reports whether Google's OAuth client is configured (health).
func (s *Service) Configured() bool { return s != nil && s.c.OAuth != nil }

// Missing names the configuration the connection needs and lacks ("" when configured).
func (s *Service) Missing() string {
	if s.Configured() {
		return ""
	}
	if s == nil || len(s.c.Missing) == 0 {
		return "CSS_GOOGLE_CLIENT_ID"
	}
	return strings.Join(s.c.Missing, ", ")
}

func (s *Service) unavailable() error {
	return &apperr.Error{Code: apperr.Unavailable,
		Message: "the YouTube connection is not configured on this deployment (missing " + s.Missing() + ")"}
}

// stateAAD binds a sealed PKCE verifier to its channel; tokenAAD binds a sealed refresh token.
func stateAAD(channelID string) []byte { return []byte("youtube-oauth-state\x00" + channelID) }
func tokenAAD(channelID string) []byte { return []byte("youtube-refresh-token\x00" + channelID) }

// HashState is how a state parameter is looked up: its SHA-256, so the table never holds a usable state.
func HashState(state string) string {
	h := sha256.Sum256([]byte(state))
	return hex.EncodeToString(h[:])
}

// Start begins a connection: a new single-use state bound to channelID, valid StateTTL, and the URL of
// Google's consent page (PKCE S256, offline access, consent prompted so a refresh token is always sent).
func (s *Service) Start(ctx context.Context, channelID string) (authorizationURL string, expiresAt time.Time, err error) {
	if !s.Configured() {
		return "", time.Time{}, s.unavailable()
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	state := base64.RawURLEncoding.EncodeToString(b)
	verifier := oauth2.GenerateVerifier()
	sealed, err := s.c.Cipher.Seal(ctx, []byte(verifier), stateAAD(channelID))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("connection: seal the verifier: %w", err)
	}
	expiresAt = s.now().UTC().Add(StateTTL).Truncate(time.Second)
	if err := s.c.Store.PutOAuthState(ctx, PendingState{Hash: HashState(state), ChannelID: channelID,
		SealedVerifier: sealed, ExpiresAt: expiresAt}); err != nil {
		return "", time.Time{}, fmt.Errorf("connection: store the state: %w", err)
	}
	u := s.c.OAuth.AuthCodeURL(state, oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("prompt", "consent"))
	return u, expiresAt, nil
}

// Callback is what Google sends back to the redirect URL.
type Callback struct {
	State, Code, Error string
}

// RefusedError is a callback that connected nothing: Message says why, for the owner's page.
type RefusedError struct {
	Message string
	Cause   error
}

func (e *RefusedError) Error() string {
	if e.Cause != nil {
		return "connection refused: " + e.Message + ": " + e.Cause.Error()
	}
	return "connection refused: " + e.Message
}

func (e *RefusedError) Unwrap() error { return e.Cause }

func refused(cause error, format string, args ...any) error {
	return &RefusedError{Message: fmt.Sprintf(format, args...), Cause: cause}
}

// Complete finishes a connection from Google's callback: the state is taken (single use) whatever
// follows, the code exchanged with its PKCE verifier, the YouTube channel read, and the refresh token
// stored sealed. Anything short of that stores nothing and answers a *RefusedError.
func (s *Service) Complete(ctx context.Context, cb Callback) (Connection, error) {
	if !s.Configured() {
		return Connection{}, s.unavailable()
	}
	if cb.State == "" {
		return Connection{}, refused(nil, "The link has no state parameter. Start the connection again from the app.")
	}
	pending, err := s.c.Store.TakeOAuthState(ctx, HashState(cb.State))
	if errors.Is(err, ErrStateNotFound) {
		return Connection{}, refused(nil, "This link is not valid: it was used already, has expired, or was not issued by this service. Start the connection again from the app.")
	}
	if err != nil {
		return Connection{}, fmt.Errorf("connection: take the state: %w", err)
	}
	if !pending.ExpiresAt.After(s.now()) {
		return Connection{}, refused(nil, "This link has expired (it is valid for 10 minutes). Start the connection again from the app.")
	}
	if cb.Error != "" {
		return Connection{}, refused(nil, "%s", callbackError(cb.Error))
	}
	if cb.Code == "" {
		return Connection{}, refused(nil, "Google sent no authorization code. Start the connection again from the app.")
	}
	verifier, err := s.c.Cipher.Open(ctx, pending.SealedVerifier, stateAAD(pending.ChannelID))
	if err != nil {
		return Connection{}, refused(err, "This link is not valid for this channel. Start the connection again from the app.")
	}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, s.c.HTTPClient)
	tok, err := s.c.OAuth.Exchange(hctx, cb.Code, oauth2.VerifierOption(string(verifier)))
	if err != nil {
		return Connection{}, refused(err, "Google did not accept the authorization. Start the connection again from the app.")
	}
	if tok.RefreshToken == "" {
		return Connection{}, refused(nil, "Google sent no refresh token, so the service could not keep access. Remove the app's access in your Google account's security settings, then connect again.")
	}
	scopes := grantedScopes(tok)
	if missing := missingScopes(scopes); len(missing) > 0 {
		s.revokeQuietly(ctx, tok.RefreshToken)
		return Connection{}, refused(nil, "Not every permission was granted (missing %s). Connect again and allow them all.", strings.Join(missing, ", "))
	}
	owned, err := s.c.Identity.OwnedChannel(ctx, s.c.OAuth.Client(hctx, tok))
	if err != nil {
		s.revokeQuietly(ctx, tok.RefreshToken)
		return Connection{}, refused(err, "The YouTube channel of this Google account could not be read. Choose an account (or brand account) that has a YouTube channel, and connect again.")
	}
	sealed, err := s.c.Cipher.Seal(ctx, []byte(tok.RefreshToken), tokenAAD(pending.ChannelID))
	if err != nil {
		return Connection{}, fmt.Errorf("connection: seal the refresh token: %w", err)
	}
	c := Connection{ChannelID: pending.ChannelID, Status: Connected, YouTubeChannelID: owned.ID,
		YouTubeChannelTitle: owned.Title, Language: owned.Language, Scopes: scopes,
		SealedRefreshToken: sealed, ConnectedAt: s.now().UTC().Truncate(time.Millisecond)}
	if err := s.c.Store.SaveConnection(ctx, c); err != nil {
		return Connection{}, fmt.Errorf("connection: save: %w", err)
	}
	s.forget(c.ChannelID)
	s.emit(ctx, c.ChannelID, EventConnected, map[string]any{
		"youtubeChannelId": c.YouTubeChannelID, "youtubeChannelTitle": c.YouTubeChannelTitle})
	if s.c.Sync != nil {
		if err := s.c.Sync.RequestSync(ctx, c.ChannelID); err != nil {
			// The daily sync catches up; the connection itself stands.
			s.log.WarnContext(ctx, "sync request after connect failed", "channel", c.ChannelID, "error", err.Error())
		}
	}
	return c, nil
}

// grantedScopes reads the token response's scope (space-separated); without one, Google granted what was
// asked.
func grantedScopes(tok *oauth2.Token) []string {
	raw, _ := tok.Extra("scope").(string)
	if strings.TrimSpace(raw) == "" {
		return slices.Clone(Scopes)
	}
	out := strings.Fields(raw)
	slices.Sort(out)
	return slices.Compact(out)
}

func missingScopes(granted []string) []string {
	var missing []string
	for _, sc := range Scopes {
		if !slices.Contains(granted, sc) {
			missing = append(missing, sc[strings.LastIndex(sc, "/")+1:])
		}
	}
	return missing
}

func (s *Service) revokeQuietly(ctx context.Context, token string) {
	if err := s.c.Revoker.Revoke(ctx, token); err != nil {
		s.log.WarnContext(ctx, "revoking an unused grant failed", "error", err.Error())
	}
}

func (s *Service) emit(ctx context.Context, channelID, event string, data map[string]any) {
	if s.c.Emitter == nil {
		return
	}
	if err := s.c.Emitter.Emit(ctx, channelID, event, data); err != nil {
		s.log.ErrorContext(ctx, "emit failed", "event", event, "channel", channelID, "error", err.Error())
	}
}

// Get returns the channel's connection; a channel without one gets Status NotConnected.
func (s *Service) Get(ctx context.Context, channelID string) (Connection, error) {
	if !s.Configured() {
		return Connection{}, s.unavailable()
	}
	c, err := s.c.Store.GetConnection(ctx, channelID)
	if errors.Is(err, ErrNotConnected) {
		return Connection{ChannelID: channelID, Status: NotConnected}, nil
	}
	return c, err
}

// Disconnect revokes the grant at Google, then deletes the connection. Without a confirmed revocation
// nothing is deleted, so the owner can try again (a grant Google no longer knows counts as revoked).
func (s *Service) Disconnect(ctx context.Context, channelID string) error {
	if !s.Configured() {
		return s.unavailable()
	}
	c, err := s.c.Store.GetConnection(ctx, channelID)
	if errors.Is(err, ErrNotConnected) {
		return apperr.NotFoundf("the channel has no YouTube connection")
	}
	if err != nil {
		return err
	}
	token, err := s.c.Cipher.Open(ctx, c.SealedRefreshToken, tokenAAD(channelID))
	if err != nil {
		return fmt.Errorf("connection: open the refresh token: %w", err)
	}
	if err := s.c.Revoker.Revoke(ctx, string(token)); err != nil {
		return &apperr.Error{Code: apperr.Unavailable, Message: "Google did not confirm the revocation; nothing was deleted, try again", Cause: err}
	}
	if err := s.c.Store.DeleteConnection(ctx, channelID); err != nil {
		return err
	}
	s.forget(channelID)
	s.emit(ctx, channelID, EventDisconnected, map[string]any{"youtubeChannelId": c.YouTubeChannelID, "reason": "disconnected"})
	return nil
}

// Connected lists the channels whose connection is connected (the daily sync's work list).
func (s *Service) Connected(ctx context.Context) ([]string, error) {
	return s.c.Store.ConnectedChannels(ctx)
}

// MarkSynced records when the channel's sync last completed.
func (s *Service) MarkSynced(ctx context.Context, channelID string, at time.Time) error {
	_, err := s.c.Store.UpdateConnection(ctx, channelID, func(c *Connection) error {
		t := at.UTC().Truncate(time.Millisecond)
		c.LastSyncAt = &t
		return nil
	})
	return err
}

// OwnerClient returns an HTTP client whose requests carry channelID's owner access token, refreshed as
// needed, and the connected YouTube channel's id. ErrNotConnected without a connection; ErrNeedsReconnect
// when Google refuses the grant (the connection is then marked so, and youtube.disconnected emitted, the
// first time). The client of one channel only ever carries that channel's token.
func (s *Service) OwnerClient(ctx context.Context, channelID string) (*http.Client, string, error) {
	if !s.Configured() {
		return nil, "", s.unavailable()
	}
	c, err := s.c.Store.GetConnection(ctx, channelID)
	if err != nil {
		return nil, "", err
	}
	if c.Status != Connected {
		return nil, "", ErrNeedsReconnect
	}
	ts, err := s.source(ctx, c)
	if err != nil {
		return nil, "", err
	}
	// The first token is fetched now, so a refused grant is known before the caller spends anything.
	if _, err := ts.Token(); err != nil {
		return nil, "", err
	}
	base := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, s.c.HTTPClient)
	return oauth2.NewClient(base, ts), c.YouTubeChannelID, nil
}

// source returns the channel's cached token source, or builds it from the sealed refresh token.
func (s *Service) source(ctx context.Context, c Connection) (oauth2.TokenSource, error) {
	key := string(c.SealedRefreshToken)
	s.mu.Lock()
	cached, ok := s.sources[c.ChannelID]
	s.mu.Unlock()
	if ok && cached.sealed == key {
		return cached.ts, nil
	}
	token, err := s.c.Cipher.Open(ctx, c.SealedRefreshToken, tokenAAD(c.ChannelID))
	if err != nil {
		return nil, fmt.Errorf("connection: open the refresh token: %w", err)
	}
	// Refreshes outlive the request that first asked (the source is cached), so they get a context
	// without its deadline, and the service's HTTP client.
	base := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, s.c.HTTPClient)
	inner := s.c.OAuth.TokenSource(base, &oauth2.Token{RefreshToken: string(token)})
	ts := oauth2.ReuseTokenSource(nil, &guard{next: inner, refused: func() { s.refusedGrant(base, c.ChannelID) }})
	s.mu.Lock()
	s.sources[c.ChannelID] = cachedSource{sealed: key, ts: ts}
	s.mu.Unlock()
	return ts, nil
}

func (s *Service) forget(channelID string) {
	s.mu.Lock()
	delete(s.sources, channelID)
	s.mu.Unlock()
}

// guard turns a refresh Google answers invalid_grant into ErrNeedsReconnect, and reports it.
type guard struct {
	next    oauth2.TokenSource
	refused func()
}

func (g *guard) Token() (*oauth2.Token, error) {
	tok, err := g.next.Token()
	if err == nil {
		return tok, nil
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
		g.refused()
		return nil, fmt.Errorf("%w (%s)", ErrNeedsReconnect, re.ErrorCode)
	}
	return nil, fmt.Errorf("connection: refresh the access token: %w", err)
}

// refusedGrant marks the connection needs_reconnect and emits youtube.disconnected, once.
func (s *Service) refusedGrant(ctx context.Context, channelID string) {
	s.forget(channelID)
	changed := false
	c, err := s.c.Store.UpdateConnection(ctx, channelID, func(c *Connection) error {
		changed = c.Status == Connected
		c.Status = NeedsReconnect
		return nil
	})
	if err != nil {
		s.log.ErrorContext(ctx, "marking a refused grant failed", "channel", channelID, "error", err.Error())
		return
	}
	s.log.WarnContext(ctx, "youtube grant refused: the channel needs reconnecting", "channel", channelID)
	if changed {
		s.emit(ctx, channelID, EventDisconnected, map[string]any{"youtubeChannelId": c.YouTubeChannelID, "reason": "refused"})
	}
}

// GoogleAuthURL and GoogleTokenURL are Google's OAuth 2.0 endpoints.
const (
	GoogleAuthURL  = "https://accounts.google.com/o/oauth2/v2/auth"
	GoogleTokenURL = "https://oauth2.googleapis.com/token"
)

// OAuthSettings is the configured OAuth client.
type OAuthSettings struct {
	ClientID, ClientSecret string
	// AuthURL and TokenURL replace Google's endpoints (tests, a stand-in server).
	AuthURL, TokenURL string
	// RedirectURL is the callback, <public URL>/api/youtube/oauth/callback.
	RedirectURL string
}

// OAuthConfig returns the OAuth 2.0 client configuration: Google's endpoints unless replaced, the client
// secret sent in the request body as Google documents, and Scopes. A stand-in authorization server (an
// AuthURL other than Google's) is also asked for `openid`, which mock-oauth2-server requires; Google is
// asked for Scopes alone.
func OAuthConfig(s OAuthSettings) *oauth2.Config {
	auth, token := GoogleAuthURL, GoogleTokenURL
	if s.AuthURL != "" {
		auth = s.AuthURL
	}
	if s.TokenURL != "" {
		token = s.TokenURL
	}
	scopes := slices.Clone(Scopes)
	if auth != GoogleAuthURL {
		scopes = append(scopes, "openid")
	}
	return &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, RedirectURL: s.RedirectURL, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: auth, TokenURL: token, AuthStyle: oauth2.AuthStyleInParams}}
}
