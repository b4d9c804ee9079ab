package main

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/authtest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func TestServesTheGenerationOperations(t *testing.T) {
	c := wiretest.Setup(t)
	wiretest.CheckFunction(t, c, contract.FunctionGeneration, wiretest.Build(t, "generation", build))
}

// The generation operations run as jobs on the generation queue: without it the function does not start.
func TestNeedsTheGenerationQueue(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("CSS_TABLE_NAME", "css-test")
	t.Setenv("CSS_DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("CSS_JWKS_URL", "https://127.0.0.1:1/jwks")
	t.Setenv("CSS_JWT_ISSUER", authtest.Issuer)
	t.Setenv("CSS_JWT_AUDIENCE", authtest.Audience)
	t.Setenv("CSS_GENERATION_QUEUE_URL", "")
	if _, err := build(context.Background(), wiretest.Env(t, "generation")); err == nil {
		t.Error("the generation function started without CSS_GENERATION_QUEUE_URL")
	}
	t.Setenv("CSS_GENERATION_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/123456789012/css-generation")
	if _, err := build(context.Background(), wiretest.Env(t, "generation")); err != nil {
		t.Errorf("generation wiring: %v", err)
	}
}
