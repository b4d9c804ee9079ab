package main

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func TestServesTheIntegrationsOperations(t *testing.T) {
	c := wiretest.Setup(t)
	// The YouTube connection configured (nothing is called at Google by these requests).
	t.Setenv("CSS_GOOGLE_CLIENT_ID", "css-test-client")
	t.Setenv("CSS_GOOGLE_CLIENT_SECRET", "css-test-secret")
	t.Setenv("CSS_GOOGLE_AUTH_ENDPOINT", "http://127.0.0.1:9/authorize")
	t.Setenv("CSS_PUBLIC_URL", "https://api.example.com")
	t.Setenv("CSS_WEBHOOK_KEY", "0123456789abcdef0123456789abcdef")
	t.Setenv("CSS_YOUTUBE_TOKEN_KEY", "fedcba9876543210fedcba9876543210")
	wiretest.CheckFunction(t, c, contract.FunctionIntegrations, wiretest.Build(t, "integrations", build))
}

// A key of another account's channel cannot reach, by projectId, what the sample key's channel holds.
func TestAKeyReachesOnlyItsChannel(t *testing.T) {
	c := wiretest.Setup(t)
	ctx := context.Background()
	const otherKey = "sk-css-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	if _, err := c.Accounts.EnsureDevKey(ctx, "other-account", otherKey); err != nil {
		t.Fatal(err)
	}
	integrations := wiretest.Build(t, "integrations", build)
	ev := wiretest.LoadEvent(t, "integrations-list-my-videos.json")
	ev.Headers["authorization"] = "Bearer " + otherKey
	if resp, err := integrations(ctx, ev); err != nil || resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("another channel's key with the sample channel's projectId: %v %d %s", err, resp.StatusCode, resp.Body)
	}
}
