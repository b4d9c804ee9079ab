package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
)

// MaxURLLength bounds a receiver URL (the contract's maxLength, checked again for callers without HTTP).
const MaxURLLength = 2048

// resolveTimeout bounds the name lookup of a URL's host at registration.
const resolveTimeout = 5 * time.Second

// Resolver looks up a host's addresses (net.Resolver.LookupNetIP with network "ip").
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// URLRules are the rules a receiver URL must meet.
type URLRules struct {
	// AllowHTTP admits plain http URLs (development mode only); otherwise https is required.
	AllowHTTP bool
	Policy    AddressPolicy
	Resolver  Resolver
}

// Check returns nil when raw may be a receiver URL, else a VALIDATION_ERROR naming field.
func (r URLRules) Check(ctx context.Context, field, raw string) error {
	if len(raw) > MaxURLLength {
		return apperr.Invalid(field, "must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return apperr.Invalid(field, "must be an absolute http(s) URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !r.AllowHTTP {
			return apperr.Invalid(field, "must use https")
		}
	default:
		return apperr.Invalid(field, "must use https")
	}
	if u.User != nil {
		return apperr.Invalid(field, "must not carry user information")
	}
	host := u.Hostname()
	if host == "" {
		return apperr.Invalid(field, "must name a host")
	}
	if strings.Contains(host, "%") {
		return apperr.Invalid(field, "must not name an IPv6 zone")
	}
	if err := checkPort(u); err != nil {
		return apperr.Invalid(field, "%s", err)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := r.Policy.Check(a); err != nil {
			return apperr.Invalid(field, "receivers may not be at %s", forbidden(err))
		}
		return nil
	}
	if r.Resolver == nil {
		return errors.New("webhooks: no resolver to check a receiver's host")
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := r.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return apperr.Invalid(field, "host %s does not resolve", clip(host))
	}
	for _, a := range addrs {
		if err := r.Policy.Check(a); err != nil {
			return apperr.Invalid(field, "host %s resolves to %s; receivers may not be there", clip(host), forbidden(err))
		}
	}
	return nil
}

// checkPort refuses a port outside 1-65535, and an empty one after a colon.
func checkPort(u *url.URL) error {
	if !strings.Contains(strings.TrimPrefix(u.Host, "["+u.Hostname()+"]"), ":") {
		return nil // no port: the scheme's
	}
	p := u.Port()
	n, err := strconv.Atoi(p)
	if p == "" || err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("must have a port from 1 to 65535, not %q", clip(p))
	}
	return nil
}

// forbidden is a policy refusal without its sentinel prefix.
func forbidden(err error) string {
	return strings.TrimPrefix(err.Error(), ErrForbiddenAddress.Error()+": ")
}

func clip(s string) string {
	if r := []rune(s); len(r) > 100 {
		return string(r[:100]) + "…"
	}
	return s
}
