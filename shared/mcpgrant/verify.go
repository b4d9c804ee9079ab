package mcpgrant

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
)

// KindAccessToken is the table's record kind of access tokens (store.OAuthRecord), each at the SHA-256 of
// the whole token (auth.HashKey), as API keys are kept.
const KindAccessToken = "at"

// AccessTokenPrefix starts every access token the authorization server issues (the library's).
const AccessTokenPrefix = "ory_at_"

// IsAccessToken reports whether credential has the shape of an access token, so /mcp checks it here rather
// than as an API key or a session token.
func IsAccessToken(credential string) bool { return strings.HasPrefix(credential, AccessTokenPrefix) }

// TokenReader reads an access token's record (*store.Store): NOT_FOUND when there is none live.
type TokenReader interface {
	OAuthRecord(ctx context.Context, kind, id string) ([]byte, error)
}

// KeyResolver resolves the API key a token acts as (*auth.Authenticator), from the key's own cache entry.
type KeyResolver interface {
	ResolveKeyHash(ctx context.Context, hash string) (auth.Identity, error)
}

// Verifier checks access tokens at /mcp (the resource server), without the authorization server's library
// or secret: one hash and one table read, then the key's identity.
type Verifier struct {
	Records TokenReader
	Keys    KeyResolver
	// Resource is the /mcp URL: a token must have been issued for it (RFC 8707).
	Resource string
	Now      func() time.Time
}

// tokenRecord is what the resource server reads of the authorization server's record of a token.
type tokenRecord struct {
	GrantedAudience []string `json:"grantedAudience"`
	Session         struct {
		Expires   map[string]time.Time `json:"expires"`
		ChannelID string               `json:"channelId"`
		KeyHash   string               `json:"keyHash"`
	} `json:"session"`
}

// Token refusals. None quotes the token.
var (
	errBadToken   = apperr.New(apperr.Unauthorized, "invalid, expired or revoked access token")
	errAudience   = apperr.New(apperr.Unauthorized, "the access token was not issued for this resource")
	errExpired    = apperr.New(apperr.Unauthorized, "access token expired")
	errKeyRevoked = apperr.New(apperr.Unauthorized, "the API key this access token was granted with is revoked")
)

// Principal authenticates an access token: it must be live (its record there, so its grant not revoked,
// and not expired at Now), issued for Resource, and its key live; the request then acts as that key (its
// channel, its rate budget: ratelimit.Subject of its hash).
func (v Verifier) Principal(ctx context.Context, token string) (auth.Principal, error) {
	b, err := v.Records.OAuthRecord(ctx, KindAccessToken, auth.HashKey(token))
	if apperr.CodeOf(err) == apperr.NotFound {
		return auth.Principal{}, errBadToken
	}
	if err != nil {
		return auth.Principal{}, &apperr.Error{Code: apperr.Internal, Message: "access token lookup failed", Cause: err}
	}
	var rec tokenRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return auth.Principal{}, &apperr.Error{Code: apperr.Internal, Message: "access token record unreadable", Cause: err}
	}
	now := v.Now()
	if !slices.Contains(rec.GrantedAudience, v.Resource) {
		return auth.Principal{}, errAudience
	}
	if exp := rec.Session.Expires["access_token"]; exp.IsZero() || !now.Before(exp) {
		return auth.Principal{}, errExpired
	}
	id, err := v.Keys.ResolveKeyHash(ctx, rec.Session.KeyHash)
	if err != nil {
		if apperr.CodeOf(err) == apperr.Unauthorized {
			return auth.Principal{}, errKeyRevoked
		}
		return auth.Principal{}, err
	}
	if id.KeyChannelID != rec.Session.ChannelID {
		return auth.Principal{}, errBadToken
	}
	return id.Principal("", now)
}

// Resource is the protected resource of the service at origin (its public URL): its /mcp.
func Resource(origin string) string { return strings.TrimSuffix(origin, "/") + "/mcp" }

// ResourceMetadataURL is where that resource's metadata is published (RFC 9728), which /mcp's 401 names.
func ResourceMetadataURL(origin string) string {
	return strings.TrimSuffix(origin, "/") + "/.well-known/oauth-protected-resource/mcp"
}
