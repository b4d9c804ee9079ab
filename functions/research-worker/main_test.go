package main

import (
	"context"
	"errors"
	"testing"

	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/wire/workers"
)

// The worker starts from the environment without a call, with the source it names; the YouTube source
// without a key stops it at start.
func TestBuildTakesTheConfiguredSource(t *testing.T) {
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "CSS_TABLE_NAME": "css-test",
		"CSS_DYNAMODB_ENDPOINT": "http://127.0.0.1:1", "CSS_SQS_ENDPOINT": "http://127.0.0.1:1",
		"CSS_RESEARCH_QUEUE_URL": "http://127.0.0.1:1/000000000000/research", "CSS_MODEL_PROVIDER": "bedrock",
		"CSS_RESEARCH_SOURCE": "youtube", "CSS_YOUTUBE_API_KEY": "", "CSS_YOUTUBE_API_KEY_PARAM": ""} {
		t.Setenv(k, v)
	}
	if _, err := build(context.Background(), wiretest.Env(t, "research-worker")); !errors.Is(err, workers.ErrNoKey) {
		t.Errorf("the youtube source without a key: %v, want ErrNoKey", err)
	}
	t.Setenv("CSS_YOUTUBE_API_KEY", "AIza-test-key")
	if _, err := build(context.Background(), wiretest.Env(t, "research-worker")); err != nil {
		t.Errorf("wiring: %v", err)
	}
	// The Lambda links no stand-in: the offline model or sample stops it at start.
	t.Setenv("CSS_MODEL_PROVIDER", "offline")
	if _, err := build(context.Background(), wiretest.Env(t, "research-worker")); !errors.Is(err, provider.ErrOfflineNotLinked) {
		t.Errorf("the offline model: %v, want ErrOfflineNotLinked", err)
	}
	t.Setenv("CSS_MODEL_PROVIDER", "bedrock")
	t.Setenv("CSS_RESEARCH_SOURCE", "offline")
	if _, err := build(context.Background(), wiretest.Env(t, "research-worker")); !errors.Is(err, provider.ErrOfflineNotLinked) {
		t.Errorf("the offline sample: %v, want ErrOfflineNotLinked", err)
	}
	t.Setenv("CSS_RESEARCH_SOURCE", "youtube")
	t.Setenv("CSS_RESEARCH_QUEUE_URL", "")
	if _, err := build(context.Background(), wiretest.Env(t, "research-worker")); err == nil {
		t.Error("started without CSS_RESEARCH_QUEUE_URL")
	}
}
