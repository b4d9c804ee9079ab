// Command research-worker is the Lambda consuming the research queue: each message is one step of a
// research run (shared/research.Pipeline); failed records are reported apart (partial batch response), and
// a step's RetryAfter changes its record's visibility.
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/ssmparam"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/connectionwire"
	"github.com/creatorstrategy/css/shared/wire/queues"
	"github.com/creatorstrategy/css/shared/wire/workers"
)

func main() { wire.Start("research-worker", build) }

// build makes the handler: the table, the research queue the next steps go to, the source the
// configuration names (the YouTube Data API, its key read once from SSM), the text model that analyses
// patterns, writes ideas and grades the titles the daily sync reviews, and the events queue a run's events
// go out on.
func build(ctx context.Context, env wire.Env) (sqs.LambdaHandler, error) {
	cfg := env.Config
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	steps, err := queues.Research(env, sqsClient)
	if err != nil {
		return nil, err
	}
	var params workers.ParamReader
	if cfg.Research.YouTubeAPIKeyParam != "" {
		client, err := ssmparam.NewClient(cfg.SSMEndpoint, cfg.Region)
		if err != nil {
			return nil, err
		}
		params = func(ctx context.Context, name string) (config.Secret, error) { return ssmparam.Read(ctx, client, name) }
	}
	src, err := workers.ResearchSource(ctx, cfg, params)
	if err != nil {
		return nil, err
	}
	model, err := provider.Text(cfg, env.Log)
	if err != nil {
		return nil, err
	}
	writers := workers.ResearchWriters(model, cfg, env.Log)
	events := webhooks.NewEmitter(st, queues.EventsRelay(env, st, sqsClient), env.Now, st.NewID)
	p, err := workers.ResearchPipeline(cfg, st, src, steps, env.Log, append(writers, research.WithEmitter(events))...)
	if err != nil {
		return nil, err
	}
	// The daily sync of connected YouTube channels is a step on the same queue (decision 43), through the
	// channel owner's OAuth client (shared/connection). Without a Google client configured no channel can
	// be connected: a sync message is dropped.
	var published ownperf.Publisher
	if relay := queues.EventsRelay(env, st, sqsClient); relay != nil {
		published = relay
	}
	var conn workers.Connection
	if len(cfg.Research.Google.Missing()) == 0 {
		svc, err := connectionwire.FromConfig(ctx, cfg, st, events, nil, env.Now, env.Log)
		if err != nil {
			return nil, err
		}
		conn = svc
	}
	stored, err := research.NewService(st, nil, research.ConfigFrom(cfg.Research), env.Now)
	if err != nil {
		return nil, err
	}
	grader := workers.TitleGrader(cfg, st, stored, model, env.Now, env.Log)
	own, err := workers.OwnSync(cfg, st, steps, published, conn, grader, env.Now, env.Log)
	if err != nil {
		return nil, err
	}
	env.Log.Info("research worker ready", "source", src.Label(), "dailyQuota", cfg.Research.Daily(), "model", cfg.GenerationModel)
	return sqs.Handler(sqsClient, own.Dispatch(p.Handle), env.Log), nil
}
