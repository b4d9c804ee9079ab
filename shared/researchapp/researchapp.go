// Package researchapp wires research for the functions that run it: the scheduler Lambda (an EventBridge
// schedule) here, the worker Lambda (the research queue's consumer) in researchapp/worker. Each reads the
// configuration from the environment and makes no network call before its first invocation.
package researchapp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
)

// Service returns research's service over st, sending to q.
func Service(cfg config.Config, st *store.Store, q queue.Sender, now func() time.Time) (*research.Service, error) {
	return research.NewService(st, q, research.ConfigFrom(cfg.Research), now)
}

// Cloud is what a research function builds from the environment: the configuration, the store and the
// research queue's sender.
type Cloud struct {
	Config config.Config
	Store  *store.Store
	Queue  queue.Sender
	// SQS is the client the queue's sender uses; the worker's Lambda handler changes visibilities with it.
	SQS *awssqs.Client
}

// OpenCloud reads the configuration (production mode) and builds the store and the research queue's
// sender. It makes no call.
func OpenCloud() (Cloud, error) {
	cfg, err := config.FromEnv(config.Production)
	if err != nil {
		return Cloud{}, err
	}
	if cfg.Research.QueueURL == "" {
		return Cloud{}, fmt.Errorf("CSS_RESEARCH_QUEUE_URL: required")
	}
	table, err := dynamo.Open(cfg.DynamoDBEndpoint, cfg.Region, cfg.TableName)
	if err != nil {
		return Cloud{}, err
	}
	client, err := sqs.NewClient(cfg.SQSEndpoint, cfg.Region)
	if err != nil {
		return Cloud{}, err
	}
	return Cloud{Config: cfg, Store: store.New(table), Queue: sqs.NewSender(client, cfg.Research.QueueURL), SQS: client}, nil
}

// SchedulerHandler is the scheduler Lambda's handler: one pass of research.Service.Schedule per invocation.
func SchedulerHandler(c Cloud, logger *slog.Logger) (func(context.Context) (research.ScheduleReport, error), error) {
	svc, err := Service(c.Config, c.Store, c.Queue, time.Now)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (research.ScheduleReport, error) {
		rep, err := svc.Schedule(ctx)
		if err != nil {
			logger.Error("research schedule", "error", err.Error(), "report", rep)
			return rep, err
		}
		logger.Info("research schedule", "due", rep.Due, "started", rep.Started, "resumed", rep.Resumed,
			"cleared", rep.Cleared, "budgetShort", rep.BudgetShort, "unitsLeft", rep.UnitsLeft)
		return rep, nil
	}, nil
}

// RunScheduler runs the scheduler Lambda until the runtime stops the process.
func RunScheduler() {
	logger := config.Logger(os.Stdout).With("function", "researchscheduler")
	c, err := OpenCloud()
	if err == nil {
		var h func(context.Context) (research.ScheduleReport, error)
		if h, err = SchedulerHandler(c, logger); err == nil {
			lambda.Start(h)
			return
		}
	}
	logger.Error("start", "error", err.Error())
	os.Exit(1)
}
