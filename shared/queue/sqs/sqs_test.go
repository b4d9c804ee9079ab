package sqs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/queuetest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func localClient(t *testing.T) *sqs.Client {
	t.Helper()
	c, err := NewClient(emulatortest.ElasticMQ(t), "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// freshQueues creates a queue and its dead-letter queue of t's own on ElasticMQ, deleted afterwards.
func freshQueues(t *testing.T, c *sqs.Client, vt time.Duration, maxReceives int) Queues {
	t.Helper()
	spec := queue.Spec{Name: "css-test-" + rand.Text(), VisibilityTimeout: vt, MaxReceiveCount: maxReceives,
		Retention: time.Hour, DeadLetterRetention: 2 * time.Hour}
	qs, err := CreateQueues(t.Context(), c, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context() is already canceled when cleanups run.
		for _, url := range []string{qs.URL, qs.DeadLetterURL} {
			if _, err := c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &url}); err != nil {
				t.Errorf("delete queue %s: %v", url, err)
			}
		}
	})
	return qs
}

// suiteQueue is a queue on ElasticMQ as the conformance suite drives it: sent to by a Sender, consumed by
// a Poller (which runs the Lambda handler's code), on the wall clock.
type suiteQueue struct {
	*Sender
	client *sqs.Client
	qs     Queues
}

func (q suiteQueue) Start(t *testing.T, h queue.Handler, workers int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p := &Poller{Client: q.client, QueueURL: q.qs.URL, Handler: h, Concurrency: workers}
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func (suiteQueue) Now() time.Time        { return time.Now() }
func (suiteQueue) Advance(time.Duration) {}
func (suiteQueue) Settle(*testing.T)     {}

func (q suiteQueue) Counts(t *testing.T) queuetest.Counts {
	t.Helper()
	src, dlq := counts(t, q.client, q.qs.URL), counts(t, q.client, q.qs.DeadLetterURL)
	return queuetest.Counts{Visible: src[0], InFlight: src[1], Delayed: src[2], Dead: dlq[0] + dlq[1] + dlq[2]}
}

// counts reads ApproximateNumberOfMessages, ...NotVisible and ...Delayed (exact on ElasticMQ).
func counts(t *testing.T, c *sqs.Client, url string) [3]int {
	t.Helper()
	names := []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	}
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: names})
	if err != nil {
		t.Fatalf("counts of %s: %v", url, err)
	}
	var n [3]int
	for i, name := range names {
		if n[i], err = strconv.Atoi(out.Attributes[string(name)]); err != nil {
			t.Fatalf("%s of %s: %q", name, url, out.Attributes[string(name)])
		}
	}
	return n
}

// DeadLetters receives what the dead-letter queue holds and makes it visible again at once.
func (q suiteQueue) DeadLetters(t *testing.T) []queue.Message {
	t.Helper()
	want := counts(t, q.client, q.qs.DeadLetterURL)[0]
	var out []queue.Message
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < want && time.Now().Before(deadline) {
		got := receive(t, q.client, q.qs.DeadLetterURL, 1)
		for _, m := range got {
			r := record(m)
			out = append(out, message(r))
			if _, err := q.client.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{
				QueueUrl: &q.qs.DeadLetterURL, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0,
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// receive long-polls up to 10 messages with their attributes, as the Poller and Lambda do.
func receive(t *testing.T, c *sqs.Client, url string, waitSeconds int32) []types.Message {
	t.Helper()
	out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
		QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Messages
}

func TestConformance(t *testing.T) {
	c := localClient(t)
	queuetest.Run(t, queuetest.Adapter{RealTime: true, New: func(t *testing.T, cfg queuetest.Config) queuetest.Queue {
		qs := freshQueues(t, c, cfg.VisibilityTimeout, cfg.MaxReceiveCount)
		return suiteQueue{Sender: NewSender(c, qs.URL), client: c, qs: qs}
	}})
}

// The Lambda handler on a batch received from ElasticMQ, with the event source ARN Lambda gives: the
// failed records are reported, the RetryAfter one comes back after its delay (found from the ARN), the
// others stay invisible for the queue's visibility timeout.
func TestLambdaHandlerPartialBatch(t *testing.T) {
	c := localClient(t)
	qs := freshQueues(t, c, 30*time.Second, 5)
	if err := NewSender(c, qs.URL).Send(t.Context(),
		queue.Outgoing{Body: []byte("ok"), Attributes: map[string]string{"k": "v"}},
		queue.Outgoing{Body: []byte("fails")},
		queue.Outgoing{Body: []byte("retry")},
		queue.Outgoing{Body: []byte("panics")},
	); err != nil {
		t.Fatal(err)
	}
	var msgs []types.Message
	for deadline := time.Now().Add(10 * time.Second); len(msgs) < 4 && time.Now().Before(deadline); {
		msgs = append(msgs, receive(t, c, qs.URL, 1)...)
	}
	if len(msgs) != 4 {
		t.Fatalf("received %d messages; want 4", len(msgs))
	}
	ev := events.SQSEvent{}
	ids := map[string]string{}
	for _, m := range msgs {
		r := record(m)
		r.EventSourceARN = qs.ARN
		ev.Records = append(ev.Records, r)
		ids[aws.ToString(m.Body)] = aws.ToString(m.MessageId)
	}
	var seen atomic.Int32
	h := Handler(c, func(_ context.Context, m queue.Message) error {
		seen.Add(1)
		if m.Attempt != 1 || m.SentAt.IsZero() {
			t.Errorf("%s: Attempt %d SentAt %s; want 1 and the time sent", m.Body, m.Attempt, m.SentAt)
		}
		switch string(m.Body) {
		case "ok":
			if m.Attributes["k"] != "v" {
				t.Errorf("attributes %v", m.Attributes)
			}
			return nil
		case "fails":
			return errors.New("no")
		case "retry":
			return queue.RetryAfter(1500*time.Millisecond, errors.New("later"))
		}
		panic("handler bug")
	}, nil)
	resp, err := h(t.Context(), ev)
	if err != nil {
		t.Fatalf("handler error %v; want nil (failures are per record)", err)
	}
	if seen.Load() != 4 {
		t.Errorf("handler ran %d times; want 4", seen.Load())
	}
	got := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		got[f.ItemIdentifier] = true
	}
	want := map[string]bool{ids["fails"]: true, ids["retry"]: true, ids["panics"]: true}
	if len(got) != len(want) || !got[ids["fails"]] || !got[ids["retry"]] || !got[ids["panics"]] {
		t.Fatalf("BatchItemFailures %v; want fails, retry and panics (%v)", resp.BatchItemFailures, want)
	}
	// What Lambda does with the response: delete the records not reported.
	for _, m := range msgs {
		if aws.ToString(m.Body) == "ok" {
			if _, err := c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: &qs.URL, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	var again []types.Message
	for deadline := start.Add(15 * time.Second); len(again) == 0 && time.Now().Before(deadline); {
		again = receive(t, c, qs.URL, 5)
	}
	if len(again) != 1 || aws.ToString(again[0].Body) != "retry" {
		t.Fatalf("received again %d messages (%v); want only retry", len(again), again)
	}
	if n := again[0].Attributes["ApproximateReceiveCount"]; n != "2" {
		t.Errorf("retry's ApproximateReceiveCount %s; want 2", n)
	}
	if n := counts(t, c, qs.URL); n != [3]int{0, 3, 0} {
		t.Errorf("counts %v; want 3 in flight (fails, panics, retry) and ok deleted", n)
	}
}

// A record whose queue cannot be found is still reported failed: it comes back after the visibility timeout.
func TestLambdaHandlerUnknownEventSource(t *testing.T) {
	c := localClient(t)
	h := Handler(c, func(context.Context, queue.Message) error {
		return queue.RetryAfter(time.Second, errors.New("later"))
	}, nil)
	for _, arn := range []string{"", "not-an-arn", "arn:aws:sns:us-east-1:000000000000:topic", "arn:aws:sqs:elasticmq:000000000000:no-such-queue-" + rand.Text()} {
		resp, err := h(t.Context(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", ReceiptHandle: "r", Body: "x", EventSourceARN: arn}}})
		if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
			t.Errorf("ARN %q: %v, %v; want m1 reported failed", arn, resp, err)
		}
	}
}

func TestMessageFromRecord(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name  string
		rec   events.SQSMessage
		want  int
		attrs map[string]string
		sent  time.Time
	}{
		{"no attributes", events.SQSMessage{MessageId: "1", Body: "b"}, 1, nil, time.Time{}},
		{"count and time", events.SQSMessage{MessageId: "1", Body: "b",
			Attributes: map[string]string{"ApproximateReceiveCount": "3", "SentTimestamp": "1795510800123"}},
			3, nil, time.UnixMilli(1795510800123)},
		{"bad count", events.SQSMessage{Attributes: map[string]string{"ApproximateReceiveCount": "x"}}, 1, nil, time.Time{}},
		{"zero count", events.SQSMessage{Attributes: map[string]string{"ApproximateReceiveCount": "0"}}, 1, nil, time.Time{}},
		{"string, number and binary attributes", events.SQSMessage{MessageAttributes: map[string]events.SQSMessageAttribute{
			"s": {DataType: "String", StringValue: str("v")},
			"n": {DataType: "Number", StringValue: str("42")},
			"b": {DataType: "Binary", BinaryValue: []byte{1}},
		}}, 1, map[string]string{"s": "v", "n": "42"}, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := message(tc.rec)
			if m.Attempt != tc.want || !m.SentAt.Equal(tc.sent) || fmt.Sprint(m.Attributes) != fmt.Sprint(tc.attrs) ||
				m.ID != tc.rec.MessageId || string(m.Body) != tc.rec.Body {
				t.Errorf("message = %+v; want Attempt %d SentAt %s attributes %v", m, tc.want, tc.sent, tc.attrs)
			}
		})
	}
}

func TestBatches(t *testing.T) {
	sized := func(n int) queue.Outgoing { return queue.Outgoing{Body: []byte(strings.Repeat("x", n))} }
	const max = queue.MaxMessageSize
	tests := []struct {
		name string
		msgs []queue.Outgoing
		want []int // messages per batch
	}{
		{"none", nil, nil},
		{"one", []queue.Outgoing{sized(1)}, []int{1}},
		{"ten small", repeat(sized(10), 10), []int{10}},
		{"eleven small", repeat(sized(10), 11), []int{10, 1}},
		{"twenty-five small", repeat(sized(10), 25), []int{10, 10, 5}},
		{"two largest", repeat(sized(max), 2), []int{1, 1}},
		{"two halves fit", repeat(sized(max/2), 2), []int{2}},
		{"two halves and a byte", []queue.Outgoing{sized(max / 2), sized(max/2 + 1)}, []int{1, 1}},
		{"a large one after small ones", append(repeat(sized(100), 3), sized(max-200)), []int{3, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			total := 0
			for _, b := range batches(tc.msgs) {
				got = append(got, len(b))
				size := 0
				for _, m := range b {
					size += queue.Size(m)
				}
				if size > max || len(b) > MaxBatch {
					t.Errorf("a batch of %d messages, %d bytes", len(b), size)
				}
				total += len(b)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || total != len(tc.msgs) {
				t.Errorf("batches %v; want %v", got, tc.want)
			}
		})
	}
}

func repeat(m queue.Outgoing, n int) []queue.Outgoing {
	out := make([]queue.Outgoing, n)
	for i := range out {
		out[i] = m
	}
	return out
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int32
	}{
		{-time.Second, 0}, {0, 0}, {time.Nanosecond, 1}, {time.Second, 1}, {time.Second + time.Millisecond, 2},
		{queue.MaxDelay, 900}, {queue.MaxRetryAfter, 43200},
	} {
		if got := seconds(tc.d); got != tc.want {
			t.Errorf("seconds(%s) = %d; want %d", tc.d, got, tc.want)
		}
	}
}

func TestSendToMissingQueue(t *testing.T) {
	c := localClient(t)
	qs := freshQueues(t, c, time.Second, 1)
	s := NewSender(c, qs.URL+"-missing")
	if err := s.Send(t.Context(), queue.Outgoing{Body: []byte("x")}); err == nil {
		t.Error("Send to a missing queue succeeded")
	}
}

// Run returns only once the batch being handled when ctx ended is finished and deleted.
func TestPollerStopsGracefully(t *testing.T) {
	c := localClient(t)
	qs := freshQueues(t, c, 30*time.Second, 3)
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	p := &Poller{Client: c, QueueURL: qs.URL, WaitTime: time.Second, Handler: func(ctx context.Context, _ queue.Message) error {
		close(started)
		<-release
		finished.Store(true)
		return ctx.Err() // not canceled by the end of Run's context
	}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	if err := NewSender(c, qs.URL).Send(t.Context(), queue.Outgoing{Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	close(release)
	<-done
	if !finished.Load() {
		t.Fatal("Run returned before the running handler")
	}
	if n := counts(t, c, qs.URL); n != [3]int{} {
		t.Errorf("counts %v; want the message deleted", n)
	}
}

// CreateQueues gives the queue the visibility timeout and redrive policy of its spec, as template.yaml
// does. (ElasticMQ 1.7 neither keeps nor reports MessageRetentionPeriod; infra/deploy checks the template's.)
func TestCreateQueuesAttributes(t *testing.T) {
	c := localClient(t)
	qs := freshQueues(t, c, 90*time.Second, 4)
	get := func(url string) map[string]string {
		out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{
			QueueUrl: &url, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll},
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes
	}
	src, dlq := get(qs.URL), get(qs.DeadLetterURL)
	if src["VisibilityTimeout"] != "90" {
		t.Errorf("attributes %v; want visibility 90", src)
	}
	if _, ok := dlq["RedrivePolicy"]; ok || dlq["QueueArn"] != qs.DeadLetterARN {
		t.Errorf("dead-letter queue attributes %v; want no redrive policy, ARN %s", dlq, qs.DeadLetterARN)
	}
	if rp := src["RedrivePolicy"]; !strings.Contains(rp, qs.DeadLetterARN) || !strings.Contains(strings.ReplaceAll(rp, `"`, ""), "maxReceiveCount:4") {
		t.Errorf("RedrivePolicy %s; want the DLQ %s and maxReceiveCount 4", rp, qs.DeadLetterARN)
	}
	if !strings.HasPrefix(qs.ARN, "arn:aws:sqs:") || !strings.HasSuffix(qs.DeadLetterURL, queue.DeadLetterName(qs.URL[strings.LastIndex(qs.URL, "/")+1:])) {
		t.Errorf("queues %+v", qs)
	}
}
