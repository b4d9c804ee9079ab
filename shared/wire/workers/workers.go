// Package workers holds what the research worker builds beyond wire's steps, shared with the local stack,
// which runs that worker in process: the research source and the writers the configuration names, and the
// pipeline over them. It is apart from wire so that the API functions do not link YouTube's client, the
// model adapters or the JSON-schema engine.
package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/youtube"
)

// ParamReader reads a SecureString parameter (ssmparam.Read over a client).
type ParamReader func(ctx context.Context, name string) (config.Secret, error)

// ErrNoKey: the YouTube source is configured without a key.
var ErrNoKey = errors.New("research: the youtube source needs an API key: set CSS_YOUTUBE_API_KEY (locally), " +
	"CSS_YOUTUBE_API_KEY_PARAM (the SSM SecureString parameter holding it, in the cloud), " +
	"or, in the local stack, CSS_RESEARCH_SOURCE=offline")

// SourceOption offers ResearchSource what only the local stack and tests have.
type SourceOption func(*sourceOptions)

type sourceOptions struct{ sample research.Source }

// WithOfflineSample offers the offline research sample (shared/testkit/offline/youtubesample) for
// CSS_RESEARCH_SOURCE=offline. Without it that configuration fails with provider.ErrOfflineNotLinked, as
// in every Lambda.
func WithOfflineSample(sample research.Source) SourceOption {
	return func(o *sourceOptions) { o.sample = sample }
}

// ResearchSource returns the source the configuration names. The YouTube key comes from
// CSS_YOUTUBE_API_KEY or, when that is empty, from the SSM parameter CSS_YOUTUBE_API_KEY_PARAM names, read
// once here through params. The key is never logged.
func ResearchSource(ctx context.Context, cfg config.Config, params ParamReader, opts ...SourceOption) (research.Source, error) {
	if cfg.Research.Source == config.SourceOffline {
		var o sourceOptions
		for _, opt := range opts {
			opt(&o)
		}
		if o.sample == nil {
			return nil, fmt.Errorf("research: CSS_RESEARCH_SOURCE=%s: %w; configure %s with its key", cfg.Research.Source,
				provider.ErrOfflineNotLinked, config.SourceYouTube)
		}
		return o.sample, nil
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

// ResearchPipeline returns the research pipeline over st and src; q is the research queue the next steps go
// to. Pattern analysis and idea writing take the writers in opts (ResearchWriters) and events go to
// research.WithEmitter; without them the statistics write the patterns and ideas and no event is sent.
func ResearchPipeline(cfg config.Config, st *store.Store, src research.Source, q queue.Sender, logger *slog.Logger, opts ...research.PipelineOption) (*research.Pipeline, error) {
	opts = append([]research.PipelineOption{research.WithLogger(logger)}, opts...)
	return research.NewPipeline(st, src, q, research.ConfigFrom(cfg.Research), time.Now, opts...)
}

// TitleGrader is the generator the daily sync grades a reviewed title with when no title run proposed it
// (decision 52): the grading model on the channel's brief, as the title tool grades. It runs no tool.
func TitleGrader(cfg config.Config, st *store.Store, stored *research.Service, model ai.Model, now func() time.Time, logger *slog.Logger) *generation.Generator {
	return generation.New(generation.Config{Data: generation.ResearchData{ChannelData: st, Research: stored},
		Outliers: generation.ResearchOutliers{Research: stored}, Own: ownperf.BriefSource{Data: st, Now: now},
		Models: generation.Models{Writer: model, Grader: model}, Answers: schemacheck.New(),
		PromptBudget: cfg.PromptBudget, ContextWindow: cfg.ModelContextTokens, Now: now, Logger: logger})
}

// ResearchWriters returns the pipeline options that analyse patterns and write ideas with model, the text
// model the generation worker writes with: generation.ResearchWriter, within the same prompt budget. The
// local stack shares one model with generation, so what the model's adapter learnt of the server (its
// structured output form) serves both. Without these options the pipeline falls back to research.Statistics.
func ResearchWriters(model ai.Model, cfg config.Config, logger *slog.Logger) []research.PipelineOption {
	w := &generation.ResearchWriter{Model: model, Answers: schemacheck.New(), Budget: cfg.PromptBudget, Window: cfg.ModelContextTokens, Log: logger}
	return []research.PipelineOption{research.WithPatternWriter(w), research.WithIdeaWriter(w)}
}
