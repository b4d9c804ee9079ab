package webhooks_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Issue 19 item 14: a receiver URL's port is 1-65535, and the refusals read as sentences.
func TestURLPortsAndRefusalSentences(t *testing.T) {
	dns := webhookstest.StartDNS(t)
	rules := webhooks.URLRules{Resolver: dns.Resolver()}
	ctx := context.Background()
	for _, u := range []string{"https://8.8.8.8:99999/x", "https://8.8.8.8:0/x", "https://8.8.8.8:65536/x", "https://8.8.8.8:/x"} {
		err := rules.Check(ctx, "url", u)
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.Validation || e.Field != "url" || !strings.Contains(e.Message, "port") {
			t.Errorf("%s: %v, want a VALIDATION_ERROR on url about its port", u, err)
		}
	}
	for _, u := range []string{"https://8.8.8.8:1/x", "https://8.8.8.8:65535/x", "https://8.8.8.8/x"} {
		if err := rules.Check(ctx, "url", u); err != nil {
			t.Errorf("%s: %v, want allowed", u, err)
		}
	}
	for u, want := range map[string]string{
		"https://169.254.169.254/":      "url: receivers may not be at 169.254.169.254, the cloud metadata address",
		"https://10.0.0.1/":             "url: receivers may not be at 10.0.0.1, a private address",
		"https://[::ffff:0:a9fe:a9fe]/": "url: receivers may not be at ::ffff:0:a9fe:a9fe, which embeds 169.254.169.254, the cloud metadata address",
		"https://[64:ff9b::a00:1]/":     "url: receivers may not be at 64:ff9b::a00:1, which embeds 10.0.0.1, a private address",
	} {
		err := rules.Check(ctx, "url", u)
		if e, ok := apperr.As(err); !ok || e.Message != want {
			t.Errorf("%s: %v, want the message %q", u, err, want)
		}
	}
}

// Issue 19 item 15: IPv4-translated addresses (::ffff:0:0/96) carry the IPv4 address they reach, and are
// checked as it, at registration and in the dialer's policy.
func TestIPv4TranslatedAddresses(t *testing.T) {
	for addr, why := range map[string]string{
		"::ffff:0:a9fe:a9fe": "metadata",
		"::ffff:0:a00:1":     "private",
		"::ffff:0:7f00:1":    "loopback",
	} {
		err := webhooks.AddressPolicy{}.Check(netip.MustParseAddr(addr))
		if err == nil || !errors.Is(err, webhooks.ErrForbiddenAddress) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want refused as %s", addr, err, why)
		}
	}
	if err := (webhooks.AddressPolicy{}).Check(netip.MustParseAddr("::ffff:0:808:808")); err != nil {
		t.Errorf("the translation of 8.8.8.8: %v, want allowed", err)
	}
	err := webhooks.URLRules{}.Check(context.Background(), "url", "https://[::ffff:0:a9fe:a9fe]/")
	if e, ok := apperr.As(err); !ok || !strings.Contains(e.Message, "metadata") {
		t.Errorf("registration: %v, want refused as the metadata address", err)
	}
}

// Issue 19 item 16: a channel registers one URL once (409 CONFLICT for the same URL again); another channel
// may register it, and an update may not move a registration onto another's URL.
func TestDuplicateURLPerChannel(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	in := contract.WebhookCreate{URL: "http://127.0.0.1:9/hook", Events: []contract.EventName{"video.committed"}}
	first, err := h.svc.Create(ctx, chA, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://127.0.0.1:9/hook"} {
		_, err := h.svc.Create(ctx, chA, contract.WebhookCreate{URL: u, Events: []contract.EventName{"schedule.updated"}})
		wantCode(t, "the same URL again: "+u, err, apperr.Conflict, "already registered")
	}
	if _, err := h.svc.Create(ctx, chB, in); err != nil {
		t.Errorf("another channel: %v", err)
	}
	other, err := h.svc.Create(ctx, chA, contract.WebhookCreate{URL: "http://127.0.0.1:9/other", Events: in.Events})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.svc.Update(ctx, chA, other.ID, contract.WebhookUpdate{URL: contract.Ptr(in.URL)})
	wantCode(t, "moved onto another's URL", err, apperr.Conflict, "already registered")
	if _, err := h.svc.Update(ctx, chA, first.ID, contract.WebhookUpdate{URL: contract.Ptr(in.URL)}); err != nil {
		t.Errorf("a registration updated to its own URL: %v", err)
	}
}

// noFullReads is the store with the whole-log read failing: the delivery log must be paged in the store.
type noFullReads struct{ *store.Store }

func (noFullReads) ListDeliveries(context.Context, string, string) ([]webhooks.Delivery, error) {
	return nil, errors.New("the whole delivery log was read for one page")
}

// Issue 19 item 18: the delivery log is paged in the store, not read whole and paged in memory.
func TestDeliveryLogIsPagedInTheStore(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	rec := webhookstest.StartReceiver(t)
	w := h.register(chA, rec, webhooks.VideoCommitted)
	for range 5 {
		h.emit(chA, webhooks.VideoCommitted)
		h.advance(time.Second)
	}
	ctx := context.Background()
	want, _, err := h.svc.Deliveries(ctx, chA, w.ID, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	svc := webhooks.NewService(webhooks.Config{Store: noFullReads{h.st}, Cipher: h.cipher, Now: h.clock.Now})
	p, total, err := svc.Deliveries(ctx, chA, w.ID, 2, 3)
	if err != nil || total != 5 || len(p) != 2 || p[0].ID != want[3].ID || p[1].ID != want[4].ID {
		t.Fatalf("page 2,3 = %d items of %d, %v", len(p), total, err)
	}
	if p, total, err := svc.Deliveries(ctx, chA, w.ID, 10, 7); err != nil || total != 5 || len(p) != 0 {
		t.Errorf("past the end: %d items of %d, %v", len(p), total, err)
	}
}
