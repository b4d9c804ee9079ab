package deploy

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
)

// queues are the events and webhook-deliveries queues on ElasticMQ, with a client.
type queues struct {
	client             *awssqs.Client
	events, deliveries sqs.Queues
}

// eventQueues creates the events and webhook-deliveries queues on ElasticMQ as queue.Specs describes them
// and names them to the functions (CSS_SQS_ENDPOINT, CSS_EVENTS_QUEUE_URL, CSS_WEBHOOK_DELIVERIES_QUEUE_URL).
func eventQueues(t *testing.T) queues {
	t.Helper()
	ctx := context.Background()
	endpoint := emulatortest.ElasticMQ(t)
	client, err := sqs.NewClient(endpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	specs := queue.Specs()
	q := queues{client: client}
	if q.events, err = sqs.CreateQueues(ctx, client, specs[queue.Events]); err != nil {
		t.Fatal(err)
	}
	if q.deliveries, err = sqs.CreateQueues(ctx, client, specs[queue.WebhookDeliveries]); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CSS_SQS_ENDPOINT", endpoint)
	t.Setenv("CSS_EVENTS_QUEUE_URL", q.events.URL)
	t.Setenv("CSS_WEBHOOK_DELIVERIES_QUEUE_URL", q.deliveries.URL)
	return q
}

// runDispatcher runs the webhook-dispatcher function's three paths through its real binary, on the queues
// and the table behind the recorder: the scheduled sweep sends an event left in the outbox, the events batch
// fans it out, the deliveries batch attempts it. The binary runs in production mode, as in the cloud, where
// a receiver on loopback is refused at the dial (webhooks.AddressPolicy) and this machine has no public
// address to receive on: each attempt is refused before any request leaves, and is recorded, and retried,
// as a receiver's failure is. Those are the same table calls as a delivered attempt's (the delivery's
// write, the registration's health); delivering and signing are the dispatcher's own tests'.
func runDispatcher(t *testing.T, rec *recorder, st *store.Store, q queues, fns *cloudFunctions) {
	t.Helper()
	ctx := context.Background()

	// Only the receiver of this test gets deliveries: the scenario's registrations go.
	regs, err := st.ListWebhooks(ctx, samevents.Channel)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if err := st.DeleteWebhook(ctx, samevents.Channel, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	receiver := webhookstest.StartReceiver(t)
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		t.Fatal(err)
	}
	cipher, err := sealkey.Cipher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	key, shown := webhooks.NewSecret()
	receiver.Trust(shown)
	reg := webhooks.Registration{ID: st.NewID(), ChannelID: samevents.Channel, URL: receiver.URL(),
		Events: []string{webhooks.VideoCommitted}, Active: true, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if reg.Secret, err = cipher.Seal(ctx, key, webhooks.SecretAAD(reg.ChannelID, reg.ID)); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateWebhook(ctx, reg.ChannelID, reg, webhooks.MaxRegistrations); err != nil {
		t.Fatal(err)
	}
	// An event whose operation died before publishing it.
	ev, err := webhooks.NewEvent(st.NewID(), webhooks.VideoCommitted, samevents.Channel, time.Now().Add(-time.Minute),
		map[string]any{"id": st.NewID(), "title": "t", "contentType": "Long", "formulaType": "f", "status": "planned",
			"createdAt": time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := ev.Message()
	if err := st.PutOutbox(ctx, m); err != nil {
		t.Fatal(err)
	}

	d := fns.webhookDispatcher()
	rec.mu.Lock()
	rec.current = "WebhookDispatcherFunction"
	rec.mu.Unlock()
	sent, err := d.sweep(ctx)
	// The scenario's operations left their events in the outbox too (no queue was configured for them).
	if err != nil || sent < 1 {
		t.Fatalf("sweep: %d, %v", sent, err)
	}
	// The operations of the scenario published their events; whatever the events queue holds is fanned
	// out (to this test's receiver too: it subscribes to video.committed), then each delivery is attempted
	// once: refused, reported as its record's failure (the queue retries it after the schedule's wait).
	handle := func(qs sqs.Queues) bool {
		batch, ok := receive(t, q.client, qs)
		if !ok {
			return false
		}
		h := d.onEvents
		if qs.ARN == q.deliveries.ARN {
			h = d.onDelivery
		}
		resp, err := h(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		// Events fan out without failing; a delivery's refused attempt is its record's failure (a delivery
		// of a registration deleted since is dropped without one).
		if qs.ARN == q.events.ARN && len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%s batch: failures %+v", qs.ARN, resp.BatchItemFailures)
		}
		return true
	}
	for handle(q.events) {
	}
	for handle(q.deliveries) {
	}
	ds, err := st.ListDeliveries(ctx, samevents.Channel, reg.ID)
	if err != nil {
		t.Fatal(err)
	}
	attempted := false
	for _, dl := range ds {
		if dl.EventID != ev.ID {
			continue
		}
		for _, a := range dl.Attempts {
			attempted = a.Error != nil && strings.Contains(*a.Error, "loopback")
		}
	}
	if !attempted {
		t.Fatalf("the swept event %s: no refused attempt recorded in %+v", ev.ID, ds)
	}
	if n := len(receiver.Requests()); n != 0 {
		t.Errorf("the dispatcher in production mode reached a loopback receiver %d times", n)
	}
}

// receive polls a batch of q and returns it as the SQS event Lambda would pass; false when q is empty.
func receive(t *testing.T, client *awssqs.Client, q sqs.Queues) (events.SQSEvent, bool) {
	t.Helper()
	out, err := client.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{
		QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatalf("receive from %s: %v", q.URL, err)
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		attrs := map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)}
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Attributes: attrs, EventSource: "aws:sqs", EventSourceARN: q.ARN, AWSRegion: "us-east-1",
		})
	}
	return ev, len(ev.Records) > 0
}
