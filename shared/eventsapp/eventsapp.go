// Package eventsapp wires events and webhooks from the configuration, for the Lambdas and the local stack:
// the retry schedule checked against its queue, the outbox relay over SQS, the user agent of deliveries.
// (The sealing key is in eventsapp/sealkey, the dispatcher Lambda in dispatchapp, so the API functions link
// neither Secrets Manager nor the receivers' HTTP client.)
package eventsapp

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Schedule returns the configured retry schedule, checked against the deliveries queue's spec: the queue
// must dead-letter a delivery after exactly as many receives as the schedule has attempts.
func Schedule(cfg config.Config) (webhooks.Schedule, error) {
	s := webhooks.Schedule(cfg.WebhookRetrySchedule)
	if len(s) == 0 {
		s = webhooks.DefaultSchedule
	}
	if want := queue.Specs()[queue.WebhookDeliveries].MaxReceiveCount; s.Attempts() != want {
		return nil, fmt.Errorf("CSS_WEBHOOK_RETRY_SCHEDULE: %d attempts, but the %s queue dead-letters after %d receives",
			s.Attempts(), queue.WebhookDeliveries, want)
	}
	return s, nil
}

// SQSRelay returns the relay over the SQS queues the configuration names, or nil when it names none (the
// events then wait in the outbox for the sweep of the dispatcher function).
func SQSRelay(cfg config.Config, st *store.Store, logger *slog.Logger) (*webhooks.Relay, error) {
	if cfg.EventsQueueURL == "" || cfg.WebhookDeliveriesQueueURL == "" {
		return nil, nil
	}
	client, err := sqs.NewClient(cfg.SQSEndpoint, cfg.Region)
	if err != nil {
		return nil, err
	}
	return webhooks.NewRelay(st, sqs.NewSender(client, cfg.EventsQueueURL), sqs.NewSender(client, cfg.WebhookDeliveriesQueueURL),
		time.Now, logger), nil
}

// UserAgent is what deliveries say they come from.
func UserAgent(cfg config.Config) string {
	return "css-webhooks/" + cfg.Version + " (Creator Strategy Service)"
}
