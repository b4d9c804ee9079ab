// Package generationworker runs generation jobs as an SQS-triggered Lambda: each record of a batch is one
// job (shared/generation.Generator.Handle), failed records are reported apart (partial batch response) so
// the queue retries only them, and after the queue's last attempt a job goes to the dead-letter queue.
package generationworker

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/ai/s3images"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/eventsapp"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/researchapp"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Run serves generation jobs until the Lambda runtime stops the process.
func Run() {
	logger := config.Logger(os.Stdout).With("function", "generation-worker")
	h, err := Handler(context.Background(), logger)
	if err != nil {
		logger.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}

// Handler builds the worker from the environment. It makes no network call.
func Handler(_ context.Context, logger *slog.Logger) (sqs.LambdaHandler, error) {
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		return nil, err
	}
	table, err := dynamo.Open(cfg.DynamoDBEndpoint, cfg.Region, cfg.TableName)
	if err != nil {
		return nil, err
	}
	st := store.New(table)
	models, err := provider.Models(cfg, logger)
	if err != nil {
		return nil, err
	}
	// Without a bucket the image tools fail with GENERATION_FAILED ("no image store") and the text tools
	// work; the template always sets one, and the API's URL that serves its pictures (/files/ on the
	// utility function).
	var images ai.ImageStore
	if cfg.ImagesBucket != "" {
		client, err := s3images.NewClient(cfg.Region, cfg.S3Endpoint)
		if err != nil {
			return nil, err
		}
		if images, err = s3images.New(client, cfg.ImagesBucket, cfg.PublicURL); err != nil {
			return nil, err
		}
	}
	client, err := sqs.NewClient(cfg.SQSEndpoint, cfg.Region)
	if err != nil {
		return nil, err
	}
	// A generation's events go through the outbox and out on the events queue at once.
	relay, err := eventsapp.SQSRelay(cfg, st, logger)
	if err != nil {
		return nil, err
	}
	// The niche's outliers from the channel's stored research (read only: no research queue).
	res, err := researchapp.Service(cfg, st, nil, time.Now)
	if err != nil {
		return nil, err
	}
	gen := generation.New(generation.Config{
		Emitter: webhooks.NewEmitter(st, relay, time.Now, st.NewID),
		Runs:    st, Data: st, Idempotency: st, Quota: st, Backlog: st, Outliers: generation.ResearchOutliers{Research: res},
		Models: generation.Models{Writer: models.Text, Grader: models.Text, Images: models.Images}, Answers: schemacheck.New(),
		Images: images, Logger: logger, MonthlyQuota: cfg.MonthlyGenerations, PromptBudget: cfg.PromptBudget,
		MaxAttempts: queue.Specs()[queue.Generation].MaxReceiveCount, NewID: st.NewID,
	})
	return sqs.Handler(client, gen.Handle, logger), nil
}
