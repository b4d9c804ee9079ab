// Command planning is the Lambda serving the Planning operations of the API (the weekly schedule, content
// series): the operations whose x-css-function is planning, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("planning", build) }

// build makes the handler: the table; the events an assignment emits go out on the events queue.
func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, authn, err := wire.StoreAndAuth(env)
	if err != nil {
		return nil, err
	}
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions: []contract.Function{contract.FunctionPlanning},
		Relay:     queues.EventsRelay(env, st, sqsClient),
	})
}
