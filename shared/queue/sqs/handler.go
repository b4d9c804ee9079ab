package sqs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/creatorstrategy/css/shared/queue"
)

// VisibilityAPI is what the Lambda handler needs of SQS: a RetryAfterError changes the visibility of its
// message, on the queue found from the record's event source ARN.
type VisibilityAPI interface {
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, opts ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
}

// LambdaHandler is the signature lambda.Start takes for an SQS event source with partial batch responses.
type LambdaHandler = func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Handler returns the Lambda handler of an SQS event source mapping that reports batch item failures. It
// runs h on every record of the batch concurrently and answers with the records whose h failed (or
// panicked), which SQS then delivers again; the others are deleted. For a queue.RetryAfterError it first
// sets the message's visibility timeout to the delay asked (whole seconds, rounded up), so the message
// comes back then rather than after the queue's visibility timeout. The handler itself never fails: a
// failure of the whole invocation would deliver every record of the batch again.
func Handler(client VisibilityAPI, h queue.Handler, logger *slog.Logger) LambdaHandler {
	b := &batchHandler{handler: h, client: client, log: cmp.Or(logger, slog.New(slog.DiscardHandler))}
	b.queueURL = b.lookupURL
	return b.handle
}

type batchHandler struct {
	handler queue.Handler
	client  VisibilityAPI
	log     *slog.Logger
	// queueURL finds the URL of a record's queue, for ChangeMessageVisibility.
	queueURL func(ctx context.Context, eventSourceARN string) (string, error)

	urlsMu sync.Mutex
	urls   map[string]string // event source ARN -> queue URL
}

func (b *batchHandler) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	failed := make([]bool, len(ev.Records))
	var wg sync.WaitGroup
	for i, rec := range ev.Records {
		wg.Go(func() { failed[i] = !b.one(ctx, rec) })
	}
	wg.Wait()
	var resp events.SQSEventResponse
	for i, rec := range ev.Records {
		if failed[i] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return resp, nil
}

// one handles a record and reports whether it may be deleted.
func (b *batchHandler) one(ctx context.Context, rec events.SQSMessage) bool {
	m := message(rec)
	err := b.call(ctx, m)
	if err == nil {
		return true
	}
	log := b.log.With("messageId", rec.MessageId, "attempt", m.Attempt)
	if delay, ok := queue.RetryDelay(err); ok {
		if verr := b.changeVisibility(ctx, rec, delay); verr != nil {
			// It still comes back, after the queue's visibility timeout instead.
			log.Error("queue message: could not set its retry delay", "delay", delay, "err", verr)
		}
	}
	log.Info("queue handler failed", "err", err)
	return false
}

func (b *batchHandler) call(ctx context.Context, m queue.Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("queue handler panicked", "messageId", m.ID, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("sqs: handler panicked: %v", r)
		}
	}()
	return b.handler(ctx, m)
}

func (b *batchHandler) changeVisibility(ctx context.Context, rec events.SQSMessage, delay time.Duration) error {
	url, err := b.queueURL(ctx, rec.EventSourceARN)
	if err != nil {
		return err
	}
	_, err = b.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(url),
		ReceiptHandle:     aws.String(rec.ReceiptHandle),
		VisibilityTimeout: seconds(delay),
	})
	if err != nil {
		return fmt.Errorf("sqs: change visibility on %s: %w", url, err)
	}
	return nil
}

// lookupURL asks SQS for the URL of the queue an ARN names (arn:aws:sqs:REGION:ACCOUNT:NAME), once per ARN.
func (b *batchHandler) lookupURL(ctx context.Context, arn string) (string, error) {
	b.urlsMu.Lock()
	url, ok := b.urls[arn]
	b.urlsMu.Unlock()
	if ok {
		return url, nil
	}
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[5] == "" {
		return "", fmt.Errorf("sqs: event source %q is not an SQS queue ARN", arn)
	}
	out, err := b.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
	if err != nil {
		return "", fmt.Errorf("sqs: find the queue %s: %w", arn, err)
	}
	url = aws.ToString(out.QueueUrl)
	if url == "" {
		return "", errors.New("sqs: GetQueueUrl answered no URL")
	}
	b.urlsMu.Lock()
	if b.urls == nil {
		b.urls = map[string]string{}
	}
	b.urls[arn] = url
	b.urlsMu.Unlock()
	return url, nil
}

// message turns a record into the port's message. Attempt is ApproximateReceiveCount (1 when absent);
// string attributes (and the string form of number attributes) are kept, binary ones dropped: the port's
// senders send only strings.
func message(rec events.SQSMessage) queue.Message {
	m := queue.Message{ID: rec.MessageId, Body: []byte(rec.Body), Attempt: 1}
	if n, err := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"]); err == nil && n > 0 {
		m.Attempt = n
	}
	if ms, err := strconv.ParseInt(rec.Attributes["SentTimestamp"], 10, 64); err == nil {
		m.SentAt = time.UnixMilli(ms)
	}
	for k, v := range rec.MessageAttributes {
		if v.StringValue == nil {
			continue
		}
		if m.Attributes == nil {
			m.Attributes = make(map[string]string, len(rec.MessageAttributes))
		}
		m.Attributes[k] = *v.StringValue
	}
	return m
}
