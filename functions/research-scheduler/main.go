// Command research-scheduler is the Lambda an EventBridge schedule invokes: it starts the research runs
// that are due, within the day's YouTube unit budget (shared/research.Service.Schedule).
package main

import (
	"context"

	"github.com/creatorstrategy/css/shared/connection"

	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/queues"
)

func main() { wire.Start("research-scheduler", build) }

// build makes the handler, one pass of the schedule per invocation: the table, and the research queue the
// runs it starts or resumes, and the connected channels' daily syncs, go to.
func build(_ context.Context, env wire.Env) (func(context.Context) (research.ScheduleReport, error), error) {
	st, err := wire.Store(env)
	if err != nil {
		return nil, err
	}
	sqsClient, err := queues.Client(env)
	if err != nil {
		return nil, err
	}
	runs, err := queues.Research(env, sqsClient)
	if err != nil {
		return nil, err
	}
	svc, err := research.NewService(st, runs, research.ConfigFrom(env.Config.Research), env.Now)
	if err != nil {
		return nil, err
	}
	// The daily sync of connected YouTube channels is queued on the same queue, once a quota day each
	// (decision 43), and their hourly early-warning read once an hour (decision 54). The scheduler only lists the connected channels (the table's index of them): it calls
	// no Google API and holds no token, so it stays small and reads no secret.
	own, err := wire.OwnSyncConfig(env.Config, st, runs, connection.New(connection.Config{Store: st, Now: env.Now, Log: env.Log}), env.Now, env.Log)
	if err != nil {
		return nil, err
	}
	syncs, err := ownperf.NewService(own)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (research.ScheduleReport, error) {
		rep, err := svc.Schedule(ctx)
		if err != nil {
			env.Log.Error("research schedule", "error", err.Error(), "report", rep)
			return rep, err
		}
		orep, err := syncs.Schedule(ctx)
		if err != nil {
			env.Log.Error("youtube sync schedule", "error", err.Error(), "report", orep)
			return rep, err
		}
		env.Log.Info("youtube sync schedule", "connected", orep.Connected, "queued", orep.Queued, "hourlyReads", orep.Watched)
		env.Log.Info("research schedule", "due", rep.Due, "started", rep.Started, "resumed", rep.Resumed,
			"cleared", rep.Cleared, "swept", rep.Swept, "oldSwept", rep.OldSwept, "budgetShort", rep.BudgetShort, "left", rep.Left)
		return rep, nil
	}, nil
}
