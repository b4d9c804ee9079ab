package auth

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/apperr"
)

// Keys of the authorizer context handed from the authorizer Lambda to the group Lambdas.
const (
	ctxAccountID    = "accountId"
	ctxMethod       = "method"
	ctxKeyID        = "keyId"
	ctxKeyChannelID = "keyChannelId"
	ctxChannelIDs   = "channelIds"
	ctxAccessUntil  = "accessUntil"
	ctxAuthError    = "authError"
	ctxAuthMessage  = "authMessage"
)

// Authorize is the API Gateway (HTTP API, simple response) Lambda authorizer. A denied authorizer makes
// API Gateway answer with its own 403 body instead of our Error shape, so it always authorizes and passes
// either the identity or the refusal in the context; the group Lambda rebuilds it with
// IdentityFromAuthorizer and answers the refusal itself. The route's authorizer must have no identity
// source (API Gateway would answer a missing header with its own 401) and no result caching (this cache
// lets Forget and the TTL work).
func (a *Authenticator) Authorize(ctx context.Context, req events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	id, err := a.Resolve(ctx, header(req.Headers, "authorization"))
	if err != nil {
		e, ok := apperr.As(err)
		if !ok {
			e = &apperr.Error{Code: apperr.Internal, Message: "authentication failed", Cause: err}
		}
		if e.Code != apperr.Unauthorized {
			slog.ErrorContext(ctx, "authorizer", "err", err)
		}
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{
			IsAuthorized: true,
			Context:      map[string]any{ctxAuthError: string(e.Code), ctxAuthMessage: e.Message},
		}, nil
	}
	return events.APIGatewayV2CustomAuthorizerSimpleResponse{
		IsAuthorized: true,
		Context: map[string]any{
			ctxAccountID:    id.AccountID,
			ctxMethod:       string(id.Method),
			ctxKeyID:        id.KeyID,
			ctxKeyChannelID: id.KeyChannelID,
			ctxChannelIDs:   strings.Join(id.ChannelIDs, ","),
			ctxAccessUntil:  id.AccessUntil.UTC().Format(time.RFC3339Nano),
		},
	}, nil
}

// IdentityFromAuthorizer rebuilds the identity the authorizer passed (the request context's
// authorizer.lambda map), or returns the refusal it carried as an *apperr.Error.
func IdentityFromAuthorizer(c map[string]any) (Identity, error) {
	str := func(k string) string { s, _ := c[k].(string); return s }
	if code := str(ctxAuthError); code != "" {
		return Identity{}, apperr.New(apperr.Code(code), "%s", str(ctxAuthMessage))
	}
	id := Identity{
		AccountID:    str(ctxAccountID),
		Method:       Method(str(ctxMethod)),
		KeyID:        str(ctxKeyID),
		KeyChannelID: str(ctxKeyChannelID),
	}
	if s := str(ctxChannelIDs); s != "" {
		id.ChannelIDs = strings.Split(s, ",")
	}
	until, err := time.Parse(time.RFC3339Nano, str(ctxAccessUntil))
	valid := err == nil && id.AccountID != "" &&
		(id.Method == MethodSession || (id.Method == MethodAPIKey && id.KeyID != "" && id.KeyChannelID != ""))
	if !valid {
		// Only a misconfigured route (no authorizer in front of it) gets here.
		return Identity{}, &apperr.Error{Code: apperr.Internal, Message: "authentication context missing",
			Cause: fmt.Errorf("authorizer context %v", c)}
	}
	id.AccessUntil = until
	return id, nil
}

// header returns the named header whatever its case (HTTP APIs lower-case names, but tests and other
// callers may not).
func header(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
