package webhooks

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrForbiddenAddress is matched (errors.Is) by every refusal of AddressPolicy.
var ErrForbiddenAddress = errors.New("forbidden address")

// AddressPolicy says which addresses a receiver may have. Users choose receiver URLs, so a delivery must
// never reach the service's own network: only public unicast addresses are allowed. The policy is applied
// to a URL's resolved addresses at registration and, by the HTTP client's dialer, to the address actually
// connected to at every delivery (so a name that resolves elsewhere later, DNS rebinding, is refused too).
type AddressPolicy struct {
	// AllowLoopback lets receivers on loopback (127.0.0.0/8, ::1) through, and nothing else that is
	// refused: for the local stack and tests (CSS_WEBHOOK_ALLOW_LOOPBACK), never in the cloud.
	AllowLoopback bool
}

// refused are the ranges no receiver may be in, beyond what netip's predicates name (loopback, private,
// link-local, multicast, unspecified).
var refused = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a this-network address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	// Teredo and local-use NAT64 addresses hide an IPv4 address that cannot be checked reliably.
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
}

// metadata are the cloud instance-metadata addresses, named so the refusal says what they are (both lie
// in ranges refused anyway).
var metadata = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// embedding are IPv6 ranges whose addresses carry an IPv4 address that is reached instead: the IPv4
// address is checked too. IPv4-mapped addresses (::ffff:a.b.c.d, ::ffff:0:0/96) are unmapped first.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	compatible = netip.MustParsePrefix("::/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765, SIIT): ::ffff:0:a.b.c.d
)

// Check returns nil when a receiver may have address a, else an error (ErrForbiddenAddress) saying why as
// the end of a sentence: "forbidden address: 169.254.169.254, the cloud metadata address".
func (p AddressPolicy) Check(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: not an IP address", ErrForbiddenAddress)
	}
	if why := p.refusal(a); why != "" {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, why)
	}
	return nil
}

// refusal says why a receiver may not have address a ("10.0.0.1, a private address"), "" when it may.
func (p AddressPolicy) refusal(a netip.Addr) string {
	a = a.WithZone("")
	// An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is the IPv4 address.
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case nat64.Contains(a), translated.Contains(a),
			compatible.Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFour.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if why := p.refusal(v4); why != "" {
				return fmt.Sprintf("%s, which embeds %s", a, why)
			}
		}
	}
	if a.IsLoopback() {
		if p.AllowLoopback {
			return ""
		}
		return fmt.Sprintf("%s, a loopback address", a)
	}
	for _, m := range metadata {
		if a == m {
			return fmt.Sprintf("%s, the cloud metadata address", a)
		}
	}
	var why string
	switch {
	case a.IsUnspecified():
		why = "the unspecified address"
	case a.IsPrivate():
		why = "a private address"
	case a.IsMulticast():
		why = "a multicast address"
	case a.IsLinkLocalUnicast():
		why = "a link-local address"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		why = "the broadcast address"
	}
	for _, r := range refused {
		if why == "" && r.prefix.Contains(a) {
			why = r.what
		}
	}
	if why == "" && !a.IsGlobalUnicast() {
		why = "not a global unicast address"
	}
	if why != "" {
		return fmt.Sprintf("%s, %s", a, why)
	}
	return ""
}
