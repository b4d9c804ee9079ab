// Package provider builds the text model the configuration names (CSS_MODEL_PROVIDER). Only what runs
// generation (the generation worker, the local stack) imports it: it links both network adapters, whose
// SDKs cost a few milliseconds of init.
package provider

import (
	"fmt"
	"log/slog"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/bedrock"
	"github.com/creatorstrategy/css/shared/ai/openai"
	"github.com/creatorstrategy/css/shared/ai/retry"
	"github.com/creatorstrategy/css/shared/config"
)

// Text returns the configured text model. offline builds the offline model (its package is the
// generation side's); it is called only when the configuration names it.
func Text(cfg config.Config, offline func() ai.Model, log *slog.Logger) (ai.Model, error) {
	policy := retry.Policy{MaxAttempts: cfg.ModelMaxAttempts}
	switch cfg.ModelProvider {
	case config.ProviderBedrock:
		client, err := bedrock.NewClient(cfg.Region)
		if err != nil {
			return nil, err
		}
		return bedrock.New(client, bedrock.Options{
			GenerationModel: cfg.GenerationModel, GradingModel: cfg.GradingModel, Retry: policy, Logger: log,
		})
	case config.ProviderOpenAI:
		return openai.New(openai.Options{
			BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey.Reveal(),
			GenerationModel: cfg.GenerationModel, GradingModel: cfg.GradingModel, Retry: policy, Logger: log,
		})
	case config.ProviderOffline:
		if offline == nil {
			return nil, fmt.Errorf("provider: no offline model to offer")
		}
		return offline(), nil
	}
	return nil, fmt.Errorf("provider: unknown model provider %q", cfg.ModelProvider)
}
