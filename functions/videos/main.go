// Command videos is the Lambda serving the Videos operations of the API (the backlog of ideas, the pipeline
// of committed videos): the operations whose x-css-function is videos, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("videos", build) }

// build makes the handler: the table; the events a commit or a status change emits go out on the events
// queue.
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
		Functions: []contract.Function{contract.FunctionVideos},
		Relay:     queues.EventsRelay(env, st, sqsClient),
	})
}
