package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/mcpgrant"
)

// The authorization server's items (decision 55):
//
//	PK "OAUTH#<kind>#<id>",   SK "R"         a client, an authorization code, a PKCE request, a token (by its
//	                                          HMAC signature, never the token) or the sealed signing secret;
//	                                          expires with what it holds
//	PK "MCPGRANT#<id>",       SK "GRANT"     which channel a grant is in
//	PK "CH#<channel>",        SK "MCPGRANT#<id>"  the grant, listed by the channel's owner
const (
	prefixOAuth = "OAUTH#"
	skOAuth     = "R"
	prefixGrant = "MCPGRANT#"
	skGrant     = "GRANT"
	// maxGrantTokens keeps a grant's delete, with its tokens, inside one transaction.
	maxGrantTokens   = 20
	grantNotFoundMsg = "grant not found"
)

func oauthKey(kind, id string) Key { return Key{PK: prefixOAuth + kind + "#" + id, SK: skOAuth} }

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// PutOAuthRecord writes data as the record kind/id, expiring at expires (zero: never); onlyNew refuses to
// replace a live record (ErrConditionFailed).
func (s *Store) PutOAuthRecord(ctx context.Context, kind, id string, data []byte, expires time.Time, onlyNew bool) error {
	cond := Always
	if onlyNew {
		cond = IfNotExists
	}
	it := Item{Key: oauthKey(kind, id), Data: data, ExpiresAt: unixOrZero(expires)}
	if err := s.t.Write(ctx, Put(it, cond)); err != nil {
		return fmt.Errorf("put %s record: %w", kind, err)
	}
	return nil
}

// OAuthRecord reads the record kind/id: NOT_FOUND when there is none live.
func (s *Store) OAuthRecord(ctx context.Context, kind, id string) ([]byte, error) {
	it, err := s.t.Get(ctx, oauthKey(kind, id))
	if errors.Is(err, ErrNotFound) {
		return nil, apperr.NotFoundf("%s not found", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s record: %w", kind, err)
	}
	return it.Data, nil
}

// DeleteOAuthRecord deletes the record kind/id (absent is fine).
func (s *Store) DeleteOAuthRecord(ctx context.Context, kind, id string) error {
	if err := s.t.Write(ctx, Delete(oauthKey(kind, id), Always)); err != nil {
		return fmt.Errorf("delete %s record: %w", kind, err)
	}
	return nil
}

type grantPointer struct {
	ChannelID string `json:"channelId"`
}

func grantPointerKey(id string) Key { return Key{PK: prefixGrant + id, SK: skGrant} }
func grantKey(channelID, id string) Key {
	return channelKey(channelID, prefixGrant+id)
}

// MCPGrant reads a grant by its id, with its version: NOT_FOUND when it is gone (revoked, expired).
func (s *Store) MCPGrant(ctx context.Context, id string) (mcpgrant.Grant, int64, error) {
	var p grantPointer
	if _, err := s.getJSON(ctx, grantPointerKey(id), &p); err != nil {
		return mcpgrant.Grant{}, 0, grantErr(err)
	}
	return s.ChannelMCPGrant(ctx, p.ChannelID, id)
}

// ChannelMCPGrant reads a grant of a channel: NOT_FOUND when the channel has no such live grant.
func (s *Store) ChannelMCPGrant(ctx context.Context, channelID, id string) (mcpgrant.Grant, int64, error) {
	var g mcpgrant.Grant
	v, err := s.getJSON(ctx, grantKey(channelID, id), &g)
	if err != nil {
		return mcpgrant.Grant{}, 0, grantErr(err)
	}
	return g, v, nil
}

func grantErr(err error) error {
	if errors.Is(err, ErrNotFound) {
		return apperr.NotFoundf(grantNotFoundMsg)
	}
	return fmt.Errorf("get grant: %w", err)
}

// OAuthItem is a record written with a grant (PutOAuthRecord's arguments).
type OAuthItem struct {
	Kind, ID string
	Data     []byte
	Expires  time.Time
}

// SaveMCPGrant writes g: a new grant when was is 0, else over version was (a CONFLICT when it changed or
// went meanwhile), with the records put and the records drop names ("<kind>#<id>") deleted, in one
// transaction. Its items expire at g.ExpiresAt.
func (s *Store) SaveMCPGrant(ctx context.Context, g mcpgrant.Grant, was int64, put []OAuthItem, drop []string) error {
	if len(g.Tokens) > maxGrantTokens {
		return fmt.Errorf("grant %s holds %d tokens (at most %d)", g.ID, len(g.Tokens), maxGrantTokens)
	}
	it, err := encode(grantKey(g.ChannelID, g.ID), g)
	if err != nil {
		return err
	}
	it.ExpiresAt = unixOrZero(g.ExpiresAt)
	ptr, err := encode(grantPointerKey(g.ID), grantPointer{ChannelID: g.ChannelID})
	if err != nil {
		return err
	}
	ptr.ExpiresAt = it.ExpiresAt
	it.Version = 1 // a stored grant's version is never 0, which asks for a new one
	ops := []Op{Put(it, IfNotExists), Put(ptr, IfNotExists)}
	if was != 0 {
		ops = []Op{PutIfVersion(it, was), Put(ptr, IfExists)}
	}
	for _, r := range put {
		ops = append(ops, Put(Item{Key: oauthKey(r.Kind, r.ID), Data: r.Data, ExpiresAt: unixOrZero(r.Expires)}, Always))
	}
	for _, d := range drop {
		ops = append(ops, Delete(Key{PK: prefixOAuth + d, SK: skOAuth}, Always))
	}
	err = s.t.Write(ctx, ops...)
	if errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrConflict) {
		return &apperr.Error{Code: apperr.Conflict, Message: "the grant changed meanwhile; try again", Cause: err}
	}
	return err
}

// MCPGrants lists a channel's live grants, oldest first.
func (s *Store) MCPGrants(ctx context.Context, channelID string) ([]mcpgrant.Grant, error) {
	items, err := s.queryAll(ctx, channelPK(channelID), prefixGrant, false)
	if err != nil {
		return nil, err
	}
	return decodeAll[mcpgrant.Grant](items)
}

// DeleteMCPGrant deletes g with every token it lists, in one transaction: its tokens answer 401 at once.
func (s *Store) DeleteMCPGrant(ctx context.Context, g mcpgrant.Grant) error {
	ops := []Op{Delete(grantKey(g.ChannelID, g.ID), Always), Delete(grantPointerKey(g.ID), Always)}
	for _, t := range g.Tokens {
		ops = append(ops, Delete(Key{PK: prefixOAuth + t, SK: skOAuth}, Always))
	}
	return s.write(ctx, ops...)
}
