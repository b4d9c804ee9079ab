package webhooks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/apperr"
)

// OutboxEmitter emits events for code that has no transaction of its own to put them in (generation and
// research workers): Emit writes the event to the outbox, then publishes it. Callers declare the
// interface where they consume it:
//
//	type Emitter interface {
//		Emit(ctx context.Context, channelID string, event string, data any) error
//	}
//
// Once Emit returns nil the event is durable: it will reach the events queue even if the process dies
// next. A worker that calls Emit before acknowledging its own queue message and sets an event key
// (WithEventKey) gets each event delivered once per registration however often its message is redone.
type OutboxEmitter struct {
	store OutboxStore
	relay *Relay
	now   func() time.Time
	newID func() string
}

// NewEmitter returns an emitter over the outbox. newID makes event ids (time-ordered UUIDs, the store's
// NewID); nil uses UUIDv7.
func NewEmitter(store OutboxStore, relay *Relay, now func() time.Time, newID func() string) *OutboxEmitter {
	if now == nil {
		now = time.Now
	}
	if newID == nil {
		newID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	return &OutboxEmitter{store: store, relay: relay, now: now, newID: newID}
}

type eventKeyCtx struct{}

// WithEventKey makes the events emitted with ctx take their id from key (with the channel and the event
// name), instead of a new one: emitting again with the same key, after a crash or a redone queue message,
// makes the same event, which the fan-out delivers only once. A generation id is a good key.
func WithEventKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, eventKeyCtx{}, key)
}

// eventNamespace scopes the ids derived from event keys.
var eventNamespace = uuid.MustParse("4f0b7c39-7a43-4c5e-9a53-0d5ab2f7e0c1")

// eventID returns the id of an event emitted with ctx: derived from its key when ctx has one, else new.
func (e *OutboxEmitter) eventID(ctx context.Context, channelID, event string) string {
	if key, ok := ctx.Value(eventKeyCtx{}).(string); ok && key != "" {
		return uuid.NewSHA1(eventNamespace, []byte(channelID+"\x00"+event+"\x00"+key)).String()
	}
	return e.newID()
}

// Emit records event (one of Subscribable) with data for the channel's registrations. data must encode to
// the JSON the contract documents for the event (see CheckData); an invalid event is a VALIDATION_ERROR
// and records nothing.
func (e *OutboxEmitter) Emit(ctx context.Context, channelID string, event string, data any) error {
	if !IsSubscribable(event) {
		return apperr.Invalid("event", "%q is not one of %s", event, strings.Join(Subscribable, ", "))
	}
	ev, err := NewEvent(e.eventID(ctx, channelID, event), event, channelID, e.now(), data)
	if err != nil {
		return fmt.Errorf("emit %s: %w", event, err)
	}
	m, err := ev.Message()
	if err != nil {
		return fmt.Errorf("emit %s: %w", event, err)
	}
	if err := e.store.PutOutbox(ctx, m); err != nil {
		return fmt.Errorf("emit %s: %w", event, err)
	}
	e.relay.Publish(ctx, m)
	return nil
}

// EmitOnce emits event with an id derived from key (WithEventKey): the fan-out records an event id once, so
// a step redone after a crash never delivers its event twice. It makes the emitter research's OnceEmitter.
func (e *OutboxEmitter) EmitOnce(ctx context.Context, channelID, event, key string, data any) error {
	return e.Emit(WithEventKey(ctx, key), channelID, event, data)
}
