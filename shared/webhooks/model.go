package webhooks

import (
	"fmt"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
)

// MaxRegistrations is the most registrations a channel holds (decision 9).
const MaxRegistrations = 20

// LogRetention is how long deliveries (and the events they deliver, for redelivery) are kept.
const LogRetention = 30 * 24 * time.Hour

// DisableAfter is how long every delivery of a registration must have failed before it is switched off.
const DisableAfter = 5 * 24 * time.Hour

// RotationOverlap is how long a replaced secret keeps signing beside the new one.
const RotationOverlap = 24 * time.Hour

// Registration is a receiver registered by a channel, as stored.
type Registration struct {
	ID          string
	ChannelID   string
	URL         string
	Events      []string
	Description *string
	// Active is false while deliveries are paused (by the user, or by the service: DisabledAt).
	Active bool
	// Secret is the signing key, sealed (Cipher, with aad SecretAAD).
	Secret []byte
	// PreviousSecret, sealed, signs beside Secret until PreviousUntil (after a rotation).
	PreviousSecret []byte
	PreviousUntil  *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// DisabledAt is when the service switched the registration off, and DisabledReason why.
	DisabledAt     *time.Time
	DisabledReason *string
	// FailingSince is the first failed attempt after the last successful one: nil while deliveries
	// succeed. It drives DisableAfter.
	FailingSince *time.Time
}

// SecretAAD binds a sealed secret to its registration.
func SecretAAD(channelID, webhookID string) []byte {
	return []byte("css webhook secret|" + channelID + "|" + webhookID)
}

// Subscribes reports whether the registration receives events of type typ.
func (r Registration) Subscribes(typ string) bool { return slices.Contains(r.Events, typ) }

// View is a registration as the API shows it (Webhook): never its secret.
type View struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events"`
	Description    *string    `json:"description,omitempty"`
	Active         bool       `json:"active"`
	DisabledAt     *time.Time `json:"disabledAt"`
	DisabledReason *string    `json:"disabledReason"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
}

// View returns r as the API shows it.
func (r Registration) View() View {
	return View{ID: r.ID, URL: r.URL, Events: r.Events, Description: r.Description, Active: r.Active,
		DisabledAt: r.DisabledAt, DisabledReason: r.DisabledReason, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// Created is a new registration with its secret, shown once (WebhookCreated).
type Created struct {
	View
	Secret string `json:"secret"`
}

// RotatedSecret answers a rotation (WebhookSecret).
type RotatedSecret struct {
	Secret                  string    `json:"secret"`
	PreviousSecretExpiresAt time.Time `json:"previousSecretExpiresAt"`
}

// Status is where a delivery stands.
type Status string

const (
	Pending   Status = "pending"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
)

// Attempt is one POST of a delivery (WebhookAttempt).
type Attempt struct {
	At         time.Time `json:"at"`
	StatusCode *int      `json:"statusCode"`
	Error      *string   `json:"error"`
	DurationMs float64   `json:"durationMs"`
}

// Delivery is one event to one registration, with every attempt (WebhookDelivery, plus what the
// dispatcher keeps).
type Delivery struct {
	ID        string
	WebhookID string
	EventID   string
	Event     string
	Status    Status
	Attempts  []Attempt
	// Manual deliveries (test, redeliver) go out whatever the registration's events and active flag.
	Manual        bool
	RedeliveryOf  *string
	CreatedAt     time.Time
	NextAttemptAt *time.Time
	CompletedAt   *time.Time
	// MessageID is the queue message that owns the delivery: copies of it made by a repeated fan-out are
	// dropped.
	MessageID string
}

// DeliveryView is a delivery as the API shows it (WebhookDelivery).
type DeliveryView struct {
	ID             string     `json:"id"`
	Event          string     `json:"event"`
	EventID        string     `json:"eventId"`
	Status         Status     `json:"status"`
	Attempts       int        `json:"attempts"`
	AttemptLog     []Attempt  `json:"attemptLog"`
	RedeliveryOf   *string    `json:"redeliveryOf"`
	LastStatusCode *int       `json:"lastStatusCode"`
	LastError      *string    `json:"lastError"`
	CreatedAt      time.Time  `json:"createdAt"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	CompletedAt    *time.Time `json:"completedAt"`
}

// View returns d as the API shows it.
func (d Delivery) View() DeliveryView {
	v := DeliveryView{ID: d.ID, Event: d.Event, EventID: d.EventID, Status: d.Status, Attempts: len(d.Attempts),
		AttemptLog: d.Attempts, RedeliveryOf: d.RedeliveryOf, CreatedAt: d.CreatedAt, NextAttemptAt: d.NextAttemptAt,
		CompletedAt: d.CompletedAt}
	if v.AttemptLog == nil {
		v.AttemptLog = []Attempt{}
	}
	if n := len(d.Attempts); n > 0 {
		v.LastStatusCode, v.LastError = d.Attempts[n-1].StatusCode, d.Attempts[n-1].Error
	}
	return v
}

// DeliveryRef is a delivery message's body: where the delivery, its registration and its event are.
type DeliveryRef struct {
	ChannelID  string `json:"channelId"`
	WebhookID  string `json:"webhookId"`
	DeliveryID string `json:"deliveryId"`
	EventID    string `json:"eventId"`
}

// Schedule is the retry schedule (decision 24): Schedule[i] is the wait after failed attempt i+1 before
// the next one. A delivery gets len+1 attempts.
type Schedule []time.Duration

// DefaultSchedule retries 5, 15 and 40 minutes after the previous attempt: 3 retries within the hour.
var DefaultSchedule = Schedule{5 * time.Minute, 15 * time.Minute, 40 * time.Minute}

// Attempts is how many attempts a delivery gets.
func (s Schedule) Attempts() int { return len(s) + 1 }

// CheckSchedule returns s (DefaultSchedule when empty), checked against the deliveries queue's spec: the
// queue must dead-letter a delivery after exactly as many receives as the schedule has attempts.
func CheckSchedule(s Schedule) (Schedule, error) {
	if len(s) == 0 {
		s = DefaultSchedule
	}
	if want := queue.Specs()[queue.WebhookDeliveries].MaxReceiveCount; s.Attempts() != want {
		return nil, fmt.Errorf("CSS_WEBHOOK_RETRY_SCHEDULE: %d attempts, but the %s queue dead-letters after %d receives",
			s.Attempts(), queue.WebhookDeliveries, want)
	}
	return s, nil
}

// UserAgent is what deliveries say they come from: the service at version.
func UserAgent(version string) string {
	return "css-webhooks/" + version + " (Creator Strategy Service)"
}
