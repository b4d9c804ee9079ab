// Command memory is the Lambda serving the Memory operations of the API (creator notes): the operations
// whose x-css-function is memory, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire"
)

func main() { wire.Start("memory", build) }

// build makes the handler: the table (no queue: no notes operation emits an event).
func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	authn, err := wire.Authenticator(env, st)
	if err != nil {
		return nil, err
	}
	api, err := wire.NewAPI(wire.APIConfig{
		Config: env.Config, Store: st, Auth: authn, Log: env.Log, Now: env.Now, RequestID: wire.RequestID,
		Functions: []contract.Function{contract.FunctionMemory},
	})
	if err != nil {
		return nil, err
	}
	return wire.HTTP(api), nil
}
