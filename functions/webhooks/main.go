// Command webhooks is the Lambda serving the Webhooks operations of the API (registrations and their
// delivery log): the operations whose x-css-function is webhooks, authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("webhooks", build) }

// build makes the handler: the table, the events queues test deliveries and redeliveries go out on, and the
// cipher that seals each new signing secret (its key read from Secrets Manager on first use: only this
// function and the dispatcher link that client).
func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, authn, err := wire.StoreAndAuth(env)
	if err != nil {
		return nil, err
	}
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	cipher, err := sealkey.Cipher(env.Config)
	if err != nil {
		return nil, err
	}
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions:    []contract.Function{contract.FunctionWebhooks},
		Relay:        queues.EventsRelay(env, st, sqsClient),
		SecretCipher: cipher,
	})
}
