// Package lambdaapp runs a group of the API as an AWS Lambda function behind API Gateway's HTTP API
// (payload 2.0): the same net/http handler as the local stack, authenticating each request in process with
// the same authenticator and key cache, so a request costs one Lambda invocation.
package lambdaapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/eventsapp"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Option adds to a function what only it needs, so the others do not link it.
type Option func(*options)

type options struct {
	cipher func(config.Config) (webhooks.Cipher, error)
	serve  ServeFunc
	files  FilesFunc
}

// FilesFunc builds the handler of generated pictures, mounted at ai.FilesPath (s3images.FilesHandler).
type FilesFunc func(cfg config.Config, log *slog.Logger) (http.Handler, error)

// WithFiles makes the function serve generated pictures at /files/ beside its operations: the utility
// function, so only its binary links what that takes.
func WithFiles(f FilesFunc) Option { return func(o *options) { o.files = f } }

// ServeFunc builds what a function serves over the API's operations (all of them), instead of the REST
// routes of its group: the mcp function's endpoint (mcp.ForAPI).
type ServeFunc func(api *rest.Server, authn rest.Authenticator, now func() time.Time, log *slog.Logger) (http.Handler, error)

// WithServe makes the function serve what f builds over every operation. Only functions/mcp uses it, so
// only its binary links the MCP SDK.
func WithServe(f ServeFunc) Option { return func(o *options) { o.serve = f } }

// WithSecretCipher gives the function the cipher that seals webhook signing secrets (sealkey.Cipher): the
// webhooks function, which registers them.
func WithSecretCipher(f func(config.Config) (webhooks.Cipher, error)) Option {
	return func(o *options) { o.cipher = f }
}

// Run serves function's operations until the Lambda runtime stops the process.
func Run(function string, opts ...Option) {
	logger := config.Logger(os.Stdout).With("function", function)
	h, err := Handler(context.Background(), function, logger, opts...)
	if err != nil {
		logger.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}

// ResearchStarter is the function serving POST /research (startResearch's x-css-function): the one that
// sends to the research queue.
const ResearchStarter = "intelligence"

// Handler builds the Lambda entry point of function from the environment. It makes no network call: the
// SDK client connects and the JWKS is fetched on first use.
func Handler(ctx context.Context, function string, logger *slog.Logger, opts ...Option) (func(context.Context, EventV2) (ResponseV2, error), error) {
	return handler(ctx, function, logger, time.Now, opts...)
}

func handler(_ context.Context, function string, logger *slog.Logger, now func() time.Time, opts ...Option) (func(context.Context, EventV2) (ResponseV2, error), error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		return nil, err
	}
	table, err := dynamo.Open(cfg.DynamoDBEndpoint, cfg.Region, cfg.TableName)
	if err != nil {
		return nil, err
	}
	st := store.New(table)
	tokens, err := auth.NewTokenVerifier(cfg, auth.WithVerifierLogger(logger))
	if err != nil {
		return nil, err
	}
	// Each instance caches credentials for cfg.AuthCacheTTL: a key revoked elsewhere stops working here
	// within that time (decision 2: at most 60 s).
	authn := auth.NewAuthenticator(st, tokens, cfg.AuthCacheTTL, auth.WithClock(now),
		auth.WithRefusalMetric(countMetric(logger, now, function, MetricCredentialRefusals)))
	gen, err := submitter(cfg, st, function, logger, now)
	if err != nil {
		return nil, err
	}
	var researchQueue queue.Sender
	if function == ResearchStarter {
		if cfg.Research.QueueURL == "" {
			return nil, fmt.Errorf("CSS_RESEARCH_QUEUE_URL: required by the %s function (POST /research)", function)
		}
		client, err := sqs.NewClient(cfg.SQSEndpoint, cfg.Region)
		if err != nil {
			return nil, err
		}
		researchQueue = sqs.NewSender(client, cfg.Research.QueueURL)
	}
	// Operations that emit publish their events at once.
	relay, err := eventsapp.SQSRelay(cfg, st, logger)
	if err != nil {
		return nil, err
	}
	var cipher webhooks.Cipher
	if o.cipher != nil {
		if cipher, err = o.cipher(cfg); err != nil {
			return nil, err
		}
	}
	// A function with its own ServeFunc (mcp) runs every group's operations in process and serves only
	// what it builds over them.
	functions := []contract.Function{contract.Function(function)}
	if o.serve != nil {
		functions = nil
	}
	api, err := rest.Handler(rest.Config{
		Config: cfg, Store: st, Auth: rest.BearerAuth(authn), Log: logger,
		Functions: functions, RequestID: requestID, Now: now, ResearchQueue: researchQueue,
		Generation: gen, Relay: relay, SecretCipher: cipher,
	})
	if err != nil {
		return nil, err
	}
	var h http.Handler = api
	if o.serve != nil {
		if h, err = o.serve(api, rest.BearerAuth(authn), now, logger); err != nil {
			return nil, err
		}
	}
	if o.files != nil {
		files, err := o.files(cfg, logger)
		if err != nil {
			return nil, err
		}
		api := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, ai.FilesPath) {
				files.ServeHTTP(w, r)
				return
			}
			api.ServeHTTP(w, r)
		})
	}
	// The adapter base64-encodes (isBase64Encoded) any body that is not valid UTF-8, as API Gateway needs
	// for binary bodies. A gzip stream never is (its second byte, 0x8b, cannot follow an ASCII byte), so the
	// gzip-compressed OpenAPI document goes out base64-encoded; TestOpenAPIDocumentEncoding holds to that.
	return httpadapter.NewV2(h).ProxyWithContext, nil
}

// requestID is API Gateway's id of the request, so logs join up with its access logs.
func requestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok {
		return rc.RequestID
	}
	return ""
}

// MCP is the function serving the MCP endpoint (functions/mcp).
const MCP = "mcp"

// generationFunctions serve operations that run as generation jobs.
var generationFunctions = []string{"generation", "intelligence", "context", "integrations", MCP}

// submitter is the generation side of an API function: it queues jobs on the generation queue and waits
// for their runs; the generation worker runs them. Functions that serve no generation get none.
func submitter(cfg config.Config, st *store.Store, function string, logger *slog.Logger, now func() time.Time) (*generation.Generator, error) {
	if !slices.Contains(generationFunctions, function) {
		return nil, nil
	}
	if cfg.GenerationQueueURL == "" {
		return nil, errors.New("CSS_GENERATION_QUEUE_URL: required by the functions that run generations")
	}
	client, err := sqs.NewClient(cfg.SQSEndpoint, cfg.Region)
	if err != nil {
		return nil, err
	}
	return generation.New(generation.Config{
		Runs: st, Data: st, Idempotency: st, Quota: st, Backlog: st, Queue: sqs.NewSender(client, cfg.GenerationQueueURL),
		Logger: logger, MonthlyQuota: cfg.MonthlyGenerations, PromptBudget: cfg.PromptBudget, Now: now, NewID: st.NewID,
	}), nil
}
