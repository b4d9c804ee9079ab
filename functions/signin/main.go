// Command signin is the Lambda serving the sign-in for /mcp (decisions 55-56, shared/oauth): the
// protected-resource and authorization-server metadata, client registration, the consent page, tokens and
// revocation. Apart from the mcp function, so only this one links the OAuth library (and the html/template
// it brings); /mcp checks its access tokens with one table read.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/signin"
)

func main() { wire.Start("signin", build) }

func build(_ context.Context, env wire.Env) (wire.APIHandler, error) {
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	creds, err := wire.Credentials(env, st)
	if err != nil {
		return nil, err
	}
	p, err := signin.Provider(env, st, creds)
	if err != nil {
		return nil, err
	}
	return wire.HTTP(p.Handler()), nil
}
