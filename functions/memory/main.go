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
	st, authn, err := wire.StoreAndAuth(env)
	if err != nil {
		return nil, err
	}
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions: []contract.Function{contract.FunctionMemory},
	})
}
