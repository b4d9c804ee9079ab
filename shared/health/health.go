// Package health reports whether the service and what it depends on are working.
package health

import (
	"context"
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
		Services:  Services{API: OK, Database: db, AI: orDown(c.AI), Images: orDown(c.Images), YouTubeConnection: c.YouTubeConnection},
		Models:    c.Models,
	}
	s.Status = OK
	for _, st := range []State{s.Services.Database, s.Services.AI, s.Services.Images} {
		if st != OK {
			s.Status = Degraded
		}
	}
	return s
}

func orDown(s State) State {
	if s == "" {
		return Down
	}
	return s
}
