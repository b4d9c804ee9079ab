// Command intelligence is the Lambda serving the Intelligence operations of the API (research, performance,
// refine): the operations whose x-css-function is intelligence, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("intelligence", build) }

// build makes the handler: the table, the generation queue refine runs its job on, and the research queue
// POST /research sends a run's first step to (the research worker runs it).
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
	research, err := queues.Research(env, sqsClient)
	if err != nil {
		return nil, err
	}
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions:     []contract.Function{contract.FunctionIntelligence},
		Relay:         queues.EventsRelay(env, st, sqsClient),
		Generation:    generations,
		ResearchQueue: research,
	})
}
