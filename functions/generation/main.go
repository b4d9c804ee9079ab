// Command generation is the Lambda serving the Generation operations of the API (every /generate tool, the
// ToolRuns): the operations whose x-css-function is generation, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/wire"
)

func main() { wire.Start("generation", build) }

// build makes the handler: the table, and the generation queue each tool call runs as a job on (the
// generation worker runs it).
func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	authn, err := wire.Authenticator(env, st)
	if err != nil {
		return nil, err
	}
	queues, err := wire.SQS(env)
	if err != nil {
		return nil, err
	}
	generations, err := wire.GenerationSubmitter(env, st, queues)
	if err != nil {
		return nil, err
	}
	api, err := rest.Handler(rest.Config{
		Config: env.Config, Store: st, Auth: authn, Log: env.Log, Now: env.Now, RequestID: wire.RequestID,
		Functions:  []contract.Function{contract.FunctionGeneration},
		Relay:      wire.EventsRelay(env, st, queues),
		Generation: generations,
	})
	if err != nil {
		return nil, err
	}
	return wire.HTTP(api), nil
}
