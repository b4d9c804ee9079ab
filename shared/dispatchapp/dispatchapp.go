// Package dispatchapp is the webhook-dispatcher Lambda, wired from the configuration: the fan-out and the
// delivery attempts on their SQS event sources, and the scheduled outbox sweep.
package dispatchapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
)

// Lambda is the entry point of the webhook-dispatcher function: SQS batches of the events queue (fan-out)
// and of the webhook-deliveries queue (attempts), told apart by their queue, and the scheduled outbox
// sweep (an EventBridge "Scheduled Event").
type Lambda struct {
	events, deliveries   string // queue names
	onEvents, onDelivery sqs.LambdaHandler
	relay                *webhooks.Relay
	log                  *slog.Logger
}

// NewLambda builds the dispatcher function from the environment. It makes no network call.
func NewLambda(logger *slog.Logger, now func() time.Time) (*Lambda, error) {
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		return nil, err
	}
	if cfg.EventsQueueURL == "" || cfg.WebhookDeliveriesQueueURL == "" {
		return nil, errors.New("CSS_EVENTS_QUEUE_URL and CSS_WEBHOOK_DELIVERIES_QUEUE_URL are required")
	}
	schedule, err := webhooks.CheckSchedule(cfg.WebhookRetrySchedule)
	if err != nil {
		return nil, err
	}
	table, err := dynamo.Open(cfg.DynamoDBEndpoint, cfg.Region, cfg.TableName)
	if err != nil {
		return nil, err
	}
	st := store.New(table, store.WithClock(now))
	client, err := sqs.NewClient(cfg.SQSEndpoint, cfg.Region)
	if err != nil {
		return nil, err
	}
	deliveries := sqs.NewSender(client, cfg.WebhookDeliveriesQueueURL)
	cipher, err := sealkey.Cipher(cfg)
	if err != nil {
		return nil, err
	}
	if cipher == nil {
		return nil, errors.New("CSS_WEBHOOK_KEY_SECRET_ARN (or CSS_WEBHOOK_KEY) is required")
	}
	d, err := webhooks.NewDispatcher(webhooks.DispatcherConfig{
		Store: st, Deliveries: deliveries, Cipher: cipher, Schedule: schedule, UserAgent: webhooks.UserAgent(cfg.Version), Now: now, Log: logger,
		Poster: httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: cfg.WebhookAllowLoopback}}),
	})
	if err != nil {
		return nil, err
	}
	events, err := queueName(cfg.EventsQueueURL)
	if err != nil {
		return nil, err
	}
	deliveriesName, err := queueName(cfg.WebhookDeliveriesQueueURL)
	if err != nil {
		return nil, err
	}
	return &Lambda{
		events: events, deliveries: deliveriesName, log: logger,
		onEvents:   sqs.Handler(client, d.HandleEvent, logger),
		onDelivery: sqs.Handler(client, d.HandleDelivery, logger),
		relay:      webhooks.NewRelay(st, sqs.NewSender(client, cfg.EventsQueueURL), deliveries, now, logger),
	}, nil
}

// queueName is the last path segment of a queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>).
func queueName(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || path.Base(u.Path) == "" || path.Base(u.Path) == "/" {
		return "", fmt.Errorf("queue URL %q names no queue", raw)
	}
	return path.Base(u.Path), nil
}

// SweepResult answers a scheduled sweep.
type SweepResult struct {
	Sent int `json:"sent"`
}

// Handle serves one invocation.
func (l *Lambda) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var probe struct {
		Records []struct {
			EventSource    string `json:"eventSource"`
			EventSourceARN string `json:"eventSourceARN"`
		} `json:"Records"`
		DetailType string `json:"detail-type"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("webhook dispatcher: unreadable invocation: %w", err)
	}
	switch {
	case len(probe.Records) > 0:
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("webhook dispatcher: SQS event: %w", err)
		}
		// An event source mapping reads one queue: a batch comes from one queue.
		arn := probe.Records[0].EventSourceARN
		switch arn[strings.LastIndex(arn, ":")+1:] {
		case l.events:
			return l.onEvents(ctx, ev)
		case l.deliveries:
			return l.onDelivery(ctx, ev)
		}
		return nil, fmt.Errorf("webhook dispatcher: records of an unknown queue %s", arn)
	case probe.DetailType == "Scheduled Event":
		n, err := l.relay.Sweep(ctx)
		if n > 0 {
			l.log.InfoContext(ctx, "outbox sweep", "sent", n)
		}
		return SweepResult{Sent: n}, err
	}
	return nil, errors.New("webhook dispatcher: neither SQS records nor a scheduled event")
}
