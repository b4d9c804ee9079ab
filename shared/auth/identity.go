package auth

import (
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/apperr"
)

// Method is the kind of credential a request presented.
type Method string

const (
	MethodAPIKey  Method = "api_key"
	MethodSession Method = "session"
)

// ChannelHeader chooses the channel a session-token request acts on (decision 3).
const ChannelHeader = "X-Channel-Id"

// Identity is what a credential resolves to. It does not depend on the request, so it can be cached.
type Identity struct {
	AccountID string
	Method    Method
	// KeyID, KeyHash and KeyChannelID are set for API keys: the key, its hash (what its rate budget is
	// named by) and the one channel it is scoped to.
	KeyID        string
	KeyHash      string
	KeyChannelID string
	// ChannelIDs are the account's channels.
	ChannelIDs  []string
	AccessUntil time.Time
}

// Principal is who a request acts as: an account, on one channel.
type Principal struct {
	AccountID string
	// ChannelID is empty for a session token sent without X-Channel-Id; the HTTP layer requires a channel
	// for channel-scoped operations.
	ChannelID string
	KeyID     string
	// KeyHash is the API key's hash (ratelimit.Subject names a key's budget by it); empty for a session.
	KeyHash string
	Method  Method
}

// Principal applies the request's X-Channel-Id to the identity at time now: an API key acts on its own
// channel (the header is ignored); a session token acts on the header's channel, which must be one of the
// account's. Past AccessUntil every request answers ACCESS_EXPIRED (decision 5).
func (id Identity) Principal(channelHeader string, now time.Time) (Principal, error) {
	if now.After(id.AccessUntil) {
		return Principal{}, apperr.New(apperr.AccessExpired, "access to this account expired at %s",
			id.AccessUntil.UTC().Format(time.RFC3339))
	}
	p := Principal{AccountID: id.AccountID, KeyID: id.KeyID, KeyHash: id.KeyHash, Method: id.Method}
	if id.Method == MethodAPIKey {
		p.ChannelID = id.KeyChannelID
		return p, nil
	}
	channel := strings.TrimSpace(channelHeader)
	if channel == "" {
		return p, nil
	}
	// uuid.Parse also takes braces and urn: forms; only the canonical 36-character form is an id here.
	u, err := uuid.Parse(channel)
	if err != nil || len(channel) != 36 {
		return Principal{}, apperr.Invalid(ChannelHeader, "must be a channel id (uuid)")
	}
	channel = u.String()
	if !slices.Contains(id.ChannelIDs, channel) {
		return Principal{}, apperr.NotFoundf("channel not found")
	}
	p.ChannelID = channel
	return p, nil
}
