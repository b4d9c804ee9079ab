package connection

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/creatorstrategy/css/shared/accounts"
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
	Store Store
	// Cipher seals refresh tokens and PKCE verifiers with their own key, which the webhook functions do not
	// hold (decision 50).
	Cipher Cipher
	// LegacyCipher opens what was sealed before decision 50, with the webhook secrets' key (nil: nothing
	// was); a refresh token it opens is sealed again with Cipher.
	LegacyCipher Cipher
	Channels     Channels
	OAuth        *oauth2.Config
	// StartURL is the start step's URL, <public URL>/api/youtube/oauth/start, which Start's links open.
	StartURL string
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
	c.HTTPClient = cmp.Or(c.HTTPClient, &http.Client{Timeout: 20 * time.Second})
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return &Service{c: c, now: now, log: cmp.Or(c.Log, slog.New(slog.DiscardHandler)), sources: map[string]cachedSource{}}
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

// randomSecret is 32 random bytes, base64url.
func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Start begins a connection: a new single-use state bound to channelID, valid StateTTL, and the link of the
// start step (Begin) the owner's browser opens, which binds the state to that browser and goes on to
// Google's consent page (decision 50).
func (s *Service) Start(ctx context.Context, channelID string) (startURL string, expiresAt time.Time, err error) {
	if !s.Configured() {
		return "", time.Time{}, s.unavailable()
	}
	state := randomSecret()
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
	return s.c.StartURL + "?" + url.Values{"state": {state}}.Encode(), expiresAt, nil
}

// Begun is the start step's result: Google's consent page, the browser secret for the cookie, and the
// name of the service channel being connected, which the page shows before the owner goes on.
type Begun struct {
	AuthorizationURL, Browser, ChannelName string
}

// Begin is the start step, in the owner's browser: it binds the state to a new browser secret (stored as
// its hash only; the caller sets it as a cookie), once, and answers the URL of Google's consent page (PKCE
// S256, offline access, consent prompted so a refresh token is always sent). A state opened already, or
// unknown, or expired, is a *RefusedError.
func (s *Service) Begin(ctx context.Context, state string) (Begun, error) {
	if !s.Configured() {
		return Begun{}, s.unavailable()
	}
	if state == "" {
		return Begun{}, refused(nil, "The link has no state parameter. Start the connection again from the app.")
	}
	browser := randomSecret()
	pending, err := s.c.Store.BindOAuthState(ctx, HashState(state), HashState(browser))
	switch {
	case errors.Is(err, ErrStateNotFound):
		return Begun{}, refused(nil, "This link is not valid: it was used already, has expired, or was not issued by this service. Start the connection again from the app.")
	case errors.Is(err, ErrStateBound):
		return Begun{}, refused(nil, "This link was opened already; it works once, in the browser that opens it first. Start the connection again from the app.")
	case err != nil:
		return Begun{}, fmt.Errorf("connection: bind the state: %w", err)
	}
	if !pending.ExpiresAt.After(s.now()) {
		return Begun{}, refused(nil, "This link has expired (it is valid for 10 minutes). Start the connection again from the app.")
	}
	verifier, _, err := s.open(ctx, pending.SealedVerifier, stateAAD(pending.ChannelID))
	if err != nil {
		return Begun{}, refused(err, "This link is not valid for this channel. Start the connection again from the app.")
	}
	channel, err := s.c.Channels.GetChannel(ctx, pending.ChannelID)
	if apperr.CodeOf(err) == apperr.NotFound {
		return Begun{}, refused(err, "The channel this link was made for no longer exists.")
	}
	if err != nil {
		return Begun{}, fmt.Errorf("connection: read the channel: %w", err)
	}
	u := s.c.OAuth.AuthCodeURL(state, oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(string(verifier)),
		oauth2.SetAuthURLParam("prompt", "consent"))
	return Begun{AuthorizationURL: u, Browser: browser, ChannelName: channel.Name}, nil
}

// Callback is what Google sends back to the redirect URL, and the browser secret Begin gave the browser
// that comes back with it (its cookie; "" without one).
type Callback struct {
	State, Code, Error, Browser string
}

// Completed is a connection made, with the name of the service channel it belongs to (for the owner's page).
type Completed struct {
	Connection
	ChannelName string
}

// RefusedError is a callback that connected nothing: Message says why, for the owner's page. Conflict marks
// a YouTube channel connected to another account's channel already.
type RefusedError struct {
	Message  string
	Conflict bool
	Cause    error
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
// follows, the browser checked against the one the start step bound, the code exchanged with its PKCE
// verifier, the YouTube channel read, and the refresh token stored sealed. Anything short of that stores
// nothing and answers a *RefusedError.
func (s *Service) Complete(ctx context.Context, cb Callback) (Completed, error) {
	if !s.Configured() {
		return Completed{}, s.unavailable()
	}
	if cb.State == "" {
		return Completed{}, refused(nil, "The link has no state parameter. Start the connection again from the app.")
	}
	pending, err := s.c.Store.TakeOAuthState(ctx, HashState(cb.State))
	if errors.Is(err, ErrStateNotFound) {
		return Completed{}, refused(nil, "This link is not valid: it was used already, has expired, or was not issued by this service. Start the connection again from the app.")
	}
	if err != nil {
		return Completed{}, fmt.Errorf("connection: take the state: %w", err)
	}
	if !pending.ExpiresAt.After(s.now()) {
		return Completed{}, refused(nil, "This link has expired (it is valid for 10 minutes). Start the connection again from the app.")
	}
	// Only the browser that opened the start link may finish: a consent link passed on to someone else
	// connects nothing (decision 50).
	if pending.BrowserHash == "" || cb.Browser == "" ||
		subtle.ConstantTimeCompare([]byte(pending.BrowserHash), []byte(HashState(cb.Browser))) != 1 {
		return Completed{}, refused(nil, "This connection was started in another browser, so nothing was connected. Connecting works only in the browser that opened the link from the app: start the connection again there.")
	}
	if cb.Error != "" {
		return Completed{}, refused(nil, "%s", callbackError(cb.Error))
	}
	if cb.Code == "" {
		return Completed{}, refused(nil, "Google sent no authorization code. Start the connection again from the app.")
	}
	verifier, _, err := s.open(ctx, pending.SealedVerifier, stateAAD(pending.ChannelID))
	if err != nil {
		return Completed{}, refused(err, "This link is not valid for this channel. Start the connection again from the app.")
	}
	channel, err := s.c.Channels.GetChannel(ctx, pending.ChannelID)
	if apperr.CodeOf(err) == apperr.NotFound {
		return Completed{}, refused(err, "The channel this link was made for no longer exists, so nothing was connected.")
	}
	if err != nil {
		return Completed{}, fmt.Errorf("connection: read the channel: %w", err)
	}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, s.c.HTTPClient)
	tok, err := s.c.OAuth.Exchange(hctx, cb.Code, oauth2.VerifierOption(string(verifier)))
	if err != nil {
		return Completed{}, refused(err, "Google did not accept the authorization. Start the connection again from the app.")
	}
	if tok.RefreshToken == "" {
		return Completed{}, refused(nil, "Google sent no refresh token, so the service could not keep access. Remove the app's access in your Google account's security settings, then connect again.")
	}
	scopes := grantedScopes(tok)
	if missing := missingScopes(scopes); len(missing) > 0 {
		s.revokeQuietly(ctx, tok.RefreshToken)
		return Completed{}, refused(nil, "Not every permission was granted (missing %s). Connect again and allow them all.", strings.Join(missing, ", "))
	}
	owned, err := s.c.Identity.OwnedChannel(ctx, s.c.OAuth.Client(hctx, tok))
	if err != nil {
		s.revokeQuietly(ctx, tok.RefreshToken)
		return Completed{}, refused(err, "The YouTube channel of this Google account could not be read. Choose an account (or brand account) that has a YouTube channel, and connect again.")
	}
	if err := s.checkNotConnectedElsewhere(ctx, channel, owned); err != nil {
		// Not revoked: the grant is the one the other account's connection holds too (Google keeps one grant
		// per Google account and client), and revoking it would end that connection.
		return Completed{}, err
	}
	sealed, err := s.c.Cipher.Seal(ctx, []byte(tok.RefreshToken), tokenAAD(pending.ChannelID))
	if err != nil {
		return Completed{}, fmt.Errorf("connection: seal the refresh token: %w", err)
	}
	previous, err := s.c.Store.GetConnection(ctx, pending.ChannelID)
	if err != nil && !errors.Is(err, ErrNotConnected) {
		return Completed{}, fmt.Errorf("connection: read the previous connection: %w", err)
	}
	c := Connection{ChannelID: pending.ChannelID, Status: Connected, YouTubeChannelID: owned.ID,
		YouTubeChannelTitle: owned.Title, Language: owned.Language, Scopes: scopes,
		SealedRefreshToken: sealed, ConnectedAt: s.now().UTC().Truncate(time.Millisecond)}
	if err := s.c.Store.SaveConnection(ctx, c); err != nil {
		return Completed{}, fmt.Errorf("connection: save: %w", err)
	}
	s.forget(c.ChannelID)
	s.revokeReplaced(ctx, previous, c)
	s.emit(ctx, c.ChannelID, EventConnected, map[string]any{
		"youtubeChannelId": c.YouTubeChannelID, "youtubeChannelTitle": c.YouTubeChannelTitle})
	if s.c.Sync != nil {
		if err := s.c.Sync.RequestSync(ctx, c.ChannelID); err != nil {
			// The daily sync catches up; the connection itself stands.
			s.log.WarnContext(ctx, "sync request after connect failed", "channel", c.ChannelID, "error", err.Error())
		}
	}
	return Completed{Connection: c, ChannelName: channel.Name}, nil
}

// checkNotConnectedElsewhere refuses a YouTube channel connected to a channel of another account already
// (decision 50); the channels of one account may share it.
func (s *Service) checkNotConnectedElsewhere(ctx context.Context, channel accounts.Channel, owned OwnedChannel) error {
	others, err := s.c.Store.YouTubeChannelConnections(ctx, owned.ID)
	if err != nil {
		return fmt.Errorf("connection: the YouTube channel's connections: %w", err)
	}
	for _, id := range others {
		if id == channel.ID {
			continue
		}
		other, err := s.c.Channels.GetChannel(ctx, id)
		if apperr.CodeOf(err) == apperr.NotFound {
			continue
		}
		if err != nil {
			return fmt.Errorf("connection: read a connected channel: %w", err)
		}
		if other.AccountID != channel.AccountID {
			return &RefusedError{Conflict: true, Message: fmt.Sprintf("The YouTube channel “%s” is connected to a channel of another account on this service, so it was not connected to “%s”. Disconnect it there first.", owned.Title, channel.Name)}
		}
	}
	return nil
}

// revokeReplaced revokes the grant of the connection a reconnect replaced, when it was to another YouTube
// channel. The same YouTube channel's old grant is the new one's too (one grant per Google account and
// client), so revoking it would end the new connection; Google keeps it as the new one's.
func (s *Service) revokeReplaced(ctx context.Context, previous, now Connection) {
	if previous.SealedRefreshToken == nil || previous.YouTubeChannelID == now.YouTubeChannelID {
		return
	}
	token, _, err := s.open(ctx, previous.SealedRefreshToken, tokenAAD(previous.ChannelID))
	if err != nil {
		s.log.WarnContext(ctx, "the replaced grant's token does not open; not revoked", "channel", now.ChannelID, "error", err.Error())
		return
	}
	s.revokeQuietly(ctx, string(token))
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
	shared, err := s.c.Store.YouTubeChannelConnections(ctx, c.YouTubeChannelID)
	if err != nil {
		return fmt.Errorf("connection: the YouTube channel's connections: %w", err)
	}
	// Another channel of the account connected to the same YouTube channel holds the same grant (one per
	// Google account and client): revoking it would disconnect that one too, so it stays.
	if !slices.ContainsFunc(shared, func(id string) bool { return id != channelID }) {
		token, _, err := s.open(ctx, c.SealedRefreshToken, tokenAAD(channelID))
		if err != nil {
			return fmt.Errorf("connection: open the refresh token: %w", err)
		}
		if err := s.c.Revoker.Revoke(ctx, string(token)); err != nil {
			return &apperr.Error{Code: apperr.Unavailable, Message: "Google did not confirm the revocation; nothing was deleted, try again", Cause: err}
		}
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
	next := cmp.Or(s.c.HTTPClient.Transport, http.DefaultTransport)
	return &http.Client{Transport: &ownerTransport{s: s, c: c, base: context.WithoutCancel(ctx), next: next}}, c.YouTubeChannelID, nil
}

// ownerTransport sends a request with the channel's access token. A 401 means Google no longer takes the
// cached token (the grant was revoked while it was cached): the token is dropped, one refresh tried, and the
// request sent again; a refused refresh, or a 401 for the fresh token too, marks the connection
// needs_reconnect and answers ErrNeedsReconnect.
type ownerTransport struct {
	s    *Service
	c    Connection
	base context.Context
	next http.RoundTripper
}

func (t *ownerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.send(req)
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		return res, err
	}
	if req.Body != nil && req.GetBody == nil {
		return res, nil // cannot be sent again
	}
	res.Body.Close()
	t.s.forget(t.c.ChannelID)
	again := req
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		again = req.Clone(req.Context())
		again.Body = body
	}
	res, err = t.send(again)
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		return res, err
	}
	res.Body.Close()
	t.s.refusedGrant(t.base, t.c.ChannelID)
	return nil, fmt.Errorf("%w (YouTube answered 401 to a fresh access token)", ErrNeedsReconnect)
}

// send sends req with the channel's current access token (refreshed when the cached one expired or was
// dropped).
func (t *ownerTransport) send(req *http.Request) (*http.Response, error) {
	ts, err := t.s.source(t.base, t.c)
	if err != nil {
		return nil, err
	}
	tok, err := ts.Token()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	tok.SetAuthHeader(r)
	return t.next.RoundTrip(r)
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
	token, legacy, err := s.open(ctx, c.SealedRefreshToken, tokenAAD(c.ChannelID))
	if err != nil {
		return nil, fmt.Errorf("connection: open the refresh token: %w", err)
	}
	if legacy {
		s.reseal(ctx, c, token)
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

// open opens a value sealed with Cipher or, before decision 50, with LegacyCipher (legacy true).
func (s *Service) open(ctx context.Context, sealed, aad []byte) (plain []byte, legacy bool, err error) {
	plain, err = s.c.Cipher.Open(ctx, sealed, aad)
	if err == nil || s.c.LegacyCipher == nil {
		return plain, false, err
	}
	if plain, lerr := s.c.LegacyCipher.Open(ctx, sealed, aad); lerr == nil {
		return plain, true, nil
	}
	return nil, false, err
}

// errChanged: the connection changed since it was read; the re-sealing is left to whoever changed it.
var errChanged = errors.New("connection: changed meanwhile")

// reseal seals a refresh token opened with the legacy key again with the refresh tokens' own key (decision
// 47). A failure leaves it as it was, still readable, for the next use to try again.
func (s *Service) reseal(ctx context.Context, c Connection, token []byte) {
	sealed, err := s.c.Cipher.Seal(ctx, token, tokenAAD(c.ChannelID))
	if err == nil {
		_, err = s.c.Store.UpdateConnection(ctx, c.ChannelID, func(now *Connection) error {
			if !bytes.Equal(now.SealedRefreshToken, c.SealedRefreshToken) {
				return errChanged
			}
			now.SealedRefreshToken = sealed
			return nil
		})
	}
	if err != nil && !errors.Is(err, errChanged) {
		s.log.WarnContext(ctx, "re-sealing a refresh token with its own key failed", "channel", c.ChannelID, "error", err.Error())
	}
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
	auth, token := cmp.Or(s.AuthURL, GoogleAuthURL), cmp.Or(s.TokenURL, GoogleTokenURL)
	scopes := slices.Clone(Scopes)
	if auth != GoogleAuthURL {
		scopes = append(scopes, "openid")
	}
	return &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, RedirectURL: s.RedirectURL, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: auth, TokenURL: token, AuthStyle: oauth2.AuthStyleInParams}}
}
