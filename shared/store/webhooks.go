package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Webhook items (see the table design in store.go):
//
//	CH#<channel>  WH#<webhookId>                     registration (versioned; its secrets sealed)
//	CH#<channel>  WHD#<webhookId>#<deliveryId>       delivery with its attempts (versioned; expires)
//	CH#<channel>  EVT#<eventId>                      event as fanned out, with its deliveries (expires)
//	CH#<channel>  COUNT#webhooks                     registrations (at most 20)
//	OUTBOX#<nn>   <unix ms, 13 digits>#<messageId>   outbox message waiting to be sent to its queue
//
// The outbox is spread over outboxShards partitions by channel, so no partition takes every emitting
// write; the sweep reads them all, oldest first.

const (
	prefixWebhook = "WH#"
	// prefixWebhookURL claims a receiver URL for one registration of the channel (issue 19 item 16).
	prefixWebhookURL = "WHURL#"
	prefixDelivery   = "WHD#"
	prefixEvent      = "EVT#"
	prefixOutbox     = "OUTBOX#"
	outboxShards     = 16
)

func webhookKey(channelID, id string) Key { return channelKey(channelID, prefixWebhook+id) }

// webhookURLKey is the claim of a receiver URL in its channel: the hash of the URL in the form two
// registrations reaching the same resource share (webhooks.SameURL), so the key's length is bounded.
func webhookURLKey(channelID, rawURL string) Key {
	sum := sha256.Sum256([]byte(webhooks.SameURL(rawURL)))
	return channelKey(channelID, prefixWebhookURL+hex.EncodeToString(sum[:16]))
}

// urlClaim is the item claiming r's URL for r: its data is r's id, JSON-encoded.
func urlClaim(channelID string, r webhooks.Registration) (Item, error) {
	data, err := json.Marshal(r.ID)
	return Item{Key: webhookURLKey(channelID, r.URL), Data: data}, err
}

// claimedBy returns the id of the registration claiming the item's URL.
func claimedBy(it Item) string {
	var id string
	_ = json.Unmarshal(it.Data, &id)
	return id
}

// errURLTaken answers a write whose URL another registration of the channel claims.
func errURLTaken() error {
	return apperr.Conflictf("the URL is already registered by another webhook of this channel; update that registration's events instead")
}
func deliveryKey(channelID, webhookID, id string) Key {
	return channelKey(channelID, prefixDelivery+webhookID+"#"+id)
}
func eventKey(channelID, id string) Key { return channelKey(channelID, prefixEvent+id) }

func outboxPK(shard int) string { return fmt.Sprintf("%s%02d", prefixOutbox, shard) }

func outboxKey(m webhooks.OutboxMessage) Key {
	h := fnv.New32a()
	h.Write([]byte(m.ChannelID))
	return Key{PK: outboxPK(int(h.Sum32() % outboxShards)), SK: fmt.Sprintf("%013d#%s", m.At.UnixMilli(), m.ID)}
}

// expiry is when a log item written for something created at t expires.
func expiry(t time.Time) int64 { return t.Add(webhooks.LogRetention).Unix() }

// webhookRecord is a registration, format 2. The channel is the partition's.
type webhookRecord struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events"`
	Description    *string    `json:"description,omitempty"`
	Active         bool       `json:"active"`
	Secret         []byte     `json:"secret"`
	PreviousSecret []byte     `json:"previousSecret,omitempty"`
	PreviousUntil  *time.Time `json:"previousUntil,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	DisabledAt     *time.Time `json:"disabledAt,omitempty"`
	DisabledReason *string    `json:"disabledReason,omitempty"`
	FailingSince   *time.Time `json:"failingSince,omitempty"`
}

func webhookRecordOf(r webhooks.Registration) webhookRecord {
	return webhookRecord{ID: r.ID, URL: r.URL, Events: r.Events, Description: r.Description, Active: r.Active,
		Secret: r.Secret, PreviousSecret: r.PreviousSecret, PreviousUntil: r.PreviousUntil, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, DisabledAt: r.DisabledAt, DisabledReason: r.DisabledReason, FailingSince: r.FailingSince}
}

func (w webhookRecord) registration(channelID string) webhooks.Registration {
	return webhooks.Registration{ID: w.ID, ChannelID: channelID, URL: w.URL, Events: w.Events, Description: w.Description,
		Active: w.Active, Secret: w.Secret, PreviousSecret: w.PreviousSecret, PreviousUntil: w.PreviousUntil,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, DisabledAt: w.DisabledAt, DisabledReason: w.DisabledReason,
		FailingSince: w.FailingSince}
}

// deliveryRecord is a delivery, format 2.
type deliveryRecord struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhookId"`
	EventID       string          `json:"eventId"`
	Event         string          `json:"event"`
	Status        string          `json:"status"`
	Attempts      []attemptRecord `json:"attempts"`
	Manual        bool            `json:"manual,omitempty"`
	RedeliveryOf  *string         `json:"redeliveryOf,omitempty"`
	CreatedAt     time.Time       `json:"createdAt"`
	NextAttemptAt *time.Time      `json:"nextAttemptAt,omitempty"`
	CompletedAt   *time.Time      `json:"completedAt,omitempty"`
	MessageID     string          `json:"messageId,omitempty"`
}

type attemptRecord struct {
	At         time.Time `json:"at"`
	StatusCode *int      `json:"statusCode,omitempty"`
	Error      *string   `json:"error,omitempty"`
	DurationMs float64   `json:"durationMs"`
}

func deliveryRecordOf(d webhooks.Delivery) deliveryRecord {
	r := deliveryRecord{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, Event: d.Event, Status: string(d.Status),
		Attempts: make([]attemptRecord, len(d.Attempts)), Manual: d.Manual, RedeliveryOf: d.RedeliveryOf,
		CreatedAt: d.CreatedAt, NextAttemptAt: d.NextAttemptAt, CompletedAt: d.CompletedAt, MessageID: d.MessageID}
	for i, a := range d.Attempts {
		r.Attempts[i] = attemptRecord(a)
	}
	return r
}

func (r deliveryRecord) delivery() webhooks.Delivery {
	return webhooks.Delivery{ID: r.ID, WebhookID: r.WebhookID, EventID: r.EventID, Event: r.Event,
		Status: webhooks.Status(r.Status), Manual: r.Manual, RedeliveryOf: r.RedeliveryOf, CreatedAt: r.CreatedAt,
		NextAttemptAt: r.NextAttemptAt, CompletedAt: r.CompletedAt, MessageID: r.MessageID,
		Attempts: convertEach(r.Attempts, func(a attemptRecord) webhooks.Attempt { return webhooks.Attempt(a) })}
}

// eventRecord is an event as fanned out, format 2.
type eventRecord struct {
	ID         string                    `json:"id"`
	Type       string                    `json:"type"`
	Time       time.Time                 `json:"timestamp"`
	Data       json.RawMessage           `json:"data"`
	Deliveries []webhooks.FanOutDelivery `json:"deliveries"`
	Sent       bool                      `json:"sent,omitempty"`
}

func (r eventRecord) fanOut(channelID string) webhooks.FanOut {
	return webhooks.FanOut{Event: webhooks.Event{ID: r.ID, Type: r.Type, ChannelID: channelID, Time: r.Time, Data: r.Data},
		Deliveries: r.Deliveries, Sent: r.Sent}
}

func eventItem(f webhooks.FanOut) (Item, error) {
	ev := f.Event
	item, err := encode(eventKey(ev.ChannelID, ev.ID), eventRecord{ID: ev.ID, Type: ev.Type, Time: ev.Time, Data: ev.Data,
		Deliveries: f.Deliveries, Sent: f.Sent})
	item.ExpiresAt = expiry(ev.Time)
	return item, err
}

// outboxRecord is an outbox message, format 2. Bodies are JSON (events, delivery references).
type outboxRecord struct {
	ID        string          `json:"id"`
	Queue     string          `json:"queue"`
	ChannelID string          `json:"channelId"`
	At        time.Time       `json:"at"`
	Body      json.RawMessage `json:"body"`
}

func outboxOp(m webhooks.OutboxMessage) (Op, error) {
	if !json.Valid(m.Body) {
		return Op{}, fmt.Errorf("outbox message %s: the body is not JSON", m.ID)
	}
	item, err := encode(outboxKey(m), outboxRecord{ID: m.ID, Queue: string(m.Queue), ChannelID: m.ChannelID, At: m.At, Body: m.Body})
	return Put(item, IfNotExists), err
}

// outboxOps are the ops that put events into the outbox, for a write that emits them.
func outboxOps(evs []webhooks.Event) ([]Op, error) {
	ops := make([]Op, 0, len(evs))
	for _, ev := range evs {
		m, err := ev.Message()
		if err != nil {
			return nil, err
		}
		op, err := outboxOp(m)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func webhookItem(r webhooks.Registration) (Item, error) {
	return encode(webhookKey(r.ChannelID, r.ID), webhookRecordOf(r))
}

func deliveryItem(channelID string, d webhooks.Delivery) (Item, error) {
	item, err := encode(deliveryKey(channelID, d.WebhookID, d.ID), deliveryRecordOf(d))
	item.ExpiresAt = expiry(d.CreatedAt)
	return item, err
}

// ListWebhooks returns the channel's registrations, oldest first.
func (s *Store) ListWebhooks(ctx context.Context, channelID string) ([]webhooks.Registration, error) {
	return queryEach(ctx, s, channelPK(channelID), prefixWebhook, false,
		func(r webhookRecord) webhooks.Registration { return r.registration(channelID) })
}

// GetWebhook returns a registration and its version.
func (s *Store) GetWebhook(ctx context.Context, channelID, id string) (webhooks.Registration, int64, error) {
	var r webhookRecord
	version, err := s.getJSON(ctx, webhookKey(channelID, id), &r)
	return r.registration(channelID), version, orNotFound(err, "webhook %s not found", id)
}

// CreateWebhook counts the registration against the channel's limit and stores it, in one transaction.
func (s *Store) CreateWebhook(ctx context.Context, channelID string, r webhooks.Registration, max int) error {
	r.ChannelID = channelID
	item, err := webhookItem(r)
	if err != nil {
		return err
	}
	claim, err := urlClaim(channelID, r)
	if err != nil {
		return err
	}
	err = s.write(ctx, Incr(channelCounter(channelID, "webhooks"), 1, int64(max)), putNew(item), Put(claim, IfNotExists))
	switch FailedOp(err) {
	case -1:
		return err
	case 0:
		return apperr.Invalid("", "maximum of %d webhook registrations reached", max)
	case 1:
		return apperr.Conflictf("webhook %s exists already", r.ID)
	default:
		return errURLTaken()
	}
}

// UpdateWebhook replaces a registration if it is still at version was. A new URL is claimed in the same
// transaction and previousURL's claim given back.
func (s *Store) UpdateWebhook(ctx context.Context, channelID string, r webhooks.Registration, was int64, previousURL string) error {
	r.ChannelID = channelID
	item, err := webhookItem(r)
	if err != nil {
		return err
	}
	ops := []Op{PutIfVersion(item, was)}
	if webhookURLKey(channelID, r.URL) != webhookURLKey(channelID, previousURL) {
		claim, err := urlClaim(channelID, r)
		if err != nil {
			return err
		}
		ops = append(ops, Put(claim, IfNotExists), Delete(webhookURLKey(channelID, previousURL), Always))
	}
	if err := s.write(ctx, ops...); err != nil {
		switch FailedOp(err) {
		case 0:
			return apperr.Conflictf("webhook %s was changed concurrently; read it again", r.ID)
		case 1:
			return errURLTaken()
		}
		return fmt.Errorf("update webhook: %w", err)
	}
	return nil
}

// SaveHealth replaces a registration (its delivery health changed) if it is still at version was.
func (s *Store) SaveHealth(ctx context.Context, r webhooks.Registration, was int64) error {
	item, err := webhookItem(r)
	if err != nil {
		return err
	}
	return staleIfChanged(s.write(ctx, PutIfVersion(item, was)))
}

// staleIfChanged turns a versioned write's failed condition, or its lost races, into webhooks.ErrStale.
func staleIfChanged(err error) error {
	if errors.Is(err, ErrConditionFailed) || apperr.CodeOf(err) == apperr.Conflict {
		return webhooks.ErrStale
	}
	return err
}

// DeleteWebhook removes a registration and gives its place back, in one transaction. Its deliveries stay
// until they expire, unreachable through the API.
func (s *Store) DeleteWebhook(ctx context.Context, channelID, id string) error {
	for attempt := 0; ; attempt++ {
		r, version, err := s.GetWebhook(ctx, channelID, id)
		if err != nil {
			return err
		}
		del := Delete(webhookKey(channelID, id), IfVersion)
		del.Version = version
		ops := []Op{del, Incr(channelCounter(channelID, "webhooks"), -1, 0)}
		// The URL's claim goes too, unless another registration holds it (one stored before claims).
		claim := webhookURLKey(channelID, r.URL)
		owner, err := s.t.Get(ctx, claim)
		switch {
		case err == nil && claimedBy(owner) == id:
			ops = append(ops, Delete(claim, Always))
		case err != nil && !errors.Is(err, ErrNotFound):
			return fmt.Errorf("delete webhook: %w", err)
		}
		err = s.write(ctx, ops...)
		// A change between the read and the write (its URL may have moved): read it again.
		if FailedOp(err) == 0 && attempt < 2 {
			continue
		}
		if errors.Is(err, ErrConditionFailed) {
			return apperr.Conflictf("webhook %s was changed concurrently; try again", id)
		}
		return err
	}
}

// ListDeliveries returns a registration's deliveries, newest first (ids are time-ordered).
func (s *Store) ListDeliveries(ctx context.Context, channelID, webhookID string) ([]webhooks.Delivery, error) {
	return queryEach(ctx, s, channelPK(channelID), prefixDelivery+webhookID+"#", true, deliveryRecord.delivery)
}

// DeliveryPage returns the deliveries [offset, offset+limit) of a registration's log, newest first, and how
// many the log holds: only the page's items are read and decoded (newestPage).
func (s *Store) DeliveryPage(ctx context.Context, channelID, webhookID string, limit, offset int) ([]webhooks.Delivery, int, error) {
	items, total, err := s.newestPage(ctx, channelPK(channelID), prefixDelivery+webhookID+"#", limit, offset)
	if err != nil {
		return nil, 0, err
	}
	out, err := decodeEach(items, deliveryRecord.delivery)
	return out, total, err
}

// GetDelivery returns one delivery of a registration.
func (s *Store) GetDelivery(ctx context.Context, channelID, webhookID, deliveryID string) (webhooks.Delivery, error) {
	var r deliveryRecord
	_, err := s.getJSON(ctx, deliveryKey(channelID, webhookID, deliveryID), &r)
	return r.delivery(), orNotFound(err, "delivery %s not found", deliveryID)
}

// GetEvent returns a kept event.
func (s *Store) GetEvent(ctx context.Context, channelID, eventID string) (webhooks.Event, error) {
	var r eventRecord
	_, err := s.getJSON(ctx, eventKey(channelID, eventID), &r)
	return r.fanOut(channelID).Event, orNotFound(err, "event %s not found", eventID)
}

// QueueDelivery stores a manual delivery, its outbox message and (when ev is set) its event, if the
// registration exists, in one transaction.
func (s *Store) QueueDelivery(ctx context.Context, channelID string, ev *webhooks.Event, d webhooks.Delivery, m webhooks.OutboxMessage) error {
	ops := []Op{Check(webhookKey(channelID, d.WebhookID), IfExists)}
	if ev != nil {
		item, err := eventItem(webhooks.FanOut{Event: *ev, Sent: true,
			Deliveries: []webhooks.FanOutDelivery{{WebhookID: d.WebhookID, DeliveryID: d.ID}}})
		if err != nil {
			return err
		}
		ops = append(ops, putNew(item))
	}
	item, err := deliveryItem(channelID, d)
	if err != nil {
		return err
	}
	ops = append(ops, putNew(item))
	out, err := outboxOp(m)
	if err != nil {
		return err
	}
	ops = append(ops, out)
	err = s.write(ctx, ops...)
	switch FailedOp(err) {
	case -1:
		return err
	case 0:
		return apperr.NotFoundf("webhook %s not found", d.WebhookID)
	default:
		return apperr.Conflictf("delivery %s exists already", d.ID)
	}
}

// RecordFanOut stores an event with the deliveries made of it, each new, in one transaction; when the
// event was recorded before it stores nothing and returns webhooks.ErrFannedOut.
func (s *Store) RecordFanOut(ctx context.Context, ev webhooks.Event, ds []webhooks.Delivery) error {
	f := webhooks.FanOut{Event: ev, Deliveries: make([]webhooks.FanOutDelivery, len(ds))}
	for i, d := range ds {
		f.Deliveries[i] = webhooks.FanOutDelivery{WebhookID: d.WebhookID, DeliveryID: d.ID}
	}
	item, err := eventItem(f)
	if err != nil {
		return err
	}
	ops := []Op{putNew(item)}
	for _, d := range ds {
		di, err := deliveryItem(ev.ChannelID, d)
		if err != nil {
			return err
		}
		ops = append(ops, putNew(di))
	}
	err = s.write(ctx, ops...)
	switch FailedOp(err) {
	case -1:
		return err
	case 0:
		return webhooks.ErrFannedOut
	default:
		return fmt.Errorf("fan out event %s: a delivery exists already: %w", ev.ID, err)
	}
}

// FanOutOf reads what RecordFanOut stored of an event.
func (s *Store) FanOutOf(ctx context.Context, channelID, eventID string) (webhooks.FanOut, int64, error) {
	var r eventRecord
	version, err := s.getJSON(ctx, eventKey(channelID, eventID), &r)
	if err != nil {
		return webhooks.FanOut{}, 0, fmt.Errorf("fan-out of event %s: %w", eventID, err)
	}
	return r.fanOut(channelID), version, nil
}

// MarkSent records that every delivery message of an event was sent.
func (s *Store) MarkSent(ctx context.Context, f webhooks.FanOut, was int64) error {
	f.Sent = true
	item, err := eventItem(f)
	if err != nil {
		return err
	}
	return staleIfChanged(s.write(ctx, PutIfVersion(item, was)))
}

// Deliveries reads deliveries of a channel; missing ones are left out.
func (s *Store) Deliveries(ctx context.Context, channelID string, ids []webhooks.FanOutDelivery) ([]webhooks.Delivery, error) {
	keys := make([]Key, len(ids))
	for i, id := range ids {
		keys[i] = deliveryKey(channelID, id.WebhookID, id.DeliveryID)
	}
	items, err := s.getAll(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("get deliveries: %w", err)
	}
	return decodeEach(items, deliveryRecord.delivery)
}

// LoadDelivery reads a delivery, its registration and its event in one batch read.
func (s *Store) LoadDelivery(ctx context.Context, ref webhooks.DeliveryRef) (webhooks.DeliveryState, error) {
	dk, wk, ek := deliveryKey(ref.ChannelID, ref.WebhookID, ref.DeliveryID), webhookKey(ref.ChannelID, ref.WebhookID),
		eventKey(ref.ChannelID, ref.EventID)
	items, err := s.t.GetMany(ctx, []Key{dk, wk, ek})
	if err != nil {
		return webhooks.DeliveryState{}, fmt.Errorf("load delivery %s: %w", ref.DeliveryID, err)
	}
	var st webhooks.DeliveryState
	for _, it := range items {
		switch it.Key {
		case dk:
			var r deliveryRecord
			if err := decode(it, &r); err != nil {
				return st, err
			}
			d := r.delivery()
			st.Delivery, st.DeliveryVersion = &d, it.Version
		case wk:
			var r webhookRecord
			if err := decode(it, &r); err != nil {
				return st, err
			}
			reg := r.registration(ref.ChannelID)
			st.Webhook, st.WebhookVersion = &reg, it.Version
		case ek:
			var r eventRecord
			if err := decode(it, &r); err != nil {
				return st, err
			}
			ev := r.fanOut(ref.ChannelID).Event
			st.Event = &ev
		}
	}
	return st, nil
}

// SaveDelivery replaces a delivery if it is still at version was.
func (s *Store) SaveDelivery(ctx context.Context, channelID string, d webhooks.Delivery, was int64) error {
	item, err := deliveryItem(channelID, d)
	if err != nil {
		return err
	}
	return staleIfChanged(s.write(ctx, PutIfVersion(item, was)))
}

// PutOutbox adds messages to the outbox, each on its own; one already there is left as it is.
func (s *Store) PutOutbox(ctx context.Context, msgs ...webhooks.OutboxMessage) error {
	for _, m := range msgs {
		op, err := outboxOp(m)
		if err != nil {
			return err
		}
		if err := s.write(ctx, op); err != nil && !errors.Is(err, ErrConditionFailed) {
			return fmt.Errorf("outbox: %w", err)
		}
	}
	return nil
}

// DeleteOutbox removes sent messages from the outbox.
func (s *Store) DeleteOutbox(ctx context.Context, msgs ...webhooks.OutboxMessage) error {
	if err := deleteEach(ctx, s, msgs, outboxKey); err != nil {
		return fmt.Errorf("outbox: delete: %w", err)
	}
	return nil
}

// OldOutbox returns up to limit outbox messages written at or before `before`, oldest first, reading one page
// of each outbox partition.
func (s *Store) OldOutbox(ctx context.Context, before time.Time, limit int) ([]webhooks.OutboxMessage, error) {
	var out []webhooks.OutboxMessage
	cutoff := fmt.Sprintf("%013d", before.UnixMilli())
	for shard := range outboxShards {
		page, err := s.t.Query(ctx, Query{PK: outboxPK(shard), Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("outbox: %w", err)
		}
		for _, it := range page.Items {
			if len(it.SK) < len(cutoff) || it.SK[:len(cutoff)] > cutoff {
				break
			}
			var r outboxRecord
			if err := decode(it, &r); err != nil {
				return nil, err
			}
			out = append(out, webhooks.OutboxMessage{ID: r.ID, Queue: webhooks.Queue(r.Queue), ChannelID: r.ChannelID,
				At: r.At, Body: r.Body})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
