package webhooks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
)

// DeliveryTimeout is how long a receiver has to answer (decision 24): a 2xx within it is success.
const DeliveryTimeout = 10 * time.Second

// Post is one request to a receiver.
type Post struct {
	URL    string
	Header map[string]string
	Body   []byte
}

// PostResult is the receiver's answer.
type PostResult struct {
	// Status is the HTTP status of the answer.
	Status int
	// Duration runs from sending the request to the end of the answer's header (wall clock).
	Duration time.Duration
}

// Poster sends a delivery to a receiver: an HTTP client that refuses forbidden addresses at connect
// time, follows no redirect and stops at ctx's deadline. An error means no answer (the connection was
// refused, timed out, or went to a forbidden address); its text is shown to the user, so it must not
// repeat the URL (which may hold a receiver's token).
type Poster interface {
	Post(ctx context.Context, p Post) (PostResult, error)
}

// FanOut is what the fan-out recorded of an event: the deliveries it made and whether their messages were
// all sent.
type FanOut struct {
	Event      Event
	Deliveries []FanOutDelivery
	Sent       bool
}

// FanOutDelivery names one delivery an event was fanned out to.
type FanOutDelivery struct {
	WebhookID  string `json:"webhookId"`
	DeliveryID string `json:"deliveryId"`
}

// ErrFannedOut: the event was fanned out before (a second copy of it).
var ErrFannedOut = errors.New("webhooks: event fanned out already")

// ErrStale: a versioned write lost to another writer.
var ErrStale = errors.New("webhooks: record changed since it was read")

// DeliveryState is a delivery with its registration and its event, as one read returns them; a missing
// one is nil.
type DeliveryState struct {
	Delivery        *Delivery
	DeliveryVersion int64
	Webhook         *Registration
	WebhookVersion  int64
	Event           *Event
}

// DispatchStore is what the dispatcher needs from the table.
type DispatchStore interface {
	NewID() string
	ListWebhooks(ctx context.Context, channelID string) ([]Registration, error)
	// RecordFanOut stores ev with ds (each new) in one transaction, or returns ErrFannedOut when ev was
	// recorded before (and stores nothing).
	RecordFanOut(ctx context.Context, ev Event, ds []Delivery) error
	// FanOutOf reads what RecordFanOut stored of an event, with its version.
	FanOutOf(ctx context.Context, channelID, eventID string) (FanOut, int64, error)
	// MarkSent records that the event's delivery messages were all sent (ErrStale if it moved).
	MarkSent(ctx context.Context, f FanOut, was int64) error
	// Deliveries reads deliveries of the channel by (webhook, delivery); missing ones are left out.
	Deliveries(ctx context.Context, channelID string, ids []FanOutDelivery) ([]Delivery, error)
	// LoadDelivery reads the delivery, its registration and its event in one read.
	LoadDelivery(ctx context.Context, ref DeliveryRef) (DeliveryState, error)
	// SaveDelivery replaces a delivery if it is still at version was (ErrStale otherwise).
	SaveDelivery(ctx context.Context, channelID string, d Delivery, was int64) error
	// SaveHealth replaces a registration's delivery health (FailingSince, Active, DisabledAt,
	// DisabledReason) if it is still at version was (ErrStale otherwise).
	SaveHealth(ctx context.Context, r Registration, was int64) error
}

// DispatcherConfig configures a Dispatcher.
type DispatcherConfig struct {
	Store DispatchStore
	// Deliveries sends delivery messages (one per event and registration).
	Deliveries queue.Sender
	Poster     Poster
	Cipher     Cipher
	// Schedule is the retry schedule; nil: DefaultSchedule. The deliveries queue must dead-letter a
	// message after Schedule.Attempts() receives.
	Schedule Schedule
	// DisableAfter is how long all deliveries must fail before a registration is switched off; 0:
	// DisableAfter.
	DisableAfter time.Duration
	// UserAgent names the service in every delivery.
	UserAgent string
	Now       func() time.Time
	Log       *slog.Logger
}

// Dispatcher fans events out to deliveries and attempts each delivery. Its two handlers are the
// consumers of the events queue (HandleEvent) and of the deliveries queue (HandleDelivery).
type Dispatcher struct {
	c DispatcherConfig
}

// NewDispatcher returns a Dispatcher.
func NewDispatcher(c DispatcherConfig) (*Dispatcher, error) {
	if c.Store == nil || c.Deliveries == nil || c.Poster == nil || c.Cipher == nil {
		return nil, errors.New("webhooks: a dispatcher needs a store, a deliveries sender, a poster and a cipher")
	}
	if c.Schedule == nil {
		c.Schedule = DefaultSchedule
	}
	c.DisableAfter = cmp.Or(c.DisableAfter, DisableAfter)
	c.UserAgent = cmp.Or(c.UserAgent, "css-webhooks")
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Log = cmp.Or(c.Log, slog.New(slog.DiscardHandler))
	return &Dispatcher{c: c}, nil
}

func (d *Dispatcher) now() time.Time { return d.c.Now().UTC().Truncate(time.Millisecond) }

// HandleEvent fans an event out: one delivery, and one delivery message, per registration of the event's
// channel that is active and subscribes to its type. A copy of an event already fanned out makes no new
// delivery; it only sends the messages the first fan-out may not have sent.
func (d *Dispatcher) HandleEvent(ctx context.Context, m queue.Message) error {
	var ev Event
	if err := json.Unmarshal(m.Body, &ev); err != nil {
		return fmt.Errorf("events queue message %s: %w", m.ID, err)
	}
	regs, err := d.c.Store.ListWebhooks(ctx, ev.ChannelID)
	if err != nil {
		return err
	}
	now := d.now()
	var ds []Delivery
	for _, r := range regs {
		if r.Active && r.Subscribes(ev.Type) {
			ds = append(ds, Delivery{ID: d.c.Store.NewID(), WebhookID: r.ID, EventID: ev.ID, Event: ev.Type,
				Status: Pending, CreatedAt: now})
		}
	}
	if len(ds) == 0 {
		return nil
	}
	err = d.c.Store.RecordFanOut(ctx, ev, ds)
	if errors.Is(err, ErrFannedOut) {
		return d.resume(ctx, ev)
	}
	if err != nil {
		return err
	}
	if err := d.sendDeliveries(ctx, ev, ds); err != nil {
		return err
	}
	f := FanOut{Event: ev, Deliveries: fanOutList(ds)}
	if err := d.c.Store.MarkSent(ctx, f, 1); err != nil && !errors.Is(err, ErrStale) {
		// The messages are out; a later copy of the event would only send them again, and those copies
		// are dropped. Not worth failing (and redoing) the fan-out for.
		d.c.Log.WarnContext(ctx, "fan-out: mark sent", "event_id", ev.ID, "error", err.Error())
	}
	return nil
}

// resume finishes a fan-out that a crash (or a failed send) interrupted: it sends the messages of the
// deliveries no message has claimed yet.
func (d *Dispatcher) resume(ctx context.Context, ev Event) error {
	f, version, err := d.c.Store.FanOutOf(ctx, ev.ChannelID, ev.ID)
	if err != nil {
		return err
	}
	if f.Sent {
		return nil
	}
	ds, err := d.c.Store.Deliveries(ctx, ev.ChannelID, f.Deliveries)
	if err != nil {
		return err
	}
	var unclaimed []Delivery
	for _, dl := range ds {
		if dl.Status == Pending && dl.MessageID == "" {
			unclaimed = append(unclaimed, dl)
		}
	}
	if err := d.sendDeliveries(ctx, f.Event, unclaimed); err != nil {
		return err
	}
	if err := d.c.Store.MarkSent(ctx, f, version); err != nil && !errors.Is(err, ErrStale) {
		d.c.Log.WarnContext(ctx, "fan-out: mark sent", "event_id", ev.ID, "error", err.Error())
	}
	return nil
}

func fanOutList(ds []Delivery) []FanOutDelivery {
	out := make([]FanOutDelivery, len(ds))
	for i, dl := range ds {
		out[i] = FanOutDelivery{WebhookID: dl.WebhookID, DeliveryID: dl.ID}
	}
	return out
}

func (d *Dispatcher) sendDeliveries(ctx context.Context, ev Event, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	out := make([]queue.Outgoing, len(ds))
	for i, dl := range ds {
		b, err := json.Marshal(DeliveryRef{ChannelID: ev.ChannelID, WebhookID: dl.WebhookID, DeliveryID: dl.ID, EventID: ev.ID})
		if err != nil {
			return err
		}
		out[i] = queue.Outgoing{Body: b}
	}
	return d.c.Deliveries.Send(ctx, out...)
}

// deliveryMessage is the outbox message that queues a manual delivery.
func deliveryMessage(channelID string, dl Delivery) (OutboxMessage, error) {
	b, err := json.Marshal(DeliveryRef{ChannelID: channelID, WebhookID: dl.WebhookID, DeliveryID: dl.ID, EventID: dl.EventID})
	if err != nil {
		return OutboxMessage{}, err
	}
	return OutboxMessage{ID: dl.ID, Queue: DeliveriesQueue, ChannelID: channelID, At: dl.CreatedAt, Body: b}, nil
}

// HandleDelivery makes one attempt of a delivery. It returns nil when the delivery is done (succeeded,
// or nothing left to do), a queue.RetryAfter error with the schedule's wait after a failed attempt that
// has a retry left, and an error without a wait after the last attempt failed, so the queue dead-letters
// the message (the delivery is recorded as failed first).
func (d *Dispatcher) HandleDelivery(ctx context.Context, m queue.Message) error {
	var ref DeliveryRef
	if err := json.Unmarshal(m.Body, &ref); err != nil || ref.ChannelID == "" || ref.WebhookID == "" ||
		ref.DeliveryID == "" || ref.EventID == "" {
		return fmt.Errorf("deliveries queue message %s: not a delivery reference", m.ID)
	}
	st, err := d.c.Store.LoadDelivery(ctx, ref)
	if err != nil {
		return err
	}
	dl, reg := st.Delivery, st.Webhook
	switch {
	case dl == nil:
		return nil // expired from the log, or never made: nothing to deliver
	case dl.Status != Pending:
		return nil // done already; this is a copy
	case dl.MessageID != "" && dl.MessageID != m.ID:
		return nil // another message owns the delivery (a fan-out was repeated)
	case reg == nil:
		return nil // the registration was removed: its pending deliveries are dropped
	case st.Event == nil:
		return d.finish(ctx, ref, st, m, Attempt{At: d.now(), Error: ptr("the event is no longer kept")}, true, false)
	case !reg.Active && !dl.Manual:
		why := "not delivered: the registration is paused"
		if reg.DisabledAt != nil {
			why = "not delivered: the registration was switched off after 5 days of failures"
		}
		return d.finish(ctx, ref, st, m, Attempt{At: d.now(), Error: &why}, true, false)
	}
	attempt, err := d.attempt(ctx, st)
	if err != nil {
		return err
	}
	final := len(dl.Attempts)+1 >= d.c.Schedule.Attempts() || m.Attempt >= d.c.Schedule.Attempts()
	return d.finish(ctx, ref, st, m, attempt, final, true)
}

// attempt posts the event to the receiver, signed now.
func (d *Dispatcher) attempt(ctx context.Context, st DeliveryState) (Attempt, error) {
	reg, ev := st.Webhook, st.Event
	keys, err := d.signingKeys(ctx, reg)
	if err != nil {
		return Attempt{}, err // the key store is down: try again, not an attempt
	}
	body, err := ev.Body()
	if err != nil {
		return Attempt{}, err
	}
	at := d.now()
	header := map[string]string{
		"content-type":      "application/json",
		"user-agent":        d.c.UserAgent,
		"webhook-id":        ev.ID,
		"webhook-timestamp": strconv.FormatInt(at.Unix(), 10),
		"webhook-signature": Sign(keys, ev.ID, at, body),
	}
	pctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	res, err := d.c.Poster.Post(pctx, Post{URL: reg.URL, Header: header, Body: body})
	cancel()
	a := Attempt{At: at, DurationMs: float64(res.Duration.Microseconds()) / 1000}
	switch {
	case err != nil:
		a.Error = ptr(clipError(err.Error()))
	case res.Status < 200 || res.Status > 299:
		a.StatusCode = ptr(res.Status)
		a.Error = ptr("the receiver answered HTTP " + strconv.Itoa(res.Status))
	default:
		a.StatusCode = ptr(res.Status)
	}
	return a, nil
}

// signingKeys opens the registration's secret, and its previous one while that still signs.
func (d *Dispatcher) signingKeys(ctx context.Context, reg *Registration) ([][]byte, error) {
	aad := SecretAAD(reg.ChannelID, reg.ID)
	key, err := d.c.Cipher.Open(ctx, reg.Secret, aad)
	if err != nil {
		return nil, fmt.Errorf("open the secret of webhook %s: %w", reg.ID, err)
	}
	keys := [][]byte{key}
	if reg.PreviousSecret != nil && reg.PreviousUntil != nil && d.c.Now().Before(*reg.PreviousUntil) {
		prev, err := d.c.Cipher.Open(ctx, reg.PreviousSecret, aad)
		if err != nil {
			return nil, fmt.Errorf("open the previous secret of webhook %s: %w", reg.ID, err)
		}
		keys = append(keys, prev)
	}
	return keys, nil
}

// finish records an attempt (posted: a request went out, rather than a delivery ended without one) and
// says what the queue does with the message.
func (d *Dispatcher) finish(ctx context.Context, ref DeliveryRef, st DeliveryState, m queue.Message, a Attempt, final, posted bool) error {
	dl := *st.Delivery
	dl.Attempts = append(append([]Attempt(nil), dl.Attempts...), a)
	dl.MessageID = m.ID
	ok := a.Error == nil
	var wait time.Duration
	switch {
	case ok:
		dl.Status, dl.NextAttemptAt, dl.CompletedAt = Succeeded, nil, &a.At
	case final:
		dl.Status, dl.NextAttemptAt, dl.CompletedAt = Failed, nil, &a.At
	default:
		wait = d.c.Schedule[len(dl.Attempts)-1]
		next := a.At.Add(wait)
		dl.NextAttemptAt = &next
	}
	err := d.c.Store.SaveDelivery(ctx, ref.ChannelID, dl, st.DeliveryVersion)
	if errors.Is(err, ErrStale) {
		return nil // another copy of the message recorded this attempt
	}
	if err != nil {
		return err
	}
	if posted {
		d.health(ctx, st, ok, a.At)
	}
	log := d.c.Log.With("webhook_id", ref.WebhookID, "delivery_id", dl.ID, "event_id", ref.EventID,
		"attempt", len(dl.Attempts))
	switch {
	case ok:
		log.DebugContext(ctx, "delivered", "status", *a.StatusCode)
		return nil
	case !posted:
		log.InfoContext(ctx, "delivery dropped", "error", *a.Error)
		return nil
	case final:
		log.WarnContext(ctx, "delivery failed for good", "error", *a.Error)
		// No wait: the queue takes the message at once, and dead-letters it (this was its last receive).
		return queue.RetryAfter(0, fmt.Errorf("delivery %s failed after %d attempts: %s", dl.ID, len(dl.Attempts), *a.Error))
	default:
		log.InfoContext(ctx, "delivery attempt failed", "error", *a.Error, "retry_in", wait.String())
		return queue.RetryAfter(wait, fmt.Errorf("delivery %s attempt %d: %s", dl.ID, len(dl.Attempts), *a.Error))
	}
}

// health keeps the registration's failure streak: a success ends it, a failure starts it, and a streak
// of DisableAfter switches the registration off. It writes only when something changes, and gives up
// on a race (the next attempt sees the registration again).
func (d *Dispatcher) health(ctx context.Context, st DeliveryState, ok bool, at time.Time) {
	r := *st.Webhook
	switch {
	case ok && r.FailingSince == nil:
		return
	case ok:
		r.FailingSince = nil
	case r.FailingSince == nil:
		r.FailingSince = &at
	case r.Active && r.DisabledAt == nil && at.Sub(*r.FailingSince) >= d.c.DisableAfter:
		r.Active, r.DisabledAt = false, &at
		r.DisabledReason = ptr(fmt.Sprintf("every delivery failed from %s to %s", r.FailingSince.Format(time.RFC3339), at.Format(time.RFC3339)))
		d.c.Log.WarnContext(ctx, "webhook switched off", "webhook_id", r.ID, "failing_since", r.FailingSince.Format(time.RFC3339))
	default:
		return
	}
	if err := d.c.Store.SaveHealth(ctx, r, st.WebhookVersion); err != nil && !errors.Is(err, ErrStale) {
		d.c.Log.WarnContext(ctx, "webhook health", "webhook_id", r.ID, "error", err.Error())
	}
}

func ptr[T any](v T) *T { return &v }

func clipError(s string) string {
	if r := []rune(s); len(r) > 300 {
		return string(r[:300]) + "…"
	}
	return s
}
