package main

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// The driver only ever talks to this machine: every URL must name a loopback host, and the dialer refuses
// any address that is not loopback (whatever a name resolved to, and for redirects too, which are not
// followed anyway).

func checkLoopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("url %q: only http:// on loopback", raw)
	}
	if h := u.Hostname(); h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("url %q: %q is not a loopback address; the load driver refuses other hosts", raw, h)
		}
	}
	return u, nil
}

func checkLoopbackAddr(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("address %q: %w", address, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q is not loopback; refused", address)
	}
	return nil
}

// newClient is an HTTP client for conc concurrent requests that can only reach loopback.
func newClient(conc int) *http.Client {
	dialer := &net.Dialer{
		Timeout: 5 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error { return checkLoopbackAddr(address) },
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			MaxIdleConns:        4 * conc,
			MaxIdleConnsPerHost: conc,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
			Proxy:               nil, // never an HTTP(S)_PROXY from the environment
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
}
