// Command utility is the Lambda serving the Utility operations of the API (health, the OpenAPI document,
// the API reference page):
// the operations whose x-css-function is utility, and the generated pictures at /files/<key> (a redirect
// to a short-lived presigned GET of the images bucket).
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/ai/s3images"
	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire"
)

func main() { wire.Start("utility", build) }

// build makes the handler: the table (health probes it), and the pictures' handler over the images bucket
// in front of the operations (only this function links the S3 presigner).
func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, authn, err := wire.StoreAndAuth(env)
	if err != nil {
		return nil, err
	}
	api, err := wire.API(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions: []contract.Function{contract.FunctionUtility},
		Docs:      apidocs.New(),
		// The configured model ids, not probed here (wire.ModelStatus says why).
		ModelStatus: wire.ModelStatus(env.Config),
	})
	if err != nil {
		return nil, err
	}
	files, err := s3images.FilesHandler(env.Config, env.Log)
	if err != nil {
		return nil, err
	}
	return wire.HTTP(wire.ServeFiles(files, api)), nil
}
