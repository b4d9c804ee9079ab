// Command authorizer is the API Gateway Lambda authorizer: it resolves the Authorization header (an API key
// or a session token) to an identity and hands it to the group Lambdas in the authorizer context.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
)

func main() {
	logger := config.Logger(os.Stdout).With("function", "authorizer")
	slog.SetDefault(logger)
	a, err := authenticator(context.Background())
	if err != nil {
		logger.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(a.Authorize)
}

// authenticator wires the authenticator from the environment. Nothing here touches the network: the
// DynamoDB client connects and the JWKS is fetched on first use.
func authenticator(ctx context.Context) (*auth.Authenticator, error) {
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		return nil, err
	}
	table, err := dynamo.Open(cfg.DynamoDBEndpoint, cfg.Region, cfg.TableName)
	if err != nil {
		return nil, err
	}
	tokens, err := auth.NewTokenVerifier(cfg)
	if err != nil {
		return nil, err
	}
	return auth.NewAuthenticator(store.New(table), tokens, cfg.AuthCacheTTL), nil
}
