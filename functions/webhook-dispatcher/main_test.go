package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// The dispatcher needs both queues and the sealing key; it makes no call to start.
func TestBuildNeedsTheQueuesAndTheKey(t *testing.T) {
	c := wiretest.Setup(t)
	if _, err := build(context.Background(), wiretest.Env(t, "webhook-dispatcher")); err == nil {
		t.Error("started without the events queues")
	}
	urls := map[string]string{}
	for _, name := range []string{queue.Events, queue.WebhookDeliveries} {
		spec := queue.Specs()[name]
		spec.Name = fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
		qs, err := sqs.CreateQueues(context.Background(), c.SQS, spec)
		if err != nil {
			t.Fatal(err)
		}
		urls[name] = qs.ARN
		t.Setenv(map[string]string{queue.Events: "CSS_EVENTS_QUEUE_URL", queue.WebhookDeliveries: "CSS_WEBHOOK_DELIVERIES_QUEUE_URL"}[name], qs.URL)
	}
	if _, err := build(context.Background(), wiretest.Env(t, "webhook-dispatcher")); err == nil || !strings.Contains(err.Error(), "CSS_WEBHOOK_KEY") {
		t.Errorf("started without the sealing key: %v", err)
	}
	t.Setenv("CSS_WEBHOOK_KEY", strings.Repeat("k", 64))
	h := wiretest.Build(t, "webhook-dispatcher", build)

	// The router tells the three invocations apart: the schedule sweeps the outbox, a batch goes to its
	// queue's handler (a record it cannot read is a batch item failure, not an error), anything else fails.
	ctx := context.Background()
	out, err := h(ctx, json.RawMessage(`{"version":"0","id":"1","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`))
	if res, ok := out.(sweepResult); err != nil || !ok || res.Sent != 0 {
		t.Errorf("sweep of an empty outbox: %+v, %v", out, err)
	}
	for _, arn := range []string{urls[queue.Events], urls[queue.WebhookDeliveries]} {
		batch := fmt.Sprintf(`{"Records":[{"messageId":"m1","receiptHandle":"r1","body":"not json","attributes":{"ApproximateReceiveCount":"1"},"eventSource":"aws:sqs","eventSourceARN":%q}]}`, arn)
		out, err := h(ctx, json.RawMessage(batch))
		if err != nil || !strings.Contains(fmt.Sprint(out), "m1") {
			t.Errorf("a bad record of %s: %+v, %v; want it reported as a batch item failure", arn, out, err)
		}
	}
	if _, err := h(ctx, json.RawMessage(`{"Records":[{"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:us-east-1:1:other"}]}`)); err == nil {
		t.Error("records of an unknown queue were accepted")
	}
	if _, err := h(ctx, json.RawMessage(`{}`)); err == nil {
		t.Error("an invocation that is neither SQS records nor a scheduled event was accepted")
	}
}
