package main

import (
	"encoding/json"
	"testing"
)

// The local stack on the offline sample, which is not YouTube's data, shows derived metrics unless told
// otherwise; with a YouTube key it keeps the deployment's default, off (decision 48).
func TestLocalStackDerivedMetrics(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		want string
	}{
		"offline sample":          {nil, "ok"},
		"offline sample, set off": {map[string]string{"CSS_YOUTUBE_DERIVED_METRICS": "false"}, "degraded"},
		"youtube key":             {map[string]string{"CSS_YOUTUBE_API_KEY": "AIza-not-a-key", "CSS_YOUTUBE_ENDPOINT": "http://127.0.0.1:20999"}, "degraded"},
		"youtube key, accepted":   {map[string]string{"CSS_YOUTUBE_API_KEY": "AIza-not-a-key", "CSS_YOUTUBE_ENDPOINT": "http://127.0.0.1:20999", "CSS_YOUTUBE_DERIVED_METRICS": "true"}, "ok"},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey, "CSS_RESEARCH_SCHEDULE_EVERY": "1h"}
			for k, v := range c.env {
				env[k] = v
			}
			base, _, stop := start(t, env)
			defer stop()
			var health struct {
				Services struct{ YouTubeDerivedMetrics string }
			}
			if status, body := call(t, "GET", base+"/api/v1/health", "", ""); status != 200 || json.Unmarshal([]byte(body), &health) != nil ||
				health.Services.YouTubeDerivedMetrics != c.want {
				t.Errorf("/health: %d %s, want youtubeDerivedMetrics %s", status, body, c.want)
			}
		})
	}
}
