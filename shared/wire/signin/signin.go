// Package signin composes the sign-in for /mcp (decisions 55-56, shared/oauth) for the signin function and
// the tests that build it as the function does. Apart from shared/wire, so only that function links the
// OAuth library.
package signin

import (
	"errors"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/oauth"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/wire"
)

// Provider is the authorization server of the deployment: issued by its public URL, its signing secret
// sealed with the webhook secrets' key, client metadata documents fetched as webhooks are posted (never
// to a private address).
func Provider(env wire.Env, st *store.Store, creds *auth.Authenticator) (*oauth.Provider, error) {
	if env.Config.PublicURL == "" {
		return nil, errors.New("signin: CSS_PUBLIC_URL (the issuer) is not set")
	}
	cipher, err := sealkey.Cipher(env.Config)
	if err != nil {
		return nil, err
	}
	return oauth.New(oauth.Config{Issuer: env.Config.PublicURL, Records: st, Keys: creds, Cipher: cipher,
		Fetch: httppost.HTTPClient(httppost.Options{Policy: webhooks.AddressPolicy{}}), Now: env.Now, Log: env.Log}), nil
}
