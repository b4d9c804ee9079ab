package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"
)

// A TLS request through the meter reaches the server untouched, and its connection is recorded.
func TestConnMeterPassesTLSAndRecords(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"keys":[]}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	m, err := startConnMeter(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	u.Host = m.addr()
	client := srv.Client()
	resp, err := client.Get(u.String() + "/.well-known/jwks.json")
	if err != nil {
		t.Fatalf("GET through the meter: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `{"keys":[]}` {
		t.Fatalf("body %q", body)
	}
	waits := m.waits()
	if len(waits) != 1 || waits[0].op != "idp" || !waits[0].to.After(waits[0].from) {
		t.Fatalf("waits %+v: want one connection, from accept to after its last byte sent", waits)
	}
	m.reset()
	if waits := m.waits(); len(waits) != 0 {
		t.Errorf("after reset: %+v", waits)
	}
	client.CloseIdleConnections()
}

// The run's wait is the union of the table's calls and the identity provider's connections; the calls
// listed are the table's alone.
func TestTableMeterCountsTheIdentityProvidersWait(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	conn := &meteredConn{accepted: at(0)}
	conn.last.Store(at(4).UnixNano())
	silent := &meteredConn{accepted: at(20)} // nothing sent yet: no wait
	m := &tableMeter{
		calls: []tableCall{{op: "UpdateItem", from: at(3), to: at(6)}, {op: "Query", from: at(10), to: at(12)}},
		idp:   &connMeter{conns: []*meteredConn{conn, silent}},
	}
	waited, ops, calls := m.read()
	if waited != 8*time.Millisecond { // [0, 6] and [10, 12]
		t.Errorf("waited %v, want 8ms", waited)
	}
	if !slices.Equal(ops, []string{"UpdateItem", "Query"}) || len(calls) != 2 {
		t.Errorf("ops %v, calls %+v: want the table's two", ops, calls)
	}
	m.idp = nil
	if waited, _, _ := m.read(); waited != 5*time.Millisecond {
		t.Errorf("without the provider: waited %v, want 5ms", waited)
	}
}
