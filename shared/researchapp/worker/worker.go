// Package worker wires the research worker: the source the configuration names (the YouTube Data API
// with its key, or the offline sample) and the pipeline that handles the research queue's messages, in
// the cloud as the Lambda consuming ResearchQueue, locally on the in-process queue.
package worker

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/creatorstrategy/css/shared/ai"
	aioffline "github.com/creatorstrategy/css/shared/ai/offline"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/eventsapp"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/offline"
	"github.com/creatorstrategy/css/shared/researchapp"
	"github.com/creatorstrategy/css/shared/ssmparam"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/youtube"
)

// ParamReader reads a SecureString parameter (ssmparam.Read over a client).
type ParamReader func(ctx context.Context, name string) (config.Secret, error)

// ErrNoKey: the YouTube source is configured without a key.
var ErrNoKey = errors.New("research: the youtube source needs an API key: set CSS_YOUTUBE_API_KEY (locally), " +
	"CSS_YOUTUBE_API_KEY_PARAM (the SSM SecureString parameter holding it, in the cloud), or CSS_RESEARCH_SOURCE=offline")

// Source returns the source the configuration names. The YouTube key comes from CSS_YOUTUBE_API_KEY or,
// when that is empty, from the SSM parameter CSS_YOUTUBE_API_KEY_PARAM names, read once here through
// params. The key is never logged.
func Source(ctx context.Context, cfg config.Config, params ParamReader, now func() time.Time) (research.Source, error) {
	if cfg.Research.Source == config.SourceOffline {
		return offline.New(now), nil
	}
	key := cfg.Research.YouTubeAPIKey
	if key == "" && cfg.Research.YouTubeAPIKeyParam != "" && params != nil {
		var err error
		if key, err = params(ctx, cfg.Research.YouTubeAPIKeyParam); err != nil {
			return nil, err
		}
	}
	if key == "" {
		return nil, ErrNoKey
	}
	return youtube.New(ctx, youtube.Config{APIKey: key.Reveal(), Endpoint: cfg.Research.YouTubeEndpoint})
}

// Pipeline returns the research pipeline over st and src; q is the research queue the next steps go to.
// Pattern analysis and idea writing take the writers in opts (Writers: the model) and events go to
// research.WithEmitter; without them the statistics write the patterns and ideas and no event is sent.
func Pipeline(cfg config.Config, st *store.Store, src research.Source, q queue.Sender, logger *slog.Logger, opts ...research.PipelineOption) (*research.Pipeline, error) {
	opts = append([]research.PipelineOption{research.WithLogger(logger)}, opts...)
	return research.NewPipeline(st, src, q, research.ConfigFrom(cfg.Research), time.Now, opts...)
}

// Writers returns the pipeline options that analyse patterns and write ideas with the text model the
// configuration names, the one the generation worker writes with (Bedrock, an OpenAI-compatible server,
// or the offline model): generation.ResearchWriter, within the same prompt budget. Without these options
// the pipeline falls back to research.Statistics.
func Writers(cfg config.Config, logger *slog.Logger) ([]research.PipelineOption, error) {
	model, err := provider.Text(cfg, func() ai.Model { return aioffline.New() }, logger)
	if err != nil {
		return nil, err
	}
	w := &generation.ResearchWriter{Model: model, Answers: schemacheck.New(), Budget: cfg.PromptBudget, Log: logger}
	return []research.PipelineOption{research.WithPatternWriter(w), research.WithIdeaWriter(w)}, nil
}

// Handler builds the worker Lambda's handler from the environment: the research queue's SQS event source,
// each record one step of a run (partial batch failures; a RetryAfter changes the record's visibility).
func Handler(ctx context.Context, logger *slog.Logger) (sqs.LambdaHandler, error) {
	c, err := researchapp.OpenCloud()
	if err != nil {
		return nil, err
	}
	var params ParamReader
	if name := c.Config.Research.YouTubeAPIKeyParam; name != "" {
		client, err := ssmparam.NewClient(c.Config.SSMEndpoint, c.Config.Region)
		if err != nil {
			return nil, err
		}
		params = func(ctx context.Context, name string) (config.Secret, error) { return ssmparam.Read(ctx, client, name) }
	}
	src, err := Source(ctx, c.Config, params, time.Now)
	if err != nil {
		return nil, err
	}
	// Steps and completions go out through the webhooks outbox and the events queue.
	relay, err := eventsapp.SQSRelay(c.Config, c.Store, logger)
	if err != nil {
		return nil, err
	}
	events := webhooks.NewEmitter(c.Store, relay, time.Now, c.Store.NewID)
	writers, err := Writers(c.Config, logger)
	if err != nil {
		return nil, err
	}
	p, err := Pipeline(c.Config, c.Store, src, c.Queue, logger, append(writers, research.WithEmitter(events))...)
	if err != nil {
		return nil, err
	}
	logger.Info("research worker ready", "source", src.Label(), "dailyUnits", c.Config.Research.DailyUnits,
		"model", c.Config.GenerationModel)
	return sqs.Handler(c.SQS, p.Handle, logger), nil
}

// Run runs the worker Lambda until the runtime stops the process.
func Run() {
	logger := config.Logger(os.Stdout).With("function", "researchworker")
	h, err := Handler(context.Background(), logger)
	if err != nil {
		logger.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}
