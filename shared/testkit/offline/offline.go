// Package offline gathers the offline stand-ins the local stack and tests offer where nothing real is
// configured: the text model (textmodel), the image model (imagemodel) and the research sample
// (youtubesample). They stay out of production: no Lambda links them (functions/links_test.go), and a
// Lambda configured for one fails at start.
package offline

import (
	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/testkit/offline/imagemodel"
	"github.com/creatorstrategy/css/shared/testkit/offline/textmodel"
)

// Models offers the offline text and image models to provider.Models and provider.Text (through
// provider.WithOffline).
func Models() provider.Offline {
	return provider.Offline{
		Text:       func() ai.Model { return textmodel.New() },
		Images:     func() (ai.ImageModel, error) { return imagemodel.New() },
		Name:       textmodel.Name,
		ImagesName: imagemodel.ModelName,
	}
}
