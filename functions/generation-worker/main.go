// Command generation-worker is the Lambda consuming the generation queue: each record of a batch is one
// generation job (shared/generation.Generator.Handle); failed records are reported apart (partial batch
// response) so the queue retries only them, and after the queue's last attempt a job goes to the
// dead-letter queue.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/ai/s3images"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("generation-worker", build) }

// build makes the handler: the table, the text, grading and image models the configuration names, the
// images bucket, the niche's outliers from the stored research (read only: no research queue) and the
// events queue a generation's events go out on.
func build(_ context.Context, env wire.Env) (sqs.LambdaHandler, error) {
	cfg := env.Config
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	models, err := provider.Models(cfg, env.Log)
	if err != nil {
		return nil, err
	}
	// Without a bucket the image tools fail with GENERATION_FAILED ("no image store") and the text tools
	// work; the template always sets one, and the API's URL that serves its pictures (/files/ on utility).
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
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	stored, err := research.NewService(st, nil, research.ConfigFrom(cfg.Research), env.Now)
	if err != nil {
		return nil, err
	}
	gen := generation.New(generation.Config{
		Emitter: webhooks.NewEmitter(st, queues.EventsRelay(env, st, sqsClient), env.Now, st.NewID),
		Runs:    st, Data: generation.ResearchData{ChannelData: st, Research: stored}, Idempotency: st, Quota: st, Backlog: st, Outliers: generation.ResearchOutliers{Research: stored},
		Own:    ownperf.BriefSource{Data: st, Now: env.Now},
		Models: generation.Models{Writer: models.Text, Grader: models.Text, Images: models.Images}, Answers: schemacheck.New(),
		Images: images, Logger: env.Log, MonthlyQuota: cfg.MonthlyGenerations, PromptBudget: cfg.PromptBudget, ContextWindow: cfg.ModelContextTokens,
		MaxAttempts: queue.Specs()[queue.Generation].MaxReceiveCount, NewID: st.NewID, Deadline: cfg.GenerationDeadline,
	})
	return sqs.Handler(sqsClient, gen.Handle, env.Log), nil
}
