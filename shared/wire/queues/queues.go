// Package queues is the SQS side of the functions' setup (shared/wire's steps for the functions that send
// on a queue): the client, the events relay, the generation submitter and the research queue's sender.
// It is apart from shared/wire so that a function that sends nothing (keys, memory, utility) does not link
// the SQS SDK, whose package initialisation (its endpoint table) every start of such a function would pay.
package queues

import (
	"errors"

	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
)

// Client is the client of the function's queues (SQS, or CSS_SQS_ENDPOINT's emulator): one per function,
// shared by its senders and its queue handlers.
func Client(env wire.Env) (*awssqs.Client, error) {
	return sqs.NewClient(env.Config.SQSEndpoint, env.Config.Region)
}

// EventsRelay publishes the events a function writes into the outbox on the events queue as soon as they
// commit, and queues test deliveries and redeliveries on the webhook-deliveries queue. It is nil when the
// configuration names neither queue: the events then wait in the outbox for the dispatcher's sweep.
func EventsRelay(env wire.Env, st *store.Store, client *awssqs.Client) *webhooks.Relay {
	cfg := env.Config
	if cfg.EventsQueueURL == "" || cfg.WebhookDeliveriesQueueURL == "" {
		return nil
	}
	return webhooks.NewRelay(st, sqs.NewSender(client, cfg.EventsQueueURL), sqs.NewSender(client, cfg.WebhookDeliveriesQueueURL),
		env.Now, env.Log)
}

// GenerationSubmitter is the generation side of an API function: it queues jobs on the generation queue and
// waits for their runs; the generation worker runs them. with adds what only some functions link (the
// transcript source of the generation function).
func GenerationSubmitter(env wire.Env, st *store.Store, client *awssqs.Client, with ...func(*generation.Config)) (*generation.Generator, error) {
	cfg := env.Config
	if cfg.GenerationQueueURL == "" {
		return nil, errors.New("CSS_GENERATION_QUEUE_URL: required by the functions that run generations")
	}
	c := generation.Config{
		Runs: st, Data: st, Idempotency: st, Quota: st, Backlog: st, Queue: sqs.NewSender(client, cfg.GenerationQueueURL),
		Logger: env.Log, MonthlyQuota: cfg.MonthlyGenerations, PromptBudget: cfg.PromptBudget, ContextWindow: cfg.ModelContextTokens, Now: env.Now, NewID: st.NewID,
	}
	for _, w := range with {
		w(&c)
	}
	return generation.New(c), nil
}

// Research is the sender of the research queue, where a research run's steps go (POST /research, the
// scheduler, the worker's next steps).
func Research(env wire.Env, client *awssqs.Client) (queue.Sender, error) {
	if env.Config.Research.QueueURL == "" {
		return nil, errors.New("CSS_RESEARCH_QUEUE_URL: required by the functions that start or run research")
	}
	return sqs.NewSender(client, env.Config.Research.QueueURL), nil
}
