// Package webhooks holds events and their delivery to the receivers users register: the event names and
// envelopes, registrations with their URL rules, signing secrets and the Standard Webhooks signature, the
// outbox that makes emission durable, the fan-out of an event to one delivery per registration, and each
// delivery's attempts, retry schedule and log. It speaks to no outside system itself: the store, the
// queues, the HTTP client that posts to receivers and the key that seals secrets are ports.
package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
)

// Event names (decision 22). A registration may subscribe to any of Subscribable.
const (
	TitlesGenerated      = "titles.generated"
	ScriptGenerated      = "script.generated"
	DescriptionGenerated = "description.generated"
	ThumbnailStrategy    = "thumbnail.strategy"
	ResearchCompleted    = "research.completed"
	ResearchStep         = "research.step"
	VideoCommitted       = "video.committed"
	ScheduleUpdated      = "schedule.updated"
	VideoStatusChanged   = "video.status_changed"
	ContentGenerated     = "content.generated"
	VideoReviewed        = "video.reviewed" // decision 44
	// YouTubeConnected and YouTubeDisconnected: a channel's YouTube connection (decision 42).
	YouTubeConnected    = "youtube.connected"
	YouTubeDisconnected = "youtube.disconnected"
	// VideoUnderperforming and VideoOutperforming: an upload younger than 72 hours below the 30th or
	// above the 70th percentile of the channel's earlier uploads at the same age (decision 54).
	VideoUnderperforming = "video.underperforming"
	VideoOutperforming   = "video.outperforming"
	// Test is the type of the delivery POST /api/webhooks/{id}/test sends; nobody subscribes to it.
	Test = "webhook.test"
)

// Subscribable lists the event names a registration may list, in the contract's order (EventName).
var Subscribable = []string{TitlesGenerated, ScriptGenerated, DescriptionGenerated, ThumbnailStrategy,
	ResearchCompleted, ResearchStep, VideoCommitted, ScheduleUpdated, VideoStatusChanged, ContentGenerated,
	VideoReviewed, YouTubeConnected, YouTubeDisconnected, VideoUnderperforming, VideoOutperforming}

// dataSchema names the contract component each event's data must satisfy.
var dataSchema = map[string]string{
	TitlesGenerated:      "TitlesGeneratedEventData",
	ScriptGenerated:      "GenerationEventData",
	DescriptionGenerated: "GenerationEventData",
	ThumbnailStrategy:    "GenerationEventData",
	ContentGenerated:     "GenerationEventData",
	ResearchStep:         "ResearchStepEventData",
	ResearchCompleted:    "ResearchCompletedEventData",
	VideoCommitted:       "VideoCommittedEventData",
	VideoStatusChanged:   "VideoStatusChangedEventData",
	ScheduleUpdated:      "ScheduleUpdatedEventData",
	VideoReviewed:        "VideoReviewedEventData",
	Test:                 "WebhookTestEventData",
	YouTubeConnected:     "YouTubeConnectedEventData",
	YouTubeDisconnected:  "YouTubeDisconnectedEventData",
	VideoUnderperforming: "VideoEarlyWarningEventData",
	VideoOutperforming:   "VideoEarlyWarningEventData",
}

// MaxDataBytes bounds an event's encoded data, so the event fits a queue message (SQS: 256 KiB) and a
// table item (DynamoDB: 400 KB) with its envelope.
const MaxDataBytes = 192 << 10

// Event is one thing that happened in a channel, as it is queued, stored and delivered.
type Event struct {
	// ID is the event's id: the `webhook-id` of every delivery of it, stable across retries.
	ID        string
	Type      string
	ChannelID string
	// Time is when it happened (the envelope's `timestamp`), UTC, to the millisecond.
	Time time.Time
	// Data is the event's `data`, a JSON object.
	Data json.RawMessage
}

// NewEvent returns the event of type typ with data, checked against the data schema of its type.
func NewEvent(id, typ, channelID string, at time.Time, data any) (Event, error) {
	if _, ok := dataSchema[typ]; !ok {
		return Event{}, apperr.Invalid("event", "%q is not an event type", typ)
	}
	if channelID == "" {
		return Event{}, apperr.Invalid("channelId", "is required")
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("event %s: encode data: %w", typ, err)
	}
	if err := CheckData(typ, raw); err != nil {
		return Event{}, err
	}
	return Event{ID: id, Type: typ, ChannelID: channelID, Time: at.UTC().Truncate(time.Millisecond), Data: raw}, nil
}

// CheckData checks an event's encoded data against the schema the contract documents for its type.
func CheckData(typ string, raw []byte) error {
	schema, ok := dataSchema[typ]
	if !ok {
		return apperr.Invalid("event", "%q is not an event type", typ)
	}
	if len(raw) > MaxDataBytes {
		return apperr.Invalid("data", "is %d bytes encoded, more than %d", len(raw), MaxDataBytes)
	}
	if _, err := contract.ValidateJSON(schema, raw); err != nil {
		return fmt.Errorf("event %s: data does not match %s: %w", typ, schema, err)
	}
	return nil
}

// IsSubscribable reports whether name may be listed in a registration's events.
func IsSubscribable(name string) bool { return slices.Contains(Subscribable, name) }

// envelope is a delivery's body (decision 23): the Standard Webhooks envelope plus channelId.
type envelope struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	ChannelID string          `json:"channelId"`
}

// Body returns the JSON a delivery of e posts: the same bytes on every attempt.
func (e Event) Body() ([]byte, error) {
	return json.Marshal(envelope{Type: e.Type, Timestamp: e.Time, Data: e.Data, ChannelID: e.ChannelID})
}

// message is an event as it travels on the events queue and is kept in the table.
type message struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	ChannelID string          `json:"channelId"`
	Time      time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// MarshalJSON encodes e as it is queued and stored.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(message{ID: e.ID, Type: e.Type, ChannelID: e.ChannelID, Time: e.Time, Data: e.Data})
}

// UnmarshalJSON decodes what MarshalJSON wrote, refusing anything that is not a whole event.
func (e *Event) UnmarshalJSON(b []byte) error {
	var m message
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&m); err != nil {
		return fmt.Errorf("decode event: %w", err)
	}
	if m.ID == "" || m.Type == "" || m.ChannelID == "" || m.Time.IsZero() || len(m.Data) == 0 {
		return fmt.Errorf("decode event: id, type, channelId, timestamp and data are required")
	}
	*e = Event{ID: m.ID, Type: m.Type, ChannelID: m.ChannelID, Time: m.Time, Data: m.Data}
	return nil
}

// Message returns the outbox message that queues e on the events queue.
func (e Event) Message() (OutboxMessage, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return OutboxMessage{}, err
	}
	return OutboxMessage{ID: e.ID, Queue: EventsQueue, ChannelID: e.ChannelID, At: e.Time, Body: b}, nil
}
