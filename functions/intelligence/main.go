// Command intelligence is the Lambda serving the Intelligence operations of the API (research, performance,
// refine): the operations whose x-css-function is intelligence, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/wire"
)

func main() { wire.Start("intelligence", build) }

// build makes the handler: the table, the generation queue refine runs its job on, and the research queue
// POST /research sends a run's first step to (the research worker runs it).
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
	research, err := wire.ResearchQueue(env, queues)
	if err != nil {
		return nil, err
	}
	api, err := rest.Handler(rest.Config{
		Config: env.Config, Store: st, Auth: authn, Log: env.Log, Now: env.Now, RequestID: wire.RequestID,
		Functions:     []contract.Function{contract.FunctionIntelligence},
		Relay:         wire.EventsRelay(env, st, queues),
		Generation:    generations,
		ResearchQueue: research,
	})
	if err != nil {
		return nil, err
	}
	return wire.HTTP(api), nil
}
