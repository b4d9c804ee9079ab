package workers

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/youtube"
)

// Connection is what the daily sync needs of the YouTube connection (shared/connection's service): the
// owner's OAuth client of a connected channel, the connected channels, and the mark of a finished sync.
type Connection interface {
	OwnerClient(ctx context.Context, channelID string) (client *http.Client, youtubeChannelID string, err error)
	Connected(ctx context.Context) ([]string, error)
	MarkSynced(ctx context.Context, channelID string, at time.Time) error
}

// OwnSync builds the daily sync of connected YouTube channels (decision 43), a step on the research queue
// steps: the scheduler queues it (Schedule), the research worker runs it (Dispatch), the connection
// requests it on connecting (RequestSync). events may be nil (the outbox's sweep publishes then). With a
// nil conn no channel is connected: nothing is queued and a sync message is dropped. grader grades a
// reviewed title no title run proposed (nil: such reviews carry no score).
func OwnSync(cfg config.Config, st *store.Store, steps queue.Sender, events ownperf.Publisher, conn Connection,
	grader ownperf.TitleGrader, now func() time.Time, logger *slog.Logger) (*ownperf.Service, error) {
	c, err := wire.OwnSyncConfig(cfg, st, steps, nil, now, logger)
	if err != nil {
		return nil, err
	}
	c.Publisher, c.Titles, c.Captions, c.Grader = events, st, st, grader
	if conn != nil {
		c.Connections = conn
		c.Access = youtube.OwnerAccess{Clients: conn, Endpoint: cfg.Research.YouTubeEndpoint,
			AnalyticsEndpoint: cfg.Research.YouTubeAnalyticsEndpoint, ReportingEndpoint: cfg.Research.YouTubeReportingEndpoint}
	}
	return ownperf.NewService(c)
}
