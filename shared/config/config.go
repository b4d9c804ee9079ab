// Package config reads the service's configuration from the environment, once, into a value. Every
// variable is documented in shared/config/README.md; nothing else reads the environment.
package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/quota"
)

// Mode says where the service runs.
type Mode string

const (
	// Development is the local stack: error bodies carry `detail`, session tokens are HS256.
	Development Mode = "development"
	// Production is the cloud: no `detail`, session tokens are verified against a JWKS.
	Production Mode = "production"
)

// Default request rates per credential (decision 7).
const (
	DefaultGenerationsPerMinute = 60
	DefaultRequestsPerMinute    = 600
)

// DefaultMaxVideos is the most videos a channel's pipeline holds (CSS_MAX_VIDEOS).
const DefaultMaxVideos = 5000

// Images in the cloud (shared/ai/bedrockimage). Stable Image Ultra 1.1 is an Active Stability AI model on
// Bedrock (Nova Canvas is Legacy), and the Stability text-to-image models are offered in us-west-2.
const (
	DefaultImageModel  = "stability.stable-image-ultra-v1:1"
	DefaultImageRegion = "us-west-2"
)

// The checks of model ids, regions and bucket names are loops rather than regexps: every function reads
// its configuration at start, and compiling the three patterns they replace at package init (the bucket's
// `{1,61}` unrolls into 61 instructions) cost each cold start 0.1-0.3 ms.

// validModelID says whether s can be a Bedrock model id, inference profile id or ARN: a letter or digit,
// then letters, digits and . : / _ - (the length, at most 2048, is checked apart).
func validModelID(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !(isLower(c) || 'A' <= c && c <= 'Z' || isDigit(c) || i > 0 && strings.IndexByte(".:/_-", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// validRegion says whether s has the form of an AWS region: two lower-case letters, one or more
// '-'-separated words of lower-case letters, and a number of one or two digits (us-east-1, us-gov-west-1).
func validRegion(s string) bool {
	parts := strings.Split(s, "-")
	if len(parts) < 3 || len(parts[0]) != 2 || !all(parts[0], isLower) {
		return false
	}
	for _, w := range parts[1 : len(parts)-1] {
		if w == "" || !all(w, isLower) {
			return false
		}
	}
	n := parts[len(parts)-1]
	return (len(n) == 1 || len(n) == 2) && all(n, isDigit)
}

// validBucket follows S3's bucket naming rules: 3..63 lower-case letters, digits, dots and hyphens,
// starting and ending with a letter or digit, no two dots in a row.
func validBucket(s string) bool {
	if len(s) < 3 || len(s) > 63 || strings.Contains(s, "..") {
		return false
	}
	alnum := func(c byte) bool { return isLower(c) || isDigit(c) }
	return alnum(s[0]) && alnum(s[len(s)-1]) && all(s, func(c byte) bool { return alnum(c) || c == '.' || c == '-' })
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func all(s string, ok func(byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// Provider names the text model adapter generation runs on.
type Provider string

const (
	ProviderBedrock Provider = "bedrock" // Amazon Bedrock Converse (shared/ai/bedrock)
	ProviderOpenAI  Provider = "openai"  // an OpenAI-compatible server (shared/ai/openai)
	ProviderOffline Provider = "offline" // the deterministic local model, no network
)

// Default Bedrock models: one family (Anthropic Claude), a large model for generation and a smaller one
// for grading, as global cross-Region inference profiles (these models take on-demand calls only through
// a profile). They are the newest Claude models Bedrock serves through Converse with a forced tool
// choice; template.yaml's GenerationModelId and GradingModelId default to them (a test checks).
const (
	DefaultBedrockGenerationModel = "global.anthropic.claude-sonnet-4-6"
	DefaultBedrockGradingModel    = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
)

// StructuredOutputModes are CSS_OPENAI_STRUCTURED_OUTPUT's values, "auto" first (shared/ai/openai's Modes;
// a test there checks they agree).
var StructuredOutputModes = []string{"auto", "json_schema", "json_object_schema", "json_object", "tools", "prompt"}

// Model time bounds. A call of a large model on a busy local server takes minutes; a run makes several
// calls and must end (failed, "the model did not answer in time") before the generation worker's own
// timeout, so that its failure is recorded rather than the job retried from scratch.
const (
	DefaultModelTimeout       = 120 * time.Second
	DefaultGenerationDeadline = 5 * time.Minute
	// GenerationWorkerTimeout is template.yaml's GenerationWorkerFunction Timeout (infra/deploy checks).
	GenerationWorkerTimeout = 6 * time.Minute
	// generationMargin is what the worker keeps after the deadline to record the failure.
	generationMargin = 30 * time.Second
)

// DefaultModelMaxAttempts bounds the calls of one model request, retries of throttling and transient
// errors included.
const DefaultModelMaxAttempts = 8

// Secret is a configuration value that must never reach a log: fmt and slog print it redacted.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string               { return redacted }
func (Secret) GoString() string             { return redacted }
func (Secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Reveal returns the value, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// Session-token verification defaults and bounds.
const (
	// DefaultJWKSMaxStale is how long a key set may go unrefreshed (the account system's JWKS URL failing)
	// before session tokens are refused.
	DefaultJWKSMaxStale = 24 * time.Hour
	// MinJWKSMaxStale is the key set's refresh age: a shorter cap would refuse tokens before a refresh is
	// even tried.
	MinJWKSMaxStale = time.Hour
	MaxJWKSMaxStale = 30 * 24 * time.Hour
	// DefaultJWTLeeway is the clock skew allowed on a session token's exp, nbf and iat.
	DefaultJWTLeeway = 30 * time.Second
	MaxJWTLeeway     = 5 * time.Minute
	// MinJWTSecretBytes is the shortest HS256 secret accepted (RFC 7518 3.2: at least the hash's 256 bits).
	MinJWTSecretBytes = 32
)

// lambdaMarkers are set by the Lambda runtime in every function's environment; either one means the
// process runs in Lambda, where development mode is refused.
var lambdaMarkers = []string{"AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_RUNTIME_API"}

// Config is the whole configuration.
type Config struct {
	Mode Mode
	// Version is the running build's version (set at link time, reported by /health).
	Version string

	// Local stack.
	Addr        string   // listen address, 127.0.0.1:$PORT
	DataDir     string   // CSS_DATA_DIR, default .data
	DevAPIKeys  []string // CSS_DEV_API_KEYS
	JWTSecret   string   // CSS_JWT_SECRET (HS256, development); generated into DataDir when empty
	ShutdownFor time.Duration

	// Cloud.
	TableName        string // CSS_TABLE_NAME
	DynamoDBEndpoint string // CSS_DYNAMODB_ENDPOINT (DynamoDB Local; empty in the cloud)
	SSMEndpoint      string // CSS_SSM_ENDPOINT (a loopback SSM in tests; empty in the cloud)
	Region           string // AWS_REGION
	// GenerationQueueURL is the generation queue's URL (CSS_GENERATION_QUEUE_URL; the template passes it
	// to every function), SQSEndpoint an SQS-compatible endpoint such as ElasticMQ (CSS_SQS_ENDPOINT;
	// empty in the cloud).
	GenerationQueueURL string
	SQSEndpoint        string
	// BedrockEndpoint replaces Bedrock Runtime's regional endpoint (CSS_BEDROCK_ENDPOINT; tests point it
	// at a server speaking its protocol on loopback; empty in the cloud).
	BedrockEndpoint string
	JWKSURL         string // CSS_JWKS_URL, https only
	JWTIssuer       string // CSS_JWT_ISSUER
	JWTAudience     string // CSS_JWT_AUDIENCE
	// JWKSMaxStale is how long the last good key set keeps verifying while the JWKS URL fails
	// (CSS_JWKS_MAX_STALE, default 24h); past it, session tokens answer 401.
	JWKSMaxStale time.Duration
	// JWTLeeway is the clock skew allowed on exp, nbf and iat (CSS_JWT_LEEWAY, default 30s).
	JWTLeeway time.Duration

	// Images.
	ImageModel   string // CSS_IMAGE_MODEL, the Bedrock image model id (default DefaultImageModel)
	ImageRegion  string // CSS_IMAGE_REGION, the region it is called in (default DefaultImageRegion)
	ImagesBucket string // CSS_IMAGES_BUCKET, the S3 bucket of generated pictures; empty: none (local files)
	// S3Endpoint replaces S3's regional endpoint, addressed path-style (CSS_S3_ENDPOINT; tests point it at
	// a server speaking S3's protocol on loopback; empty in the cloud).
	S3Endpoint string
	// PublicURL is the API's origin as clients reach it (CSS_PUBLIC_URL, e.g. https://api.example.com):
	// the base of the lasting picture URLs, <PublicURL>/files/<key>. The template gives the generation
	// worker the HTTP API's URL, or the PublicUrl parameter (a custom domain); the local stack defaults to
	// http://<its address>.
	PublicURL string

	// Limits (decision 7): configuration, not code.
	GenerationsPerMinute int // CSS_RATE_GENERATION_PER_MIN, default 60
	RequestsPerMinute    int // CSS_RATE_OTHER_PER_MIN, default 600
	MonthlyGenerations   int // CSS_MONTHLY_GENERATIONS, default 2000
	PromptBudget         int // CSS_PROMPT_TOKEN_BUDGET: the bound of one prompt, in estimated tokens, default 8000
	// ModelContextTokens is the model's context window in tokens (CSS_MODEL_CONTEXT_TOKENS; 0, the default:
	// not set, the prompt budget alone bounds prompts). A prompt gets at most what the window leaves after
	// the answer's 4,096 tokens; a request that cannot fit is refused at submit, naming the window.
	ModelContextTokens int
	MaxVideos          int // CSS_MAX_VIDEOS: the most videos a channel's pipeline holds, default 5000

	// MCPAllowedOrigins are the web origins (scheme://host[:port]) whose pages may call the MCP endpoint
	// (CSS_MCP_ALLOWED_ORIGINS, comma-separated; default none: a request with any Origin header answers 403).
	MCPAllowedOrigins []string

	// AuthCacheTTL bounds how long a resolved credential is reused (decision 2: at most 60 s in all).
	AuthCacheTTL time.Duration

	// Events and webhooks.
	// WebhookAllowLoopback lets webhook receivers be on loopback (CSS_WEBHOOK_ALLOW_LOOPBACK): on by default
	// in development mode, refused in production.
	WebhookAllowLoopback bool
	// WebhookKey is the material of the key that seals webhook signing secrets (CSS_WEBHOOK_KEY, at least
	// 32 characters). Locally, when empty, one is generated into DataDir/webhook-key.
	WebhookKey string
	// WebhookKeySecretARN names the Secrets Manager secret that holds that material in the cloud
	// (CSS_WEBHOOK_KEY_SECRET_ARN).
	WebhookKeySecretARN string
	// YouTubeTokenKey is the material of the key that seals the YouTube connection's refresh tokens
	// (CSS_YOUTUBE_TOKEN_KEY, at least 32 characters; decision 50). Locally, when empty, one is generated
	// into DataDir/youtube-token-key.
	YouTubeTokenKey Secret
	// YouTubeTokenKeySecretARN names the Secrets Manager secret that holds that material in the cloud
	// (CSS_YOUTUBE_TOKEN_KEY_SECRET_ARN), read only by the functions that use the connection.
	YouTubeTokenKeySecretARN string
	// WebhookRetrySchedule is the wait after each failed delivery attempt before the next
	// (CSS_WEBHOOK_RETRY_SCHEDULE, comma-separated Go durations, default 5m,15m,40m: decision 24).
	WebhookRetrySchedule []time.Duration
	// EventsQueueURL and WebhookDeliveriesQueueURL are the SQS queues of events and of webhook deliveries
	// (CSS_EVENTS_QUEUE_URL, CSS_WEBHOOK_DELIVERIES_QUEUE_URL).
	EventsQueueURL            string
	WebhookDeliveriesQueueURL string
	// SecretsEndpoint is a Secrets Manager endpoint for tests (CSS_SECRETS_ENDPOINT).
	SecretsEndpoint string

	// Models (see shared/ai/README.md).
	ModelProvider    Provider // CSS_MODEL_PROVIDER
	GenerationModel  string   // CSS_GENERATION_MODEL: the large model's id or name
	GradingModel     string   // CSS_GRADING_MODEL: the smaller model of the same family
	OpenAIBaseURL    string   // CSS_OPENAI_BASE_URL, e.g. http://127.0.0.1:11434/v1
	OpenAIAPIKey     Secret   // CSS_OPENAI_API_KEY, optional
	ModelMaxAttempts int      // CSS_MODEL_MAX_ATTEMPTS, default DefaultModelMaxAttempts
	// OpenAIStructuredOutput is how the OpenAI-compatible adapter asks for JSON
	// (CSS_OPENAI_STRUCTURED_OUTPUT, one of StructuredOutputModes, default "auto").
	OpenAIStructuredOutput string
	ModelTimeout           time.Duration // CSS_MODEL_TIMEOUT: one model call's bound
	GenerationDeadline     time.Duration // CSS_GENERATION_DEADLINE: a whole generation run's bound

	// Research (shared/research).
	Research Research
}

// Research sources.
const (
	SourceYouTube = "youtube"
	SourceOffline = "offline"
)

// Google is the OAuth 2.0 client of the YouTube connection (decision 42).
type Google struct {
	// ClientID is the OAuth client's id (CSS_GOOGLE_CLIENT_ID); without it the connection operations
	// answer 503 and /health says so.
	ClientID string
	// ClientSecret is its secret (CSS_GOOGLE_CLIENT_SECRET), redacted in fmt, slog and JSON; in the cloud
	// ClientSecretARN (CSS_GOOGLE_CLIENT_SECRET_ARN) names the Secrets Manager secret that holds it instead
	// (Secrets Manager, not SSM: its client is linked already for the sealing key, SSM's would add 5 MB to
	// the integrations and generation functions).
	ClientSecret    Secret
	ClientSecretARN string
	// AuthEndpoint, TokenEndpoint and RevokeEndpoint replace Google's (CSS_GOOGLE_AUTH_ENDPOINT,
	// CSS_GOOGLE_TOKEN_ENDPOINT, CSS_GOOGLE_REVOKE_ENDPOINT; tests, a stand-in server).
	AuthEndpoint, TokenEndpoint, RevokeEndpoint string
	// ConnectedURL is where the callback sends the owner once connected (CSS_YOUTUBE_CONNECTED_URL; "": a
	// page of the service's own).
	ConnectedURL string
}

// Missing names the variables the connection needs and lacks (none when it is configured).
func (g Google) Missing() []string {
	var out []string
	if g.ClientID == "" {
		out = append(out, "CSS_GOOGLE_CLIENT_ID")
	}
	if g.ClientSecret == "" && g.ClientSecretARN == "" {
		out = append(out, "CSS_GOOGLE_CLIENT_SECRET")
	}
	return out
}

// Research is the configuration of niche research (shared/research).
type Research struct {
	// Source is SourceYouTube or SourceOffline (CSS_RESEARCH_SOURCE). By default: youtube in production,
	// and in development when a key is configured; offline otherwise.
	Source string
	// YouTubeAPIKey is the Data API key (CSS_YOUTUBE_API_KEY), redacted in fmt, slog and JSON.
	YouTubeAPIKey Secret
	// YouTubeAPIKeyParam names the SSM SecureString parameter that holds the key in the cloud
	// (CSS_YOUTUBE_API_KEY_PARAM); the research worker reads it once at start.
	YouTubeAPIKeyParam string
	// YouTubeEndpoint overrides the Data API's base URL (CSS_YOUTUBE_ENDPOINT; tests).
	YouTubeEndpoint string
	// YouTubeAnalyticsEndpoint overrides YouTube Analytics v2's base URL for the daily sync of connected
	// channels (CSS_YOUTUBE_ANALYTICS_ENDPOINT; tests).
	YouTubeAnalyticsEndpoint string
	// YouTubeReportingEndpoint overrides the YouTube Reporting API's base URL for the sync's reach reports
	// (CSS_YOUTUBE_REPORTING_ENDPOINT; tests).
	YouTubeReportingEndpoint string
	// Google is the OAuth client the channel owners connect their YouTube channel with (decision 42).
	Google Google
	// DailyUnits, DailySearches and DailyStatsCalls are the deployment's YouTube quota budget per quota
	// day, one per bucket Google meters (shared/quota): the units shared by most calls
	// (CSS_YOUTUBE_DAILY_UNITS, 9000), search.list calls (CSS_YOUTUBE_DAILY_SEARCHES, 90) and
	// videos:batchGetStats calls (CSS_YOUTUBE_DAILY_STATS_CALLS, 9000).
	DailyUnits      int
	DailySearches   int
	DailyStatsCalls int
	// FreshDays, IntervalDays and WindowDays: niche research is reused while fresher than FreshDays
	// (CSS_RESEARCH_FRESH_DAYS, 7), a channel is researched again after IntervalDays
	// (CSS_RESEARCH_INTERVAL_DAYS, 7), over videos of the last WindowDays (CSS_RESEARCH_WINDOW_DAYS, 365).
	FreshDays    int
	IntervalDays int
	WindowDays   int
	// AccountSharePercent is the part of each daily bucket the on-demand runs (POST /research, keyword changes) of
	// one account may reserve per quota day (CSS_RESEARCH_ACCOUNT_SHARE_PERCENT, 20); ChannelRunsPerDay is
	// the most on-demand runs one channel may start per quota day (CSS_RESEARCH_CHANNEL_RUNS_PER_DAY, 3).
	// Scheduled refreshes count against neither (issue 19 item 6).
	AccountSharePercent int
	ChannelRunsPerDay   int
	// ScheduledReservePercent is the part of each daily bucket kept for scheduled refreshes: on-demand runs may not
	// reserve into it (CSS_RESEARCH_SCHEDULED_RESERVE_PERCENT, 30; 0 turns it off).
	ScheduledReservePercent int
	// DerivedMetrics says the project's owner has accepted the amendment to the YouTube API Developer
	// Policies on derived metrics (CSS_YOUTUBE_DERIVED_METRICS, false): until then answers leave out the
	// scores research computes from other channels' data (decision 48).
	DerivedMetrics bool
	// QueueURL is the research queue (CSS_RESEARCH_QUEUE_URL; SQS in the cloud).
	QueueURL string
	// ScheduleEvery is how often the local stack runs the research scheduler (CSS_RESEARCH_SCHEDULE_EVERY,
	// 1m; in the cloud an EventBridge schedule runs it).
	ScheduleEvery time.Duration
}

// Daily is the deployment's YouTube quota budget per quota day, in its three buckets.
func (r Research) Daily() quota.Cost {
	return quota.Cost{Units: r.DailyUnits, Searches: r.DailySearches, Stats: r.DailyStatsCalls}
}

// DefaultWebhookRetrySchedule is decision 24's: retries 5, 15 and 40 minutes after the previous attempt.
const DefaultWebhookRetrySchedule = "5m,15m,40m"

// maxRetryWait is the longest a queue message can be held back (SQS's visibility timeout).
const maxRetryWait = 12 * time.Hour

// maxRetries bounds the retry schedule.
const maxRetries = 10

// parseSchedule reads comma-separated waits, each above 0 and at most maxRetryWait.
func parseSchedule(name, v string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 || d > maxRetryWait {
			return nil, fmt.Errorf("%s: each wait must be a duration above 0 and at most %s, not %q", name, maxRetryWait, part)
		}
		out = append(out, d)
	}
	if len(out) > maxRetries {
		return nil, fmt.Errorf("%s: at most %d retries, not %d", name, maxRetries, len(out))
	}
	return out, nil
}

// Logger returns the service's JSON logger at the level CSS_LOG_LEVEL names (debug, info, warn, error;
// default info). It is read here, before the rest of the configuration, so start-up errors are logged too.
func Logger(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(os.Getenv("CSS_LOG_LEVEL"))); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// Version is stamped by the build (-ldflags "-X github.com/creatorstrategy/css/shared/config.Version=...").
var Version = "dev"

// FromEnv reads the configuration. mode is the caller's default (the local stack passes Development,
// Lambda functions Production); CSS_MODE overrides it.
func FromEnv(mode Mode) (Config, error) {
	return fromLookup(mode, os.LookupEnv)
}

func fromLookup(mode Mode, lookup func(string) (string, bool)) (Config, error) {
	get := func(name, def string) string {
		if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	c := Config{
		Mode:               Mode(get("CSS_MODE", string(mode))),
		Version:            Version,
		DataDir:            get("CSS_DATA_DIR", ".data"),
		JWTSecret:          get("CSS_JWT_SECRET", ""),
		TableName:          get("CSS_TABLE_NAME", ""),
		DynamoDBEndpoint:   get("CSS_DYNAMODB_ENDPOINT", ""),
		GenerationQueueURL: get("CSS_GENERATION_QUEUE_URL", ""),
		SQSEndpoint:        get("CSS_SQS_ENDPOINT", ""),
		BedrockEndpoint:    get("CSS_BEDROCK_ENDPOINT", ""),
		SSMEndpoint:        get("CSS_SSM_ENDPOINT", ""),
		Region:             get("AWS_REGION", "us-east-1"),
		JWKSURL:            get("CSS_JWKS_URL", ""),
		JWTIssuer:          get("CSS_JWT_ISSUER", ""),
		JWTAudience:        get("CSS_JWT_AUDIENCE", ""),
		ImageModel:         get("CSS_IMAGE_MODEL", DefaultImageModel),
		ImageRegion:        get("CSS_IMAGE_REGION", DefaultImageRegion),
		ImagesBucket:       get("CSS_IMAGES_BUCKET", ""),
		S3Endpoint:         get("CSS_S3_ENDPOINT", ""),
		PublicURL:          strings.TrimSuffix(get("CSS_PUBLIC_URL", ""), "/"),
		ShutdownFor:        10 * time.Second,
		AuthCacheTTL:       20 * time.Second,

		WebhookKey:                get("CSS_WEBHOOK_KEY", ""),
		WebhookKeySecretARN:       get("CSS_WEBHOOK_KEY_SECRET_ARN", ""),
		YouTubeTokenKey:           Secret(get("CSS_YOUTUBE_TOKEN_KEY", "")),
		YouTubeTokenKeySecretARN:  get("CSS_YOUTUBE_TOKEN_KEY_SECRET_ARN", ""),
		EventsQueueURL:            get("CSS_EVENTS_QUEUE_URL", ""),
		WebhookDeliveriesQueueURL: get("CSS_WEBHOOK_DELIVERIES_QUEUE_URL", ""),
		SecretsEndpoint:           get("CSS_SECRETS_ENDPOINT", ""),
	}
	if c.Mode != Development && c.Mode != Production {
		return Config{}, fmt.Errorf("CSS_MODE: must be %q or %q, not %q", Development, Production, c.Mode)
	}
	if !validModelID(c.ImageModel) || len(c.ImageModel) > 2048 {
		return Config{}, fmt.Errorf("CSS_IMAGE_MODEL: %q is not a Bedrock model id", c.ImageModel)
	}
	if !validRegion(c.ImageRegion) {
		return Config{}, fmt.Errorf("CSS_IMAGE_REGION: %q is not an AWS region", c.ImageRegion)
	}
	if c.ImagesBucket != "" && !validBucket(c.ImagesBucket) {
		return Config{}, fmt.Errorf("CSS_IMAGES_BUCKET: %q is not an S3 bucket name", c.ImagesBucket)
	}
	if c.S3Endpoint != "" {
		if err := checkBaseURL(c.S3Endpoint); err != nil {
			return Config{}, fmt.Errorf("CSS_S3_ENDPOINT: %w", err)
		}
	}
	if c.PublicURL != "" {
		if err := checkBaseURL(c.PublicURL); err != nil {
			return Config{}, fmt.Errorf("CSS_PUBLIC_URL: %w", err)
		}
	}
	// Development mode verifies HS256 tokens and puts `detail` in error bodies: never in a Lambda, whatever
	// CSS_MODE or the caller's default says.
	for _, marker := range lambdaMarkers {
		if v, ok := lookup(marker); ok && v != "" && c.Mode == Development {
			return Config{}, fmt.Errorf("CSS_MODE: development mode is refused inside AWS Lambda (%s is set)", marker)
		}
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < MinJWTSecretBytes {
		return Config{}, fmt.Errorf("CSS_JWT_SECRET: must be at least %d bytes, not %d", MinJWTSecretBytes, len(c.JWTSecret))
	}
	if c.JWKSURL != "" {
		if err := checkHTTPS(c.JWKSURL); err != nil {
			return Config{}, fmt.Errorf("CSS_JWKS_URL: %w", err)
		}
	}
	var err error
	if c.JWKSMaxStale, err = durationVar(get("CSS_JWKS_MAX_STALE", DefaultJWKSMaxStale.String()), "CSS_JWKS_MAX_STALE", MinJWKSMaxStale, MaxJWKSMaxStale); err != nil {
		return Config{}, err
	}
	if c.JWTLeeway, err = durationVar(get("CSS_JWT_LEEWAY", DefaultJWTLeeway.String()), "CSS_JWT_LEEWAY", 0, MaxJWTLeeway); err != nil {
		return Config{}, err
	}
	port, err := intVar(get("PORT", "8080"), "PORT", 1, 65535)
	if err != nil {
		return Config{}, err
	}
	c.Addr = fmt.Sprintf("127.0.0.1:%d", port)
	for _, k := range strings.Split(get("CSS_DEV_API_KEYS", ""), ",") {
		if k = strings.TrimSpace(k); k != "" {
			c.DevAPIKeys = append(c.DevAPIKeys, k)
		}
	}
	if c.MCPAllowedOrigins, err = parseOrigins(get("CSS_MCP_ALLOWED_ORIGINS", "")); err != nil {
		return Config{}, fmt.Errorf("CSS_MCP_ALLOWED_ORIGINS: %w", err)
	}
	limits := []struct {
		dst  *int
		name string
		def  string
	}{
		{&c.GenerationsPerMinute, "CSS_RATE_GENERATION_PER_MIN", strconv.Itoa(DefaultGenerationsPerMinute)},
		{&c.RequestsPerMinute, "CSS_RATE_OTHER_PER_MIN", strconv.Itoa(DefaultRequestsPerMinute)},
		{&c.MonthlyGenerations, "CSS_MONTHLY_GENERATIONS", "2000"},
		{&c.PromptBudget, "CSS_PROMPT_TOKEN_BUDGET", "8000"},
		{&c.MaxVideos, "CSS_MAX_VIDEOS", strconv.Itoa(DefaultMaxVideos)},
	}
	for _, l := range limits {
		if *l.dst, err = intVar(get(l.name, l.def), l.name, 1, 1_000_000_000); err != nil {
			return Config{}, err
		}
	}
	if v := get("CSS_MODEL_CONTEXT_TOKENS", ""); v != "" {
		if c.ModelContextTokens, err = intVar(v, "CSS_MODEL_CONTEXT_TOKENS", 512, 10_000_000); err != nil {
			return Config{}, err
		}
	}
	if c.Research, err = researchFrom(get, c.Mode); err != nil {
		return Config{}, err
	}
	if c.WebhookRetrySchedule, err = parseSchedule("CSS_WEBHOOK_RETRY_SCHEDULE", get("CSS_WEBHOOK_RETRY_SCHEDULE", DefaultWebhookRetrySchedule)); err != nil {
		return Config{}, err
	}
	switch v := get("CSS_WEBHOOK_ALLOW_LOOPBACK", ""); v {
	case "":
		c.WebhookAllowLoopback = c.Mode == Development
	case "true", "1":
		c.WebhookAllowLoopback = true
	case "false", "0":
	default:
		return Config{}, fmt.Errorf("CSS_WEBHOOK_ALLOW_LOOPBACK: must be true or false, not %q", v)
	}
	if c.WebhookKey != "" && len(c.WebhookKey) < 32 {
		return Config{}, fmt.Errorf("CSS_WEBHOOK_KEY: must be at least 32 characters")
	}
	if c.YouTubeTokenKey != "" && len(c.YouTubeTokenKey) < 32 {
		return Config{}, fmt.Errorf("CSS_YOUTUBE_TOKEN_KEY: must be at least 32 characters")
	}
	if c.Mode == Production {
		if c.TableName == "" {
			return Config{}, fmt.Errorf("CSS_TABLE_NAME: required in production mode")
		}
		if c.WebhookAllowLoopback {
			// Receivers on loopback would let a user's URL reach the function's own host.
			return Config{}, fmt.Errorf("CSS_WEBHOOK_ALLOW_LOOPBACK: only in development mode")
		}
	}
	if err := c.models(get); err != nil {
		return Config{}, err
	}
	return c, nil
}

func researchFrom(get func(name, def string) string, mode Mode) (Research, error) {
	r := Research{
		YouTubeAPIKey:            Secret(get("CSS_YOUTUBE_API_KEY", "")),
		YouTubeAPIKeyParam:       get("CSS_YOUTUBE_API_KEY_PARAM", ""),
		YouTubeEndpoint:          get("CSS_YOUTUBE_ENDPOINT", ""),
		YouTubeAnalyticsEndpoint: get("CSS_YOUTUBE_ANALYTICS_ENDPOINT", ""),
		YouTubeReportingEndpoint: get("CSS_YOUTUBE_REPORTING_ENDPOINT", ""),
		QueueURL:                 get("CSS_RESEARCH_QUEUE_URL", ""),
		Google: Google{
			ClientID:        get("CSS_GOOGLE_CLIENT_ID", ""),
			ClientSecret:    Secret(get("CSS_GOOGLE_CLIENT_SECRET", "")),
			ClientSecretARN: get("CSS_GOOGLE_CLIENT_SECRET_ARN", ""),
			AuthEndpoint:    get("CSS_GOOGLE_AUTH_ENDPOINT", ""),
			TokenEndpoint:   get("CSS_GOOGLE_TOKEN_ENDPOINT", ""),
			RevokeEndpoint:  get("CSS_GOOGLE_REVOKE_ENDPOINT", ""),
			ConnectedURL:    get("CSS_YOUTUBE_CONNECTED_URL", ""),
		},
	}
	source := SourceOffline
	if mode == Production || r.YouTubeAPIKey != "" || r.YouTubeAPIKeyParam != "" {
		source = SourceYouTube
	}
	r.Source = get("CSS_RESEARCH_SOURCE", source)
	if r.Source != SourceYouTube && r.Source != SourceOffline {
		return Research{}, fmt.Errorf("CSS_RESEARCH_SOURCE: must be %q or %q, not %q", SourceYouTube, SourceOffline, r.Source)
	}
	ints := []struct {
		dst      *int
		name     string
		def      int
		min, max int
	}{
		{&r.DailyUnits, "CSS_YOUTUBE_DAILY_UNITS", 9000, 1, 1_000_000_000},
		{&r.DailySearches, "CSS_YOUTUBE_DAILY_SEARCHES", 90, 1, 1_000_000_000},
		{&r.DailyStatsCalls, "CSS_YOUTUBE_DAILY_STATS_CALLS", 9000, 1, 1_000_000_000},
		{&r.FreshDays, "CSS_RESEARCH_FRESH_DAYS", 7, 1, 365},
		{&r.IntervalDays, "CSS_RESEARCH_INTERVAL_DAYS", 7, 1, 365},
		{&r.WindowDays, "CSS_RESEARCH_WINDOW_DAYS", 365, 1, 3650},
		{&r.AccountSharePercent, "CSS_RESEARCH_ACCOUNT_SHARE_PERCENT", 20, 1, 100},
		{&r.ChannelRunsPerDay, "CSS_RESEARCH_CHANNEL_RUNS_PER_DAY", 3, 1, 1000},
		{&r.ScheduledReservePercent, "CSS_RESEARCH_SCHEDULED_RESERVE_PERCENT", 30, 0, 90},
	}
	for _, v := range ints {
		n, err := intVar(get(v.name, strconv.Itoa(v.def)), v.name, v.min, v.max)
		if err != nil {
			return Research{}, err
		}
		*v.dst = n
	}
	switch v := get("CSS_YOUTUBE_DERIVED_METRICS", "false"); v {
	case "true", "1":
		r.DerivedMetrics = true
	case "false", "0":
	default:
		return Research{}, fmt.Errorf("CSS_YOUTUBE_DERIVED_METRICS: must be true or false, not %q", v)
	}
	every, err := time.ParseDuration(get("CSS_RESEARCH_SCHEDULE_EVERY", "1m"))
	if err != nil || every < time.Second {
		return Research{}, fmt.Errorf("CSS_RESEARCH_SCHEDULE_EVERY: must be a duration of 1s or more, like 1m")
	}
	r.ScheduleEvery = every
	return r, nil
}

// models reads the model settings. Without CSS_MODEL_PROVIDER, production runs on Bedrock; development
// runs on the OpenAI-compatible server CSS_OPENAI_BASE_URL names, or offline when it names none.
func (c *Config) models(get func(name, def string) string) error {
	c.OpenAIBaseURL = get("CSS_OPENAI_BASE_URL", "")
	c.OpenAIAPIKey = Secret(get("CSS_OPENAI_API_KEY", ""))
	def := ProviderOffline
	switch {
	case c.Mode == Production:
		def = ProviderBedrock
	case c.OpenAIBaseURL != "":
		def = ProviderOpenAI
	}
	c.ModelProvider = Provider(strings.ToLower(get("CSS_MODEL_PROVIDER", string(def))))
	var err error
	if c.ModelMaxAttempts, err = intVar(get("CSS_MODEL_MAX_ATTEMPTS", strconv.Itoa(DefaultModelMaxAttempts)), "CSS_MODEL_MAX_ATTEMPTS", 1, 10); err != nil {
		return err
	}
	c.OpenAIStructuredOutput = strings.ToLower(get("CSS_OPENAI_STRUCTURED_OUTPUT", StructuredOutputModes[0]))
	if !slices.Contains(StructuredOutputModes, c.OpenAIStructuredOutput) {
		return fmt.Errorf("CSS_OPENAI_STRUCTURED_OUTPUT: must be one of %s, not %q", strings.Join(StructuredOutputModes, ", "), c.OpenAIStructuredOutput)
	}
	if c.GenerationDeadline, err = durationVar(get("CSS_GENERATION_DEADLINE", DefaultGenerationDeadline.String()),
		"CSS_GENERATION_DEADLINE", time.Second, GenerationWorkerTimeout-generationMargin); err != nil {
		return fmt.Errorf("%w (it must end %s before the generation worker's %s timeout)", err, generationMargin, GenerationWorkerTimeout)
	}
	if c.ModelTimeout, err = durationVar(get("CSS_MODEL_TIMEOUT", DefaultModelTimeout.String()), "CSS_MODEL_TIMEOUT", time.Second, c.GenerationDeadline); err != nil {
		return fmt.Errorf("%w (at most CSS_GENERATION_DEADLINE)", err)
	}
	switch c.ModelProvider {
	case ProviderBedrock:
		c.GenerationModel = get("CSS_GENERATION_MODEL", DefaultBedrockGenerationModel)
		c.GradingModel = get("CSS_GRADING_MODEL", DefaultBedrockGradingModel)
	case ProviderOpenAI:
		if c.OpenAIBaseURL == "" {
			return fmt.Errorf("CSS_OPENAI_BASE_URL: required with CSS_MODEL_PROVIDER=openai (e.g. http://127.0.0.1:11434/v1 for Ollama)")
		}
		if err := checkBaseURL(c.OpenAIBaseURL); err != nil {
			return fmt.Errorf("CSS_OPENAI_BASE_URL: %w", err)
		}
		c.GenerationModel = get("CSS_GENERATION_MODEL", "")
		if c.GenerationModel == "" {
			return fmt.Errorf("CSS_GENERATION_MODEL: required with CSS_MODEL_PROVIDER=openai (the server's model name, e.g. qwen3:14b)")
		}
		c.GradingModel = get("CSS_GRADING_MODEL", c.GenerationModel)
	case ProviderOffline:
		c.GenerationModel, c.GradingModel = string(ProviderOffline), string(ProviderOffline)
	default:
		return fmt.Errorf("CSS_MODEL_PROVIDER: must be %q, %q or %q, not %q", ProviderBedrock, ProviderOpenAI, ProviderOffline, c.ModelProvider)
	}
	return nil
}

// checkBaseURL accepts an absolute http or https URL without credentials, query or fragment (the key
// goes in CSS_OPENAI_API_KEY, where it is kept out of logs). Its errors do not repeat the URL, which may
// hold a secret.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		if uerr, ok := errors.AsType[*url.Error](err); ok {
			err = uerr.Err
		}
		return fmt.Errorf("not a URL: %w", err)
	case u.User != nil:
		return errors.New("credentials in the URL: put the key in CSS_OPENAI_API_KEY")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("want an http or https URL")
	case u.Hostname() == "":
		return errors.New("no host")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return errors.New("no query or fragment, please")
	}
	return nil
}

// parseOrigins reads a comma-separated list of web origins: http or https, a host, an optional port,
// nothing else (no path, query, credentials, wildcard or "null"), lower-cased as browsers send them.
func parseOrigins(list string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(list, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" ||
			u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" ||
			u.ForceQuery || strings.Contains(u.Host, "*") {
			return nil, fmt.Errorf("%q is not an origin (scheme://host[:port], e.g. https://app.example)", o)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out, nil
}

// checkHTTPS accepts an absolute https URL with a host: the key set that says which tokens are genuine
// must not travel in clear text.
func checkHTTPS(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("must be an https:// URL with a host, not %q", raw)
	}
	return nil
}

func durationVar(v, name string, min, max time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < min || d > max {
		return 0, fmt.Errorf("%s: must be a duration from %s to %s, not %q", name, min, max, v)
	}
	return d, nil
}

func intVar(v, name string, min, max int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, fmt.Errorf("%s: must be an integer from %d to %d, not %q", name, min, max, v)
	}
	return n, nil
}
