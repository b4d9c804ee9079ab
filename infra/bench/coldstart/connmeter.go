package main

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connMeter fronts the identity provider at the TCP level, so its TLS passes through untouched, and records
// each connection from accept to the last byte sent to the function. The keys function fetches the key set
// over TLS as it starts; that wait, like the table's, is the provider's work on this machine (its handshake
// shares the 2 cores), not the function's, and tableMeter.read counts it with the table's.
type connMeter struct {
	ln       net.Listener
	upstream string // host:port of the provider
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns []*meteredConn // since reset
	open  map[*meteredConn]bool
}

// meteredConn is a function's connection to the meter; last is when the meter last wrote to it (Unix ns).
type meteredConn struct {
	net.Conn
	accepted time.Time
	last     atomic.Int64
}

func (c *meteredConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.last.Store(time.Now().UnixNano())
	return n, err
}

func startConnMeter(upstream string) (*connMeter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &connMeter{ln: ln, upstream: upstream, open: map[*meteredConn]bool{}}
	m.wg.Go(m.serve)
	return m, nil
}

// addr is the meter's host:port.
func (m *connMeter) addr() string { return m.ln.Addr().String() }

func (m *connMeter) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		mc := &meteredConn{Conn: c, accepted: time.Now()}
		m.mu.Lock()
		m.conns = append(m.conns, mc)
		m.open[mc] = true
		m.mu.Unlock()
		m.wg.Go(func() { m.pipe(mc) })
	}
}

// pipe copies both ways until either side closes.
func (m *connMeter) pipe(c *meteredConn) {
	defer func() {
		c.Close()
		m.mu.Lock()
		delete(m.open, c)
		m.mu.Unlock()
	}()
	up, err := net.Dial("tcp", m.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(up, c)
		up.Close()
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
}

func (m *connMeter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conns = nil
}

// waits are the connections since reset as intervals, [accept, last byte sent]; a connection nothing was
// sent on yet counts from accept to accept.
func (m *connMeter) waits() []tableCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	waits := make([]tableCall, 0, len(m.conns))
	for _, c := range m.conns {
		to := c.accepted
		if last := c.last.Load(); last != 0 {
			to = time.Unix(0, last)
		}
		waits = append(waits, tableCall{op: "idp", from: c.accepted, to: to})
	}
	return waits
}

func (m *connMeter) close() {
	m.ln.Close()
	m.mu.Lock()
	for c := range m.open {
		c.Close()
	}
	m.mu.Unlock()
	m.wg.Wait()
}
