package queue

import "time"

// Spec is how one of the service's queues is configured. template.yaml declares these values for SQS
// (infra/deploy checks that they agree), and the local stack opens its in-process queues with them, so a
// message is retried and dead-lettered the same way in both.
type Spec struct {
	// Name is also the stem of the template's resources and environment variable: "webhook-deliveries" ->
	// WebhookDeliveriesQueue, WebhookDeliveriesDeadLetterQueue, CSS_WEBHOOK_DELIVERIES_QUEUE_URL.
	Name string
	// VisibilityTimeout is six times the timeout of the queue's worker function: AWS's advice for an SQS
	// event source, so that a batch whose invocation was throttled is not received again meanwhile.
	VisibilityTimeout time.Duration
	// MaxReceiveCount is the number of attempts before the message moves to the dead-letter queue.
	MaxReceiveCount int
	Retention       time.Duration
	// DeadLetterRetention is longer than Retention: a dead-lettered message keeps its original enqueue time.
	DeadLetterRetention time.Duration
}

// The service's queues.
const (
	Generation        = "generation"         // generation jobs (shared/generation), one per tool call
	Events            = "events"             // events, each fanned out to the webhooks subscribed to it
	WebhookDeliveries = "webhook-deliveries" // one message per (event, webhook): its delivery attempts
	Research          = "research"           // research runs and their steps
)

const (
	retention           = 4 * 24 * time.Hour // SQS's default
	deadLetterRetention = 14 * 24 * time.Hour
)

// Specs returns the configuration of the service's queues, by name.
func Specs() map[string]Spec {
	return map[string]Spec{
		// A generation worker works up to 6 minutes on a job; a job failing 3 times is dead.
		Generation: {Name: Generation, VisibilityTimeout: 36 * time.Minute, MaxReceiveCount: 3,
			Retention: retention, DeadLetterRetention: deadLetterRetention},
		// The webhook dispatcher runs up to 30 s. Fanning an event out is retried on transient failures.
		Events: {Name: Events, VisibilityTimeout: 3 * time.Minute, MaxReceiveCount: 5,
			Retention: retention, DeadLetterRetention: deadLetterRetention},
		// A delivery attempt takes at most 10 s, in a dispatcher of 30 s. 4 receives are the 4 attempts
		// of decision 24 (at once, then +5, +15 and +40 minutes, asked with RetryAfter).
		WebhookDeliveries: {Name: WebhookDeliveries, VisibilityTimeout: 3 * time.Minute, MaxReceiveCount: 4,
			Retention: retention, DeadLetterRetention: deadLetterRetention},
		// A research step runs up to 5 minutes (YouTube Data API pages, model calls).
		Research: {Name: Research, VisibilityTimeout: 30 * time.Minute, MaxReceiveCount: 5,
			Retention: retention, DeadLetterRetention: deadLetterRetention},
	}
}

// DeadLetterName is the name of the dead-letter queue of the queue called name.
func DeadLetterName(name string) string { return name + "-dlq" }
