package provider

import (
	"log/slog"

	"github.com/creatorstrategy/css/infra/local/offline/imagemodel"
	"github.com/creatorstrategy/css/infra/local/offline/textmodel"
	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/bedrock"
	"github.com/creatorstrategy/css/shared/ai/bedrockimage"
	"github.com/creatorstrategy/css/shared/ai/retry"
	"github.com/creatorstrategy/css/shared/config"
)

// Set is the models generation runs on, and their names as /health reports them.
type Set struct {
	Text   ai.Model // both roles: the adapters pick the model by the request's role
	Images ai.ImageModel
	// Names of what is configured; the offline ones say "offline".
	TextName, GradingName, ImagesName string
	Offline                           bool // the text model is the offline one
}

// Models builds the configured text and image models: Bedrock's image model with Bedrock text (the cloud),
// the offline image model otherwise (an OpenAI-compatible server draws no pictures).
func Models(cfg config.Config, log *slog.Logger) (Set, error) {
	text, err := Text(cfg, func() ai.Model { return textmodel.New() }, log)
	if err != nil {
		return Set{}, err
	}
	s := Set{Text: text, TextName: cfg.GenerationModel, GradingName: cfg.GradingModel}
	if cfg.ModelProvider == config.ProviderOffline {
		s.TextName, s.GradingName, s.Offline = textmodel.Name+" (no model configured)", textmodel.Name+" (no model configured)", true
	}
	if cfg.ModelProvider == config.ProviderBedrock {
		client, err := bedrock.NewClient(cfg.ImageRegion, cfg.BedrockEndpoint)
		if err != nil {
			return Set{}, err
		}
		s.Images = bedrockimage.New(client, cfg.ImageModel, bedrockimage.Options{Retry: retry.Policy{MaxAttempts: cfg.ModelMaxAttempts}, Log: log})
		s.ImagesName = cfg.ImageModel
		return s, nil
	}
	img, err := imagemodel.New()
	if err != nil {
		return Set{}, err
	}
	s.Images, s.ImagesName = img, imagemodel.ModelName+" preview"
	return s, nil
}
