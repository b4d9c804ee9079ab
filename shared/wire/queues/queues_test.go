package queues_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

// A function that runs generations needs the generation queue; one that starts research, the research
// queue.
func TestQueuesAreRequiredByTheirFunctions(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("CSS_TABLE_NAME", "css-test")
	t.Setenv("CSS_DYNAMODB_ENDPOINT", "http://127.0.0.1:1")
	env, err := wire.NewEnv("generation", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(memstore.New(t))
	client, err := queues.Client(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := queues.GenerationSubmitter(env, st, client); err == nil || !strings.Contains(err.Error(), "CSS_GENERATION_QUEUE_URL") {
		t.Errorf("the generation submitter without CSS_GENERATION_QUEUE_URL: %v", err)
	}
	if _, err := queues.Research(env, client); err == nil || !strings.Contains(err.Error(), "CSS_RESEARCH_QUEUE_URL") {
		t.Errorf("the research queue without CSS_RESEARCH_QUEUE_URL: %v", err)
	}
	env.Config.GenerationQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/css-generation"
	if _, err := queues.GenerationSubmitter(env, st, client); err != nil {
		t.Errorf("generation wiring: %v", err)
	}
	if relay := queues.EventsRelay(env, st, client); relay != nil {
		t.Error("a relay without the events queues")
	}
}
