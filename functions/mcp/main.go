// Command mcp is the Lambda serving the MCP endpoint ({app_url}/mcp, decision 34): the tools, resources and
// prompts of shared/mcp, which run every group's operations in process; and its sign-in (decisions 55-56,
// shared/oauth): the protected-resource and authorization-server metadata and the OAuth endpoints.
package main

import (
	"context"
	"net/http"
	"slices"

	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/oauth"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("mcp", build) }

// build makes the handler: every operation of the API (no Functions: all of them) over the table, with the
// generation queue the generation tools run their jobs on, served as MCP's streamable HTTP at /mcp, and
// the sign-in at oauth.Paths (only this function links the MCP SDK and the OAuth library).
func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	creds, err := wire.Credentials(env, st)
	if err != nil {
		return nil, err
	}
	authn := rest.BearerAuth(creds)
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	generations, err := queues.GenerationSubmitter(env, st, sqsClient)
	if err != nil {
		return nil, err
	}
	api, err := rest.Handler(rest.Config{
		Config: env.Config, Store: st, Auth: authn, Log: env.Log, Now: env.Now, RequestID: wire.RequestID,
		Relay:      queues.EventsRelay(env, st, sqsClient),
		Generation: generations,
	})
	if err != nil {
		return nil, err
	}
	cipher, err := sealkey.Cipher(env.Config)
	if err != nil {
		return nil, err
	}
	signIn := oauth.New(oauth.Config{Issuer: env.Config.PublicURL, Records: st, Keys: creds, Cipher: cipher,
		Fetch: httppost.HTTPClient(httppost.Options{Policy: webhooks.AddressPolicy{}}), Now: env.Now, Log: env.Log})
	endpoint, err := mcp.ForAPI(api, signIn.Bearer(authn), env.Now, env.Log,
		mcp.AllowedOrigins(env.Config.MCPAllowedOrigins), mcp.ResourceMetadata(signIn.ResourceMetadataURL()))
	if err != nil {
		return nil, err
	}
	oauthHandler := signIn.Handler()
	return wire.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(oauth.Paths, r.URL.Path) {
			oauthHandler.ServeHTTP(w, r)
			return
		}
		endpoint.ServeHTTP(w, r)
	})), nil
}
