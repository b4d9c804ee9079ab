package sqs

import (
	"context"
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

// Poller runs a queue.Handler on the messages of a queue, as Lambda's event source mapping does: each of
// Concurrency loops long-polls a batch (ReceiveMessage), hands it to the same code as Handler (records run
// concurrently, a RetryAfterError changes the message's visibility), and deletes the records that
// succeeded (DeleteMessageBatch). It is how the conformance suite consumes a queue on ElasticMQ.
type Poller struct {
	Client   *sqs.Client
	QueueURL string
	Handler  queue.Handler
	// Concurrency is the number of receive loops (default 1); up to Concurrency×10 handlers run at once.
	Concurrency int
	// WaitTime is how long a receive waits for a message (default 20 s).
	WaitTime time.Duration
}

// Run polls until ctx ends, then waits for the batches being handled to finish (their handlers get a
// context that ctx's end does not cancel).
func (p *Poller) Run(ctx context.Context) {
	concurrency, wait := max(p.Concurrency, 1), p.WaitTime
	if wait == 0 {
		wait = 20 * time.Second
	}
	log := slog.New(slog.DiscardHandler)
	b := &batchHandler{
		handler:  p.Handler,
		client:   p.Client,
		log:      log,
		queueURL: func(context.Context, string) (string, error) { return p.QueueURL, nil },
	}
	in := &sqs.ReceiveMessageInput{
		QueueUrl:              aws.String(p.QueueURL),
		MaxNumberOfMessages:   MaxBatch,
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
			case <-time.After(time.Second):
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
