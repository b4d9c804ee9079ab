package wire

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/awsenv"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
)

// EventV2 and ResponseV2 are API Gateway HTTP API (payload 2.0) events.
type (
	EventV2    = events.APIGatewayV2HTTPRequest
	ResponseV2 = events.APIGatewayV2HTTPResponse
)

// APIHandler is the Lambda entry point of a function behind the HTTP API.
type APIHandler = func(context.Context, EventV2) (ResponseV2, error)

// Authenticator authenticates each request in process (API key or session JWT), as the local stack does.
// The JWKS is fetched on first use. Each instance caches credentials for AuthCacheTTL: a key revoked
// elsewhere stops working here within that time (decision 2: at most 60 s). Refusals of credentials not in
// the cache are counted (MetricCredentialRefusals).
func Authenticator(env Env, st *store.Store) (rest.Authenticator, error) {
	tokens, err := sessionTokens(env)
	if err != nil {
		return nil, err
	}
	return AuthenticatorWith(env, st, tokens), nil
}

// SessionTokens is the session-token verifier of a function whose operations take session tokens (keys),
// which starts fetching the identity provider's key set now, in the background
// (auth.JWKSVerifier.Prefetch): made first in a build, the fetch overlaps the rest of the function's
// start, and the instance's first request finds the set fetched or in flight. AuthenticatorWith takes it.
func SessionTokens(ctx context.Context, env Env) (auth.TokenVerifier, error) {
	tokens, err := sessionTokens(env)
	if err != nil {
		return nil, err
	}
	if p, ok := tokens.(interface{ Prefetch(context.Context) }); ok {
		go p.Prefetch(context.WithoutCancel(ctx))
	}
	return tokens, nil
}

// AuthenticatorWith is Authenticator with the session tokens verified by tokens (SessionTokens).
func AuthenticatorWith(env Env, st *store.Store, tokens auth.TokenVerifier) rest.Authenticator {
	return rest.BearerAuth(credentials(env, st, tokens))
}

// Credentials is Authenticator's credential resolver itself, for what resolves keys beside the REST
// authentication (the MCP sign-in, shared/oauth).
func Credentials(env Env, st *store.Store) (*auth.Authenticator, error) {
	tokens, err := sessionTokens(env)
	if err != nil {
		return nil, err
	}
	return credentials(env, st, tokens), nil
}

func credentials(env Env, st *store.Store, tokens auth.TokenVerifier) *auth.Authenticator {
	return auth.NewAuthenticator(st, tokens, env.Config.AuthCacheTTL, auth.WithClock(env.Now),
		auth.WithRefusalMetric(Counter(env, MetricCredentialRefusals)))
}

func sessionTokens(env Env) (auth.TokenVerifier, error) {
	opts := []auth.VerifierOption{auth.WithVerifierLogger(env.Log)}
	if servedByAWS(env.Config.JWKSURL) {
		pool, err := awsenv.RootCAs()
		if err != nil {
			return nil, err
		}
		opts = append(opts, auth.WithRootCAs(pool))
	}
	return auth.NewTokenVerifier(env.Config, opts...)
}

// HTTP is the Lambda entry point serving h behind API Gateway's HTTP API (payload 2.0), one invocation per
// request. The adapter base64-encodes (isBase64Encoded) any body that is not valid UTF-8, as API Gateway
// needs for binary bodies. A gzip stream never is (its second byte, 0x8b, cannot follow an ASCII byte), so
// the gzip-compressed OpenAPI document goes out base64-encoded; TestOpenAPIDocumentEncoding holds to that.
func HTTP(h http.Handler) APIHandler {
	return httpadapter.NewV2(h).ProxyWithContext
}

// RequestID is API Gateway's id of the request (APIConfig.RequestID), so logs join up with its access
// logs.
func RequestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok {
		return rc.RequestID
	}
	return ""
}

// ServeFiles serves the generated pictures at ai.FilesPath with files, and everything else with api.
func ServeFiles(files, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, ai.FilesPath) {
			files.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// servedByAWS says whether the key set is on an AWS endpoint (Amazon Cognito's
// cognito-idp.<region>.amazonaws.com), whose certificate chains to Amazon's roots: the JWKS client then
// trusts that small pool rather than loading the system's on a cold start's first session token.
func servedByAWS(jwksURL string) bool {
	u, err := url.Parse(jwksURL)
	return err == nil && u.Scheme == "https" && strings.HasSuffix(strings.ToLower(u.Hostname()), ".amazonaws.com")
}

// API builds a function's API server: c names what the function serves and what it builds beyond the
// store and authentication; the configuration, logger, clock and request ids are env's.
func API(env Env, c APIConfig) (*rest.Server, error) {
	c.Config, c.Log, c.Now, c.RequestID = env.Config, env.Log, env.Now, RequestID
	return NewAPI(c)
}

// ServeAPI is API as the function's Lambda handler.
func ServeAPI(env Env, c APIConfig) (APIHandler, error) {
	api, err := API(env, c)
	if err != nil {
		return nil, err
	}
	return HTTP(api), nil
}

// StoreAndAuth is the table and the authenticator (API keys and session tokens) of a function behind the
// HTTP API.
func StoreAndAuth(env Env) (*store.Store, rest.Authenticator, error) {
	st, err := Store(env)
	if err != nil {
		return nil, nil, err
	}
	authn, err := Authenticator(env, st)
	if err != nil {
		return nil, nil, err
	}
	return st, authn, nil
}
