package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
)

// router is the dispatcher's entry point: SQS batches of the events queue (fan-out) and of the
// webhook-deliveries queue (attempts), told apart by their queue, and the scheduled outbox sweep (an
// EventBridge "Scheduled Event").
type router struct {
	events, deliveries   string // queue names
	onEvents, onDelivery sqs.LambdaHandler
	relay                *webhooks.Relay
	log                  *slog.Logger
}

func newRouter(env wire.Env, eventsURL string, onEvents sqs.LambdaHandler, deliveriesURL string, onDelivery sqs.LambdaHandler,
	relay *webhooks.Relay) (*router, error) {
	events, err := queueName(eventsURL)
	if err != nil {
		return nil, err
	}
	deliveries, err := queueName(deliveriesURL)
	if err != nil {
		return nil, err
	}
	return &router{events: events, deliveries: deliveries, onEvents: onEvents, onDelivery: onDelivery, relay: relay,
		log: env.Log}, nil
}

// queueName is the last path segment of a queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>).
func queueName(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || path.Base(u.Path) == "" || path.Base(u.Path) == "/" {
		return "", fmt.Errorf("queue URL %q names no queue", raw)
	}
	return path.Base(u.Path), nil
}

// sweepResult answers a scheduled sweep.
type sweepResult struct {
	Sent int `json:"sent"`
}

// Handle serves one invocation.
func (l *router) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var probe struct {
		Records []struct {
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
		return sweepResult{Sent: n}, err
	}
	return nil, errors.New("webhook dispatcher: neither SQS records nor a scheduled event")
}
