package webhookstest

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// DNS is a DNS server on loopback that answers A and AAAA queries from a table the test fills, so a test
// can make a name resolve to a private address (or change what it resolves to) with the real resolver.
type DNS struct {
	conn  net.PacketConn
	mu    sync.Mutex
	names map[string][]netip.Addr
}

// StartDNS starts a DNS server until the test ends.
func StartDNS(t testing.TB) *DNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{conn: conn, names: map[string][]netip.Addr{}}
	t.Cleanup(func() { conn.Close() })
	go d.serve()
	return d
}

// Set makes name resolve to addrs (none: the name does not exist).
func (d *DNS) Set(name string, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	d.names[name] = nil
	for _, a := range addrs {
		d.names[name] = append(d.names[name], netip.MustParseAddr(a))
	}
}

// Resolver returns a resolver that asks this server only.
func (d *DNS) Resolver() *net.Resolver {
	addr := d.conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "udp", addr)
	}}
}

func (d *DNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := d.answer(buf[:n]); resp != nil {
			_, _ = d.conn.WriteTo(resp, from)
		}
	}
}

const (
	typeA    = 1
	typeAAAA = 28
)

// answer builds the response to one query (a single question), or nil for what it cannot read.
func (d *DNS) answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i : i+2])
	question := q[12 : i+4]
	name := strings.ToLower(strings.Join(labels, "."))

	d.mu.Lock()
	addrs, known := d.names[name]
	d.mu.Unlock()
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case qtype == typeA && a.Is4():
			b := a.As4()
			answers = append(answers, record(typeA, b[:]))
		case qtype == typeAAAA && a.Is6():
			b := a.As16()
			answers = append(answers, record(typeAAAA, b[:]))
		}
	}
	resp := make([]byte, 12, 512)
	copy(resp[0:2], q[0:2])
	flags := uint16(0x8180) // response, recursion desired and available
	if !known {
		flags |= 3 // NXDOMAIN
	}
	binary.BigEndian.PutUint16(resp[2:4], flags)
	binary.BigEndian.PutUint16(resp[4:6], 1)
	binary.BigEndian.PutUint16(resp[6:8], uint16(len(answers)))
	resp = append(resp, question...)
	for _, a := range answers {
		resp = append(resp, a...)
	}
	return resp
}

// record is an answer for the question's name (a pointer to offset 12), class IN, TTL 0.
func record(typ uint16, data []byte) []byte {
	r := []byte{0xc0, 12, byte(typ >> 8), byte(typ), 0, 1, 0, 0, 0, 0, byte(len(data) >> 8), byte(len(data))}
	return append(r, data...)
}
