package config

import (
	"strings"
	"testing"
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
