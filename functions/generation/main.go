// Command generation is the Lambda serving the Generation operations of the API (every /generate tool, the
// ToolRuns): the operations whose x-css-function is generation, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/connectionwire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("generation", build) }

// build makes the handler: the table, the generation queue each tool call runs as a job on (the
// generation worker runs it), and the transcripts of the connected channels' own videos (decision 41).
func build(ctx context.Context, env wire.Env) (wire.APIHandler, error) {
	st, authn, err := wire.StoreAndAuth(env)
	if err != nil {
		return nil, err
	}
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	relay := queues.EventsRelay(env, st, sqsClient)
	transcripts, err := connectionwire.TranscriptsFromConfig(ctx, env.Config, st,
		webhooks.NewEmitter(st, relay, env.Now, st.NewID), env.Now, env.Log)
	if err != nil {
		return nil, err
	}
	generations, err := queues.GenerationSubmitter(env, st, sqsClient, func(c *generation.Config) {
		if transcripts != nil {
			c.Transcripts = transcripts
		}
	})
	if err != nil {
		return nil, err
	}
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions:  []contract.Function{contract.FunctionGeneration},
		Relay:      relay,
		Generation: generations,
	})
}
