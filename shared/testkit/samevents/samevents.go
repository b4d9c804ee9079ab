// Package samevents reads the sample API Gateway (HTTP API, payload 2.0) events of the repository's events/
// folder, which `sam local invoke -e` takes and the tests invoke the functions with, and holds the identity
// their credential names: Seed puts it into a table. It reads the files by path, from the module's root, so
// it serves tests and tools run inside the repository.
package samevents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// Dir is the folder of the sample events: events/ in the module's root, the first folder holding go.mod
// from the working directory up.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "events"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("samevents: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Names lists the sample events (file names).
func Names() ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names, nil
}

// Load reads the sample event name.
func Load(name string) (events.APIGatewayV2HTTPRequest, error) {
	var ev events.APIGatewayV2HTTPRequest
	dir, err := Dir()
	if err != nil {
		return ev, err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
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
