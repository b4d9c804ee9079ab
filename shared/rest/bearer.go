package rest

import (
	"net/http"

	"github.com/creatorstrategy/css/shared/auth"
)

// BearerAuth authenticates a request in process from its Authorization and X-Channel-Id headers, with a's
// credential cache. The local stack and every Lambda use it, so both refuse and accept the same requests.
func BearerAuth(a *auth.Authenticator) Authenticator { return bearerAuth{a} }

type bearerAuth struct{ a *auth.Authenticator }

func (b bearerAuth) Authenticate(r *http.Request) (auth.Principal, error) {
	return b.a.Authenticate(r.Context(), r.Header.Get("Authorization"), r.Header.Get(auth.ChannelHeader))
}

func (b bearerAuth) UncachedKey(r *http.Request) (string, bool) {
	return b.a.UncachedKey(r.Header.Get("Authorization"))
}

func (b bearerAuth) AuthenticateRead(r *http.Request, read *auth.KeyRead) (auth.Principal, error) {
	return b.a.AuthenticateRead(r.Context(), r.Header.Get("Authorization"), r.Header.Get(auth.ChannelHeader), read)
}

func (b bearerAuth) SessionToken(r *http.Request) bool {
	return b.a.SessionToken(r.Header.Get("Authorization"))
}

func (b bearerAuth) AuthenticateSession(r *http.Request, readAccount auth.AccountReader) (auth.Principal, error) {
	return b.a.AuthenticateSession(r.Context(), r.Header.Get("Authorization"), r.Header.Get(auth.ChannelHeader), readAccount)
}
