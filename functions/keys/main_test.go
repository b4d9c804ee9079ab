package main

import (
	"context"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func TestServesTheKeysOperations(t *testing.T) {
	c := wiretest.Setup(t)
	wiretest.CheckFunction(t, c, contract.FunctionKeys, wiretest.Build(t, "keys", build))
}

// TestFetchesTheKeySetAtStart: the function fetches the identity provider's key set as it starts, and its
// first session-token request uses that fetch instead of making its own.
func TestFetchesTheKeySetAtStart(t *testing.T) {
	c := wiretest.Setup(t)
	h := wiretest.Build(t, "keys", build)
	deadline := time.Now().Add(10 * time.Second)
	for c.IDP.Fetches() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := c.IDP.Fetches(); n != 1 {
		t.Fatalf("key set fetched %d times before any request, want 1", n)
	}
	doc, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Operation("listKeys")
	resp, err := h(context.Background(), wiretest.Event(op, "Bearer "+c.Session(t, samevents.Account), ""))
	if err != nil || resp.StatusCode != op.SuccessStatus {
		t.Fatalf("listKeys with a session token: %v %d %s", err, resp.StatusCode, resp.Body)
	}
	if n := c.IDP.Fetches(); n != 1 {
		t.Errorf("key set fetched %d times after the first request, want 1", n)
	}
}

// TestKeyManagementTakesSessionTokens holds the premise of the fetch at start: key management takes a
// session token only (decision 4), so an instance of this function almost always needs the key set. GET /me
// (an API key or a session) is the one exception: an instance that serves only API-key calls of it fetches
// the set once for nothing. A new operation that takes no session token has to be added here knowingly.
func TestKeyManagementTakesSessionTokens(t *testing.T) {
	doc, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	// The channel's MCP sign-ins sit beside the keys they act as (decision 55); their owner may hold only
	// the key, so they take it too (a request with a key pays nothing for the prefetch).
	exceptions := map[string]contract.Credential{"getMe": contract.CredentialChannel,
		"listMcpGrants": contract.CredentialChannel, "revokeMcpGrant": contract.CredentialChannel}
	n := 0
	for _, op := range doc.Operations {
		if contract.Function(op.Function) != contract.FunctionKeys {
			continue
		}
		want, ok := exceptions[op.ID]
		if !ok {
			want = contract.CredentialSession
			n++
		}
		if op.Credential != want {
			t.Errorf("%s takes %q, want %q: the keys function prefetches the key set as it starts (main.go)", op.ID, op.Credential, want)
		}
	}
	if n < 3 {
		t.Errorf("%d session-only operations in the keys function, want list, create and revoke at least", n)
	}
}
