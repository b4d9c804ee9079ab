package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/connection"
)

// The YouTube connection (decision 42):
//
//	PK "YTCONN#<channel>",  SK "YTCONN"        the channel's connection (refresh token sealed), versioned;
//	                                           outside the channel partition, which the webhook dispatcher
//	                                           reads (decision 50). Read at PK "CH#<channel>" too, where
//	                                           it was kept before, and moved from there when next written.
//	PK "YTCONNS",           SK "<channel>"     the index of connected channels (the daily sync's work list),
//	                                           written in the connection's own transaction
//	PK "YTCHAN#<youtube channel>", SK "<channel>"  the channels connected to a YouTube channel (decision 50:
//	                                           one account's only), written in the connection's transactions
//	PK "YTSTATE#<sha256>",  SK "STATE"         an authorization in progress; expires with its state
const (
	prefixConnection   = "YTCONN#"
	skConnection       = "YTCONN"
	pkConnectedIndex   = "YTCONNS"
	prefixYouTubeIndex = "YTCHAN#"
	prefixOAuthState   = "YTSTATE#"
	skOAuthState       = "STATE"
)

func connectionKey(channelID string) Key {
	return Key{PK: prefixConnection + channelID, SK: skConnection}
}

// ConnectionPartition is the partition key of channelID's connection item: infra/deploy's grants test
// checks that the webhook dispatcher's grants do not reach it.
func ConnectionPartition(channelID string) string { return connectionKey(channelID).PK }

// legacyConnectionKey is where a connection was kept before decision 50.
func legacyConnectionKey(channelID string) Key { return channelKey(channelID, skConnection) }
func connectedIndexKey(channelID string) Key {
	return Key{PK: pkConnectedIndex, SK: channelID}
}
func oauthStateKey(hash string) Key { return Key{PK: prefixOAuthState + hash, SK: skOAuthState} }
func youtubeIndexKey(youtubeChannelID, channelID string) Key {
	return Key{PK: prefixYouTubeIndex + youtubeChannelID, SK: channelID}
}

// connectionRecord is a connection, format 2.
type connectionRecord struct {
	Status              string     `json:"status"`
	YouTubeChannelID    string     `json:"youtubeChannelId"`
	YouTubeChannelTitle string     `json:"youtubeChannelTitle"`
	Language            string     `json:"language,omitempty"`
	Scopes              []string   `json:"scopes"`
	SealedRefreshToken  []byte     `json:"sealedRefreshToken"`
	ConnectedAt         time.Time  `json:"connectedAt"`
	LastSyncAt          *time.Time `json:"lastSyncAt,omitempty"`
}

func connectionRecordOf(c connection.Connection) connectionRecord {
	return connectionRecord{Status: string(c.Status), YouTubeChannelID: c.YouTubeChannelID,
		YouTubeChannelTitle: c.YouTubeChannelTitle, Language: c.Language, Scopes: c.Scopes,
		SealedRefreshToken: c.SealedRefreshToken, ConnectedAt: c.ConnectedAt, LastSyncAt: c.LastSyncAt}
}

func (r connectionRecord) connection(channelID string) connection.Connection {
	return connection.Connection{ChannelID: channelID, Status: connection.Status(r.Status),
		YouTubeChannelID: r.YouTubeChannelID, YouTubeChannelTitle: r.YouTubeChannelTitle, Language: r.Language,
		Scopes: r.Scopes, SealedRefreshToken: r.SealedRefreshToken, ConnectedAt: r.ConnectedAt, LastSyncAt: r.LastSyncAt}
}

// stateRecord is a pending authorization, format 2.
type stateRecord struct {
	ChannelID      string    `json:"channelId"`
	SealedVerifier []byte    `json:"sealedVerifier"`
	BrowserHash    string    `json:"browserHash,omitempty"`
	ExpiresAt      time.Time `json:"expiresAt"`
}

func (r stateRecord) pending(hash string) connection.PendingState {
	return connection.PendingState{Hash: hash, ChannelID: r.ChannelID, SealedVerifier: r.SealedVerifier,
		BrowserHash: r.BrowserHash, ExpiresAt: r.ExpiresAt}
}

// PutOAuthState stores an authorization in progress until it expires.
func (s *Store) PutOAuthState(ctx context.Context, st connection.PendingState) error {
	if st.Hash == "" || st.ChannelID == "" {
		return errors.New("put oauth state: hash and channel are required")
	}
	it, err := encode(oauthStateKey(st.Hash), stateRecord{ChannelID: st.ChannelID, SealedVerifier: st.SealedVerifier,
		BrowserHash: st.BrowserHash, ExpiresAt: st.ExpiresAt})
	if err != nil {
		return err
	}
	it.ExpiresAt = st.ExpiresAt.Unix()
	if st.ExpiresAt.Nanosecond() != 0 {
		it.ExpiresAt++ // expire at or after ExpiresAt, never before
	}
	if err := s.write(ctx, Put(it, IfNotExists)); err != nil {
		return fmt.Errorf("put oauth state: %w", err)
	}
	return nil
}

// TakeOAuthState returns the live state with hash and deletes it in one conditional write on the version
// read, so of concurrent callbacks with the same state exactly one gets it (single use).
func (s *Store) TakeOAuthState(ctx context.Context, hash string) (connection.PendingState, error) {
	if hash == "" {
		return connection.PendingState{}, connection.ErrStateNotFound
	}
	key := oauthStateKey(hash)
	it, err := s.t.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return connection.PendingState{}, connection.ErrStateNotFound
	}
	if err != nil {
		return connection.PendingState{}, fmt.Errorf("take oauth state: %w", err)
	}
	var r stateRecord
	if err := decode(it, &r); err != nil {
		return connection.PendingState{}, err
	}
	del := Delete(key, IfVersion)
	del.Version = it.Version
	if err := s.t.Write(ctx, del); err != nil {
		if errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrConflict) {
			return connection.PendingState{}, connection.ErrStateNotFound // another callback took it
		}
		return connection.PendingState{}, fmt.Errorf("take oauth state: %w", err)
	}
	return r.pending(hash), nil
}

// BindOAuthState records browserHash on the live state with hash, in one conditional write on the version
// read, unless it holds one already (connection.ErrStateBound): of concurrent binders exactly one succeeds.
func (s *Store) BindOAuthState(ctx context.Context, hash, browserHash string) (connection.PendingState, error) {
	if hash == "" {
		return connection.PendingState{}, connection.ErrStateNotFound
	}
	if browserHash == "" {
		return connection.PendingState{}, errors.New("bind oauth state: no browser hash")
	}
	key := oauthStateKey(hash)
	it, err := s.t.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return connection.PendingState{}, connection.ErrStateNotFound
	}
	if err != nil {
		return connection.PendingState{}, fmt.Errorf("bind oauth state: %w", err)
	}
	var r stateRecord
	if err := decode(it, &r); err != nil {
		return connection.PendingState{}, err
	}
	if r.BrowserHash != "" {
		return connection.PendingState{}, connection.ErrStateBound
	}
	r.BrowserHash = browserHash
	next, err := encode(key, r)
	if err != nil {
		return connection.PendingState{}, err
	}
	next.ExpiresAt = it.ExpiresAt
	if err := s.t.Write(ctx, PutIfVersion(next, it.Version)); err != nil {
		if errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrConflict) {
			// Another binder (or the callback, taking it) changed it since it was read.
			if _, gerr := s.t.Get(ctx, key); errors.Is(gerr, ErrNotFound) {
				return connection.PendingState{}, connection.ErrStateNotFound
			}
			return connection.PendingState{}, connection.ErrStateBound
		}
		return connection.PendingState{}, fmt.Errorf("bind oauth state: %w", err)
	}
	return r.pending(hash), nil
}

// GetConnection returns the channel's connection, or connection.ErrNotConnected.
func (s *Store) GetConnection(ctx context.Context, channelID string) (connection.Connection, error) {
	c, _, err := s.getConnection(ctx, channelID)
	return c, err
}

// storedConnection is where a connection was read: its version, and whether at the legacy key.
type storedConnection struct {
	version int64
	legacy  bool
}

// put writes it whole as item (at connectionKey) under optimistic locking: a new item where there was
// none, in place, or moved from the legacy key (deleted at the version read).
func (sc storedConnection) put(item Item, channelID string, found bool) []Op {
	switch {
	case !found:
		return []Op{putNew(item)}
	case sc.legacy:
		del := Delete(legacyConnectionKey(channelID), IfVersion)
		del.Version = sc.version
		return []Op{putNew(item), del}
	default:
		return []Op{PutIfVersion(item, sc.version)}
	}
}

func (s *Store) getConnection(ctx context.Context, channelID string) (connection.Connection, storedConnection, error) {
	var r connectionRecord
	version, err := s.getJSON(ctx, connectionKey(channelID), &r)
	legacy := false
	if errors.Is(err, ErrNotFound) {
		legacy = true
		version, err = s.getJSON(ctx, legacyConnectionKey(channelID), &r)
	}
	if errors.Is(err, ErrNotFound) {
		return connection.Connection{}, storedConnection{}, connection.ErrNotConnected
	}
	if err != nil {
		return connection.Connection{}, storedConnection{}, fmt.Errorf("get connection: %w", err)
	}
	return r.connection(channelID), storedConnection{version: version, legacy: legacy}, nil
}

// connectionOps writes c (whole, with put), keeps the connected index in step with its status, and lists it
// under its YouTube channel (no longer under previousYouTube, the one it replaces, when that differs).
func connectionOps(c connection.Connection, previousYouTube string, put []Op) ([]Op, error) {
	index := Delete(connectedIndexKey(c.ChannelID), Always)
	if c.Status == connection.Connected {
		it, err := encode(connectedIndexKey(c.ChannelID), struct{}{})
		if err != nil {
			return nil, err
		}
		index = Put(it, Always)
	}
	ops := append(put, index)
	if c.YouTubeChannelID != "" {
		it, err := encode(youtubeIndexKey(c.YouTubeChannelID, c.ChannelID), struct{}{})
		if err != nil {
			return nil, err
		}
		ops = append(ops, Put(it, Always))
	}
	if previousYouTube != "" && previousYouTube != c.YouTubeChannelID {
		ops = append(ops, Delete(youtubeIndexKey(previousYouTube, c.ChannelID), Always))
	}
	return ops, nil
}

// SaveConnection writes the channel's connection (created or replaced whole) and its index entry.
func (s *Store) SaveConnection(ctx context.Context, c connection.Connection) error {
	if c.ChannelID == "" {
		return errors.New("save connection: no channel")
	}
	it, err := encode(connectionKey(c.ChannelID), connectionRecordOf(c))
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		previous, stored, err := s.getConnection(ctx, c.ChannelID)
		found := err == nil
		if err != nil && !errors.Is(err, connection.ErrNotConnected) {
			return err
		}
		put := stored.put(it, c.ChannelID, found)
		ops, err := connectionOps(c, previous.YouTubeChannelID, put)
		if err != nil {
			return err
		}
		err = s.write(ctx, ops...)
		if failed := FailedOp(err); failed >= 0 && failed < len(put) && attempt < conflictRetries {
			continue // changed since it was read: replace what is there now
		}
		if err != nil {
			return fmt.Errorf("save connection: %w", err)
		}
		return nil
	}
}

// UpdateConnection applies change to the stored connection and writes it back if nothing changed it
// meanwhile (retried on a lost race).
func (s *Store) UpdateConnection(ctx context.Context, channelID string, change func(*connection.Connection) error) (connection.Connection, error) {
	for attempt := 0; ; attempt++ {
		c, stored, err := s.getConnection(ctx, channelID)
		if err != nil {
			return connection.Connection{}, err
		}
		if err := change(&c); err != nil {
			return connection.Connection{}, err
		}
		c.ChannelID = channelID
		it, err := encode(connectionKey(channelID), connectionRecordOf(c))
		if err != nil {
			return connection.Connection{}, err
		}
		put := stored.put(it, channelID, true)
		ops, err := connectionOps(c, "", put)
		if err != nil {
			return connection.Connection{}, err
		}
		err = s.write(ctx, ops...)
		if failed := FailedOp(err); failed >= 0 && failed < len(put) && attempt < conflictRetries {
			continue
		}
		if err != nil {
			return connection.Connection{}, fmt.Errorf("update connection: %w", err)
		}
		return c, nil
	}
}

// DeleteConnection removes the channel's cached transcripts, then its connection, its index entries and
// what its daily sync stored (the uploads, figures and reviews behind monthlyReport and the brief), in one
// write: a disconnected channel's report and brief go back to the service's own data at once, and nothing
// fetched with the owner's grant stays (decision 50).
func (s *Store) DeleteConnection(ctx context.Context, channelID string) error {
	if err := s.deleteTranscripts(ctx, channelID); err != nil {
		return fmt.Errorf("delete connection: %w", err)
	}
	ops, err := s.ownSyncDeletes(ctx, channelID)
	if err != nil {
		return fmt.Errorf("delete connection: %w", err)
	}
	ops = append(ops, Delete(connectedIndexKey(channelID), Always))
	c, stored, err := s.getConnection(ctx, channelID)
	switch {
	case err == nil:
		key := connectionKey(channelID)
		if stored.legacy {
			key = legacyConnectionKey(channelID)
		}
		ops = append(ops, Delete(key, Always))
		if c.YouTubeChannelID != "" {
			ops = append(ops, Delete(youtubeIndexKey(c.YouTubeChannelID, channelID), Always))
		}
	case !errors.Is(err, connection.ErrNotConnected):
		return fmt.Errorf("delete connection: %w", err)
	}
	if err := s.write(ctx, ops...); err != nil {
		return fmt.Errorf("delete connection: %w", err)
	}
	return nil
}

// YouTubeChannelConnections lists the channels connected to the YouTube channel youtubeChannelID (any
// status), in id order.
func (s *Store) YouTubeChannelConnections(ctx context.Context, youtubeChannelID string) ([]string, error) {
	if youtubeChannelID == "" {
		return nil, nil
	}
	items, err := s.queryAll(ctx, prefixYouTubeIndex+youtubeChannelID, "", false)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.SK)
	}
	return out, nil
}

// ConnectedChannels lists the channels whose connection is connected, in id order.
func (s *Store) ConnectedChannels(ctx context.Context) ([]string, error) {
	items, err := s.queryAll(ctx, pkConnectedIndex, "", false)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if id := strings.TrimSpace(it.SK); id != "" {
			out = append(out, id)
		}
	}
	return out, nil
}

// Transcripts of the channel's own videos (decision 41), cached per video and caption track:
//
//	PK "CH#<channel>", SK "YTCAP#<video>#<track>"   the track's text at its version; expires after 30 days
const (
	prefixCaption = "YTCAP#"
	captionTTL    = 30 * 24 * time.Hour
	// maxCaptionBytes keeps a cached transcript well inside DynamoDB's 400 KB item limit; a longer one is
	// not cached (fetched again when asked again).
	maxCaptionBytes = 300 << 10
	// transcriptDeletePage is how many cached transcripts one write deletes.
	transcriptDeletePage = 25
)

type captionRecord struct {
	Version string `json:"version"`
	Text    string `json:"text"`
}

func captionKey(channelID, videoID, trackID string) Key {
	return channelKey(channelID, prefixCaption+videoID+"#"+trackID)
}

// deleteTranscripts deletes the channel's cached transcripts, a page at a time (each page one write).
func (s *Store) deleteTranscripts(ctx context.Context, channelID string) error {
	q := Query{PK: channelPK(channelID), Prefix: prefixCaption, Limit: transcriptDeletePage}
	for {
		page, err := s.t.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("cached transcripts: %w", err)
		}
		if err := deleteEach(ctx, s, page.Items, itemKey); err != nil {
			return fmt.Errorf("delete cached transcripts: %w", err)
		}
		if page.Next == "" {
			return nil
		}
		q.Cursor = page.Next
	}
}

// CachedTranscript returns the cached text of a video's caption track if it is of version.
func (s *Store) CachedTranscript(ctx context.Context, channelID, videoID, trackID, version string) (string, bool, error) {
	var r captionRecord
	_, err := s.getJSON(ctx, captionKey(channelID, videoID, trackID), &r)
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cached transcript: %w", err)
	}
	return r.Text, r.Version == version, nil
}

// PutTranscript caches the text of a video's caption track at version.
func (s *Store) PutTranscript(ctx context.Context, channelID, videoID, trackID, version, text string) error {
	if len(text) > maxCaptionBytes {
		return nil
	}
	it, err := encode(captionKey(channelID, videoID, trackID), captionRecord{Version: version, Text: text})
	if err != nil {
		return err
	}
	it.ExpiresAt = s.Now().Add(captionTTL).Unix()
	if err := s.write(ctx, Put(it, Always)); err != nil {
		return fmt.Errorf("put transcript: %w", err)
	}
	return nil
}
