package sqs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/queue"
)

// PollAPI is what a Poller needs of SQS.
type PollAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// Bounds of a Poller's settings (SQS's).
const (
	MaxWaitTime        = 20 * time.Second
	defaultWaitTime    = MaxWaitTime
	receiveErrorPause  = time.Second
	defaultConcurrency = 1
)

// Poller runs a queue.Handler on the messages of a queue, as Lambda's event source mapping does: each of
// Concurrency loops long-polls a batch (ReceiveMessage), hands it to the same code as Handler (records run
// concurrently, a RetryAfterError changes the message's visibility), and deletes the records that
// succeeded (DeleteMessageBatch). It is how tests and workers outside Lambda consume a queue (ElasticMQ).
type Poller struct {
	Client   PollAPI
	QueueURL string
	Handler  queue.Handler
	// Concurrency is the number of receive loops (default 1); up to Concurrency×BatchSize handlers run at once.
	Concurrency int
	// BatchSize is the most messages a receive returns, 1..10 (default 10).
	BatchSize int
	// WaitTime is how long a receive waits for a message, 1 s..20 s (default 20 s).
	WaitTime time.Duration
	Logger   *slog.Logger
}

// Run polls until ctx ends, then waits for the batches being handled to finish (their handlers get a
// context that ctx's end does not cancel) and returns nil. It returns an error at once for bad settings.
func (p *Poller) Run(ctx context.Context) error {
	concurrency, batch, wait := p.Concurrency, p.BatchSize, p.WaitTime
	if concurrency == 0 {
		concurrency = defaultConcurrency
	}
	if batch == 0 {
		batch = MaxBatch
	}
	if wait == 0 {
		wait = defaultWaitTime
	}
	switch {
	case p.Client == nil || p.QueueURL == "" || p.Handler == nil:
		return errors.New("sqs: a Poller needs a Client, a QueueURL and a Handler")
	case concurrency < 1:
		return fmt.Errorf("sqs: Poller concurrency %d; want at least 1", concurrency)
	case batch < 1 || batch > MaxBatch:
		return fmt.Errorf("sqs: Poller batch size %d outside 1..%d", batch, MaxBatch)
	case wait < time.Second || wait > MaxWaitTime:
		return fmt.Errorf("sqs: Poller wait time %s outside 1s..%s", wait, MaxWaitTime)
	}
	log := orDiscard(p.Logger).With("queue", p.QueueURL)
	b := &batchHandler{
		handler:  p.Handler,
		client:   p.Client,
		log:      log,
		queueURL: func(context.Context, string) (string, error) { return p.QueueURL, nil },
	}
	in := &sqs.ReceiveMessageInput{
		QueueUrl:              aws.String(p.QueueURL),
		MaxNumberOfMessages:   int32(batch),
		WaitTimeSeconds:       seconds(wait),
		MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{
			types.MessageSystemAttributeNameApproximateReceiveCount, types.MessageSystemAttributeNameSentTimestamp,
		},
	}
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() { p.loop(ctx, b, in, log) })
	}
	wg.Wait()
	return nil
}

func (p *Poller) loop(ctx context.Context, b *batchHandler, in *sqs.ReceiveMessageInput, log *slog.Logger) {
	for ctx.Err() == nil {
		out, err := p.Client.ReceiveMessage(ctx, in)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Error("queue receive failed", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(receiveErrorPause):
			}
			continue
		}
		if len(out.Messages) > 0 {
			p.handle(context.WithoutCancel(ctx), b, out.Messages, log)
		}
	}
}

// handle runs a received batch through the Lambda handler's code and deletes what it did not report failed.
func (p *Poller) handle(ctx context.Context, b *batchHandler, msgs []types.Message, log *slog.Logger) {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		ev.Records[i] = record(m)
	}
	resp, _ := b.handle(ctx, ev)
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var del []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(del) == 0 {
		return
	}
	out, err := p.Client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.QueueURL), Entries: del})
	if err != nil {
		// The messages come back after their visibility timeout and are handled again.
		log.Error("queue delete failed", "messages", len(del), "err", err)
		return
	}
	for _, f := range out.Failed {
		log.Error("queue delete failed", "entry", aws.ToString(f.Id), "code", aws.ToString(f.Code), "err", aws.ToString(f.Message))
	}
}

// record is the Lambda event record SQS's event source mapping would make of m.
func record(m types.Message) events.SQSMessage {
	r := events.SQSMessage{
		MessageId:     aws.ToString(m.MessageId),
		ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Body:          aws.ToString(m.Body),
		Attributes:    m.Attributes,
		EventSource:   "aws:sqs",
	}
	if len(m.MessageAttributes) > 0 {
		r.MessageAttributes = make(map[string]events.SQSMessageAttribute, len(m.MessageAttributes))
		for k, v := range m.MessageAttributes {
			r.MessageAttributes[k] = events.SQSMessageAttribute{
				DataType: aws.ToString(v.DataType), StringValue: v.StringValue, BinaryValue: v.BinaryValue,
			}
		}
	}
	return r
}
