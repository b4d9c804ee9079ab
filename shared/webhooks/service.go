package webhooks

import (
	"cmp"
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
)

// Store is what registration management needs from the table.
type Store interface {
	NewID() string
	ListWebhooks(ctx context.Context, channelID string) ([]Registration, error)
	// GetWebhook returns a registration and its version; NOT_FOUND when the channel has none of that id.
	GetWebhook(ctx context.Context, channelID, id string) (Registration, int64, error)
	// CreateWebhook stores r unless the channel has max registrations already (VALIDATION_ERROR).
	CreateWebhook(ctx context.Context, channelID string, r Registration, max int) error
	// UpdateWebhook replaces r if it is still at version was (CONFLICT otherwise); previousURL is the URL
	// the stored version has, whose claim moves to r's (CONFLICT when another registration holds it).
	UpdateWebhook(ctx context.Context, channelID string, r Registration, was int64, previousURL string) error
	// DeleteWebhook removes a registration (NOT_FOUND when there is none) and gives its place back.
	DeleteWebhook(ctx context.Context, channelID, id string) error
	// DeliveryPage returns the deliveries [offset, offset+limit) of a registration's log, newest first, and
	// how many the log holds, reading only the page's items.
	DeliveryPage(ctx context.Context, channelID, webhookID string, limit, offset int) ([]Delivery, int, error)
	// GetDelivery returns one delivery; NOT_FOUND when there is none.
	GetDelivery(ctx context.Context, channelID, webhookID, deliveryID string) (Delivery, error)
	// GetEvent returns a kept event; NOT_FOUND when it is gone.
	GetEvent(ctx context.Context, channelID, eventID string) (Event, error)
	// QueueDelivery stores a manual delivery, its outbox message and, when ev is not nil, its event, in one
	// transaction, if the registration still exists (NOT_FOUND otherwise).
	QueueDelivery(ctx context.Context, channelID string, ev *Event, d Delivery, m OutboxMessage) error
}

// Publisher sends outbox messages on (the Relay's fast path).
type Publisher interface {
	Publish(ctx context.Context, msgs ...OutboxMessage)
}

// Config configures a Service.
type Config struct {
	Store  Store
	Cipher Cipher
	Rules  URLRules
	// Relay publishes test deliveries and redeliveries at once (nil: they wait for the outbox sweep).
	Relay Publisher
	Now   func() time.Time
}

// Service manages a channel's registrations.
type Service struct {
	c Config
}

// NewService returns a Service.
func NewService(c Config) *Service {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Service{c: c}
}

func (s *Service) now() time.Time { return s.c.Now().UTC().Truncate(time.Millisecond) }

// updateAttempts bounds the read-modify-write retries of a change that raced another one.
const updateAttempts = 3

// Create registers a receiver and returns it with its secret, shown this once.
func (s *Service) Create(ctx context.Context, channelID string, in contract.WebhookCreate) (Created, error) {
	if err := in.Validate(); err != nil {
		return Created{}, err
	}
	if err := s.c.Rules.Check(ctx, "url", in.URL); err != nil {
		return Created{}, err
	}
	if err := s.urlFree(ctx, channelID, "", in.URL); err != nil {
		return Created{}, err
	}
	events := make([]string, len(in.Events))
	for i, e := range in.Events {
		events[i] = string(e)
	}
	now := s.now()
	r := Registration{ID: s.c.Store.NewID(), ChannelID: channelID, URL: in.URL, Events: events,
		Description: in.Description, Active: true, CreatedAt: now, UpdatedAt: now}
	key, shown := NewSecret()
	sealed, err := s.c.Cipher.Seal(ctx, key, SecretAAD(channelID, r.ID))
	if err != nil {
		return Created{}, err
	}
	r.Secret = sealed
	if err := s.c.Store.CreateWebhook(ctx, channelID, r, MaxRegistrations); err != nil {
		return Created{}, err
	}
	return Created{View: r.View(), Secret: shown}, nil
}

// urlFree refuses (409) a URL another of the channel's registrations than id has already: one event would
// otherwise be signed and sent to one receiver as many times as it is registered (issue 19 item 16).
// Registrations are few (MaxRegistrations), so they are read, which names the registration holding it;
// the store also claims each URL in the write's transaction, so two writes racing with one URL cannot both
// pass.
func (s *Service) urlFree(ctx context.Context, channelID, id, raw string) error {
	regs, err := s.c.Store.ListWebhooks(ctx, channelID)
	if err != nil {
		return err
	}
	want := SameURL(raw)
	for _, r := range regs {
		if r.ID != id && SameURL(r.URL) == want {
			return apperr.Conflictf("the URL is already registered by webhook %s; update that registration's events instead", r.ID)
		}
	}
	return nil
}

// SameURL is the form in which two receiver URLs that reach the same resource are equal: scheme and host
// in lower case, the scheme's default port and an empty path spelled out the same way.
func SameURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		u.Host = strings.TrimSuffix(u.Host, ":"+p)
	}
	u.Path = cmp.Or(u.Path, "/")
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// List returns the channel's registrations, oldest first.
func (s *Service) List(ctx context.Context, channelID string) ([]View, error) {
	regs, err := s.c.Store.ListWebhooks(ctx, channelID)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(regs))
	for i, r := range regs {
		out[i] = r.View()
	}
	return out, nil
}

// Get returns one registration.
func (s *Service) Get(ctx context.Context, channelID, id string) (View, error) {
	r, _, err := s.c.Store.GetWebhook(ctx, channelID, id)
	if err != nil {
		return View{}, err
	}
	return r.View(), nil
}

// Update changes the fields present in in. active: true also switches a registration the service switched
// off back on.
func (s *Service) Update(ctx context.Context, channelID, id string, in contract.WebhookUpdate) (View, error) {
	if err := in.Validate(); err != nil {
		return View{}, err
	}
	if in.URL != nil {
		if err := s.c.Rules.Check(ctx, "url", *in.URL); err != nil {
			return View{}, err
		}
		if err := s.urlFree(ctx, channelID, id, *in.URL); err != nil {
			return View{}, err
		}
	}
	return s.change(ctx, channelID, id, func(r *Registration) {
		if in.URL != nil {
			r.URL = *in.URL
		}
		if in.Events != nil {
			r.Events = make([]string, len(in.Events))
			for i, e := range in.Events {
				r.Events[i] = string(e)
			}
		}
		if in.Description != nil {
			r.Description = in.Description
		}
		if in.Active != nil {
			r.Active = *in.Active
			if r.Active {
				r.DisabledAt, r.DisabledReason, r.FailingSince = nil, nil, nil
			}
		}
	})
}

// change applies edit to the stored registration, reading it again when another write got in first.
func (s *Service) change(ctx context.Context, channelID, id string, edit func(*Registration)) (View, error) {
	for attempt := 0; ; attempt++ {
		r, version, err := s.c.Store.GetWebhook(ctx, channelID, id)
		if err != nil {
			return View{}, err
		}
		previousURL := r.URL
		edit(&r)
		r.UpdatedAt = s.now()
		err = s.c.Store.UpdateWebhook(ctx, channelID, r, version, previousURL)
		if apperr.CodeOf(err) == apperr.Conflict && attempt+1 < updateAttempts {
			continue
		}
		if err != nil {
			return View{}, err
		}
		return r.View(), nil
	}
}

// Delete removes a registration; its pending deliveries are dropped.
func (s *Service) Delete(ctx context.Context, channelID, id string) error {
	return s.c.Store.DeleteWebhook(ctx, channelID, id)
}

// RotateSecret gives the registration a new secret and returns it, shown this once. The replaced secret
// keeps signing beside it for RotationOverlap.
func (s *Service) RotateSecret(ctx context.Context, channelID, id string) (RotatedSecret, error) {
	if _, _, err := s.c.Store.GetWebhook(ctx, channelID, id); err != nil {
		return RotatedSecret{}, err
	}
	key, shown := NewSecret()
	sealed, err := s.c.Cipher.Seal(ctx, key, SecretAAD(channelID, id))
	if err != nil {
		return RotatedSecret{}, err
	}
	until := s.now().Add(RotationOverlap)
	if _, err := s.change(ctx, channelID, id, func(r *Registration) {
		r.PreviousSecret, r.PreviousUntil, r.Secret = r.Secret, &until, sealed
	}); err != nil {
		return RotatedSecret{}, err
	}
	return RotatedSecret{Secret: shown, PreviousSecretExpiresAt: until}, nil
}

// Test queues a signed `webhook.test` delivery to the registration, whatever its events and active flag,
// and returns the delivery's id.
func (s *Service) Test(ctx context.Context, channelID, id string) (string, error) {
	if _, _, err := s.c.Store.GetWebhook(ctx, channelID, id); err != nil {
		return "", err
	}
	now := s.now()
	ev, err := NewEvent(s.c.Store.NewID(), Test, channelID, now, map[string]string{"webhookId": id})
	if err != nil {
		return "", err
	}
	dl := Delivery{ID: s.c.Store.NewID(), WebhookID: id, EventID: ev.ID, Event: Test, Status: Pending, Manual: true,
		CreatedAt: now}
	return dl.ID, s.queue(ctx, channelID, &ev, dl)
}

// Redeliver queues the event of a finished delivery to the registration again, as a new delivery with
// the same webhook-id, and returns the new delivery's id.
func (s *Service) Redeliver(ctx context.Context, channelID, id, deliveryID string) (string, error) {
	if _, _, err := s.c.Store.GetWebhook(ctx, channelID, id); err != nil {
		return "", err
	}
	old, err := s.c.Store.GetDelivery(ctx, channelID, id, deliveryID)
	if err != nil {
		return "", err
	}
	if old.Status == Pending {
		return "", apperr.Conflictf("delivery %s is still being attempted; redeliver it once it has failed or succeeded", deliveryID)
	}
	if _, err := s.c.Store.GetEvent(ctx, channelID, old.EventID); err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return "", apperr.NotFoundf("the event of delivery %s is no longer kept (deliveries are kept %d days)",
				deliveryID, int(LogRetention.Hours()/24))
		}
		return "", err
	}
	dl := Delivery{ID: s.c.Store.NewID(), WebhookID: id, EventID: old.EventID, Event: old.Event, Status: Pending,
		Manual: true, RedeliveryOf: &old.ID, CreatedAt: s.now()}
	return dl.ID, s.queue(ctx, channelID, nil, dl)
}

func (s *Service) queue(ctx context.Context, channelID string, ev *Event, dl Delivery) error {
	m, err := deliveryMessage(channelID, dl)
	if err != nil {
		return err
	}
	if err := s.c.Store.QueueDelivery(ctx, channelID, ev, dl, m); err != nil {
		return err
	}
	if s.c.Relay != nil {
		s.c.Relay.Publish(ctx, m)
	}
	return nil
}

// Deliveries returns one page of a registration's delivery log, newest first, and the number of
// deliveries the log holds.
func (s *Service) Deliveries(ctx context.Context, channelID, id string, limit, offset int) ([]DeliveryView, int, error) {
	if _, _, err := s.c.Store.GetWebhook(ctx, channelID, id); err != nil {
		return nil, 0, err
	}
	p, total, err := s.c.Store.DeliveryPage(ctx, channelID, id, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	out := make([]DeliveryView, len(p))
	for i, d := range p {
		out[i] = d.View()
	}
	return out, total, nil
}
