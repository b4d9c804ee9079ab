package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
)

// net/http answers a request it cannot read (a control character in a header value, no Host, a malformed
// request line, an oversized header) itself, before any handler runs, with a text/plain sentence written
// straight to the connection. The local server rewrites exactly those answers into the Error shape
// (issue 19 item 17). In the cloud, API Gateway refuses such requests before they reach a function; its
// answers are not the service's to shape.

// netHTTPErrorHeaders follows the status line of every answer net/http writes for an unreadable request
// (net/http's conn.serve); a handler's answer always carries a Date header before these.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// errorShaped wraps ln so that net/http's own refusals of unreadable requests are written as the Error shape.
func errorShaped(ln net.Listener) net.Listener { return shapedListener{ln} }

type shapedListener struct{ net.Listener }

func (l shapedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &shapedConn{Conn: c}, nil
}

type shapedConn struct{ net.Conn }

// CloseWrite keeps net/http's half-close of a refused connection (closeWriteAndWait).
func (c *shapedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *shapedConn) Write(p []byte) (int, error) {
	if shaped, ok := shapeRefusal(p); ok {
		if _, err := c.Conn.Write(shaped); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// shapeRefusal turns one of net/http's refusals ("HTTP/1.1 400 Bad Request" + netHTTPErrorHeaders + text)
// into the same status with an Error body; ok is false for anything else.
func shapeRefusal(p []byte) ([]byte, bool) {
	// Every answer passes here: look only at a 4xx/5xx status line and what follows it, never scan a body.
	if len(p) < 13 || !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) || (p[9] != '4' && p[9] != '5') {
		return nil, false
	}
	end := bytes.Index(p[:min(len(p), 128)], []byte("\r\n"))
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(netHTTPErrorHeaders)) {
		return nil, false
	}
	line, rest := string(p[len("HTTP/1.1 "):end]), p[end+len(netHTTPErrorHeaders):]
	if len(line) < 3 {
		return nil, false
	}
	status, err := strconv.Atoi(line[:3])
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	code := apperr.Validation
	msg := "the request could not be read: a malformed request line or header (header values may not hold control characters)"
	switch {
	case status == 431:
		msg = "the request's header is too large"
	case status == 501:
		code, msg = apperr.NotImplemented, "the request's transfer encoding is not supported"
	default:
		// "400 Bad Request: missing required Host header": the part after the status's text says why.
		if _, why, ok := strings.Cut(string(rest), ": "); ok && why != "" {
			msg = "the request could not be read: " + why
		}
	}
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}{msg, string(code)})
	return fmt.Appendf(nil, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		line, len(body), body), true
}
