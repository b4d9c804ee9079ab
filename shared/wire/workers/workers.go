// Package workers holds what the research worker builds beyond wire's steps, shared with the local stack,
// which runs that worker in process: the research source and the writers the configuration names, and the
// pipeline over them. It is apart from wire so that the API functions do not link YouTube's client, the
// model adapters or the JSON-schema engine.
package workers

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	aioffline "github.com/creatorstrategy/css/shared/ai/offline"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/research/offline"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/youtube"
)

// ParamReader reads a SecureString parameter (ssmparam.Read over a client).
type ParamReader func(ctx context.Context, name string) (config.Secret, error)

// ErrNoKey: the YouTube source is configured without a key.
var ErrNoKey = errors.New("research: the youtube source needs an API key: set CSS_YOUTUBE_API_KEY (locally), " +
	"CSS_YOUTUBE_API_KEY_PARAM (the SSM SecureString parameter holding it, in the cloud), or CSS_RESEARCH_SOURCE=offline")

// ResearchSource returns the source the configuration names. The YouTube key comes from
// CSS_YOUTUBE_API_KEY or, when that is empty, from the SSM parameter CSS_YOUTUBE_API_KEY_PARAM names, read
// once here through params. The key is never logged.
func ResearchSource(ctx context.Context, cfg config.Config, params ParamReader, now func() time.Time) (research.Source, error) {
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

// ResearchPipeline returns the research pipeline over st and src; q is the research queue the next steps go
// to. Pattern analysis and idea writing take the writers in opts (ResearchWriters) and events go to
// research.WithEmitter; without them the statistics write the patterns and ideas and no event is sent.
func ResearchPipeline(cfg config.Config, st *store.Store, src research.Source, q queue.Sender, logger *slog.Logger, opts ...research.PipelineOption) (*research.Pipeline, error) {
	opts = append([]research.PipelineOption{research.WithLogger(logger)}, opts...)
	return research.NewPipeline(st, src, q, research.ConfigFrom(cfg.Research), time.Now, opts...)
}

// ResearchWriters returns the pipeline options that analyse patterns and write ideas with the text model
// the configuration names, the one the generation worker writes with: generation.ResearchWriter, within the
// same prompt budget. Without these options the pipeline falls back to research.Statistics.
func ResearchWriters(cfg config.Config, logger *slog.Logger) ([]research.PipelineOption, error) {
	model, err := provider.Text(cfg, func() ai.Model { return aioffline.New() }, logger)
	if err != nil {
		return nil, err
	}
	w := &generation.ResearchWriter{Model: model, Answers: schemacheck.New(), Budget: cfg.PromptBudget, Log: logger}
	return []research.PipelineOption{research.WithPatternWriter(w), research.WithIdeaWriter(w)}, nil
}
