package queue_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
)

// Send a message and handle it, on the in-process queue the local stack and tests use. The semantics are
// SQS's: a handler's error brings the message back (after the delay RetryAfter names), and after the
// queue's last attempt it moves to the dead-letter queue. A manual clock stands in for waiting.
func Example() {
	ctx := context.Background()
	clock := inproc.NewManualClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	q, err := inproc.OpenSpec(queue.Specs()[queue.WebhookDeliveries], inproc.Options{Clock: clock})
	if err != nil {
		panic(err)
	}
	defer q.Close(ctx)

	handle := func(ctx context.Context, m queue.Message) error {
		fmt.Printf("attempt %d of %s\n", m.Attempt, m.Body)
		switch string(m.Body) {
		case "flaky":
			if m.Attempt == 1 {
				return queue.RetryAfter(5*time.Minute, errors.New("receiver answered 503"))
			}
			return nil // delivered: the message is deleted
		default:
			return errors.New("receiver unreachable") // back after the visibility timeout
		}
	}
	if err := q.Start(handle, 1); err != nil {
		panic(err)
	}

	if err := q.Send(ctx, queue.Outgoing{Body: []byte("flaky")}); err != nil {
		panic(err)
	}
	q.Settle(ctx)
	clock.Advance(5 * time.Minute)
	q.Settle(ctx)

	q.Send(ctx, queue.Outgoing{Body: []byte("broken")})
	for range 4 {
		q.Settle(ctx)
		clock.Advance(3 * time.Minute) // the webhook-deliveries queue's visibility timeout
	}
	q.Settle(ctx)
	for _, m := range q.DeadLetter().List() {
		fmt.Printf("dead letter: %s after %d attempts\n", m.Body, m.Attempt)
	}
	// Output:
	// attempt 1 of flaky
	// attempt 2 of flaky
	// attempt 1 of broken
	// attempt 2 of broken
	// attempt 3 of broken
	// attempt 4 of broken
	// dead letter: broken after 4 attempts
}
