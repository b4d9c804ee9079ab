package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
)

type result struct {
	code           int
	stdout, stderr string
}

func runAdmin(t *testing.T, cfg config.Config, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), cfg, args, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func devConfig(t *testing.T) config.Config {
	t.Helper()
	return config.Config{Mode: config.Development, DataDir: t.TempDir()}
}

// withStore opens the store the command used, after it finished.
func withStore(t *testing.T, cfg config.Config, f func(*store.Store)) {
	t.Helper()
	tbl, err := pebble.Open(pebble.DirIn(cfg.DataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	f(store.New(tbl))
}

type created struct {
	AccountID, ChannelID, KeyID, Key string
}

func createKeyJSON(t *testing.T, cfg config.Config, args ...string) created {
	t.Helper()
	r := runAdmin(t, cfg, append([]string{"create-key", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("create-key %v: exit %d: %s", args, r.code, r.stderr)
	}
	var c created
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("create-key --json printed %q: %v", r.stdout, err)
	}
	return c
}

func TestCreateKeyNewAccount(t *testing.T) {
	cfg := devConfig(t)
	r := runAdmin(t, cfg, "create-key", "--name", "laptop")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	key := strings.TrimSuffix(r.stdout, "\n")
	if !auth.ValidKeyFormat(key) || strings.Contains(key, "\n") {
		t.Fatalf("stdout = %q, want exactly one key line", r.stdout)
	}
	withStore(t, cfg, func(st *store.Store) {
		ctx := context.Background()
		rec, err := st.KeyByHash(ctx, auth.HashKey(key))
		if err != nil {
			t.Fatalf("the printed key is not stored: %v", err)
		}
		if !strings.Contains(r.stderr, rec.AccountID) || !strings.Contains(r.stderr, rec.ChannelID) {
			t.Errorf("stderr %q does not name account %s and channel %s", r.stderr, rec.AccountID, rec.ChannelID)
		}
		acct, err := st.Account(ctx, rec.AccountID)
		if err != nil || len(acct.ChannelIDs) != 1 || acct.ChannelIDs[0] != rec.ChannelID {
			t.Fatalf("account = %+v, %v; want the key's channel", acct, err)
		}
		if days := acct.AccessUntil.Sub(time.Now()).Hours() / 24; days < 364 || days > 366 {
			t.Errorf("access until %v: want about a year ahead", acct.AccessUntil)
		}
		k, err := st.GetKey(ctx, rec.AccountID, rec.ID)
		if err != nil || k.Name != "laptop" || k.Prefix != key[:11] {
			t.Errorf("stored key = %+v, %v", k, err)
		}
	})
}

func TestCreateKeyExistingAccount(t *testing.T) {
	cfg := devConfig(t)
	first := createKeyJSON(t, cfg, "--account", "acct-1", "--channel-name", "Cooking", "--access-until", "2030-01-31")
	if first.AccountID != "acct-1" {
		t.Fatalf("account = %q, want acct-1", first.AccountID)
	}
	second := createKeyJSON(t, cfg, "--account", "acct-1", "--channel", first.ChannelID)
	if second.ChannelID != first.ChannelID || second.KeyID == first.KeyID {
		t.Fatalf("second key = %+v, want another key of channel %s", second, first.ChannelID)
	}
	third := createKeyJSON(t, cfg, "--account", "acct-1")
	if third.ChannelID == first.ChannelID {
		t.Error("create-key without --channel reused a channel; want a new one")
	}
	withStore(t, cfg, func(st *store.Store) {
		ctx := context.Background()
		acct, _ := st.Account(ctx, "acct-1")
		if want := time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC); !acct.AccessUntil.Equal(want) {
			t.Errorf("access until %v, want %v (through the given day)", acct.AccessUntil, want)
		}
		if len(acct.ChannelIDs) != 2 {
			t.Errorf("account has %d channels, want 2", len(acct.ChannelIDs))
		}
		ch, _ := st.GetChannel(ctx, first.ChannelID)
		if ch.Name != "Cooking" {
			t.Errorf("channel name = %q, want Cooking", ch.Name)
		}
	})

	// Another account's channel.
	other := createKeyJSON(t, cfg, "--account", "acct-2")
	r := runAdmin(t, cfg, "create-key", "--account", "acct-1", "--channel", other.ChannelID)
	if r.code != 1 || !strings.Contains(r.stderr, "channel not found") {
		t.Errorf("key for another account's channel: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestCreateKeyLimit(t *testing.T) {
	cfg := devConfig(t)
	first := createKeyJSON(t, cfg, "--account", "acct-1")
	for range accounts.MaxLiveKeysPerAccount - 1 {
		createKeyJSON(t, cfg, "--account", "acct-1", "--channel", first.ChannelID)
	}
	r := runAdmin(t, cfg, "create-key", "--account", "acct-1")
	if r.code != 1 || !strings.Contains(r.stderr, "at most 5") {
		t.Fatalf("sixth key: exit %d, stderr %q", r.code, r.stderr)
	}
	withStore(t, cfg, func(st *store.Store) {
		if acct, _ := st.Account(context.Background(), "acct-1"); len(acct.ChannelIDs) != 1 {
			t.Errorf("a refused key left %d channels, want 1", len(acct.ChannelIDs))
		}
	})
}

func TestSetAccess(t *testing.T) {
	cfg := devConfig(t)
	c := createKeyJSON(t, cfg)
	r := runAdmin(t, cfg, "set-access", "--account", c.AccountID, "--until", "2026-03-04T05:06:07+01:00")
	if r.code != 0 || !strings.Contains(r.stdout, "2026-03-04T04:06:07Z") {
		t.Fatalf("set-access: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	withStore(t, cfg, func(st *store.Store) {
		acct, _ := st.Account(context.Background(), c.AccountID)
		if want := time.Date(2026, 3, 4, 4, 6, 7, 0, time.UTC); !acct.AccessUntil.Equal(want) {
			t.Errorf("access until %v, want %v", acct.AccessUntil, want)
		}
	})
	r = runAdmin(t, cfg, "set-access", "--account", "nobody", "--until", "2026-01-01")
	if r.code != 1 || !strings.Contains(r.stderr, "account not found") {
		t.Errorf("unknown account: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestToken(t *testing.T) {
	cfg := devConfig(t)
	r := runAdmin(t, cfg, "token", "--account", "acct-1", "--ttl", "1h")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	secret, err := auth.LocalSecret(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := auth.NewHS256Verifier(secret).Verify(context.Background(), strings.TrimSpace(r.stdout))
	if err != nil || s.AccountID != "acct-1" {
		t.Fatalf("minted token = %+v, %v; want one for acct-1 signed with the local secret", s, err)
	}

	cfg.JWTSecret = "from-env"
	r = runAdmin(t, cfg, "token", "--account", "acct-1")
	if _, err := auth.NewHS256Verifier("from-env").Verify(context.Background(), strings.TrimSpace(r.stdout)); err != nil {
		t.Errorf("token with CSS_JWT_SECRET set is not signed with it: %v", err)
	}

	cfg.Mode = config.Production
	if r := runAdmin(t, cfg, "token", "--account", "acct-1"); r.code != 1 || r.stdout != "" {
		t.Errorf("token in production: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestUsage(t *testing.T) {
	cfg := devConfig(t)
	tests := [][]string{
		{},
		{"rotate-everything"},
		{"create-key", "--channel", "c", "--channel-name", "n", "--account", "a"},
		{"create-key", "--channel", "c"},
		{"create-key", "--access-until", "next tuesday"},
		{"create-key", "extra"},
		{"create-key", "--bogus"},
		{"token"},
		{"set-access", "--account", "a"},
		{"set-access", "--account", "a", "--until", "soon"},
	}
	for _, args := range tests {
		if r := runAdmin(t, cfg, args...); r.code != 2 || !strings.Contains(r.stderr, "usage") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the usage", args, r.code, r.stderr)
		}
	}
	if r := runAdmin(t, cfg, "help"); r.code != 0 || !strings.Contains(r.stdout, "create-key") {
		t.Errorf("help: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestLockedStore(t *testing.T) {
	cfg := devConfig(t)
	// A running local stack holds the file.
	tbl, err := pebble.Open(pebble.DirIn(cfg.DataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	r := runAdmin(t, cfg, "create-key")
	if r.code != 1 || !strings.Contains(r.stderr, "stop `make run` first") {
		t.Errorf("locked store: exit %d, stderr %q", r.code, r.stderr)
	}
	// Minting a token never needs the store.
	if r := runAdmin(t, cfg, "token", "--account", "a"); r.code != 0 {
		t.Errorf("token while the store is locked: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStoreInUse: with the local stack running (here: the table held open), the command says so and exits
// non-zero instead of waiting or failing obscurely.
func TestStoreInUse(t *testing.T) {
	cfg := devConfig(t)
	tbl, err := pebble.Open(pebble.DirIn(cfg.DataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	r := runAdmin(t, cfg, "create-key", "--channel-name", "Busy")
	if r.code == 0 || !strings.Contains(r.stderr, "in use by a running local stack") {
		t.Fatalf("create-key while the store is open: exit %d, stderr %q; want the in-use message", r.code, r.stderr)
	}
}

// TestIndexResearch: a research state that left the scheduler's index (a channel without keywords, before
// decision 49) is put back at its research's expiry, so the scheduler sweeps it; a state without research
// stays out.
func TestIndexResearch(t *testing.T) {
	cfg := devConfig(t)
	fetched := time.Now().UTC().Truncate(time.Second)
	withStore(t, cfg, func(st *store.Store) {
		ctx := context.Background()
		for ch, set := range map[string]*research.SetRef{"held": {RunID: "r1", FetchedAt: fetched}, "empty": nil} {
			if err := st.SaveResearchState(ctx, ch, research.State{Set: set}); err != nil {
				t.Fatal(err)
			}
			// As earlier builds left it: out of the index.
			due, err := st.DueResearch(ctx, fetched.AddDate(1, 0, 0), 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range due {
				if err := st.DeleteResearchDue(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	r := runAdmin(t, cfg, "index-research")
	if r.code != 0 || !strings.Contains(r.stdout, "1 research states") {
		t.Fatalf("index-research: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	withStore(t, cfg, func(st *store.Store) {
		due, err := st.DueResearch(context.Background(), fetched.AddDate(1, 0, 0), 10)
		if err != nil || len(due) != 1 || due[0].ChannelID != "held" || !due[0].At.Equal(research.DataExpiry(fetched)) {
			t.Fatalf("index %+v, %v; want held at its research's expiry", due, err)
		}
	})
}
