// Command memory is the Lambda serving the Memory operations of the API (creator notes): the operations
// whose x-css-function is memory, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/wire"
)

func main() { wire.Start("memory", build) }

// build makes the handler: the table (and the events queue, as every API function).
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
	api, err := rest.Handler(rest.Config{
		Config: env.Config, Store: st, Auth: authn, Log: env.Log, Now: env.Now, RequestID: wire.RequestID,
		Functions: []contract.Function{contract.FunctionMemory},
		Relay:     wire.EventsRelay(env, st, queues),
	})
	if err != nil {
		return nil, err
	}
	return wire.HTTP(api), nil
}
