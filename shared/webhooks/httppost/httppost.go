// Package httppost is the HTTP client that posts deliveries to receivers (webhooks.Poster). Receivers are
// URLs users choose, so it is locked down: the dialer checks every address it connects to against the
// address policy (after name resolution, so a name that resolves to a private address is refused however
// it resolved at registration), no proxy from the environment, no redirect followed, and a deadline on
// every request.
package httppost

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/creatorstrategy/css/shared/webhooks"
)

// drainLimit bounds how much of an answer's body is read (and thrown away) so its connection can be
// reused; a longer body closes the connection instead.
const drainLimit = 64 << 10

// Options configures a Client.
type Options struct {
	Policy webhooks.AddressPolicy
	// Resolver resolves receiver names (nil: the system's). Tests point it at a DNS server on loopback.
	Resolver *net.Resolver
	// MaxIdleConnsPerHost keeps connections to a busy receiver open between deliveries (default 64).
	MaxIdleConnsPerHost int
}

// Client posts deliveries.
type Client struct {
	hc *http.Client
}

// New returns a Client.
func New(o Options) *Client { return &Client{hc: HTTPClient(o)} }

// HTTPClient is the locked-down HTTP client itself, for other requests to URLs users choose (an MCP
// client's metadata document, decision 56): the same policy on every address dialled, no proxy, no
// redirect, the delivery deadline.
func HTTPClient(o Options) *http.Client {
	o.MaxIdleConnsPerHost = cmp.Or(o.MaxIdleConnsPerHost, 64)
	policy := o.Policy
	dialer := &net.Dialer{
		Timeout:   webhooks.DeliveryTimeout,
		KeepAlive: 30 * time.Second,
		Resolver:  o.Resolver,
		// Control runs for every address the dialer tries, after resolution and before connecting.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %q is not an address", webhooks.ErrForbiddenAddress, address)
			}
			return policy.Check(ap.Addr())
		},
	}
	tr := &http.Transport{
		Proxy:                 nil, // never a proxy from the environment: the policy must see the receiver itself
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   o.MaxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   webhooks.DeliveryTimeout,
		ResponseHeaderTimeout: webhooks.DeliveryTimeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   webhooks.DeliveryTimeout,
		// A redirect is an answer like any other non-2xx: it is not followed (it could lead anywhere).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Post sends one delivery. An error means the receiver gave no answer; its text never holds the URL.
func (c *Client) Post(ctx context.Context, p webhooks.Post) (webhooks.PostResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		return webhooks.PostResult{}, errors.New("the receiver URL cannot be requested")
	}
	for k, v := range p.Header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	limit := webhooks.DeliveryTimeout
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(start) < limit {
		limit = deadline.Sub(start)
	}
	resp, err := c.hc.Do(req)
	elapsed := time.Since(start)
	if err != nil {
		return webhooks.PostResult{Duration: elapsed}, describe(err, limit)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	_ = resp.Body.Close()
	return webhooks.PostResult{Status: resp.StatusCode, Duration: elapsed}, nil
}

// describe says why a request got no answer, without the URL net/http puts into its errors; limit is the
// time it had.
func describe(err error, limit time.Duration) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	switch {
	case errors.Is(err, webhooks.ErrForbiddenAddress):
		if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Err != nil {
			err = oe.Err
		}
		return fmt.Errorf("refused to connect: %w", err)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Errorf("no answer within %s", limit.Round(time.Millisecond))
	case errors.Is(err, context.Canceled):
		return errors.New("cancelled")
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
