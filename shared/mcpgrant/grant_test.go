package mcpgrant_test

import (
	"context"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

// The owner sees and revokes the channel's grants only; revoking deletes the grant's tokens with it, and
// the view never shows the key's hash nor the tokens.
func TestListAndRevoke(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	st := store.New(memstore.New(t, pebble.WithClock(func() time.Time { return now })))
	g := mcpgrant.Grant{ID: "0190a000-0000-7000-8000-000000000001", ChannelID: "ch-a", KeyID: "k", KeyHash: "secret-hash",
		ClientID: "c", Scopes: []string{"mcp"}, CreatedAt: now, ExpiresAt: now.Add(time.Hour), Tokens: []string{"at#h1"}}
	if err := st.SaveMCPGrant(ctx, g, 0, []store.OAuthItem{{Kind: "at", ID: "h1", Data: []byte(`{}`), Expires: now.Add(time.Hour)}}, nil); err != nil {
		t.Fatal(err)
	}
	svc := mcpgrant.NewService(st)
	if vs, err := svc.List(ctx, "ch-b"); err != nil || len(vs) != 0 {
		t.Fatalf("another channel's list: %v, %v", vs, err)
	}
	if err := svc.Revoke(ctx, "ch-b", g.ID); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("another channel's revoke: %v, want NOT_FOUND", err)
	}
	vs, err := svc.List(ctx, "ch-a")
	if err != nil || len(vs) != 1 || vs[0].ID != g.ID || vs[0].KeyID != "k" {
		t.Fatalf("the channel's list: %+v, %v", vs, err)
	}
	if err := svc.Revoke(ctx, "ch-a", g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.OAuthRecord(ctx, "at", "h1"); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("the grant's token after revoking: %v, want NOT_FOUND", err)
	}
	if vs, _ := svc.List(ctx, "ch-a"); len(vs) != 0 {
		t.Fatalf("after revoking: %+v", vs)
	}
}
