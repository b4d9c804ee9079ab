package httppost_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/webhooks/httppost"
)

func post(t *testing.T, c *httppost.Client, rawURL string) (webhooks.PostResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Post(ctx, webhooks.Post{URL: rawURL, Body: []byte(`{"type":"webhook.test"}`),
		Header: map[string]string{"content-type": "application/json", "user-agent": "css-webhooks/test", "webhook-id": "msg_1"}})
}

// port returns the port of a receiver's URL.
func port(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestTheDialerChecksEveryAddress(t *testing.T) {
	rec := webhookstest.StartReceiver(t)
	p := port(t, rec.URL())
	dns := webhookstest.StartDNS(t)
	dns.Set("loop.example.test", "127.0.0.1")
	dns.Set("mapped.example.test", "::ffff:127.0.0.1")
	dns.Set("private.example.test", "10.0.0.1")
	dns.Set("metadata.example.test", "169.254.169.254")
	cloud := httppost.New(httppost.Options{Resolver: dns.Resolver()})
	dev := httppost.New(httppost.Options{Resolver: dns.Resolver(), Policy: webhooks.AddressPolicy{AllowLoopback: true}})
	tests := []struct {
		name  string
		url   string
		cloud string // "" = delivered, else part of the refusal
		dev   string
	}{
		{"loopback literal", "http://127.0.0.1:" + p + "/hook", "loopback", ""},
		{"IPv6 loopback", "http://[::1]:" + p + "/hook", "loopback", "connect"}, // the receiver listens on IPv4 only
		{"name resolving to loopback", "http://loop.example.test:" + p + "/hook", "loopback", ""},
		{"name resolving to mapped loopback", "http://mapped.example.test:" + p + "/hook", "loopback", ""},
		{"private literal", "http://10.0.0.1:" + p + "/hook", "private", "private"},
		{"name resolving to private", "http://private.example.test:" + p + "/hook", "private", "private"},
		{"metadata", "http://169.254.169.254/latest/meta-data", "metadata", "metadata"},
		{"name resolving to metadata", "http://metadata.example.test/latest", "metadata", "metadata"},
		{"unspecified", "http://0.0.0.0:" + p + "/hook", "unspecified", "unspecified"},
		// IPv4-translated (::ffff:0:a.b.c.d) metadata and loopback (issue 19 item 15).
		{"translated metadata", "http://[::ffff:0:a9fe:a9fe]/", "metadata", "metadata"},
		{"translated loopback", "http://[::ffff:0:7f00:1]:" + p + "/hook", "loopback", "connect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				name   string
				client *httppost.Client
				want   string
			}{{"cloud", cloud, tt.cloud}, {"development", dev, tt.dev}} {
				before := len(rec.Requests())
				res, err := post(t, c.client, tt.url)
				got := len(rec.Requests()) - before
				if c.want == "" {
					if err != nil || res.Status != http.StatusNoContent || got != 1 {
						t.Errorf("%s: %+v, %v (%d requests arrived), want delivered", c.name, res, err, got)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), c.want) || got != 0 {
					t.Errorf("%s: %+v, %v (%d requests arrived), want refused saying %q", c.name, res, err, got, c.want)
				}
			}
		})
	}
}

func TestARebindingNameIsRefusedAtDelivery(t *testing.T) {
	rec := webhookstest.StartReceiver(t)
	dns := webhookstest.StartDNS(t)
	// Public when the registration is checked...
	dns.Set("rebind.example.test", "93.184.216.34")
	rules := webhooks.URLRules{AllowHTTP: true, Resolver: dns.Resolver()}
	u := "http://rebind.example.test:" + port(t, rec.URL()) + "/hook"
	if err := rules.Check(context.Background(), "url", u); err != nil {
		t.Fatalf("registration: %v", err)
	}
	// ...loopback, where the receiver listens, when the delivery connects.
	dns.Set("rebind.example.test", "127.0.0.1")
	_, err := post(t, httppost.New(httppost.Options{Resolver: dns.Resolver()}), u)
	if !errors.Is(err, webhooks.ErrForbiddenAddress) || len(rec.Requests()) != 0 {
		t.Fatalf("delivery after rebinding: %v, %d requests arrived; want refused", err, len(rec.Requests()))
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	target := webhookstest.StartReceiver(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL(), http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	c := httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: true}})
	res, err := post(t, c, redirect.URL)
	if err != nil || res.Status != http.StatusTemporaryRedirect || len(target.Requests()) != 0 {
		t.Fatalf("%+v, %v, %d requests at the target; want the 307 itself", res, err, len(target.Requests()))
	}
}

func TestTheEnvironmentsProxyIsIgnored(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://10.0.0.1:3128")
	t.Setenv("HTTPS_PROXY", "http://10.0.0.1:3128")
	t.Setenv("NO_PROXY", "")
	rec := webhookstest.StartReceiver(t)
	c := httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: true}})
	if res, err := post(t, c, rec.URL()); err != nil || res.Status != http.StatusNoContent || len(rec.Requests()) != 1 {
		t.Fatalf("%+v, %v: want a direct request", res, err)
	}
}

func TestHeadersAndBodyGoOutAsGiven(t *testing.T) {
	rec := webhookstest.StartReceiver(t)
	c := httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: true}})
	res, err := post(t, c, rec.URL())
	if err != nil || res.Duration <= 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	r := rec.Requests()[0]
	if r.Header.Get("user-agent") != "css-webhooks/test" || r.Header.Get("webhook-id") != "msg_1" ||
		r.Header.Get("content-type") != "application/json" || string(r.Body) != `{"type":"webhook.test"}` {
		t.Errorf("received %v %s", r.Header, r.Body)
	}
}

func TestErrorsDoNotRepeatTheURL(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer slow.Close()
	defer close(release) // before Close, which waits for the handler
	c := httppost.New(httppost.Options{Policy: webhooks.AddressPolicy{AllowLoopback: true}})
	const token = "s3cr3t-token"
	tests := []struct {
		name, url, want string
		timeout         time.Duration
	}{
		{"refused address", "https://10.0.0.1/hook?token=" + token, "private", time.Second},
		{"nothing listening", "http://127.0.0.1:1/hook?token=" + token, "connection refused", time.Second},
		// The time it had is what was left of the context when the call began: 200ms, or a little less on a busy machine.
		{"no answer in time", slow.URL + "/hook?token=" + token, "no answer within ", 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			_, err := c.Post(ctx, webhooks.Post{URL: tt.url, Body: []byte("{}")})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), token) {
				t.Fatalf("%v: want an error saying %q without the URL", err, tt.want)
			}
		})
	}
}
