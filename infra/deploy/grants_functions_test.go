package deploy

import (
	"context"

	"errors"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/connection/connectionwire"
	"github.com/creatorstrategy/css/shared/ownperf"
	"testing"

	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/creatorstrategy/css/infra/local/offline"
	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/ai/s3images"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/ssmparam"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
	"github.com/creatorstrategy/css/shared/webhooks/sealkey"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/wiretest"
	"github.com/creatorstrategy/css/shared/wire/workers"
)

// The functions as functions/<name>/main.go builds them, from the environment, for the grants test: it runs
// operations and queue work of every function against one recorder, and a test cannot import a main. Only
// the table calls matter here, which do not depend on what else a function links; what each main builds is
// checked by its own tests (functions/<name>/main_test.go).

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
	h, err := mcp.ForAPI(api, authn, env.Now, env.Log)
	if err != nil {
		t.Fatal(err)
	}
	return wire.HTTP(h)
}

// generationWorker is functions/generation-worker's handler.
func generationWorker(t *testing.T) sqs.LambdaHandler {
	t.Helper()
	env := wiretest.Env(t, "generation-worker")
	cfg := env.Config
	st, queues := storeAndQueues(t, env)
	// The grants test's generations run on the offline model, which only a test offers a worker.
	models, err := provider.Models(cfg, env.Log, provider.WithOffline(offline.Models()))
	if err != nil {
		t.Fatal(err)
	}
	var images ai.ImageStore
	if cfg.ImagesBucket != "" {
		client, err := s3images.NewClient(cfg.Region, cfg.S3Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if images, err = s3images.New(client, cfg.ImagesBucket, cfg.PublicURL); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := research.NewService(st, nil, research.ConfigFrom(cfg.Research), env.Now)
	if err != nil {
		t.Fatal(err)
	}
	gen := generation.New(generation.Config{
		Emitter: webhooks.NewEmitter(st, wire.EventsRelay(env, st, queues), env.Now, st.NewID),
		Runs:    st, Data: st, Idempotency: st, Quota: st, Backlog: st, Outliers: generation.ResearchOutliers{Research: stored},
		Own:    ownperf.BriefSource{Data: st, Now: env.Now},
		Models: generation.Models{Writer: models.Text, Grader: models.Text, Images: models.Images}, Answers: schemacheck.New(),
		Images: images, Logger: env.Log, MonthlyQuota: cfg.MonthlyGenerations, PromptBudget: cfg.PromptBudget,
		MaxAttempts: queue.Specs()[queue.Generation].MaxReceiveCount, NewID: st.NewID, Deadline: cfg.GenerationDeadline,
	})
	return sqs.Handler(queues, gen.Handle, env.Log)
}

// researchWorker is functions/research-worker's handler.
func researchWorker(t *testing.T) sqs.LambdaHandler {
	t.Helper()
	ctx := context.Background()
	env := wiretest.Env(t, "research-worker")
	cfg := env.Config
	st, queues := storeAndQueues(t, env)
	steps, err := wire.ResearchQueue(env, queues)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssmparam.NewClient(cfg.SSMEndpoint, cfg.Region)
	if err != nil {
		t.Fatal(err)
	}
	params := func(ctx context.Context, name string) (config.Secret, error) { return ssmparam.Read(ctx, client, name) }
	src, err := workers.ResearchSource(ctx, cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	writers, err := workers.ResearchWriters(cfg, env.Log, provider.WithOffline(offline.Models()))
	if err != nil {
		t.Fatal(err)
	}
	events := webhooks.NewEmitter(st, wire.EventsRelay(env, st, queues), env.Now, st.NewID)
	p, err := workers.ResearchPipeline(cfg, st, src, steps, env.Log, append(writers, research.WithEmitter(events))...)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connectionwire.FromConfig(ctx, cfg, st, events, nil, env.Now, env.Log)
	if err != nil {
		t.Fatal(err)
	}
	own, err := workers.OwnSync(cfg, st, steps, wire.EventsRelay(env, st, queues), conn, env.Now, env.Log)
	if err != nil {
		t.Fatal(err)
	}
	return sqs.Handler(queues, own.Dispatch(p.Handle), env.Log)
}

// researchScheduler is functions/research-scheduler's handler.
func researchScheduler(t *testing.T) func(context.Context) (research.ScheduleReport, error) {
	t.Helper()
	env := wiretest.Env(t, "research-scheduler")
	st, queues := storeAndQueues(t, env)
	runs, err := wire.ResearchQueue(env, queues)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := research.NewService(st, runs, research.ConfigFrom(env.Config.Research), env.Now)
	if err != nil {
		t.Fatal(err)
	}
	clock, err := research.NewClock()
	if err != nil {
		t.Fatal(err)
	}
	own, err := ownperf.NewService(ownperf.Config{Repo: st, Queue: runs, DailyUnits: env.Config.Research.DailyUnits,
		Clock: clock, Now: env.Now, Log: env.Log, Connections: connection.New(connection.Config{Store: st, Now: env.Now, Log: env.Log})})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) (research.ScheduleReport, error) {
		rep, err := svc.Schedule(ctx)
		if err != nil {
			return rep, err
		}
		_, err = own.Schedule(ctx)
		return rep, err
	}
}

// dispatcher is functions/webhook-dispatcher's work: the fan-out and the attempts on their queues' SQS
// events, and the outbox sweep (the main's router only tells the three invocations apart).
type dispatcher struct {
	onEvents, onDelivery sqs.LambdaHandler
	sweep                func(context.Context) (int, error)
}

func webhookDispatcher(t *testing.T) dispatcher {
	t.Helper()
	env := wiretest.Env(t, "webhook-dispatcher")
	cfg := env.Config
	schedule, err := webhooks.CheckSchedule(cfg.WebhookRetrySchedule)
	if err != nil {
		t.Fatal(err)
	}
	st, err := wire.Store(env, store.WithClock(env.Now))
	if err != nil {
		t.Fatal(err)
	}
	queues, err := wire.SQS(env)
	if err != nil {
		t.Fatal(err)
	}
	cipher, err := sealkey.Cipher(cfg)
	if err != nil || cipher == nil {
		t.Fatal(errors.Join(err, errors.New("no cipher")))
	}
	deliveries := sqs.NewSender(queues, cfg.WebhookDeliveriesQueueURL)
	d, err := webhooks.NewDispatcher(webhooks.DispatcherConfig{
		Store: st, Deliveries: deliveries, Cipher: cipher, Schedule: schedule, UserAgent: webhooks.UserAgent(cfg.Version),
		Now: env.Now, Log: env.Log,
		Poster: httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: cfg.WebhookAllowLoopback}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	relay := webhooks.NewRelay(st, sqs.NewSender(queues, cfg.EventsQueueURL), deliveries, env.Now, env.Log)
	return dispatcher{onEvents: sqs.Handler(queues, d.HandleEvent, env.Log), onDelivery: sqs.Handler(queues, d.HandleDelivery, env.Log),
		sweep: relay.Sweep}
}

func storeAndQueues(t *testing.T, env wire.Env) (*store.Store, *awssqs.Client) {
	t.Helper()
	st, err := wire.Store(env)
	if err != nil {
		t.Fatal(err)
	}
	queues, err := wire.SQS(env)
	if err != nil {
		t.Fatal(err)
	}
	return st, queues
}
