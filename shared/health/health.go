// Package health reports whether the service and what it depends on are working.
package health

import (
	"cmp"
	"context"
	"sync"
	"time"
)

// State is a service's health.
type State string

const (
	OK       State = "ok"
	Degraded State = "degraded"
	Down     State = "down"
)

// Status is HealthStatus in the API.
type Status struct {
	Status    State     `json:"status"`
	Version   string    `json:"version"`
	Timestamp time.Time `json:"timestamp"`
	Services  Services  `json:"services"`
	Models    Models    `json:"models"`
}

// Services is the state of each part.
type Services struct {
	API      State `json:"api"`
	Database State `json:"database"`
	AI       State `json:"ai"`
	Images   State `json:"images"`
	// YouTubeConnection is ok when the Google OAuth client is configured, degraded when not (the connection
	// operations then answer 503). It does not change the overall status: a deployment may run without it.
	YouTubeConnection State `json:"youtubeConnection,omitempty"`
	// AIReason says why ai is not ok, when the model server's probe found out.
	AIReason string `json:"aiReason,omitempty"`
	// YouTubeDerivedMetrics is ok when the project's owner has accepted YouTube's derived-metrics amendment,
	// degraded when not (answers then leave out the scores research computes from other channels' data,
	// decision 48), with the reason; like YouTubeConnection, not counted in the overall status.
	YouTubeDerivedMetrics       State  `json:"youtubeDerivedMetrics,omitempty"`
	YouTubeDerivedMetricsReason string `json:"youtubeDerivedMetricsReason,omitempty"`
}

// Models names the models in use; the offline model is labelled as such.
type Models struct {
	Text    string `json:"text"`
	Grading string `json:"grading"`
}

// Checker builds health reports.
type Checker struct {
	// Version is the running build's version.
	Version string
	// Database answers a read of the store.
	Database func(ctx context.Context) error
	// AI and Images are the configured states of generation (what is configured, not a live call: a
	// health check must not spend model tokens).
	AI, Images State
	Models     Models
	// YouTubeConnection is the configured state of the YouTube connection ("" leaves it out).
	YouTubeConnection State
	// YouTubeDerivedMetrics and its reason are the configured derived-metrics state ("" leaves it out).
	YouTubeDerivedMetrics       State
	YouTubeDerivedMetricsReason string
	// AIProbe, when set, replaces AI with what the model server answered lately (a ProbeCache: at most one
	// probe every 5 s, never one per request).
	AIProbe func(ctx context.Context) Probe
	// Timeout bounds the database check, so /health answers even when the store hangs.
	Timeout time.Duration
	Now     func() time.Time
}

// Report checks the dependencies. It never fails: a failing dependency is reported, not raised.
func (c Checker) Report(ctx context.Context) Status {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	db := OK
	if c.Database == nil || c.Database(ctx) != nil {
		db = Down
	}
	s := Status{
		Version:   c.Version,
		Timestamp: c.Now().UTC().Truncate(time.Millisecond),
		Services: Services{API: OK, Database: db, AI: cmp.Or(c.AI, Down), Images: cmp.Or(c.Images, Down), YouTubeConnection: c.YouTubeConnection,
			YouTubeDerivedMetrics: c.YouTubeDerivedMetrics, YouTubeDerivedMetricsReason: c.YouTubeDerivedMetricsReason},
		Models: c.Models,
	}
	if c.AIProbe != nil {
		p := c.AIProbe(ctx)
		s.Services.AI, s.Services.AIReason = cmp.Or(p.State, Down), p.Reason
	}
	s.Status = OK
	for _, st := range []State{s.Services.Database, s.Services.AI, s.Services.Images} {
		if st != OK {
			s.Status = Degraded
		}
	}
	return s
}

// Probe is what a model server's probe found: OK; Degraded when it answers but does not serve the
// configured model; Down when it cannot be reached. Reason says why, when not OK.
type Probe struct {
	State  State
	Reason string
}

// DefaultProbeEvery is how often ProbeCache asks the model server at most: a server that died shows in
// /health within that time (issue 36: within 10 s), and one GET of its model list every 5 s is no load.
const DefaultProbeEvery = 5 * time.Second

// ProbeCache keeps a model server probe's last result and asks again at most every Every (default
// DefaultProbeEvery): /health is public and polled, and must not turn into a load on the model server.
// A probe runs within the caller's context (Checker bounds it); its result is kept whatever it is.
type ProbeCache struct {
	Probe func(ctx context.Context) Probe
	Every time.Duration
	Now   func() time.Time

	mu   sync.Mutex
	last Probe
	at   time.Time
}

// Get returns the last result, probing first when there is none or it is older than Every. Callers wait
// for one probe at a time.
func (c *ProbeCache) Get(ctx context.Context) Probe {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	every := c.Every
	if every <= 0 {
		every = DefaultProbeEvery
	}
	if !c.at.IsZero() && now().Sub(c.at) < every {
		return c.last
	}
	c.last, c.at = c.Probe(ctx), now()
	return c.last
}
