// Package provider builds the text model the configuration names (CSS_MODEL_PROVIDER). Only what runs
// generation (the generation worker, the research worker, the local stack) imports it: it links both
// network adapters, whose SDKs cost a few milliseconds of init.
//
// It links no offline stand-in: the local stack and tests offer theirs with WithOffline, and a Lambda
// configured for the offline model fails at start with ErrOfflineNotLinked.
package provider

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/bedrock"
	"github.com/creatorstrategy/css/shared/ai/openai"
	"github.com/creatorstrategy/css/shared/ai/retry"
	"github.com/creatorstrategy/css/shared/config"
)

// ErrOfflineNotLinked: the configuration asks for an offline stand-in that the caller did not offer, as in
// every Lambda.
var ErrOfflineNotLinked = errors.New("the offline stand-ins belong to the local stack (shared/testkit/offline) and no Lambda links them")

// Offline is the stand-ins the local stack (shared/testkit/offline.Models) and tests offer: the text model
// CSS_MODEL_PROVIDER=offline names, and the image model that stands beside any text model but Bedrock's.
type Offline struct {
	Text       func() ai.Model
	Images     func() (ai.ImageModel, error)
	Name       string // the text model's name ("offline")
	ImagesName string // the image model's name ("offline")
}

// Option changes what Models and Text build.
type Option func(*options)

type options struct{ offline *Offline }

// WithOffline offers the offline stand-ins; without it the configuration must name a network model.
func WithOffline(o Offline) Option { return func(opts *options) { opts.offline = &o } }

func apply(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Text returns the configured text model. The offline one is built only when the configuration names it,
// and only from what WithOffline offers.
func Text(cfg config.Config, log *slog.Logger, opts ...Option) (ai.Model, error) {
	policy := retry.Policy{MaxAttempts: cfg.ModelMaxAttempts}
	switch cfg.ModelProvider {
	case config.ProviderBedrock:
		client, err := bedrock.NewClient(cfg.Region, cfg.BedrockEndpoint)
		if err != nil {
			return nil, err
		}
		return bedrock.New(client, bedrock.Options{
			GenerationModel: cfg.GenerationModel, GradingModel: cfg.GradingModel, Retry: policy, Logger: log,
			CallTimeout: cfg.ModelTimeout,
		})
	case config.ProviderOpenAI:
		return openai.New(openai.Options{
			BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey.Reveal(),
			GenerationModel: cfg.GenerationModel, GradingModel: cfg.GradingModel, Retry: policy, Logger: log,
			Mode: openai.Mode(cfg.OpenAIStructuredOutput), CallTimeout: cfg.ModelTimeout,
		})
	case config.ProviderOffline:
		o := apply(opts).offline
		if o == nil || o.Text == nil {
			return nil, fmt.Errorf("provider: CSS_MODEL_PROVIDER=%s: %w; configure %s or %s", cfg.ModelProvider,
				ErrOfflineNotLinked, config.ProviderBedrock, config.ProviderOpenAI)
		}
		return o.Text(), nil
	}
	return nil, fmt.Errorf("provider: unknown model provider %q", cfg.ModelProvider)
}
