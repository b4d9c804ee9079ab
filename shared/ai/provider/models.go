package provider

import (
	"context"
	"log/slog"
	"strings"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/bedrock"
	"github.com/creatorstrategy/css/shared/ai/bedrockimage"
	"github.com/creatorstrategy/css/shared/ai/openai"
	"github.com/creatorstrategy/css/shared/ai/retry"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/health"
)

// Set is the models generation runs on, and their names as /health reports them.
type Set struct {
	Text   ai.Model // both roles: the adapters pick the model by the request's role
	Images ai.ImageModel
	// Names of what is configured; the offline ones say "offline".
	TextName, GradingName, ImagesName string
	Offline                           bool // the text model is the offline one
	// Probe asks the text model's server whether it is up and serves the configured models (an
	// OpenAI-compatible server's model list); nil when there is nothing to ask without spending tokens.
	// Callers cache it (health.ProbeCache).
	Probe func(ctx context.Context) health.Probe
}

// probe turns an OpenAI-compatible server's model list into a health probe.
func probe(m *openai.Model) func(ctx context.Context) health.Probe {
	return func(ctx context.Context) health.Probe {
		r := m.Probe(ctx)
		switch {
		case r.Err != nil:
			return health.Probe{State: health.Down, Reason: r.Err.Error()}
		case r.Busy:
			return health.Probe{State: health.OK, Reason: "busy: the model server is answering another request"}
		case len(r.Missing) > 0:
			return health.Probe{State: health.Degraded, Reason: "the model server does not serve " + strings.Join(r.Missing, ", ")}
		}
		return health.Probe{State: health.OK}
	}
}

// Models builds the configured text and image models: Bedrock's image model with Bedrock text (the cloud),
// otherwise the offline image model when WithOffline offers one (an OpenAI-compatible server draws no
// pictures), and none without it: the image tools then fail with "no image model is configured".
func Models(cfg config.Config, log *slog.Logger, opts ...Option) (Set, error) {
	text, err := Text(cfg, log, opts...)
	if err != nil {
		return Set{}, err
	}
	s := Set{Text: text, TextName: cfg.GenerationModel, GradingName: cfg.GradingModel}
	if m, ok := text.(*openai.Model); ok {
		s.Probe = probe(m)
	}
	off := apply(opts).offline
	if cfg.ModelProvider == config.ProviderOffline {
		s.TextName, s.GradingName, s.Offline = off.Name+" (no model configured)", off.Name+" (no model configured)", true
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
	if off == nil || off.Images == nil {
		return s, nil
	}
	img, err := off.Images()
	if err != nil {
		return Set{}, err
	}
	s.Images, s.ImagesName = img, off.ImagesName+" preview"
	return s, nil
}
