// Package mcpgrant holds what the service keeps of an assistant's sign-in to /mcp (decision 55): a grant,
// made on the consent page with one channel's API key, under which the authorization server (shared/oauth)
// issues tokens that act as that key. Free of HTTP and of the OAuth library, so the store and the REST
// operations that list and revoke grants do not link it.
package mcpgrant

import (
	"context"
	"strings"
	"time"
)

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

// View is a grant as its owner sees it (GET /api/v1/mcp/grants): never the key's hash nor the tokens.
type View struct {
	ID         string    `json:"id"`
	ClientID   string    `json:"clientId"`
	ClientName string    `json:"clientName,omitempty"`
	KeyID      string    `json:"keyId"`
	Scopes     []string  `json:"scopes"`
	Resource   string    `json:"resource"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// ViewOf is g as its owner sees it.
func ViewOf(g Grant) View {
	return View{ID: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, KeyID: g.KeyID, Scopes: append([]string{}, g.Scopes...),
		Resource: g.Resource, CreatedAt: g.CreatedAt.UTC(), ExpiresAt: g.ExpiresAt.UTC()}
}

// Repository is the grants' storage (*store.Store); NOT_FOUND for a grant that is not the channel's.
type Repository interface {
	MCPGrants(ctx context.Context, channelID string) ([]Grant, error)
	ChannelMCPGrant(ctx context.Context, channelID, id string) (Grant, int64, error)
	DeleteMCPGrant(ctx context.Context, g Grant) error
}

// Service lists and revokes a channel's grants for its owner.
type Service struct{ repo Repository }

// NewService returns a Service over repo.
func NewService(repo Repository) *Service { return &Service{repo: repo} }

// List returns the channel's live grants, oldest first.
func (s *Service) List(ctx context.Context, channelID string) ([]View, error) {
	gs, err := s.repo.MCPGrants(ctx, channelID)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(gs))
	for _, g := range gs {
		out = append(out, ViewOf(g))
	}
	return out, nil
}

// Revoke ends one of the channel's grants and every token it issued, at once; another channel's grant or
// an unknown id answers NOT_FOUND.
func (s *Service) Revoke(ctx context.Context, channelID, id string) error {
	g, _, err := s.repo.ChannelMCPGrant(ctx, channelID, strings.ToLower(id))
	if err != nil {
		return err
	}
	return s.repo.DeleteMCPGrant(ctx, g)
}
