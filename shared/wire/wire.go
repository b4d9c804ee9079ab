// Package wire holds the steps every function's main composes, each called by name: the configuration and
// the logger (Env), the AWS clients, the store, authentication, the events relay, the queues' senders, the
// HTTP API's Lambda adapter and the Lambda bootstrap (Start). Every step makes no network call: a function
// starts without touching the cloud, and a misconfiguration stops its cold start.
//
// It links only what every API function links. What only some functions need (Secrets Manager, the
// receivers' HTTP client, the model adapters, YouTube's client, S3, the MCP SDK) their mains build
// themselves, so the others do not link it (infra/bench/coldstart checks what the API functions link).
package wire

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/creatorstrategy/css/shared/config"
)

// Env is what a function is built from: its name (in logs and metrics), its configuration, its logger and
// its clock.
type Env struct {
	Function string
	Config   config.Config
	Log      *slog.Logger
	Now      func() time.Time
}

// Logger is the function's logger: JSON on stdout, which Lambda ships to CloudWatch Logs, each line naming
// the function.
func Logger(function string) *slog.Logger {
	return config.Logger(os.Stdout).With("function", function)
}

// NewEnv reads the configuration from the environment (production mode: inside Lambda nothing else is
// accepted).
func NewEnv(function string, logger *slog.Logger) (Env, error) {
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		return Env{}, err
	}
	return Env{Function: function, Config: cfg, Log: logger, Now: time.Now}, nil
}

// Start is the Lambda bootstrap: it builds function's handler with build and serves it until the runtime
// stops the process. When the handler cannot be built it logs why ("start") and exits 1, so the cold start
// fails rather than every invocation after it.
func Start[H any](function string, build func(context.Context, Env) (H, error)) {
	logger := Logger(function)
	h, err := startHandler(context.Background(), function, logger, build)
	if err != nil {
		logger.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}

func startHandler[H any](ctx context.Context, function string, logger *slog.Logger, build func(context.Context, Env) (H, error)) (H, error) {
	env, err := NewEnv(function, logger)
	if err != nil {
		var none H
		return none, err
	}
	return build(ctx, env)
}
