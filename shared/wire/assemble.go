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
	"slices"
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
	var counter ratelimit.Counter = st
	var keyLeases rest.KeyLeaser = st // the table counts: a key's read and its lease are one call
	if c.RateCounter != nil {
		counter, keyLeases = c.RateCounter, nil
	}
	// A Config built in code rather than by config.FromEnv (tests) gets the default rates.
	limiter, err := ratelimit.New(counter, map[string]int64{
		string(contract.RateGeneration): int64(cmp.Or(c.GenerationsPerMinute, config.DefaultGenerationsPerMinute)),
		string(contract.RateOther):      int64(cmp.Or(c.RequestsPerMinute, config.DefaultRequestsPerMinute)),
	}, now)
	if err != nil {
		return nil, err
	}
	// Each Lambda builds only the services its operations call (the MCP function and the local stack
	// serve every function, so they build all of them); an operation outside c.Functions has no route.
	serves := func(fns ...contract.Function) bool {
		return len(c.Functions) == 0 || slices.ContainsFunc(fns, func(f contract.Function) bool {
			return slices.Contains(c.Functions, f)
		})
	}
	var sv rest.Services
	if serves(contract.FunctionContext, contract.FunctionIntelligence) {
		if sv.Research, err = research.NewService(st, c.ResearchQueue, research.ConfigFrom(c.Research), now); err != nil {
			return nil, err
		}
	}
	if serves(contract.FunctionContext) {
		sv.Profile, sv.History = profile.NewService(st), generation.NewHistory(st)
	}
	if serves(contract.FunctionVideos, contract.FunctionIntegrations) { // integrations: the legacy my-videos read
		opts := []videos.Option{videos.WithMaxVideos(c.MaxVideos)} // 0 (a Config built in code): the default
		if c.Relay != nil {
			opts = append(opts, videos.WithPublisher(c.Relay))
		}
		sv.Videos = videos.NewService(st, now, opts...)
	}
	if serves(contract.FunctionVideos) {
		if sv.Links, err = ownperf.NewService(ownperf.Config{Repo: st, Now: now}); err != nil {
			return nil, err
		}
	}
	if serves(contract.FunctionPlanning) {
		var opts []planning.ScheduleOption
		if c.Relay != nil {
			opts = append(opts, planning.WithPublisher(c.Relay))
		}
		sv.Schedule, sv.Series = planning.NewSchedule(st, now, opts...), planning.NewSeriesService(st, now)
	}
	if serves(contract.FunctionMemory) {
		sv.Notes = notes.NewService(st, now)
	}
	if serves(contract.FunctionIntelligence) {
		// Generation counts join the overview when generation reports them (performance.Generations).
		sv.Performance = performance.NewService(st, sv.Research, nil, c.MonthlyGenerations, now).WithOwn(st)
	}
	if serves(contract.FunctionContext, contract.FunctionGeneration, contract.FunctionIntelligence, contract.FunctionIntegrations) {
		sv.Generation = c.Generation // scoreNiche, the tools, refine and the legacy generate run as jobs
	}
	if serves(contract.FunctionKeys) {
		acc := accounts.NewService(st, now)
		sv.Keys, sv.Accounts, sv.Grants = cmp.Or[rest.KeyManager](c.Keys, acc), acc, mcpgrant.NewService(st)
		sv.Usage, sv.MonthlyQuota, sv.Clock = st, c.MonthlyGenerations, now
	}
	if serves(contract.FunctionWebhooks) {
		sv.Webhooks = webhooksService(c, now)
	}
	if serves(contract.FunctionIntegrations) {
		sv.Connections = connection.New(connection.Config{Missing: c.Research.Google.Missing()})
		if c.Connections != nil {
			sv.Connections = c.Connections
		}
	}
	if serves(contract.FunctionUtility) {
		sv.Docs, sv.Health = c.Docs, healthChecker(c, st, now)
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
		Services:     sv,
	})
}

// webhooksService is the webhook registrations' service, sealing secrets with c's cipher (or refusing to
// register without one) and resolving receivers with c's resolver (or the system's).
func webhooksService(c APIConfig, now func() time.Time) *webhooks.Service {
	var relay webhooks.Publisher
	if c.Relay != nil {
		relay = c.Relay
	}
	return webhooks.NewService(webhooks.Config{
		Store: c.Store, Cipher: cmp.Or[webhooks.Cipher](c.SecretCipher, noCipher{}), Relay: relay, Now: now,
		Rules: webhooks.URLRules{
			AllowHTTP: c.Mode == config.Development,
			Policy:    webhooks.AddressPolicy{AllowLoopback: c.WebhookAllowLoopback},
			Resolver:  cmp.Or[webhooks.Resolver](c.Resolver, net.DefaultResolver),
		},
	})
}

// healthChecker is GET /health: the table, and what is configured of the models and of YouTube.
func healthChecker(c APIConfig, st *store.Store, now func() time.Time) health.Checker {
	youtube := health.OK
	if len(c.Research.Google.Missing()) > 0 {
		youtube = health.Degraded
	}
	derived, derivedReason := health.OK, ""
	if !c.Research.DerivedMetrics {
		derived, derivedReason = health.Degraded, derivedMissing
	}
	return health.Checker{
		Version:                     c.Version,
		Database:                    st.Ping,
		AI:                          cmp.Or(c.ModelStatus.AI, health.Degraded),
		Images:                      cmp.Or(c.ModelStatus.Images, health.Degraded),
		Models:                      health.Models{Text: cmp.Or(c.ModelStatus.Models.Text, "none configured"), Grading: cmp.Or(c.ModelStatus.Models.Grading, "none configured")},
		YouTubeConnection:           youtube,
		YouTubeDerivedMetrics:       derived,
		YouTubeDerivedMetricsReason: derivedReason,
		AIProbe:                     c.ModelStatus.AIProbe,
		Now:                         now,
	}
}
