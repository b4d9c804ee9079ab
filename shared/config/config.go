// Package config reads the service's configuration from the environment, once, into a value. Every
// variable is documented in the README; nothing else reads the environment.
package config

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
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
	Region           string // AWS_REGION
	JWKSURL          string // CSS_JWKS_URL, https only
	JWTIssuer        string // CSS_JWT_ISSUER
	JWTAudience      string // CSS_JWT_AUDIENCE
	// JWKSMaxStale is how long the last good key set keeps verifying while the JWKS URL fails
	// (CSS_JWKS_MAX_STALE, default 24h); past it, session tokens answer 401.
	JWKSMaxStale time.Duration
	// JWTLeeway is the clock skew allowed on exp, nbf and iat (CSS_JWT_LEEWAY, default 30s).
	JWTLeeway time.Duration

	// Limits (decision 7): configuration, not code.
	GenerationsPerMinute int // CSS_RATE_GENERATION_PER_MIN, default 60
	RequestsPerMinute    int // CSS_RATE_OTHER_PER_MIN, default 600
	MonthlyGenerations   int // CSS_MONTHLY_GENERATIONS, default 2000

	// AuthCacheTTL bounds how long a resolved credential is reused (decision 2: at most 60 s in all).
	AuthCacheTTL time.Duration
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
		Mode:             Mode(get("CSS_MODE", string(mode))),
		Version:          Version,
		DataDir:          get("CSS_DATA_DIR", ".data"),
		JWTSecret:        get("CSS_JWT_SECRET", ""),
		TableName:        get("CSS_TABLE_NAME", ""),
		DynamoDBEndpoint: get("CSS_DYNAMODB_ENDPOINT", ""),
		Region:           get("AWS_REGION", "us-east-1"),
		JWKSURL:          get("CSS_JWKS_URL", ""),
		JWTIssuer:        get("CSS_JWT_ISSUER", ""),
		JWTAudience:      get("CSS_JWT_AUDIENCE", ""),
		ShutdownFor:      10 * time.Second,
		AuthCacheTTL:     20 * time.Second,
	}
	if c.Mode != Development && c.Mode != Production {
		return Config{}, fmt.Errorf("CSS_MODE: must be %q or %q, not %q", Development, Production, c.Mode)
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
	limits := []struct {
		dst  *int
		name string
		def  string
	}{
		{&c.GenerationsPerMinute, "CSS_RATE_GENERATION_PER_MIN", strconv.Itoa(DefaultGenerationsPerMinute)},
		{&c.RequestsPerMinute, "CSS_RATE_OTHER_PER_MIN", strconv.Itoa(DefaultRequestsPerMinute)},
		{&c.MonthlyGenerations, "CSS_MONTHLY_GENERATIONS", "2000"},
	}
	for _, l := range limits {
		if *l.dst, err = intVar(get(l.name, l.def), l.name, 1, 1_000_000_000); err != nil {
			return Config{}, err
		}
	}
	if c.Mode == Production {
		if c.TableName == "" {
			return Config{}, fmt.Errorf("CSS_TABLE_NAME: required in production mode")
		}
	}
	return c, nil
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
