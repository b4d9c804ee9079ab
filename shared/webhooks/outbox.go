package webhooks

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
)

// Emission is durable through an outbox (transactional outbox pattern):
//
//  1. An operation that emits writes its event into the table's outbox in the same transaction as its own
//     write (store.CreateVideo, UpdateVideo, SaveSchedule, ... take the events). If the write fails, no
//     event exists; if it commits, the event exists, whatever happens to the process next.
//  2. Right after the commit, the operation hands the events to Relay.Publish, which sends them to the
//     events queue and then deletes them from the outbox. This is the fast path: an event reaches the
//     queue within milliseconds of the write.
//  3. Relay.Sweep, run every minute (an EventBridge schedule in the cloud, a ticker in the local stack),
//     sends whatever the outbox still holds after SweepAge: events whose process died, or whose send
//     failed, between the commit and the delete.
//
// An event may so be sent twice (sent, then the process died before deleting it). The fan-out is
// idempotent by event id: it records the event with the deliveries it made, and a second copy makes none.

// Queue names a queue the outbox feeds.
type Queue string

const (
	// EventsQueue carries events to the fan-out.
	EventsQueue Queue = "events"
	// DeliveriesQueue carries one message per delivery (an event to one registration).
	DeliveriesQueue Queue = "deliveries"
)

// OutboxMessage is a message written to the outbox with the write it belongs to, to be sent to Queue.
type OutboxMessage struct {
	// ID is unique per message (an event's id, or a delivery's).
	ID    string
	Queue Queue
	// ChannelID spreads the outbox over its partitions.
	ChannelID string
	// At orders the outbox: Sweep sends the oldest first and leaves the youngest to the fast path.
	At   time.Time
	Body []byte
}

// OutboxStore is what the relay needs from the table.
type OutboxStore interface {
	// PutOutbox adds messages to the outbox, alone (Emit); a message already there is left as it is.
	PutOutbox(ctx context.Context, msgs ...OutboxMessage) error
	// DeleteOutbox removes sent messages (no error for one that is gone).
	DeleteOutbox(ctx context.Context, msgs ...OutboxMessage) error
	// OldOutbox returns up to limit messages written at or before `before`, oldest first, from every
	// partition.
	OldOutbox(ctx context.Context, before time.Time, limit int) ([]OutboxMessage, error)
}

// SweepAge is how old an outbox message must be before Sweep sends it: older than any fast path still
// under way (a publish waits at most publishTimeout), so the two rarely send the same message.
const SweepAge = 30 * time.Second

// publishTimeout bounds the fast path, which runs after the operation's write committed and before it
// answers.
const publishTimeout = 5 * time.Second

// sweepBatch is how many outbox messages one sweep step reads and sends.
const sweepBatch = 100

// Relay moves outbox messages to their queues.
type Relay struct {
	store OutboxStore
	send  map[Queue]queue.Sender
	now   func() time.Time
	log   *slog.Logger
}

// NewRelay returns a relay that sends to events and deliveries. A nil log discards.
func NewRelay(store OutboxStore, events, deliveries queue.Sender, now func() time.Time, log *slog.Logger) *Relay {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	if now == nil {
		now = time.Now
	}
	return &Relay{store: store, send: map[Queue]queue.Sender{EventsQueue: events, DeliveriesQueue: deliveries}, now: now, log: log}
}

// PublishEvents is Publish for events that are in the outbox (written with the operation's write).
func (r *Relay) PublishEvents(ctx context.Context, evs ...Event) {
	msgs := make([]OutboxMessage, 0, len(evs))
	for _, ev := range evs {
		m, err := ev.Message()
		if err != nil {
			r.log.ErrorContext(ctx, "outbox: encode event", "event_id", ev.ID, "error", err.Error())
			continue
		}
		msgs = append(msgs, m)
	}
	r.Publish(ctx, msgs...)
}

// Publish sends messages that are in the outbox and deletes them from it. It is the fast path and never
// fails the caller: what it cannot send stays in the outbox for Sweep. It goes on when ctx is cancelled
// (the client went away; the write committed all the same), for at most publishTimeout.
func (r *Relay) Publish(ctx context.Context, msgs ...OutboxMessage) {
	if r == nil || len(msgs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if _, err := r.relay(ctx, msgs); err != nil {
		r.log.WarnContext(ctx, "outbox: publish failed; the sweep will send it", "error", err.Error())
	}
}

// relay sends msgs to their queues, then deletes those sent; it returns how many were sent.
func (r *Relay) relay(ctx context.Context, msgs []OutboxMessage) (int, error) {
	byQueue := map[Queue][]OutboxMessage{}
	for _, m := range msgs {
		byQueue[m.Queue] = append(byQueue[m.Queue], m)
	}
	var sent []OutboxMessage
	var firstErr error
	for q, ms := range byQueue {
		s := r.send[q]
		if s == nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("outbox: no sender for queue %q", q)
			}
			continue
		}
		out := make([]queue.Outgoing, len(ms))
		for i, m := range ms {
			out[i] = queue.Outgoing{Body: m.Body}
		}
		if err := s.Send(ctx, out...); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		sent = append(sent, ms...)
	}
	if len(sent) > 0 {
		if err := r.store.DeleteOutbox(ctx, sent...); err != nil && firstErr == nil {
			// Sent but still in the outbox: the sweep sends them again, and the fan-out ignores the copy.
			firstErr = err
		}
	}
	return len(sent), firstErr
}

// Sweep sends every outbox message at least SweepAge old, oldest first, and returns how many it sent.
func (r *Relay) Sweep(ctx context.Context) (int, error) {
	total := 0
	for {
		msgs, err := r.store.OldOutbox(ctx, r.now().Add(-SweepAge), sweepBatch)
		if err != nil {
			return total, err
		}
		if len(msgs) == 0 {
			return total, nil
		}
		n, err := r.relay(ctx, msgs)
		total += n
		if err != nil {
			return total, err
		}
		if len(msgs) < sweepBatch {
			return total, nil
		}
	}
}
