// Command keys is the Lambda serving the Keys operations of the API (API key management, session tokens
// only), GET /me and the channel's MCP sign-ins (decision 55): the operations whose x-css-function is keys,
// authenticated in process.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/wire"
)

func main() { wire.Start("keys", build) }

// build makes the handler: the table (no queue: no keys operation emits an event). Key management takes a
// session token only, so the identity provider's key set is fetched while the function starts: the
// verifier comes first, so the fetch overlaps the rest of the start.
func build(ctx context.Context, env wire.Env) (wire.APIHandler, error) {
	tokens, err := wire.SessionTokens(ctx, env)
	if err != nil {
		return nil, err
	}
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	authn := wire.AuthenticatorWith(env, st, tokens)
	return wire.ServeAPI(env, wire.APIConfig{
		Store: st, Auth: authn,
		Functions: []contract.Function{contract.FunctionKeys},
	})
}
