package wire

// Assembly: the domain services over one store, and the HTTP handler over them. The local stack and every
// Lambda build the API through NewAPI, so they cannot drift.

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/health"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/performance"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/ratelimit"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// APIConfig is what NewAPI needs.
type APIConfig struct {
	config.Config
	Store *store.Store
	Auth  rest.Authenticator
	Log   *slog.Logger
	// Functions limits the handler to these functions' operations (empty: all).
	Functions []contract.Function
	RequestID func(*http.Request) string
	// Keys overrides key management (the local stack wraps it so a revoked key is forgotten at once).
	Keys rest.KeyManager
	// Now is the clock (default time.Now).
	Now func() time.Time
	// RateCounter keeps the rate-limit counts (default: the table, shared by every Lambda instance; the
	// local stack, always one instance, counts in memory).
	RateCounter ratelimit.Counter
	// ResearchQueue is where POST /research queues a run's first step (nil: the functions that do not
	// start research).
	ResearchQueue queue.Sender
	// Relay publishes the events operations write into the outbox as soon as they commit, and queues test
	// deliveries and redeliveries (nil: they wait in the outbox for the relay's sweep).
	Relay *webhooks.Relay
	// SecretCipher seals webhook signing secrets (nil: registering a webhook answers 500, saying so).
	SecretCipher webhooks.Cipher
	// Resolver resolves receiver hosts at registration (nil: the system's).
	Resolver webhooks.Resolver
	// Generation runs the generation operations; nil leaves them answering 501 (a function that serves
	// none of them needs none).
	Generation rest.Generator
	// ModelStatus is what /health reports of the models (what is configured: a health check spends no
	// tokens).
	ModelStatus APIModels
	// Docs serves GET /api/v1/docs and its script (nil: 404; shared/apidocs.New in the utility function
	// and the local stack).
	Docs rest.Docs
	// Connections is the YouTube connection (nil: its operations answer 503, naming the configuration
	// missing).
	Connections *connection.Service
}

// APIModels describes the configured models for /health.
type APIModels struct {
	AI, Images health.State
	Models     health.Models
	// AIProbe, when set, reports the model server's state instead of AI (a health.ProbeCache's Get).
	AIProbe func(ctx context.Context) health.Probe
}

// noCipher stands in when no sealing key is configured: the webhook operations that need one fail
// with an error that says what is missing.
type noCipher struct{}

var errNoCipher = errors.New("no webhook secret sealing key is configured (CSS_WEBHOOK_KEY_SECRET_ARN in the cloud, the data folder's webhook-key locally)")

func (noCipher) Seal(context.Context, []byte, []byte) ([]byte, error) { return nil, errNoCipher }
func (noCipher) Open(context.Context, []byte, []byte) ([]byte, error) { return nil, errNoCipher }

// derivedMissing is /health's reason while derived metrics are off (decision 48): what is missing and
// what it leaves out.
const derivedMissing = "the project's owner has not accepted the amendment to the YouTube API Developer Policies on " +
	"derived metrics (CSS_YOUTUBE_DERIVED_METRICS is false): research answers leave out outlier scores, " +
	"research patterns and what is ranked by them"

// NewAPI returns the API server (an http.Handler, and the operations in process for MCP).
func NewAPI(c APIConfig) (*rest.Server, error) {
	doc, err := contract.Load()
	if err != nil {
		return nil, err
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	st := c.Store
	acc := accounts.NewService(st, now)
	keys := c.Keys
	if keys == nil {
		keys = acc
	}
	// A Config built in code rather than by config.FromEnv (tests) gets the default rates.
	perMinute := func(n, def int) int64 {
		if n == 0 {
			return int64(def)
		}
		return int64(n)
	}
	var counter ratelimit.Counter = st
	var keyLeases rest.KeyLeaser = st // the table counts: a key's read and its lease are one call
	if c.RateCounter != nil {
		counter, keyLeases = c.RateCounter, nil
	}
	limiter, err := ratelimit.New(counter, map[string]int64{
		string(contract.RateGeneration): perMinute(c.GenerationsPerMinute, config.DefaultGenerationsPerMinute),
		string(contract.RateOther):      perMinute(c.RequestsPerMinute, config.DefaultRequestsPerMinute),
	}, now)
	if err != nil {
		return nil, err
	}
	researchService, err := research.NewService(st, c.ResearchQueue, research.ConfigFrom(c.Research), now)
	if err != nil {
		return nil, err
	}
	var (
		videoOpts    []videos.Option
		scheduleOpts []planning.ScheduleOption
		relay        webhooks.Publisher
	)
	videoOpts = append(videoOpts, videos.WithMaxVideos(c.MaxVideos)) // 0 (a Config built in code): the default
	if c.Relay != nil {
		videoOpts = append(videoOpts, videos.WithPublisher(c.Relay))
		scheduleOpts = append(scheduleOpts, planning.WithPublisher(c.Relay))
		relay = c.Relay
	}
	cipher := c.SecretCipher
	if cipher == nil {
		cipher = noCipher{}
	}
	var resolver webhooks.Resolver = net.DefaultResolver
	if c.Resolver != nil {
		resolver = c.Resolver
	}
	hooks := webhooks.NewService(webhooks.Config{
		Store: st, Cipher: cipher, Relay: relay, Now: now,
		Rules: webhooks.URLRules{
			AllowHTTP: c.Mode == config.Development,
			Policy:    webhooks.AddressPolicy{AllowLoopback: c.WebhookAllowLoopback},
			Resolver:  resolver,
		},
	})
	links, err := ownperf.NewService(ownperf.Config{Repo: st, Now: now})
	if err != nil {
		return nil, err
	}
	var conns rest.Connections = connection.New(connection.Config{Missing: c.Research.Google.Missing()})
	if c.Connections != nil {
		conns = c.Connections
	}
	youtubeState := health.OK
	if len(c.Research.Google.Missing()) > 0 {
		youtubeState = health.Degraded
	}
	derived, derivedReason := health.OK, ""
	if !c.Research.DerivedMetrics {
		derived, derivedReason = health.Degraded, derivedMissing
	}
	return rest.New(rest.Options{
		ConnectedURL: c.Research.Google.ConnectedURL,
		PublicURL:    c.PublicURL,
		Contract:     doc,
		Auth:         c.Auth,
		Log:          c.Log,
		Dev:          c.Mode == config.Development,
		Functions:    c.Functions,
		RequestID:    c.RequestID,
		Limiter:      limiter,
		KeyLeases:    keyLeases,
		Services: rest.Services{
			Profile:     profile.NewService(st),
			Research:    researchService,
			History:     generation.NewHistory(st),
			Videos:      videos.NewService(st, now, videoOpts...),
			Schedule:    planning.NewSchedule(st, now, scheduleOpts...),
			Webhooks:    hooks,
			Connections: conns,
			Links:       links,
			Series:      planning.NewSeriesService(st, now),
			Notes:       notes.NewService(st, now),
			// Generation counts join the overview when generation reports them (performance.Generations).
			Performance:  performance.NewService(st, researchService, nil, c.MonthlyGenerations, now).WithOwn(st),
			Generation:   c.Generation,
			Usage:        st,
			MonthlyQuota: c.MonthlyGenerations,
			Clock:        now,
			Keys:         keys,
			Grants:       mcpgrant.NewService(st),
			Accounts:     acc,
			Docs:         c.Docs,
			Health: health.Checker{
				Version:                     c.Version,
				Database:                    st.Ping,
				AI:                          cmp.Or(c.ModelStatus.AI, health.Degraded),
				Images:                      cmp.Or(c.ModelStatus.Images, health.Degraded),
				Models:                      health.Models{Text: cmp.Or(c.ModelStatus.Models.Text, "none configured"), Grading: cmp.Or(c.ModelStatus.Models.Grading, "none configured")},
				YouTubeConnection:           youtubeState,
				YouTubeDerivedMetrics:       derived,
				YouTubeDerivedMetricsReason: derivedReason,
				AIProbe:                     c.ModelStatus.AIProbe,
				Now:                         now,
			},
		},
	})
}
