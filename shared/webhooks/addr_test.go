package webhooks_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/testkit/webhookstest"
	"github.com/creatorstrategy/css/shared/webhooks"
)

func TestAddressPolicy(t *testing.T) {
	tests := []struct {
		addr     string
		allowed  bool // by the cloud policy
		loopback bool // allowed by the development override too
		why      string
	}{
		{"93.184.216.34", true, true, ""},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true, ""},
		{"8.8.8.8", true, true, ""},
		{"127.0.0.1", false, true, "loopback"},
		{"127.255.255.254", false, true, "loopback"},
		{"::1", false, true, "loopback"},
		{"::ffff:127.0.0.1", false, true, "loopback"}, // IPv4-mapped loopback
		{"10.0.0.1", false, false, "private"},
		{"10.255.255.255", false, false, "private"},
		{"172.16.0.1", false, false, "private"},
		{"172.31.255.255", false, false, "private"},
		{"192.168.1.1", false, false, "private"},
		{"::ffff:10.0.0.1", false, false, "private"},
		{"::ffff:192.168.0.1", false, false, "private"},
		{"fc00::1", false, false, "private"},
		{"fd12:3456::1", false, false, "private"},
		{"169.254.169.254", false, false, "metadata"},
		{"::ffff:169.254.169.254", false, false, "metadata"},
		{"fd00:ec2::254", false, false, "metadata"},
		{"169.254.10.10", false, false, "link-local"},
		{"fe80::1", false, false, "link-local"},
		{"fe80::1%eth0", false, false, "link-local"},
		{"100.64.0.1", false, false, "shared (CGNAT)"},
		{"100.127.255.254", false, false, "shared (CGNAT)"},
		{"224.0.0.1", false, false, "multicast"},
		{"239.255.255.250", false, false, "multicast"},
		{"ff02::1", false, false, "multicast"},
		{"0.0.0.0", false, false, "unspecified"},
		{"::", false, false, "unspecified"},
		{"0.1.2.3", false, false, "this-network"},
		{"255.255.255.255", false, false, "broadcast"},
		{"240.0.0.1", false, false, "reserved"},
		{"192.0.2.10", false, false, "documentation"},
		{"198.18.0.1", false, false, "benchmarking"},
		{"2001:db8::1", false, false, "documentation"},
		{"64:ff9b::a00:1", false, false, "private"},     // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", false, true, "loopback"},    // NAT64 of 127.0.0.1
		{"64:ff9b::5db8:d822", true, true, ""},          // NAT64 of 93.184.216.34
		{"2002:a00:1::1", false, false, "private"},      // 6to4 of 10.0.0.1
		{"2002:a9fe:a9fe::1", false, false, "metadata"}, // 6to4 of 169.254.169.254
		{"::a00:1", false, false, "private"},            // IPv4-compatible 10.0.0.1
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, false, "Teredo"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tt.addr)
			err := webhooks.AddressPolicy{}.Check(a)
			if (err == nil) != tt.allowed {
				t.Fatalf("cloud policy: %v, want allowed=%v", err, tt.allowed)
			}
			if err != nil && (!errors.Is(err, webhooks.ErrForbiddenAddress) || !strings.Contains(err.Error(), tt.why)) {
				t.Errorf("cloud policy: %q does not say %q", err, tt.why)
			}
			if err := (webhooks.AddressPolicy{AllowLoopback: true}).Check(a); (err == nil) != tt.loopback {
				t.Errorf("development override: %v, want allowed=%v", err, tt.loopback)
			}
		})
	}
	if err := (webhooks.AddressPolicy{}).Check(netip.Addr{}); err == nil {
		t.Error("the zero address is allowed")
	}
}

func TestURLRules(t *testing.T) {
	dns := webhookstest.StartDNS(t)
	dns.Set("public.example.test", "93.184.216.34")
	dns.Set("private.example.test", "10.0.0.7")
	dns.Set("mixed.example.test", "93.184.216.34", "192.168.0.2")
	dns.Set("metadata.example.test", "169.254.169.254")
	dns.Set("v6private.example.test", "fd00::5")
	dns.Set("loop.example.test", "127.0.0.1")
	dns.Set("mapped.example.test", "::ffff:127.0.0.1")
	cloud := webhooks.URLRules{Resolver: dns.Resolver()}
	dev := webhooks.URLRules{AllowHTTP: true, Policy: webhooks.AddressPolicy{AllowLoopback: true}, Resolver: dns.Resolver()}
	long := "https://public.example.test/" + strings.Repeat("a", webhooks.MaxURLLength)
	tests := []struct {
		url   string
		cloud string // "" = allowed, else part of the message
		dev   string
	}{
		{"https://public.example.test/hook", "", ""},
		{"https://public.example.test:8443/hook?token=x", "", ""},
		{"https://93.184.216.34/hook", "", ""},
		{"http://public.example.test/hook", "must use https", ""},
		{"ftp://public.example.test/hook", "must use https", "must use https"},
		{"https://user:pass@public.example.test/hook", "user information", "user information"},
		{"https://user@public.example.test/hook", "user information", "user information"},
		{long, "at most 2048", "at most 2048"},
		{"https://127.0.0.1/hook", "loopback", ""},
		{"http://127.0.0.1:8080/hook", "must use https", ""},
		{"https://[::1]/hook", "loopback", ""},
		{"https://[::ffff:127.0.0.1]/hook", "loopback", ""},
		{"https://10.0.0.1/hook", "private", "private"},
		{"https://10.1.2.3:443/hook", "private", "private"},
		{"https://169.254.169.254/latest/meta-data", "metadata", "metadata"},
		{"https://[fd00:ec2::254]/", "metadata", "metadata"},
		{"https://100.64.1.1/hook", "CGNAT", "CGNAT"},
		{"https://private.example.test/hook", "resolves to 10.0.0.7", "resolves to 10.0.0.7"},
		{"https://mixed.example.test/hook", "resolves to 192.168.0.2", "resolves to 192.168.0.2"},
		{"https://metadata.example.test/hook", "metadata", "metadata"},
		{"https://v6private.example.test/hook", "private", "private"},
		{"https://loop.example.test/hook", "loopback", ""},
		{"https://mapped.example.test/hook", "loopback", ""},
		{"https://nowhere.example.test/hook", "does not resolve", "does not resolve"},
		{"https://[fe80::1%25eth0]/hook", "zone", "zone"},
		{"/relative/path", "absolute", "absolute"},
		{"https:///no-host", "absolute", "absolute"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.url[:min(len(tt.url), 60)], func(t *testing.T) {
			for _, c := range []struct {
				name  string
				rules webhooks.URLRules
				want  string
			}{{"cloud", cloud, tt.cloud}, {"development", dev, tt.dev}} {
				err := c.rules.Check(ctx, "url", tt.url)
				if c.want == "" {
					if err != nil {
						t.Errorf("%s: %v, want allowed", c.name, err)
					}
					continue
				}
				e, ok := apperr.As(err)
				if !ok || e.Code != apperr.Validation || e.Field != "url" || !strings.Contains(e.Message, c.want) {
					t.Errorf("%s: %v, want a VALIDATION_ERROR on url saying %q", c.name, err, c.want)
				}
			}
		})
	}
}
