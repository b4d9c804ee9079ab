// Package events holds the sample API Gateway (HTTP API, payload 2.0) events of this folder, which the
// tests invoke the functions with (and `sam local invoke -e` takes), and the identity their credential
// names: Seed puts it into a table.
package events

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/store"
)

// The sample events' API key (their Authorization header), its account, and the ids of its channel (their
// projectId) and of the key.
const (
	Key     = "sk-css-0123456789abcdef0123456789abcdef"
	Account = "6f1c2a4e-8b3d-4c5e-9a7f-0d1e2f3a4b5c"
	Channel = "0b6e3f52-9c1a-4d7e-8f20-3a5b7c9d1e2f"
	KeyID   = "a3d5f7b9-1c2e-4f6a-8b0d-2e4f6a8c0b1d"
)

//go:embed *.json
var files embed.FS

// Names lists the sample events (file names).
func Names() []string {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		panic(err) // a constant, valid pattern
	}
	return names
}

// Load reads the sample event name.
func Load(name string) (events.APIGatewayV2HTTPRequest, error) {
	var ev events.APIGatewayV2HTTPRequest
	b, err := files.ReadFile(name)
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("%s: %w", name, err)
	}
	return ev, nil
}

// Seed creates the sample key in table, with the account, channel and key ids the events name.
func Seed(ctx context.Context, table store.Table) error {
	ids := []string{Channel, KeyID}
	st := store.New(table, store.WithIDs(func() string {
		if len(ids) == 0 {
			return uuid.NewString()
		}
		id := ids[0]
		ids = ids[1:]
		return id
	}))
	k, err := accounts.NewService(st, time.Now).EnsureDevKey(ctx, Account, Key)
	if err != nil {
		return fmt.Errorf("seed the sample key: %w", err)
	}
	if k.ChannelID != Channel || k.ID != KeyID {
		return fmt.Errorf("seed the sample key: it exists already with channel %s, key %s", k.ChannelID, k.ID)
	}
	return nil
}
