package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ory/fosite"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/store"
)

// Record kinds in the table (store.PutOAuthRecord).
const (
	kindClient = "client"
	kindCode   = "code"
	kindPKCE   = "pkce"
	kindAccess = mcpgrant.KindAccessToken
	kindToken  = "rt"
	kindSecret = "key"
)

// Session is what a grant's requests carry: who consented, for which channel, as which key.
type Session struct {
	Expires    map[fosite.TokenType]time.Time `json:"expires,omitempty"`
	AccountID  string                         `json:"accountId"`
	ChannelID  string                         `json:"channelId"`
	KeyID      string                         `json:"keyId"`
	KeyHash    string                         `json:"keyHash"`
	ClientName string                         `json:"clientName,omitempty"`
}

func (s *Session) SetExpiresAt(t fosite.TokenType, exp time.Time) {
	if s.Expires == nil {
		s.Expires = map[fosite.TokenType]time.Time{}
	}
	s.Expires[t] = exp
}

func (s *Session) GetExpiresAt(t fosite.TokenType) time.Time { return s.Expires[t] }
func (s *Session) GetUsername() string                       { return s.AccountID }
func (s *Session) GetSubject() string                        { return s.AccountID }
func (s *Session) Clone() fosite.Session {
	c := *s
	c.Expires = map[fosite.TokenType]time.Time{}
	maps.Copy(c.Expires, s.Expires)
	return &c
}

// record is a fosite request as stored: the client by its id only (the library compares ids; the live
// client is read again where it matters).
type record struct {
	ID              string     `json:"id"`
	RequestedAt     time.Time  `json:"requestedAt"`
	ClientID        string     `json:"clientId"`
	Scopes          []string   `json:"scopes,omitempty"`
	GrantedScopes   []string   `json:"grantedScopes,omitempty"`
	Audience        []string   `json:"audience,omitempty"`
	GrantedAudience []string   `json:"grantedAudience,omitempty"`
	Form            url.Values `json:"form,omitempty"`
	Session         Session    `json:"session"`
	// Used marks an authorization code already exchanged (the library then revokes what it gave).
	Used bool `json:"used,omitempty"`
}

// encodeRecord is r as stored.
func encodeRecord(r fosite.Requester) ([]byte, error) {
	s, ok := r.GetSession().(*Session)
	if !ok {
		return nil, fmt.Errorf("oauth: a request without this server's session (%T)", r.GetSession())
	}
	return json.Marshal(record{ID: r.GetID(), RequestedAt: r.GetRequestedAt(), ClientID: r.GetClient().GetID(),
		Scopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(), Audience: r.GetRequestedAudience(),
		GrantedAudience: r.GetGrantedAudience(), Form: r.GetRequestForm(), Session: *s})
}

func (rec record) request() *fosite.Request {
	s := rec.Session
	// Every client of this server has the same grant types, which the library checks on the stored request.
	client := &fosite.DefaultClient{ID: rec.ClientID, GrantTypes: grantTypes, ResponseTypes: []string{"code"}}
	return &fosite.Request{ID: rec.ID, RequestedAt: rec.RequestedAt, Client: client,
		RequestedScope: rec.Scopes, GrantedScope: rec.GrantedScopes, RequestedAudience: rec.Audience,
		GrantedAudience: rec.GrantedAudience, Form: rec.Form, Session: &s}
}

// storage implements the library's storage over the table: requests by the SHA-256 of their token or
// code (hashed; never the token itself), each grant with the keys of its live tokens.
type storage struct {
	rec     Records
	clients *clients
}

func notFound(err error) bool { return apperr.CodeOf(err) == apperr.NotFound }

func (s *storage) put(ctx context.Context, kind, sig string, r fosite.Requester, exp time.Time) error {
	b, err := encodeRecord(r)
	if err != nil {
		return err
	}
	return s.rec.PutOAuthRecord(ctx, kind, sig, b, exp, false)
}

func (s *storage) get(ctx context.Context, kind, sig string) (record, error) {
	b, err := s.rec.OAuthRecord(ctx, kind, sig)
	if notFound(err) {
		return record{}, fosite.ErrNotFound
	}
	if err != nil {
		return record{}, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return record{}, fmt.Errorf("oauth: %s record: %w", kind, err)
	}
	return rec, nil
}

// requestOf is the stored request of a kind's signature.
func (s *storage) requestOf(ctx context.Context, kind, sig string) (fosite.Requester, error) {
	rec, err := s.get(ctx, kind, sig)
	if err != nil {
		return nil, err
	}
	return rec.request(), nil
}

// CreateAuthorizeCodeSession stores the consent's code and starts its grant, which lives as long as the
// code until tokens are issued.
func (s *storage) CreateAuthorizeCodeSession(ctx context.Context, sig string, r fosite.Requester) error {
	sess, ok := r.GetSession().(*Session)
	if !ok {
		return errors.New("oauth: a consent without this server's session")
	}
	exp := sess.GetExpiresAt(fosite.AuthorizeCode)
	b, err := encodeRecord(r)
	if err != nil {
		return err
	}
	g := mcpgrant.Grant{ID: r.GetID(), ChannelID: sess.ChannelID, AccountID: sess.AccountID, KeyID: sess.KeyID,
		KeyHash: sess.KeyHash, ClientID: r.GetClient().GetID(), ClientName: sess.ClientName,
		Scopes: r.GetGrantedScopes(), Resource: strings.Join(r.GetGrantedAudience(), " "),
		CreatedAt: r.GetRequestedAt().UTC(), ExpiresAt: exp, Tokens: []string{kindCode + "#" + sig}}
	return s.rec.SaveMCPGrant(ctx, g, 0, []store.OAuthItem{{Kind: kindCode, ID: sig, Data: b, Expires: exp}}, nil)
}

func (s *storage) GetAuthorizeCodeSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	rec, err := s.get(ctx, kindCode, sig)
	if err != nil {
		return nil, err
	}
	if rec.Used {
		return rec.request(), fosite.ErrInvalidatedAuthorizeCode
	}
	return rec.request(), nil
}

func (s *storage) InvalidateAuthorizeCodeSession(ctx context.Context, sig string) error {
	rec, err := s.get(ctx, kindCode, sig)
	if err != nil {
		return err
	}
	// The record itself is stored again, not a request rebuilt from it: a request has no Used.
	rec.Used = true
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.rec.PutOAuthRecord(ctx, kindCode, sig, b, rec.Session.GetExpiresAt(fosite.AuthorizeCode), false)
}

func (s *storage) CreatePKCERequestSession(ctx context.Context, sig string, r fosite.Requester) error {
	return s.put(ctx, kindPKCE, sig, r, r.GetSession().GetExpiresAt(fosite.AuthorizeCode))
}

func (s *storage) GetPKCERequestSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return s.requestOf(ctx, kindPKCE, sig)
}

func (s *storage) DeletePKCERequestSession(ctx context.Context, sig string) error {
	return s.rec.DeleteOAuthRecord(ctx, kindPKCE, sig)
}

// addToken stores a token of r's grant and lists it there, in one transaction: a grant revoked meanwhile
// refuses it. The grant lives as long as its longest token.
func (s *storage) addToken(ctx context.Context, kind, sig string, r fosite.Requester, tt fosite.TokenType) error {
	g, was, err := s.rec.MCPGrant(ctx, r.GetID())
	if notFound(err) {
		return fosite.ErrNotFound.WithHint("The grant was revoked.")
	}
	if err != nil {
		return err
	}
	b, err := encodeRecord(r)
	if err != nil {
		return err
	}
	exp := r.GetSession().GetExpiresAt(tt)
	if exp.After(g.ExpiresAt) {
		g.ExpiresAt = exp
	}
	g.Tokens = append(g.Tokens, kind+"#"+sig)
	return s.rec.SaveMCPGrant(ctx, g, was, []store.OAuthItem{{Kind: kind, ID: sig, Data: b, Expires: exp}}, nil)
}

func (s *storage) CreateAccessTokenSession(ctx context.Context, sig string, r fosite.Requester) error {
	return s.addToken(ctx, kindAccess, sig, r, fosite.AccessToken)
}

func (s *storage) GetAccessTokenSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return s.requestOf(ctx, kindAccess, sig)
}

func (s *storage) DeleteAccessTokenSession(ctx context.Context, sig string) error {
	return s.rec.DeleteOAuthRecord(ctx, kindAccess, sig)
}

func (s *storage) CreateRefreshTokenSession(ctx context.Context, sig, _ string, r fosite.Requester) error {
	return s.addToken(ctx, kindToken, sig, r, fosite.RefreshToken)
}

func (s *storage) GetRefreshTokenSession(ctx context.Context, sig string, _ fosite.Session) (fosite.Requester, error) {
	return s.requestOf(ctx, kindToken, sig)
}

func (s *storage) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return s.rec.DeleteOAuthRecord(ctx, kindToken, sig)
}

// RotateRefreshToken ends the grant's tokens before a refresh issues new ones (the used refresh token
// then answers invalid_grant).
func (s *storage) RotateRefreshToken(ctx context.Context, requestID, _ string) error {
	g, was, err := s.rec.MCPGrant(ctx, requestID)
	if notFound(err) {
		return fosite.ErrNotFound.WithHint("The grant was revoked.")
	}
	if err != nil {
		return err
	}
	var drop []string
	g.Tokens = slices.DeleteFunc(g.Tokens, func(t string) bool {
		if strings.HasPrefix(t, kindAccess+"#") || strings.HasPrefix(t, kindToken+"#") {
			drop = append(drop, t)
			return true
		}
		return false
	})
	return s.rec.SaveMCPGrant(ctx, g, was, nil, drop)
}

// RevokeRefreshToken and RevokeAccessToken end the whole grant (RFC 7009 allows it for an access token
// too): what a client revokes, or a reused code or refresh token, leaves nothing of the grant alive.
func (s *storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.revokeGrant(ctx, requestID)
}

func (s *storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.revokeGrant(ctx, requestID)
}

func (s *storage) revokeGrant(ctx context.Context, requestID string) error {
	g, _, err := s.rec.MCPGrant(ctx, requestID)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.rec.DeleteMCPGrant(ctx, g)
}

func (s *storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	return s.clients.get(ctx, id)
}

// Client assertions (private_key_jwt) are not offered.
func (s *storage) ClientAssertionJWTValid(context.Context, string) error { return nil }
func (s *storage) SetClientAssertionJWT(context.Context, string, time.Time) error {
	return nil
}
