// Package lambdaapp runs a group of the API as an AWS Lambda function behind API Gateway's HTTP API
// (payload 2.0): the same net/http handler as the local stack, with the principal taken from what the
// authorizer Lambda decided.
package lambdaapp

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
)

// Run serves function's operations until the Lambda runtime stops the process.
func Run(function string) {
	logger := config.Logger(os.Stdout).With("function", function)
	h, err := Handler(context.Background(), function, logger)
	if err != nil {
		logger.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}

// Handler builds the Lambda entry point of function from the environment. It makes no network call: the
// SDK client connects on first use.
func Handler(ctx context.Context, function string, logger *slog.Logger) (func(context.Context, EventV2) (ResponseV2, error), error) {
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		return nil, err
	}
	table, err := dynamo.Open(cfg.DynamoDBEndpoint, cfg.Region, cfg.TableName)
	if err != nil {
		return nil, err
	}
	st := store.New(table)
	h, err := rest.Handler(rest.Config{
		Config: cfg, Store: st, Auth: fromAuthorizer{now: time.Now}, Log: logger,
		Functions: []string{function}, RequestID: requestID,
	})
	if err != nil {
		return nil, err
	}
	// The adapter base64-encodes (isBase64Encoded) any body that is not valid UTF-8, as API Gateway needs
	// for binary bodies. A gzip stream never is (its second byte, 0x8b, cannot follow an ASCII byte), so the
	// gzip-compressed OpenAPI document goes out base64-encoded; TestOpenAPIDocumentEncoding holds to that.
	return httpadapter.NewV2(h).ProxyWithContext, nil
}

// fromAuthorizer reads the identity the authorizer Lambda put into the request context and applies the
// request's X-Channel-Id to it.
type fromAuthorizer struct{ now func() time.Time }

func (a fromAuthorizer) Authenticate(r *http.Request) (auth.Principal, error) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.Lambda == nil {
		return auth.Principal{}, apperr.New(apperr.Unauthorized, "missing credentials")
	}
	id, err := auth.IdentityFromAuthorizer(rc.Authorizer.Lambda)
	if err != nil {
		return auth.Principal{}, err
	}
	return id.Principal(r.Header.Get(auth.ChannelHeader), a.now())
}

// requestID is API Gateway's id of the request, so logs join up with its access logs.
func requestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok {
		return rc.RequestID
	}
	return ""
}
