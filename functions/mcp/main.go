// Command mcp is the Lambda serving the MCP endpoint ({app_url}/mcp, decision 34): the tools, resources and
// prompts of shared/mcp, which run every group's operations in process, for an API key, a session token or
// an access token of the sign-in (decision 55; the signin function issues them).
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("mcp", build) }

// build makes the handler: every operation of the API (no Functions: all of them) over the table, with the
// generation queue the generation tools run their jobs on, served as MCP's streamable HTTP at /mcp only
// (only this function links the MCP SDK). Access tokens are checked with one table read
// (mcpgrant.Verifier), without the authorization server's library.
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
	api, err := wire.API(env, wire.APIConfig{
		Store: st, Auth: authn,
		Relay:      queues.EventsRelay(env, st, sqsClient),
		Generation: generations,
	})
	if err != nil {
		return nil, err
	}
	tokens := mcpgrant.Verifier{Records: st, Keys: creds, Resource: mcpgrant.Resource(env.Config.PublicURL), Now: env.Now}
	endpoint, err := mcp.ForAPI(api, authn, env.Now, env.Log, mcp.AllowedOrigins(env.Config.MCPAllowedOrigins),
		mcp.AccessTokens(tokens), mcp.ResourceMetadata(mcpgrant.ResourceMetadataURL(env.Config.PublicURL)))
	if err != nil {
		return nil, err
	}
	return wire.HTTP(endpoint), nil
}
