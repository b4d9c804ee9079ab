package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue 19 item 17: a request net/http refuses before any handler runs (a control character in a header
// value, no Host) is answered in the Error shape, as JSON, not net/http's text/plain sentence.
func TestMalformedRequestsGetTheErrorShape(t *testing.T) {
	base, _, stop := start(t, map[string]string{"CSS_DATA_DIR": t.TempDir()})
	defer func() { _ = stop() }()
	addr := strings.TrimPrefix(base, "http://")
	for name, raw := range map[string]string{
		"control character in a header value": "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Test: a\x01b\r\n\r\n",
		"no Host":                             "GET /api/v1/health HTTP/1.1\r\n\r\n",
		"malformed request line":              "GET\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(conn, raw); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			var e struct {
				Error string `json:"error"`
				Code  string `json:"code"`
			}
			if res.StatusCode != http.StatusBadRequest || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
				json.Unmarshal(body, &e) != nil || e.Code != "VALIDATION_ERROR" || e.Error == "" {
				t.Errorf("%d %s %q, want 400 in the Error shape", res.StatusCode, res.Header.Get("Content-Type"), body)
			}
		})
	}
}

// Issue 32 item 7: a path with dot segments (curl --path-as-is $API/generations/../../keys) is answered
// in the Error shape, 404 (401 without a credential), never net/http's redirect to the cleaned path.
func TestDotSegmentsAreNotRedirected(t *testing.T) {
	base, _, stop := start(t, map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey})
	defer func() { _ = stop() }()
	addr := strings.TrimPrefix(base, "http://")
	for _, c := range []struct {
		path, auth string
		status     int
	}{
		{"/api/v1/generations/../../keys", "Authorization: Bearer " + devKey + "\r\n", http.StatusNotFound},
		{"/api/v1/generations/../../keys", "", http.StatusUnauthorized},
		{"/api/v1/./notes", "Authorization: Bearer " + devKey + "\r\n", http.StatusNotFound},
		{"/mcp/../api/v1/keys", "Authorization: Bearer " + devKey + "\r\n", http.StatusNotFound},
		{"/files/../api/v1/keys", "Authorization: Bearer " + devKey + "\r\n", http.StatusNotFound},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n"+c.auth+"Connection: close\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		conn.Close()
		var e struct{ Error, Code string }
		if res.StatusCode != c.status || res.Header.Get("Location") != "" || json.Unmarshal(body, &e) != nil || e.Code == "" {
			t.Errorf("GET %s: %d %q (Location %q), want %d in the Error shape", c.path, res.StatusCode, body, res.Header.Get("Location"), c.status)
		}
	}
}
