// Package mcpgrant holds what the service keeps of an assistant's sign-in to /mcp (decision 55): a grant,
// made on the consent page with one channel's API key, under which the authorization server (shared/oauth)
// issues tokens that act as that key. Free of HTTP and of the OAuth library, so the store and the REST
// operations that list and revoke grants do not link it.
package mcpgrant

import "time"

// Scope is the one scope tokens carry: acting on the channel through the MCP tools, as its key may.
const Scope = "mcp"

// Grant is one client's sign-in for one channel.
type Grant struct {
	ID        string
	ChannelID string
	AccountID string
	// KeyID and KeyHash name the API key entered on the consent page: tokens act as it (its rate budget,
	// its channel) and end with it.
	KeyID   string
	KeyHash string
	// ClientID is the client's registered id or its metadata document's URL; ClientName what it calls itself.
	ClientID   string
	ClientName string
	Scopes     []string
	// Resource is the protected resource (the /mcp URL) the grant's tokens are bound to.
	Resource  string
	CreatedAt time.Time
	// ExpiresAt is when the grant's last token (its refresh token) expires: the grant goes then.
	ExpiresAt time.Time
	// Tokens are the table keys of the grant's live tokens ("<kind>#<signature>"), deleted with it.
	Tokens []string
}
