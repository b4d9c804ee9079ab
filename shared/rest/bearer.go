package rest

import (
	"net/http"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
)

// BearerAuth authenticates a request in process from its Authorization and X-Channel-Id headers, with a's
// credential cache. The local stack and every Lambda use it, so both refuse and accept the same requests.
func BearerAuth(a *auth.Authenticator) Authenticator { return bearerAuth{a} }

type bearerAuth struct{ a *auth.Authenticator }

// authorization is the request's one Authorization header. Two are refused (400), not one of them
// chosen: which one a proxy, a cache or a log reads is anyone's guess.
func authorization(r *http.Request) (string, error) { return once(r, "Authorization") }

// channel is the request's one X-Channel-Id header, refused (400) when sent twice, as Authorization is.
func channel(r *http.Request) (string, error) { return once(r, auth.ChannelHeader) }

// once is the request's header name, "" when absent; sent more than once, a VALIDATION_ERROR naming it.
func once(r *http.Request, name string) (string, error) {
	v := r.Header.Values(name)
	switch len(v) {
	case 0:
		return "", nil
	case 1:
		return v[0], nil
	}
	return "", apperr.Invalid(name, "must be sent once, not %d times", len(v))
}

// credential is authorization without its refusal: "" (no credential) for two headers, so the paths that
// only look (UncachedKey, SessionToken) leave the refusal to Authenticate.
func credential(r *http.Request) string {
	h, _ := authorization(r)
	return h
}

func (b bearerAuth) Authenticate(r *http.Request) (auth.Principal, error) {
	h, err := authorization(r)
	if err != nil {
		return auth.Principal{}, err
	}
	ch, err := channel(r)
	if err != nil {
		return auth.Principal{}, err
	}
	return b.a.Authenticate(r.Context(), h, ch)
}

func (b bearerAuth) UncachedKey(r *http.Request) (string, bool) {
	return b.a.UncachedKey(credential(r))
}

func (b bearerAuth) AuthenticateRead(r *http.Request, read *auth.KeyRead) (auth.Principal, error) {
	ch, err := channel(r)
	if err != nil {
		return auth.Principal{}, err
	}
	return b.a.AuthenticateRead(r.Context(), credential(r), ch, read)
}

func (b bearerAuth) SessionToken(r *http.Request) bool {
	return b.a.SessionToken(credential(r))
}

func (b bearerAuth) AuthenticateSession(r *http.Request, readAccount auth.AccountReader) (auth.Principal, error) {
	ch, err := channel(r)
	if err != nil {
		return auth.Principal{}, err
	}
	return b.a.AuthenticateSession(r.Context(), credential(r), ch, readAccount)
}
