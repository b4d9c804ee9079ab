package wire

import (
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/health"
)

// ModelStatus is what /health reports of the models in a function that serves health but runs no model
// (the utility function): the configured ids, without a probe. Probing Bedrock would be a paid model call
// or another SDK client in a function kept small for its cold start, so its access shows in the first
// generation instead; the local stack, which runs the model, probes an OpenAI-compatible server. A
// Lambda's OpenAI-compatible provider draws no pictures, so images are degraded there.
func ModelStatus(cfg config.Config) APIModels {
	st := APIModels{AI: health.OK, Images: health.OK,
		Models: health.Models{Text: cfg.GenerationModel, Grading: cfg.GradingModel}}
	if cfg.ModelProvider != config.ProviderBedrock {
		st.Images = health.Degraded
	}
	return st
}
