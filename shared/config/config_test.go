package config

import (
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

func TestRejects(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"port zero":      {"PORT": "0"},
		"port too big":   {"PORT": "65536"},
		"port text":      {"PORT": "http"},
		"bad mode":       {"CSS_MODE": "staging"},
		"zero rate":      {"CSS_RATE_GENERATION_PER_MIN": "0"},
		"prod no table":  {"CSS_MODE": "production"},
		"negative quota": {"CSS_MONTHLY_GENERATIONS": "-1"},
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
