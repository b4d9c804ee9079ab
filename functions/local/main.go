// Command local runs the whole service on loopback (`make run`): every endpoint group on one net/http
// server, authenticating in process as each Lambda does, and the embedded store in CSS_DATA_DIR.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/localimages"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/health"
	"github.com/creatorstrategy/css/shared/mcp"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/oauth"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/privatedir"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/ratelimit"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/store/pebble"
	"github.com/creatorstrategy/css/shared/testkit/offline"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
	"github.com/creatorstrategy/css/shared/wire"
	"github.com/creatorstrategy/css/shared/wire/connectionwire"
	"github.com/creatorstrategy/css/shared/wire/workers"
)

// gcPercent is the local stack's GOGC unless the environment sets one. Its live heap is a few MB, so with
// Go's default of 100 a list of 100 videos set off a collection every few dozen requests; 400 spends a
// few MB more to save that CPU.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	logger := config.Logger(os.Stdout)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, logger, os.Stderr); err != nil {
		logger.Error("local stack stopped", "error", err.Error())
		os.Exit(1)
	}
}

// DevAccount is the account the local stack's development keys belong to.
const DevAccount = "local-dev"

func run(ctx context.Context, logger *slog.Logger, console io.Writer) error {
	cfg, err := config.FromEnv(config.Development)
	if err != nil {
		return err
	}
	if _, set := os.LookupEnv("CSS_YOUTUBE_DERIVED_METRICS"); !set && cfg.Research.Source == config.SourceOffline {
		// The offline sample is a corpus of the service's own, not YouTube's data: the derived-metrics
		// policy does not reach it, so make run shows the whole of research (decision 48).
		cfg.Research.DerivedMetrics = true
	}
	// The port first: a stack that cannot serve opens no store and makes (and prints) no key.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	stack, err := open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer stack.Close()
	if err := stack.bootstrap(ctx, cfg, console); err != nil {
		return err
	}
	ln = errorShaped(ln) // net/http's own refusals in the Error shape too
	srv := newServer(stack.handler, defaultTimeouts)
	logger.Info("listening", "addr", "http://"+ln.Addr().String(), "data", cfg.DataDir, "version", cfg.Version)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	schedCtx, stopSchedule := context.WithCancel(ctx)
	scheduled := make(chan struct{})
	go func() { defer close(scheduled); stack.schedule(schedCtx, cfg.Research.ScheduleEvery, logger) }()
	defer func() { stopSchedule(); <-scheduled }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish (their writes are committed and fsynced before they
	// answer), then close the store.
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownFor)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// timeouts bound how long a client may hold a connection of the local server.
type timeouts struct {
	// readHeader and read bound the reading of a request's header and of the whole request (body
	// included), so a client that trickles its body cannot hold a connection forever.
	readHeader, read time.Duration
	// write bounds the time from the end of the request header to the end of the answer: it must exceed
	// read plus the 25 s a generation may wait for its job.
	write time.Duration
	// idle bounds how long a keep-alive connection waits for its next request.
	idle time.Duration
}

var defaultTimeouts = timeouts{readHeader: 10 * time.Second, read: 30 * time.Second, write: 75 * time.Second, idle: 120 * time.Second}

func newServer(h http.Handler, t timeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.readHeader, ReadTimeout: t.read,
		WriteTimeout: t.write, IdleTimeout: t.idle}
}

// stack is the assembled local service.
type stack struct {
	// table is the embedded Pebble store, or DynamoDB Local (see openTable).
	table    tableTable
	store    *store.Store
	accounts *accounts.Service
	// images keeps generated pictures under CSS_DATA_DIR/images; the handler serves them at /files/.
	images  *localimages.Store
	handler http.Handler
	// generationQueue carries generation jobs to the in-process worker.
	generationQueue *inproc.Queue
	// researchQueue carries research steps to the in-process research worker; scheduler runs the
	// research scheduler's passes (every CSS_RESEARCH_SCHEDULE_EVERY).
	researchQueue *inproc.Queue
	research      *research.Pipeline
	scheduler     *research.Service
	// ownSync is the daily sync of connected YouTube channels, a step on the research queue (decision 43).
	// Its Connections and Access are the YouTube connection's (issue 20 item 1): until they are wired, no
	// channel is connected, nothing is queued and a sync message is dropped.
	ownSync *ownperf.Service
	// events runs the events and webhook-deliveries queues, the dispatcher and the outbox sweep.
	events *eventsStack
}

func open(ctx context.Context, cfg config.Config, logger *slog.Logger) (_ *stack, err error) {
	// The data folder holds key hashes, the session-token secret and every tenant's data: its owner's alone.
	if err := privatedir.Make(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	table, counter, err := openTable(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	s := &stack{table: table}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "css.db")); err == nil {
		logger.Warn("css.db in the data folder was written by an earlier version of the local stack (bbolt) and is not read; the data now lives in " + pebble.DirIn(cfg.DataDir) + " (delete css.db once you no longer need it)")
	}
	st := store.New(table)
	s.store = st
	if counter == nil {
		counter = st
	}
	tokens, err := auth.NewTokenVerifier(cfg, auth.WithVerifierLogger(logger))
	if err != nil {
		return nil, err
	}
	authn := auth.NewAuthenticator(st, tokens, cfg.AuthCacheTTL)
	s.accounts = accounts.NewService(st, time.Now)
	// Pictures' URLs start with the stack's own address, or CSS_PUBLIC_URL when it sits behind a proxy.
	public := cmp.Or(cfg.PublicURL, "http://"+cfg.Addr)
	if s.images, err = localimages.New(cfg.DataDir, public); err != nil {
		return nil, err
	}
	if s.events, err = openEvents(cfg, st, logger); err != nil {
		return nil, err
	}
	// One text model for research and generation: the OpenAI-compatible adapter remembers the structured
	// output form the server takes, per adapter value.
	models, err := provider.Models(cfg, logger, provider.WithOffline(offline.Models()))
	if err != nil {
		return nil, err
	}
	if err := s.openResearch(ctx, cfg, models.Text, logger); err != nil {
		return nil, err
	}
	// The YouTube connection: its callback is served here, at the stack's own address by default.
	connCfg := cfg
	connCfg.PublicURL = public
	// The daily sync of connected channels (decision 43) runs on the research queue with the owner's token;
	// connecting queues one.
	var published ownperf.Publisher
	if s.events.relay != nil {
		published = s.events.relay
	}
	requests, err := workers.OwnSync(cfg, st, s.researchQueue, published, nil, nil, time.Now, logger)
	if err != nil {
		return nil, err
	}
	// Refresh tokens are sealed with their own key (decision 50); ones sealed with the webhook key still open.
	tokenCipher, err := connectionwire.TokenCipher(connCfg)
	if err != nil {
		return nil, err
	}
	conns, err := connectionwire.Service(ctx, connCfg, connectionwire.Deps{Store: st, Cipher: tokenCipher, LegacyCipher: s.events.cipher,
		Emitter: webhooks.NewEmitter(st, s.events.relay, time.Now, st.NewID), Sync: requests, Now: time.Now, Log: logger})
	if err != nil {
		return nil, err
	}
	transcripts := connectionwire.Transcripts(cfg, st, conns, s.scheduler)
	gen, status, err := s.openGeneration(cfg, models, logger, transcripts)
	if err != nil {
		return nil, err
	}
	s.ownSync = requests
	if conns.Configured() {
		if s.ownSync, err = workers.OwnSync(cfg, st, s.researchQueue, published, conns, gen, time.Now, logger); err != nil {
			return nil, err
		}
	}
	h, err := wire.NewAPI(wire.APIConfig{
		Config: connCfg, Store: st, Log: logger, // the public URL the connection's start step is served at
		Auth:        rest.BearerAuth(authn),
		Keys:        forgetRevoked{Service: s.accounts, authn: authn},
		RateCounter: counter,
		Generation:  gen, ModelStatus: status,
		ResearchQueue: s.researchQueue,
		Relay:         s.events.relay, SecretCipher: s.events.cipher,
		Docs:        apidocs.New(),
		Connections: conns,
	})
	if err != nil {
		return nil, err
	}
	// Sign-in for /mcp (decision 55): the authorization server on the stack's own address; client metadata
	// documents are fetched as webhooks are posted (loopback only where webhooks may use it).
	signIn := oauth.New(oauth.Config{Issuer: public, Records: st, Keys: authn, Cipher: s.events.cipher,
		Fetch:              httppost.HTTPClient(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: cfg.WebhookAllowLoopback}}),
		AllowHTTPClientIDs: cfg.WebhookAllowLoopback, Now: time.Now, Log: logger})
	assistant, err := mcp.ForAPI(h, rest.BearerAuth(authn), time.Now, logger, mcp.AllowedOrigins(cfg.MCPAllowedOrigins),
		mcp.AccessTokens(mcpgrant.Verifier{Records: st, Keys: authn, Resource: signIn.Resource(), Now: time.Now}),
		mcp.ResourceMetadata(signIn.ResourceMetadataURL()))
	if err != nil {
		return nil, err
	}
	s.handler = routes(s.images.Handler(), assistant, signIn.Handler(), h)
	// The workers start last: a job or step left in the journal by an earlier run is picked up now.
	if err := s.generationQueue.Start(gen.Handle, generationWorkers); err != nil {
		return nil, err
	}
	if err := s.researchQueue.Start(s.ownSync.Dispatch(s.research.Handle), researchWorkers); err != nil {
		return nil, err
	}
	return s, nil
}

// researchWorkers is how many research steps the local stack runs at once.
const researchWorkers = 2

// openResearch opens the research queue (durable under the data folder, with the retries and
// dead-lettering of queue.Specs, as in the cloud), the pipeline on the configured source (the offline
// sample without a YouTube key) with the model writing patterns and ideas, and the service the scheduler
// passes run on.
func (s *stack) openResearch(ctx context.Context, cfg config.Config, text ai.Model, logger *slog.Logger) error {
	src, err := workers.ResearchSource(ctx, cfg, nil, workers.WithOfflineSample(youtubesample.New(time.Now)))
	if err != nil {
		return err
	}
	if s.researchQueue, err = inproc.OpenSpec(queue.Specs()[queue.Research], inproc.Options{Dir: filepath.Join(cfg.DataDir, "queues"), Logger: logger}); err != nil {
		return err
	}
	events := webhooks.NewEmitter(s.store, s.events.relay, time.Now, s.store.NewID)
	// Patterns and ideas on the model generation uses (the offline model without one configured).
	writers := workers.ResearchWriters(text, cfg, logger)
	if s.research, err = workers.ResearchPipeline(cfg, s.store, src, s.researchQueue, logger, append(writers, research.WithEmitter(events))...); err != nil {
		return err
	}
	if s.scheduler, err = research.NewService(s.store, s.researchQueue, research.ConfigFrom(cfg.Research), time.Now); err != nil {
		return err
	}
	logger.Info("research", "source", src.Label(), "scheduleEvery", cfg.Research.ScheduleEvery.String(),
		"dailyQuota", cfg.Research.Daily(), "model", cfg.GenerationModel)
	return nil
}

// schedule runs a research scheduler pass every `every` until ctx ends, as the EventBridge schedule does
// in the cloud.
func (s *stack) schedule(ctx context.Context, every time.Duration, logger *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		rep, err := s.scheduler.Schedule(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("research schedule", "error", err.Error())
		case rep.Started+rep.Resumed+rep.Cleared+rep.Swept > 0:
			logger.Info("research schedule", "started", rep.Started, "resumed", rep.Resumed, "cleared", rep.Cleared,
				"swept", rep.Swept, "budgetShort", rep.BudgetShort)
		}
		if orep, err := s.ownSync.Schedule(ctx); err != nil && ctx.Err() == nil {
			logger.Error("youtube sync schedule", "error", err.Error())
		} else if orep.Queued+orep.Watched > 0 {
			logger.Info("youtube sync schedule", "connected", orep.Connected, "queued", orep.Queued, "hourlyReads", orep.Watched)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// generationStopGrace is how long a stop lets running generations finish before cancelling them.
const generationStopGrace = 2 * time.Second

// generationWorkers run generation jobs at once in the local stack.
const generationWorkers = 4

// openGeneration opens the generation queue (durable under the data folder, so a job acknowledged with a
// 202 survives a kill) and the generator on the configured models.
func (s *stack) openGeneration(cfg config.Config, models provider.Set, logger *slog.Logger, transcripts generation.Transcripts) (*generation.Generator, wire.APIModels, error) {
	var err error
	s.generationQueue, err = inproc.OpenSpec(queue.Specs()[queue.Generation], inproc.Options{Dir: filepath.Join(cfg.DataDir, "queues"), Logger: logger})
	if err != nil {
		return nil, wire.APIModels{}, err
	}
	gen := generation.New(generation.Config{
		Runs: s.store, Data: generation.ResearchData{ChannelData: s.store, Research: s.scheduler}, Idempotency: s.store, Quota: s.store, Backlog: s.store, Queue: s.generationQueue,
		Models: generation.Models{Writer: models.Text, Grader: models.Text, Images: models.Images}, Answers: schemacheck.New(),
		Images: s.images, Logger: logger, MonthlyQuota: cfg.MonthlyGenerations, PromptBudget: cfg.PromptBudget, ContextWindow: cfg.ModelContextTokens,
		Outliers:    generation.ResearchOutliers{Research: s.scheduler},
		Own:         ownperf.BriefSource{Data: s.store, Now: time.Now},
		Emitter:     webhooks.NewEmitter(s.store, s.events.relay, time.Now, s.store.NewID),
		Transcripts: transcripts,
		MaxAttempts: queue.Specs()[queue.Generation].MaxReceiveCount, Now: time.Now, NewID: s.store.NewID,
		Deadline: cfg.GenerationDeadline,
	})
	state := health.OK
	if models.Offline {
		state = health.Degraded // it works, but it is not a model
	}
	logger.Info("generation", "text", models.TextName, "grading", models.GradingName, "images", models.ImagesName)
	status := wire.APIModels{AI: state, Images: health.OK,
		Models: health.Models{Text: models.TextName, Grading: models.GradingName}}
	if models.Probe != nil {
		// /health says what the model server answers, asked at most once a minute.
		status.AIProbe = (&health.ProbeCache{Probe: models.Probe}).Get
	}
	return gen, status, nil
}

// routes serves generated pictures at /files/ without credentials (their names are 128 random bits;
// see shared/ai/localimages), the MCP endpoint at /mcp, its sign-in (oauth.Paths), and everything else with api.
func routes(files, assistant, signIn, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, localimages.PathPrefix):
			files.ServeHTTP(w, r)
		case r.URL.Path == mcp.Path:
			assistant.ServeHTTP(w, r)
		case slices.Contains(oauth.Paths, r.URL.Path):
			signIn.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// Close stops the generation workers (cancelling what runs after generationStopGrace) and the research
// workers (letting running steps finish) and the events
// side (its queues keep what is left for the next run), then closes the stores.
func (s *stack) Close() error {
	var errs []error
	if s.events != nil {
		errs = append(errs, s.events.Close())
	}
	if s.generationQueue != nil {
		// A generation may wait minutes on a model server: a stop cancels its calls after a short grace
		// (the job stays in the queue's journal and runs again at the next start).
		ctx, cancel := context.WithTimeout(context.Background(), generationStopGrace)
		if err := s.generationQueue.Close(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, err)
		}
		cancel()
	}
	if s.researchQueue != nil {
		errs = append(errs, s.researchQueue.Close(context.Background()))
	}
	if s.images != nil {
		errs = append(errs, s.images.Close())
	}
	errs = append(errs, s.table.Close())
	return errors.Join(errs...)
}

// bootstrap makes sure there is a way in: the keys of CSS_DEV_API_KEYS, each for its own channel of the
// development account; without them, on the very first start, one channel and a new key, printed once.
func (s *stack) bootstrap(ctx context.Context, cfg config.Config, console io.Writer) error {
	if len(cfg.DevAPIKeys) > 0 {
		// The channel id is the projectId of the unversioned paths and a session token's X-Channel-Id; the
		// key is the user's own, so only its prefix is shown.
		fmt.Fprintln(console, "\nDevelopment keys (CSS_DEV_API_KEYS) and their channels:")
		for _, key := range cfg.DevAPIKeys {
			k, err := s.accounts.EnsureDevKey(ctx, DevAccount, key)
			if err != nil {
				return fmt.Errorf("CSS_DEV_API_KEYS: %w", err)
			}
			fmt.Fprintf(console, "    %s…  channel %s\n", k.Prefix, k.ChannelID)
		}
		fmt.Fprintf(console, "GET http://%s/api/v1/me tells a key's channel at any time.\n\n", cfg.Addr)
		return nil
	}
	created, err := s.accounts.EnsureFirstKey(ctx, DevAccount)
	if err != nil {
		return err
	}
	if created != nil {
		fmt.Fprintf(console, "\nFirst start: created channel %s with API key\n\n    %s\n\n"+
			"It is shown only now. Try:\n    curl -H 'Authorization: Bearer %s' http://%s/api/v1/my-videos\n\n",
			created.ChannelID, created.Key, created.Key, cfg.Addr)
	}
	return nil
}

// forgetRevoked drops a revoked key from the credential cache at once (decision 2: a revoked key answers
// 401 at once).
type forgetRevoked struct {
	*accounts.Service
	authn *auth.Authenticator
}

func (f forgetRevoked) RevokeKey(ctx context.Context, accountID, keyID string) error {
	hash, err := f.Service.RevokeKeyHash(ctx, accountID, keyID)
	if err != nil {
		return err
	}
	f.authn.Forget(hash)
	return nil
}

// tableTable is what the stack needs of its table: the store's port, and closing it.
type tableTable interface {
	store.Table
	io.Closer
}

// openTable opens the embedded Pebble store in the data folder, or, when CSS_TABLE_NAME and
// CSS_DYNAMODB_ENDPOINT are both set, that table on a DynamoDB Local (created when missing), to run the
// stack on the cloud's adapter (make bench-burst). It returns the rate counter to use: in process memory
// for Pebble, which admits one process, so this process sees every call; nil (the table itself) for
// DynamoDB, which several stacks may share.
func openTable(ctx context.Context, cfg config.Config, logger *slog.Logger) (tableTable, ratelimit.Counter, error) {
	if cfg.TableName == "" {
		table, err := pebble.Open(pebble.DirIn(cfg.DataDir), pebble.WithLogger(logger))
		return table, ratelimit.NewMemory(), err
	}
	if cfg.DynamoDBEndpoint == "" {
		return nil, nil, errors.New("CSS_TABLE_NAME: the local stack uses a DynamoDB table only on a DynamoDB Local (set CSS_DYNAMODB_ENDPOINT too)")
	}
	client, err := dynamo.NewClient(cfg.DynamoDBEndpoint, cfg.Region)
	if err != nil {
		return nil, nil, err
	}
	var inUse *types.ResourceInUseException
	if err := dynamo.CreateTable(ctx, client, cfg.TableName); err != nil && !errors.As(err, &inUse) {
		return nil, nil, err
	}
	logger.Info("table", "dynamodb", cfg.DynamoDBEndpoint, "name", cfg.TableName)
	return nopCloser{dynamo.New(client, cfg.TableName)}, nil, nil
}

type nopCloser struct{ store.Table }

func (nopCloser) Close() error { return nil }
