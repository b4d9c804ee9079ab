// Command mcp is the Lambda serving the MCP endpoint ({app_url}/mcp, decision 34): the tools, resources and
// prompts of shared/mcp, which run every group's operations in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("mcp", build) }

// build makes the handler: every operation of the API (no Functions: all of them) over the table, with the
// generation queue the generation tools run their jobs on, served as MCP's streamable HTTP at /mcp only
// (only this function links the MCP SDK).
func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, authn, err := wire.StoreAndAuth(env)
	if err != nil {
		return nil, err
	}
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
	endpoint, err := mcp.ForAPI(api, authn, env.Now, env.Log, mcp.AllowedOrigins(env.Config.MCPAllowedOrigins))
	if err != nil {
		return nil, err
	}
	return wire.HTTP(endpoint), nil
}
