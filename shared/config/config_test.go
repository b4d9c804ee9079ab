package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := fromLookup(Development, lookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.DataDir != ".data" || c.Mode != Development {
		t.Fatalf("defaults: %+v", c)
	}
	if c.GenerationsPerMinute != 60 || c.RequestsPerMinute != 600 || c.MonthlyGenerations != 2000 {
		t.Fatalf("limits: %+v", c)
	}
	if c.JWKSMaxStale != 24*time.Hour || c.JWTLeeway != 30*time.Second {
		t.Fatalf("session token defaults: max stale %v, leeway %v; want 24h and 30s", c.JWKSMaxStale, c.JWTLeeway)
	}
	if c.AuthCacheTTL*3 > 60e9 {
		t.Fatalf("auth cache TTL %v leaves no room within decision 2's 60 s", c.AuthCacheTTL)
	}
}

// Derived metrics stay off until the owner's acceptance is configured (decision 48).
func TestDerivedMetrics(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true} {
		env := map[string]string{}
		if v != "" {
			env["CSS_YOUTUBE_DERIVED_METRICS"] = v
		}
		c, err := fromLookup(Development, lookup(env))
		if err != nil {
			t.Fatal(err)
		}
		if c.Research.DerivedMetrics != want {
			t.Errorf("CSS_YOUTUBE_DERIVED_METRICS=%q: %v, want %v", v, c.Research.DerivedMetrics, want)
		}
	}
}

func TestParse(t *testing.T) {
	c, err := fromLookup(Development, lookup(map[string]string{
		"PORT": "9090", "CSS_DEV_API_KEYS": " a , ,b", "CSS_RATE_OTHER_PER_MIN": "5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9090" || strings.Join(c.DevAPIKeys, "|") != "a|b" || c.RequestsPerMinute != 5 {
		t.Fatalf("%+v", c)
	}
}

// Each bound of the session-token settings is accepted at its edge and refused one step past it.
func TestSessionTokenSettings(t *testing.T) {
	secret32 := strings.Repeat("s", 32)
	tests := []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"https JWKS", map[string]string{"CSS_JWKS_URL": "https://idp.example/.well-known/jwks.json"}, true},
		{"http JWKS", map[string]string{"CSS_JWKS_URL": "http://idp.example/.well-known/jwks.json"}, false},
		{"JWKS without a host", map[string]string{"CSS_JWKS_URL": "https:///jwks.json"}, false},
		{"relative JWKS", map[string]string{"CSS_JWKS_URL": "idp.example/jwks.json"}, false},
		{"JWKS not a URL", map[string]string{"CSS_JWKS_URL": "https://idp.example/%zz"}, false},
		{"secret of 32 bytes", map[string]string{"CSS_JWT_SECRET": secret32}, true},
		{"secret of 31 bytes", map[string]string{"CSS_JWT_SECRET": secret32[1:]}, false},
		{"max stale 1h", map[string]string{"CSS_JWKS_MAX_STALE": "1h"}, true},
		{"max stale under 1h", map[string]string{"CSS_JWKS_MAX_STALE": "59m59s"}, false},
		{"max stale 720h", map[string]string{"CSS_JWKS_MAX_STALE": "720h"}, true},
		{"max stale over 720h", map[string]string{"CSS_JWKS_MAX_STALE": "720h1s"}, false},
		{"max stale text", map[string]string{"CSS_JWKS_MAX_STALE": "a day"}, false},
		{"no leeway", map[string]string{"CSS_JWT_LEEWAY": "0s"}, true},
		{"negative leeway", map[string]string{"CSS_JWT_LEEWAY": "-1s"}, false},
		{"leeway 5m", map[string]string{"CSS_JWT_LEEWAY": "5m"}, true},
		{"leeway over 5m", map[string]string{"CSS_JWT_LEEWAY": "5m1s"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := fromLookup(Development, lookup(tt.env))
			if (err == nil) != tt.ok {
				t.Fatalf("fromLookup(%v) = %v; want ok %t", tt.env, err, tt.ok)
			}
			if !tt.ok {
				return
			}
			if v, ok := tt.env["CSS_JWKS_MAX_STALE"]; ok && c.JWKSMaxStale.String() != mustDuration(t, v).String() {
				t.Errorf("JWKSMaxStale = %v, want %s", c.JWKSMaxStale, v)
			}
			if v, ok := tt.env["CSS_JWT_LEEWAY"]; ok && c.JWTLeeway != mustDuration(t, v) {
				t.Errorf("JWTLeeway = %v, want %s", c.JWTLeeway, v)
			}
			if v, ok := tt.env["CSS_JWKS_URL"]; ok && c.JWKSURL != v {
				t.Errorf("JWKSURL = %q, want %q", c.JWKSURL, v)
			}
			if v, ok := tt.env["CSS_JWT_SECRET"]; ok && c.JWTSecret != v {
				t.Errorf("JWTSecret not kept")
			}
		})
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// In a Lambda (the runtime sets either variable), development mode is refused, whether CSS_MODE asks for
// it or the caller's default does; production is unaffected.
func TestDevelopmentModeRefusedInLambda(t *testing.T) {
	for _, marker := range []string{"AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_RUNTIME_API"} {
		for _, tc := range []struct {
			def  Mode
			env  map[string]string
			want bool // accepted
		}{
			{Development, map[string]string{marker: "css-videos"}, false},
			{Production, map[string]string{marker: "css-videos", "CSS_MODE": "development", "CSS_TABLE_NAME": "t"}, false},
			{Production, map[string]string{marker: "css-videos", "CSS_TABLE_NAME": "t"}, true},
			{Development, map[string]string{marker: ""}, true}, // set but empty: not a Lambda
		} {
			c, err := fromLookup(tc.def, lookup(tc.env))
			if (err == nil) != tc.want {
				t.Errorf("default %s, env %v: %+v, %v; want accepted %t", tc.def, tc.env, c.Mode, err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), marker) {
				t.Errorf("error %q does not name %s", err, marker)
			}
		}
	}
}

// CSS_MODEL_CONTEXT_TOKENS: unset is 0 (no window), its bounds are 512 and 10,000,000.
func TestModelContextTokens(t *testing.T) {
	for v, want := range map[string]int{"": 0, "512": 512, "8192": 8192, "10000000": 10_000_000} {
		env := map[string]string{}
		if v != "" {
			env["CSS_MODEL_CONTEXT_TOKENS"] = v
		}
		c, err := fromLookup(Development, lookup(env))
		if err != nil || c.ModelContextTokens != want {
			t.Errorf("%q: %d, %v; want %d", v, c.ModelContextTokens, err, want)
		}
	}
	if _, err := fromLookup(Development, lookup(map[string]string{"CSS_MODEL_CONTEXT_TOKENS": "10000001"})); err == nil {
		t.Error("10000001 accepted")
	}
}

func TestRejects(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"port zero":            {"PORT": "0"},
		"port too big":         {"PORT": "65536"},
		"port text":            {"PORT": "http"},
		"bad mode":             {"CSS_MODE": "staging"},
		"zero rate":            {"CSS_RATE_GENERATION_PER_MIN": "0"},
		"prod no table":        {"CSS_MODE": "production"},
		"negative quota":       {"CSS_MONTHLY_GENERATIONS": "-1"},
		"derived metrics yes":  {"CSS_YOUTUBE_DERIVED_METRICS": "yes"},
		"context 511 tokens":   {"CSS_MODEL_CONTEXT_TOKENS": "511"},
		"context not a number": {"CSS_MODEL_CONTEXT_TOKENS": "8k"},
	} {
		if _, err := fromLookup(Development, lookup(env)); err == nil {
			t.Errorf("%s: accepted %v", name, env)
		}
	}
}

func TestLoggerLevel(t *testing.T) {
	for level, debugShown := range map[string]bool{"debug": true, "DEBUG": true, "": false, "warn": false, "nonsense": false} {
		t.Setenv("CSS_LOG_LEVEL", level)
		var b strings.Builder
		l := Logger(&b)
		l.Debug("d")
		l.Info("i")
		if strings.Contains(b.String(), `"msg":"d"`) != debugShown {
			t.Errorf("CSS_LOG_LEVEL=%q: %s", level, b.String())
		}
	}
}

func TestImages(t *testing.T) {
	c, err := fromLookup(Development, lookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.ImageModel != "stability.stable-image-ultra-v1:1" || c.ImageRegion != "us-west-2" || c.ImagesBucket != "" {
		t.Errorf("defaults: model %q, region %q, bucket %q", c.ImageModel, c.ImageRegion, c.ImagesBucket)
	}
	for _, tc := range []struct {
		env   map[string]string
		check func(Config) bool
	}{
		{map[string]string{"CSS_IMAGE_MODEL": " stability.sd3-5-large-v1:0 "}, func(c Config) bool { return c.ImageModel == "stability.sd3-5-large-v1:0" }},
		{map[string]string{"CSS_IMAGE_MODEL": "arn:aws:bedrock:us-west-2::foundation-model/stability.stable-image-core-v1:1"},
			func(c Config) bool { return strings.HasPrefix(c.ImageModel, "arn:aws:bedrock:") }},
		{map[string]string{"CSS_IMAGE_MODEL": strings.Repeat("m", 2048)}, func(c Config) bool { return len(c.ImageModel) == 2048 }},
		{map[string]string{"CSS_IMAGE_MODEL": ""}, func(c Config) bool { return c.ImageModel == DefaultImageModel }},
		{map[string]string{"CSS_IMAGE_REGION": "eu-central-1"}, func(c Config) bool { return c.ImageRegion == "eu-central-1" }},
		{map[string]string{"CSS_IMAGE_REGION": "us-gov-west-1"}, func(c Config) bool { return c.ImageRegion == "us-gov-west-1" }},
		{map[string]string{"CSS_IMAGES_BUCKET": "css-prod-imagesbucket-1a2b3c"}, func(c Config) bool { return c.ImagesBucket == "css-prod-imagesbucket-1a2b3c" }},
		{map[string]string{"CSS_IMAGES_BUCKET": "abc"}, func(c Config) bool { return c.ImagesBucket == "abc" }},
		{map[string]string{"CSS_IMAGES_BUCKET": strings.Repeat("b", 63)}, func(c Config) bool { return len(c.ImagesBucket) == 63 }},
		{map[string]string{"CSS_IMAGES_BUCKET": "my.images.bucket"}, func(c Config) bool { return c.ImagesBucket == "my.images.bucket" }},
		{map[string]string{"CSS_S3_ENDPOINT": "http://127.0.0.1:9000"}, func(c Config) bool { return c.S3Endpoint == "http://127.0.0.1:9000" }},
		{map[string]string{"CSS_PUBLIC_URL": "https://api.example.com/"}, func(c Config) bool { return c.PublicURL == "https://api.example.com" }},
		{map[string]string{"CSS_PUBLIC_URL": "https://abc123.execute-api.eu-west-1.amazonaws.com"},
			func(c Config) bool { return c.PublicURL == "https://abc123.execute-api.eu-west-1.amazonaws.com" }},
		{map[string]string{"CSS_PUBLIC_URL": "https://example.com/css"}, func(c Config) bool { return c.PublicURL == "https://example.com/css" }},
		{map[string]string{}, func(c Config) bool { return c.PublicURL == "" && c.S3Endpoint == "" }},
	} {
		c, err := fromLookup(Production, lookup(merge(tc.env, map[string]string{"CSS_TABLE_NAME": "t"})))
		if err != nil || !tc.check(c) {
			t.Errorf("%v: %+v, %v", tc.env, c, err)
		}
	}
	for _, env := range []map[string]string{
		{"CSS_IMAGE_MODEL": "stability model"},
		{"CSS_IMAGE_MODEL": "../etc/passwd"},
		{"CSS_IMAGE_MODEL": "model?x=1"},
		{"CSS_IMAGE_MODEL": strings.Repeat("m", 2049)},
		{"CSS_IMAGE_REGION": "us_west_2"},
		{"CSS_IMAGE_REGION": "US-WEST-2"},
		{"CSS_IMAGE_REGION": "uswest2"},
		{"CSS_IMAGES_BUCKET": "ab"},
		{"CSS_IMAGES_BUCKET": strings.Repeat("b", 64)},
		{"CSS_IMAGES_BUCKET": "Images"},
		{"CSS_IMAGES_BUCKET": "-images"},
		{"CSS_IMAGES_BUCKET": "images-"},
		{"CSS_IMAGES_BUCKET": "my..images"},
		{"CSS_IMAGES_BUCKET": "my_images"},
		{"CSS_IMAGES_BUCKET": "s3://my-images"},
		{"CSS_S3_ENDPOINT": "127.0.0.1:9000"},
		{"CSS_S3_ENDPOINT": "ftp://127.0.0.1"},
		{"CSS_PUBLIC_URL": "api.example.com"},
		{"CSS_PUBLIC_URL": "https://api.example.com/?x=1"},
		{"CSS_PUBLIC_URL": "https://api.example.com/#top"},
		{"CSS_PUBLIC_URL": "https://user:pw@api.example.com"},
		{"CSS_PUBLIC_URL": "javascript:alert(1)"},
	} {
		if _, err := fromLookup(Development, lookup(env)); err == nil {
			t.Errorf("accepted %v", env)
		}
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
func TestModels(t *testing.T) {
	const ollama = "http://127.0.0.1:11434/v1"
	for _, tc := range []struct {
		name              string
		mode              Mode
		env               map[string]string
		provider          Provider
		generation, grade string
		baseURL           string
		attempts          int
	}{
		{name: "development, nothing set: offline", mode: Development, provider: ProviderOffline,
			generation: "offline", grade: "offline", attempts: DefaultModelMaxAttempts},
		{name: "production, nothing set: Bedrock defaults", mode: Production, env: map[string]string{"CSS_TABLE_NAME": "t"},
			provider: ProviderBedrock, generation: DefaultBedrockGenerationModel, grade: DefaultBedrockGradingModel, attempts: DefaultModelMaxAttempts},
		{name: "development with a base URL: openai", mode: Development,
			env:      map[string]string{"CSS_OPENAI_BASE_URL": ollama, "CSS_GENERATION_MODEL": "qwen3:14b"},
			provider: ProviderOpenAI, generation: "qwen3:14b", grade: "qwen3:14b", baseURL: ollama, attempts: DefaultModelMaxAttempts},
		{name: "openai with both models", mode: Development,
			env: map[string]string{"CSS_MODEL_PROVIDER": "openai", "CSS_OPENAI_BASE_URL": "https://api.openai.com/v1",
				"CSS_GENERATION_MODEL": "gpt-5", "CSS_GRADING_MODEL": "gpt-5-mini", "CSS_MODEL_MAX_ATTEMPTS": "1"},
			provider: ProviderOpenAI, generation: "gpt-5", grade: "gpt-5-mini", baseURL: "https://api.openai.com/v1", attempts: 1},
		{name: "bedrock chosen locally, models overridden", mode: Development,
			env: map[string]string{"CSS_MODEL_PROVIDER": "Bedrock", "CSS_GENERATION_MODEL": "us.amazon.nova-2-lite-v1:0",
				"CSS_MODEL_MAX_ATTEMPTS": "10"},
			provider: ProviderBedrock, generation: "us.amazon.nova-2-lite-v1:0", grade: DefaultBedrockGradingModel, attempts: 10},
		{name: "offline chosen in production", mode: Production, env: map[string]string{"CSS_TABLE_NAME": "t", "CSS_MODEL_PROVIDER": "offline"},
			provider: ProviderOffline, generation: "offline", grade: "offline", attempts: DefaultModelMaxAttempts},
		{name: "offline chosen despite a base URL", mode: Development,
			env:      map[string]string{"CSS_MODEL_PROVIDER": "offline", "CSS_OPENAI_BASE_URL": ollama},
			provider: ProviderOffline, generation: "offline", grade: "offline", baseURL: ollama, attempts: DefaultModelMaxAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := fromLookup(tc.mode, lookup(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.ModelProvider != tc.provider || c.GenerationModel != tc.generation || c.GradingModel != tc.grade ||
				c.OpenAIBaseURL != tc.baseURL || c.ModelMaxAttempts != tc.attempts {
				t.Errorf("got %s %q %q %q %d", c.ModelProvider, c.GenerationModel, c.GradingModel, c.OpenAIBaseURL, c.ModelMaxAttempts)
			}
		})
	}
}

func TestModelTimeBounds(t *testing.T) {
	c, err := fromLookup(Development, lookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.ModelTimeout != DefaultModelTimeout || c.GenerationDeadline != DefaultGenerationDeadline || c.OpenAIStructuredOutput != "auto" {
		t.Errorf("defaults: %s %s %q", c.ModelTimeout, c.GenerationDeadline, c.OpenAIStructuredOutput)
	}
	if DefaultGenerationDeadline > GenerationWorkerTimeout-generationMargin {
		t.Error("the default deadline is not below the worker's timeout")
	}
	c, err = fromLookup(Development, lookup(map[string]string{"CSS_GENERATION_DEADLINE": "5m30s", "CSS_MODEL_TIMEOUT": "5m30s",
		"CSS_OPENAI_STRUCTURED_OUTPUT": "JSON_Object_Schema"}))
	if err != nil || c.GenerationDeadline != 330*time.Second || c.ModelTimeout != 330*time.Second || c.OpenAIStructuredOutput != "json_object_schema" {
		t.Fatalf("the largest bounds: %v %s %s %q", err, c.GenerationDeadline, c.ModelTimeout, c.OpenAIStructuredOutput)
	}
}

func TestModelsRejects(t *testing.T) {
	openai := func(url string) map[string]string {
		return map[string]string{"CSS_MODEL_PROVIDER": "openai", "CSS_OPENAI_BASE_URL": url, "CSS_GENERATION_MODEL": "m"}
	}
	for _, tc := range []struct {
		name, want string
		env        map[string]string
	}{
		{"unknown provider", "CSS_MODEL_PROVIDER", map[string]string{"CSS_MODEL_PROVIDER": "anthropic"}},
		{"openai without a base URL", "CSS_OPENAI_BASE_URL", map[string]string{"CSS_MODEL_PROVIDER": "openai", "CSS_GENERATION_MODEL": "m"}},
		{"openai without a model", "CSS_GENERATION_MODEL", map[string]string{"CSS_OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}},
		{"relative URL", "CSS_OPENAI_BASE_URL", openai("/v1")},
		{"no scheme", "CSS_OPENAI_BASE_URL", openai("127.0.0.1:11434/v1")},
		{"other scheme", "CSS_OPENAI_BASE_URL", openai("ftp://127.0.0.1/v1")},
		{"no host", "CSS_OPENAI_BASE_URL", openai("http:///v1")},
		{"port only", "CSS_OPENAI_BASE_URL", openai("http://:8080/v1")},
		{"bad escape", "CSS_OPENAI_BASE_URL", openai("http://127.0.0.1/%zz")},
		{"query", "CSS_OPENAI_BASE_URL", openai("http://127.0.0.1/v1?key=x")},
		{"fragment", "CSS_OPENAI_BASE_URL", openai("http://127.0.0.1/v1#x")},
		{"credentials", "CSS_OPENAI_BASE_URL", openai("http://user:hunter2@127.0.0.1/v1")},
		{"attempts zero", "CSS_MODEL_MAX_ATTEMPTS", map[string]string{"CSS_MODEL_MAX_ATTEMPTS": "0"}},
		{"attempts eleven", "CSS_MODEL_MAX_ATTEMPTS", map[string]string{"CSS_MODEL_MAX_ATTEMPTS": "11"}},
		{"attempts text", "CSS_MODEL_MAX_ATTEMPTS", map[string]string{"CSS_MODEL_MAX_ATTEMPTS": "many"}},
		{"unknown structured output", "CSS_OPENAI_STRUCTURED_OUTPUT", map[string]string{"CSS_OPENAI_STRUCTURED_OUTPUT": "grammar"}},
		{"deadline at the worker's timeout", "CSS_GENERATION_DEADLINE", map[string]string{"CSS_GENERATION_DEADLINE": GenerationWorkerTimeout.String()}},
		{"deadline inside the margin", "CSS_GENERATION_DEADLINE", map[string]string{"CSS_GENERATION_DEADLINE": "5m31s"}},
		{"deadline zero", "CSS_GENERATION_DEADLINE", map[string]string{"CSS_GENERATION_DEADLINE": "0s"}},
		{"deadline text", "CSS_GENERATION_DEADLINE", map[string]string{"CSS_GENERATION_DEADLINE": "soon"}},
		{"model timeout over the deadline", "CSS_MODEL_TIMEOUT", map[string]string{"CSS_GENERATION_DEADLINE": "1m", "CSS_MODEL_TIMEOUT": "61s"}},
		{"model timeout under a second", "CSS_MODEL_TIMEOUT", map[string]string{"CSS_MODEL_TIMEOUT": "500ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fromLookup(Development, lookup(tc.env))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want+":") {
				t.Fatalf("err %v, want one about %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
}

// The API key is kept out of fmt, slog and JSON; only Reveal gives it.
func TestSecretNeverPrinted(t *testing.T) {
	const key = "sk-proj-do-not-print-me"
	c, err := fromLookup(Development, lookup(map[string]string{
		"CSS_OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "CSS_GENERATION_MODEL": "m", "CSS_OPENAI_API_KEY": key,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.OpenAIAPIKey.Reveal() != key {
		t.Fatalf("Reveal: %q", c.OpenAIAPIKey.Reveal())
	}
	var logged strings.Builder
	l := slog.New(slog.NewJSONHandler(&logged, nil))
	l.Info("config", "key", c.OpenAIAPIKey, "cfg", c)
	jsonKey, _ := json.Marshal(c)
	for name, out := range map[string]string{
		"%v": fmt.Sprintf("%v", c), "%+v": fmt.Sprintf("%+v", c), "%#v": fmt.Sprintf("%#v", c), "%s": fmt.Sprintf("%s", c.OpenAIAPIKey),
		"slog": logged.String(), "json": string(jsonKey),
	} {
		if strings.Contains(out, key) {
			t.Errorf("%s prints the key: %s", name, out)
		}
	}
}

// The loops that check model ids, regions and bucket names say what the patterns they replaced said, on
// every string of up to four characters over an alphabet of each rule's edges, and on longer cases.
func TestNameChecksMatchTheirPatterns(t *testing.T) {
	checks := []struct {
		name    string
		check   func(string) bool
		pattern *regexp.Regexp
		extra   func(string) bool // what the old code checked besides the pattern
	}{
		{"model id", validModelID, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.:/_-]*$`), nil},
		{"region", validRegion, regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`), nil},
		{"bucket", validBucket, regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`),
			func(s string) bool { return !strings.Contains(s, "..") }},
	}
	const alphabet = "aZ0.-:/_ \n\xc3"
	var all []string
	var grow func(prefix string)
	grow = func(prefix string) {
		all = append(all, prefix)
		if len(prefix) < 4 {
			for i := range len(alphabet) {
				grow(prefix + alphabet[i:i+1])
			}
		}
	}
	grow("")
	all = append(all, "us-east-1", "us-gov-west-1", "eu-central-12", "eu-central-123", "eu--1", "eu-central-",
		"-eu-central-1", "eu-central-1-", "us-east-1\n", "usa-east-1", "u-east-1", "us-east-a", "us-1",
		"css-prod-imagesbucket-1a2b3c", strings.Repeat("b", 62), strings.Repeat("b", 63), strings.Repeat("b", 64),
		"my.images.bucket", "my..images", "a.-b", "a-.b", "stability.stable-image-ultra-v1:1",
		"arn:aws:bedrock:us-west-2::foundation-model/stability.sd3-5-large-v1:0", "global.anthropic.claude-v2")
	for _, c := range checks {
		for _, s := range all {
			want := c.pattern.MatchString(s) && (c.extra == nil || c.extra(s))
			if got := c.check(s); got != want {
				t.Errorf("%s %q: %v, the pattern says %v", c.name, s, got, want)
			}
		}
	}
}

// CSS_MCP_ALLOWED_ORIGINS: none by default; a list of origins, lower-cased; anything not an origin refused.
func TestMCPAllowedOrigins(t *testing.T) {
	c, err := fromLookup(Development, lookup(map[string]string{}))
	if err != nil || c.MCPAllowedOrigins != nil {
		t.Fatalf("default: %v %v", c.MCPAllowedOrigins, err)
	}
	c, err = fromLookup(Development, lookup(map[string]string{"CSS_MCP_ALLOWED_ORIGINS": " https://App.example , ,http://localhost:5173/"}))
	if err != nil || strings.Join(c.MCPAllowedOrigins, "|") != "https://app.example|http://localhost:5173" {
		t.Fatalf("%v %v", c.MCPAllowedOrigins, err)
	}
	for _, bad := range []string{"null", "*", "https://*.example", "app.example", "ftp://app.example", "https://app.example/path",
		"https://user@app.example", "https://app.example?x=1", "https://"} {
		if _, err := fromLookup(Development, lookup(map[string]string{"CSS_MCP_ALLOWED_ORIGINS": bad})); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
