// Package queue is the port of the service's queues: generation jobs, research steps and webhook deliveries
// are messages a worker handles; the queue redelivers a message whose handler failed and, after the last
// attempt, moves it to the dead-letter queue, so nothing sent is lost. Adapters: queue/sqs (AWS, tested
// against ElasticMQ) and queue/inproc (the local stack and tests), with the same semantics, proven by one
// conformance suite.
package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MaxDelay is the longest delay a message may be sent with (SQS DelaySeconds).
const MaxDelay = 15 * time.Minute

// MaxRetryAfter is the longest a handler may ask a message to wait before its next attempt (SQS visibility
// timeout).
const MaxRetryAfter = 12 * time.Hour

// Outgoing is a message to send.
type Outgoing struct {
	Body       []byte
	Delay      time.Duration     // before the first delivery; 0..MaxDelay
	Attributes map[string]string // small string attributes (e.g. a request id), delivered with the message
}

// Message is a message as a handler receives it.
type Message struct {
	ID         string // the queue's id of the message, stable across redeliveries
	Body       []byte
	Attempt    int // 1 on the first delivery (SQS ApproximateReceiveCount)
	Attributes map[string]string
	SentAt     time.Time
}

// Sender sends messages to one queue.
type Sender interface {
	Send(ctx context.Context, msgs ...Outgoing) error
}

// Handler handles one message. Returning nil ends the message (it is deleted). Any other error leaves it
// on the queue to be delivered again, after the queue's visibility timeout or after the delay a
// RetryAfter error names; after the queue's last attempt it is moved to the dead-letter queue.
type Handler func(ctx context.Context, m Message) error

// RetryAfterError asks for the message to be delivered again after Delay (at most MaxRetryAfter).
type RetryAfterError struct {
	Delay time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("retry after %s: %v", e.Delay, e.Err)
}

func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter wraps err so that the message comes back after d.
func RetryAfter(d time.Duration, err error) error {
	return &RetryAfterError{Delay: min(max(d, 0), MaxRetryAfter), Err: err}
}

// RetryDelay returns the delay err asks for, if it is (or wraps) a RetryAfterError.
func RetryDelay(err error) (time.Duration, bool) {
	if r, ok := errors.AsType[*RetryAfterError](err); ok {
		return r.Delay, true
	}
	return 0, false
}
