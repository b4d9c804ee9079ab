package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/wire"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func TestServesTheMemoryOperations(t *testing.T) {
	c := wiretest.Setup(t)
	wiretest.CheckFunction(t, c, contract.FunctionMemory, wiretest.Build(t, "memory", build))
}

// A key of another account's channel cannot see what the sample key's channel holds.
func TestAKeySeesOnlyItsChannel(t *testing.T) {
	c := wiretest.Setup(t)
	ctx := context.Background()
	const otherKey = "sk-css-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	if _, err := c.Accounts.EnsureDevKey(ctx, "other-account", otherKey); err != nil {
		t.Fatal(err)
	}
	memory := wiretest.Build(t, "memory", build)
	create, list := wiretest.LoadEvent(t, "memory-create-note.json"), wiretest.LoadEvent(t, "memory-list-notes.json")
	if resp, err := memory(ctx, create); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create note: %v %d %s", err, resp.StatusCode, resp.Body)
	}
	total := func(authz string) string {
		ev := list
		ev.Headers = maps.Clone(list.Headers)
		ev.Headers["authorization"] = authz
		resp, err := memory(ctx, ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("list notes: %v %d %s", err, resp.StatusCode, resp.Body)
		}
		var b struct{ Total int }
		if err := json.Unmarshal([]byte(resp.Body), &b); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(b.Total)
	}
	if got := total("Bearer " + samevents.Key); got != "1" {
		t.Errorf("the sample key sees %s notes, want 1", got)
	}
	if got := total("Bearer " + otherKey); got != "0" {
		t.Errorf("another channel's key sees %s notes, want 0", got)
	}
}

// TestRevokedKeyStopsWithinTheCacheTTL: each Lambda instance caches a resolved key for config's
// AuthCacheTTL, so a key revoked by another instance keeps working there at most that long (decision 2:
// at most 60 s), and not a moment longer: while the instance holds the key's identity and a lease of its
// calls, it serves them; once either runs out, the key's item (read with the next lease) is gone, and the
// key is refused. (An instance whose lease runs out first refuses it sooner: TestKeyReadWithItsLease.)
func TestRevokedKeyStopsWithinTheCacheTTL(t *testing.T) {
	c := wiretest.Setup(t)
	ctx := context.Background()
	env := wiretest.Env(t, "memory")
	if env.Config.AuthCacheTTL <= 0 || env.Config.AuthCacheTTL > 60*time.Second {
		t.Fatalf("AuthCacheTTL %v: decision 2 allows at most 60 s", env.Config.AuthCacheTTL)
	}
	// Early in a minute, so that the whole test stays in one rate window (one lease).
	start := time.Now().UTC().Truncate(time.Minute).Add(5 * time.Second)
	var now atomic.Pointer[time.Time]
	now.Store(&start)
	env.Now = func() time.Time { return *now.Load() }
	h, err := build(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	ev := wiretest.LoadEvent(t, "memory-list-notes.json")
	at := func(d time.Duration) int {
		t.Helper()
		later := start.Add(d)
		now.Store(&later)
		resp, err := h(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	// The first lease is one call; the next, at this rate, a block that outlasts the test.
	for i := range 3 {
		if s := at(time.Duration(i) * time.Millisecond); s != 200 {
			t.Fatalf("before revocation, call %d: %d", i+1, s)
		}
	}
	if err := c.Accounts.RevokeKey(ctx, samevents.Account, samevents.KeyID); err != nil {
		t.Fatal(err)
	}
	if s := at(env.Config.AuthCacheTTL - time.Millisecond); s != 200 {
		t.Errorf("within the cache TTL the cached key answered %d (the cache is not used?)", s)
	}
	if s := at(env.Config.AuthCacheTTL); s != 401 {
		t.Errorf("revoked key after the cache TTL: %d, want 401", s)
	}
}

// TestRefusalMetric: each credential refused that was not in the cache writes one line in CloudWatch's
// embedded metric format (whatever the log level), which CloudWatch turns into CSS/CredentialRefusals by
// function; a refusal answered from the cache writes none.
func TestRefusalMetric(t *testing.T) {
	wiretest.Setup(t)
	var logs bytes.Buffer
	env := wiretest.Env(t, "memory")
	env.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	h, err := build(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	ev := wiretest.LoadEvent(t, "memory-list-notes.json")
	send := func(authz string) {
		t.Helper()
		e := ev
		e.Headers = maps.Clone(ev.Headers)
		e.Headers["authorization"] = authz
		if _, err := h(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	send("Bearer " + samevents.Key)
	send("Bearer sk-css-ffffffffffffffffffffffffffffffff")
	send("Bearer sk-css-ffffffffffffffffffffffffffffffff") // cached
	send("Bearer sk-css-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee")
	var points int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct {
			AWS struct {
				Timestamp         int64
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
			FunctionName string
			Count        *int `json:"CredentialRefusals"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Count == nil {
			continue
		}
		points += *rec.Count
		m := rec.AWS.CloudWatchMetrics
		if len(m) != 1 || m[0].Namespace != wire.MetricNamespace || fmt.Sprint(m[0].Dimensions) != "[[FunctionName]]" ||
			len(m[0].Metrics) != 1 || m[0].Metrics[0].Name != wire.MetricCredentialRefusals || m[0].Metrics[0].Unit != "Count" ||
			rec.FunctionName != "memory" || rec.AWS.Timestamp == 0 {
			t.Errorf("not an EMF line for %s: %s", wire.MetricCredentialRefusals, line)
		}
	}
	if points != 2 {
		t.Errorf("%d refusals counted, want 2 (two unknown keys, one of them repeated): %s", points, logs.String())
	}
}
