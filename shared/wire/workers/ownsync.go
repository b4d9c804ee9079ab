package workers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
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
// nil conn no channel is connected: nothing is queued and a sync message is dropped.
func OwnSync(cfg config.Config, st *store.Store, steps queue.Sender, events ownperf.Publisher, conn Connection,
	now func() time.Time, logger *slog.Logger) (*ownperf.Service, error) {
	clock, err := research.NewClock()
	if err != nil {
		return nil, err
	}
	c := ownperf.Config{Repo: st, Queue: steps, Publisher: events, Captions: st, Daily: cfg.Research.Daily(), Clock: clock,
		Now: now, Log: logger}
	if conn != nil {
		c.Connections = conn
		c.Access = youtube.OwnerAccess{Clients: ownerClients{conn}, Endpoint: cfg.Research.YouTubeEndpoint,
			AnalyticsEndpoint: cfg.Research.YouTubeAnalyticsEndpoint}
	}
	return ownperf.NewService(c)
}

// ownerClients tells the sync that a channel no longer connected, or whose grant Google refused (marked
// needs_reconnect, its event emitted), has no owner: its sync message is dropped, not retried into the
// dead-letter queue. The owner connecting again queues a new sync.
type ownerClients struct{ Connection }

func (c ownerClients) OwnerClient(ctx context.Context, channelID string) (*http.Client, string, error) {
	client, ytID, err := c.Connection.OwnerClient(ctx, channelID)
	if errors.Is(err, connection.ErrNotConnected) || errors.Is(err, connection.ErrNeedsReconnect) {
		return nil, "", &apperr.Error{Code: apperr.NotFound, Message: "the channel's YouTube connection is gone or must be renewed", Cause: err}
	}
	return client, ytID, err
}
