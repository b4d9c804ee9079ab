package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/lambdatest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/signin"
)

// The functions of the grants test. The API functions run in process: wiretest builds them as their mains
// do (wire.API's steps), and a test cannot import a main. The four queue functions run as their real
// binaries (functions/<name>/main.go, built as `make build` builds them), each a long-lived process invoked
// through the Lambda Runtime API on loopback (shared/testkit/lambdatest), so what is checked is what their mains
// wire, not a copy of it.

// apiFunction is fn's handler, with every adapter an API function may have (wiretest.API).
func apiFunction(t *testing.T, fn contract.Function) wire.APIHandler {
	t.Helper()
	return wiretest.API(t, wiretest.Env(t, string(fn)), fn)
}

// mcpFunction is the mcp function's handler: every operation, no research queue, served as MCP.
func mcpFunction(t *testing.T) wire.APIHandler {
	t.Helper()
	env := wiretest.Env(t, "mcp")
	env.Config.Research.QueueURL = ""
	api, authn, err := wiretest.APIServer(env)
	if err != nil {
		t.Fatal(err)
	}
	st, err := wire.Store(env)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := wire.Credentials(env, st)
	if err != nil {
		t.Fatal(err)
	}
	// Access tokens of the sign-in, checked as functions/mcp checks them.
	tokens := mcpgrant.Verifier{Records: st, Keys: creds, Resource: mcpgrant.Resource(env.Config.PublicURL), Now: env.Now}
	h, err := mcp.ForAPI(api, authn, env.Now, env.Log, mcp.AccessTokens(tokens))
	if err != nil {
		t.Fatal(err)
	}
	return wire.HTTP(h)
}

// signinFunction is the signin function's handler, built as functions/signin builds it.
func signinFunction(t *testing.T) wire.APIHandler {
	t.Helper()
	env := wiretest.Env(t, "signin")
	st, err := wire.Store(env)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := wire.Credentials(env, st)
	if err != nil {
		t.Fatal(err)
	}
	p, err := signin.Provider(env, st, creds)
	if err != nil {
		t.Fatal(err)
	}
	return wire.HTTP(p.Handler())
}

// cloudFunctions runs the queue functions' mains: built once per test run (in the background from
// buildFunctions, so the build overlaps the emulators' start), each started as a process on demand.
type cloudFunctions struct {
	t    *testing.T
	done chan struct{}
	bins map[string]string
	err  error
	// models are the loopback Bedrock each worker calls, one each so that each one's calls can be held to
	// its own grants.
	models map[string]*models
}

func buildFunctions(t *testing.T) *cloudFunctions {
	t.Helper()
	f := &cloudFunctions{t: t, done: make(chan struct{}),
		models: map[string]*models{"generation-worker": startModels(t), "research-worker": startModels(t)}}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	out := t.TempDir()
	var pkgs []string
	for _, fn := range []string{"generation-worker", "research-worker", "research-scheduler", "webhook-dispatcher"} {
		pkgs = append(pkgs, "./functions/"+fn)
	}
	go func() {
		defer close(f.done)
		f.bins, f.err = lambdatest.Build(context.Background(), root, out, pkgs...)
	}()
	// Registered after TempDir's, so it runs first: the folder goes once the build is done with it.
	t.Cleanup(func() { <-f.done })
	return f
}

// start starts function's binary as the cloud runs it: Lambda's environment, production mode, the
// service's variables as the test has set them for the in-process functions (the emulators, the loopback
// AWS services and Google), the workers' credentials, then extra. It is killed when the test ends.
func (f *cloudFunctions) start(function string, extra ...string) *lambdatest.Process {
	t := f.t
	t.Helper()
	<-f.done
	if f.err != nil {
		t.Fatal(f.err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CSS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "CSS_MODE=production", "AWS_ACCESS_KEY_ID="+workerCreds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY="+workerCreds.SecretAccessKey, "AWS_SESSION_TOKEN="+workerCreds.SessionToken)
	p, err := lambdatest.Start("css-grants-"+function, f.bins[function], lambdatest.Options{Env: append(env, extra...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// sqsHandler invokes p with SQS events as the event source mapping does, reading its partial batch response.
func sqsHandler(p *lambdatest.Process) sqs.LambdaHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		raw, err := json.Marshal(ev)
		if err != nil {
			return resp, err
		}
		out, err := p.Invoke(ctx, raw)
		if err != nil {
			return resp, err
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			return resp, fmt.Errorf("batch response %s: %w", out, err)
		}
		return resp, nil
	}
}

// scheduledEvent is what an EventBridge schedule invokes a function with.
var scheduledEvent = []byte(`{"version":"0","id":"53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa","detail-type":"Scheduled Event",` +
	`"source":"aws.events","account":"123456789012","time":"2026-11-27T06:00:00Z","region":"us-east-1",` +
	`"resources":["arn:aws:events:us-east-1:123456789012:rule/css-grants"],"detail":{}}`)

// modelEnv points a worker at its loopback Bedrock Runtime (the template's model ids are the defaults).
func (f *cloudFunctions) modelEnv(function string) []string {
	return []string{"CSS_MODEL_PROVIDER=bedrock", "CSS_BEDROCK_ENDPOINT=" + f.models[function].URL, "CSS_MODEL_MAX_ATTEMPTS=1"}
}

// checkModels holds each worker's model calls to its grants (models.check).
func (f *cloudFunctions) checkModels(tpl map[string]any) {
	f.t.Helper()
	granted := bedrockResources(f.t, tpl, map[string]string{})
	for function, m := range f.models {
		m.check(f.t, function, granted[functionID(function)])
	}
}

// generationWorker is functions/generation-worker.
func (f *cloudFunctions) generationWorker() sqs.LambdaHandler {
	f.t.Helper()
	return sqsHandler(f.start("generation-worker", f.modelEnv("generation-worker")...))
}

// researchWorker is functions/research-worker.
func (f *cloudFunctions) researchWorker() sqs.LambdaHandler {
	f.t.Helper()
	return sqsHandler(f.start("research-worker", f.modelEnv("research-worker")...))
}

// researchScheduler is functions/research-scheduler: one pass per scheduled event.
func (f *cloudFunctions) researchScheduler() func(context.Context) (research.ScheduleReport, error) {
	f.t.Helper()
	p := f.start("research-scheduler")
	return func(ctx context.Context) (research.ScheduleReport, error) {
		var rep research.ScheduleReport
		out, err := p.Invoke(ctx, scheduledEvent)
		if err != nil {
			return rep, err
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return rep, fmt.Errorf("schedule report %s: %w", out, err)
		}
		return rep, nil
	}
}

// dispatcher is functions/webhook-dispatcher, invoked the three ways the cloud invokes it: batches of the
// events queue and of the deliveries queue (its router tells them apart by their queue), and the outbox
// sweep's schedule.
type dispatcher struct {
	onEvents, onDelivery sqs.LambdaHandler
	sweep                func(context.Context) (int, error)
}

func (f *cloudFunctions) webhookDispatcher() dispatcher {
	f.t.Helper()
	p := f.start("webhook-dispatcher")
	h := sqsHandler(p)
	return dispatcher{onEvents: h, onDelivery: h, sweep: func(ctx context.Context) (int, error) {
		out, err := p.Invoke(ctx, scheduledEvent)
		if err != nil {
			return 0, err
		}
		var res struct{ Sent *int }
		if err := json.Unmarshal(out, &res); err != nil || res.Sent == nil {
			return 0, fmt.Errorf("sweep answered %s (%v)", out, err)
		}
		return *res.Sent, nil
	}}
}
