// Command integrations is the Lambda serving the Integrations operations of the API (the unversioned /api
// paths): the operations whose x-css-function is integrations, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/research"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/connectionwire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("integrations", build) }

// build makes the handler: the table, the generation queue POST /api/generate runs its job on, and the
// YouTube connection (decision 42: its refresh tokens sealed with their own key, decision 50; the OAuth
// client's secret read once from Secrets Manager).
func build(ctx context.Context, env wire.Env) (wire.APIHandler, error) {
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
	relay := queues.EventsRelay(env, st, sqsClient)
	// A channel is synced when it connects (decision 43): the connection queues the sync on the research
	// queue, which the research worker consumes.
	var sync connection.SyncRequester
	if len(env.Config.Research.Google.Missing()) == 0 {
		runs, err := queues.Research(env, sqsClient)
		if err != nil {
			return nil, err
		}
		clock, err := research.NewClock()
		if err != nil {
			return nil, err
		}
		if sync, err = ownperf.NewService(ownperf.Config{Repo: st, Queue: runs, Daily: env.Config.Research.Daily(),
			Clock: clock, Now: env.Now, Log: env.Log}); err != nil {
			return nil, err
		}
	}
	conns, err := connectionwire.FromConfig(ctx, env.Config, st, webhooks.NewEmitter(st, relay, env.Now, st.NewID), sync, env.Now, env.Log)
	if err != nil {
		return nil, err
	}
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions:   []contract.Function{contract.FunctionIntegrations},
		Relay:       relay,
		Generation:  generations,
		Connections: conns,
	})
}
