package main

import (
	"context"
	"testing"
)

// The wiring reads only the environment (nothing listens on the endpoints below; the table and the JWKS are
// reached on first use), and a misconfigured session-token setup stops the cold start instead of refusing
// every token later.
func TestAuthenticatorWiring(t *testing.T) {
	t.Setenv("CSS_TABLE_NAME", "css-test")
	t.Setenv("CSS_DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("CSS_JWKS_URL", "http://127.0.0.1:1/jwks")
	t.Setenv("CSS_JWT_ISSUER", "https://issuer.example")
	t.Setenv("CSS_JWT_AUDIENCE", "css")
	if _, err := authenticator(context.Background()); err != nil {
		t.Fatalf("wiring: %v", err)
	}

	t.Setenv("CSS_JWT_AUDIENCE", "")
	if _, err := authenticator(context.Background()); err == nil {
		t.Error("a JWKS URL without an audience was accepted")
	}
	t.Setenv("CSS_TABLE_NAME", "")
	if _, err := authenticator(context.Background()); err == nil {
		t.Error("production wiring without CSS_TABLE_NAME was accepted")
	}
}
