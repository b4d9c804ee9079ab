package wire

import (
	"log/slog"
	"time"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
)

// OwnSyncConfig is the daily sync's configuration shared by the research scheduler, which only queues
// syncs (ownperf.Service.Schedule), and the research worker, which runs them and adds the owner's access
// (workers.OwnSync): the table, the research queue steps, the quota day's clock and the daily budget.
func OwnSyncConfig(cfg config.Config, st *store.Store, steps queue.Sender, conns ownperf.Connections,
	now func() time.Time, logger *slog.Logger) (ownperf.Config, error) {
	clock, err := research.NewClock()
	if err != nil {
		return ownperf.Config{}, err
	}
	return ownperf.Config{Repo: st, Queue: steps, Connections: conns, Daily: cfg.Research.Daily(), Clock: clock,
		Now: now, Log: logger}, nil
}
