// Command context is the Lambda serving the Context operations of the API (niche profile and score,
// research insights, history): the operations whose x-css-function is context, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("context", build) }

// build makes the handler: the table, and the generation queue the niche score runs its job on (the
// generation worker runs it).
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
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions:  []contract.Function{contract.FunctionContext},
		Relay:      queues.EventsRelay(env, st, sqsClient),
		Generation: generations,
	})
}
