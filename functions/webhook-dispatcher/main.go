// Command webhook-dispatcher is the Lambda of events and webhooks: it fans events out (events queue),
// attempts deliveries (webhook-deliveries queue) and sweeps the outbox (an EventBridge schedule). The logic
// is in shared/webhooks; router.go tells the three invocations apart.
package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("webhook-dispatcher", build) }

// build makes the handler: the table, both queues, the cipher that opens the signing secrets (its key read
// from Secrets Manager on first use), the retry schedule checked against the deliveries queue, and the
// receivers' HTTP client with its address check.
func build(_ context.Context, env wire.Env) (func(context.Context, json.RawMessage) (any, error), error) {
	cfg := env.Config
	if cfg.EventsQueueURL == "" || cfg.WebhookDeliveriesQueueURL == "" {
		return nil, errors.New("CSS_EVENTS_QUEUE_URL and CSS_WEBHOOK_DELIVERIES_QUEUE_URL are required")
	}
	schedule, err := webhooks.CheckSchedule(cfg.WebhookRetrySchedule)
	if err != nil {
		return nil, err
	}
	st, err := wire.Store(env, store.WithClock(env.Now))
	if err != nil {
		return nil, err
	}
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	cipher, err := sealkey.Cipher(cfg)
	if err != nil {
		return nil, err
	}
	if cipher == nil {
		return nil, errors.New("CSS_WEBHOOK_KEY_SECRET_ARN (or CSS_WEBHOOK_KEY) is required")
	}
	deliveries := sqs.NewSender(sqsClient, cfg.WebhookDeliveriesQueueURL)
	d, err := webhooks.NewDispatcher(webhooks.DispatcherConfig{
		Store: st, Deliveries: deliveries, Cipher: cipher, Schedule: schedule, UserAgent: webhooks.UserAgent(cfg.Version),
		Now: env.Now, Log: env.Log,
		Poster: httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: cfg.WebhookAllowLoopback}}),
	})
	if err != nil {
		return nil, err
	}
	r, err := newRouter(env, cfg.EventsQueueURL, sqs.Handler(sqsClient, d.HandleEvent, env.Log),
		cfg.WebhookDeliveriesQueueURL, sqs.Handler(sqsClient, d.HandleDelivery, env.Log),
		webhooks.NewRelay(st, sqs.NewSender(sqsClient, cfg.EventsQueueURL), deliveries, env.Now, env.Log))
	if err != nil {
		return nil, err
	}
	return r.Handle, nil
}
