// Package webhookstest has what tests of webhook delivery need around the dispatcher: a receiver on
// loopback that checks every delivery's signature with an independent Standard Webhooks implementation
// (github.com/standard-webhooks/standard-webhooks/libraries) and records what arrives, and a DNS server on
// loopback for the address checks.
package webhookstest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Request is one delivery as the receiver got it.
type Request struct {
	At     time.Time // wall clock
	Header http.Header
	Body   []byte
	// Envelope is the decoded body.
	Envelope struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		ChannelID string          `json:"channelId"`
		Data      json.RawMessage `json:"data"`
	}
	// Attempt counts this request among those with its webhook-id (1 for the first).
	Attempt int
	// Status is what the receiver answered.
	Status int
	// VerifyErr is the independent implementation's verdict on the signature: nil when it verifies with
	// one of the trusted secrets.
	VerifyErr error
}

// Receiver is a webhook receiver on loopback.
type Receiver struct {
	srv *httptest.Server
	// CheckTimestamp makes verification also hold the timestamp to 5 minutes of the wall clock (off for
	// tests whose dispatcher runs on a manual clock).
	CheckTimestamp bool

	mu       sync.Mutex
	secrets  []string
	respond  func(r *Request) int
	requests []Request
	attempts map[string]int
}

// StartReceiver starts a receiver that answers 204 until told otherwise, until the test ends.
func StartReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{attempts: map[string]int{}, respond: func(*Request) int { return http.StatusNoContent }}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is where the receiver listens (http://127.0.0.1:port/hook).
func (r *Receiver) URL() string { return r.srv.URL + "/hook" }

// Trust adds a `whsec_` secret that signatures are verified with (a delivery verifies when one matches).
func (r *Receiver) Trust(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secret)
}

// Respond sets what the receiver answers: f sees the request (its Attempt counted) and returns the
// status.
func (r *Receiver) Respond(f func(req *Request) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.respond = f
}

// Requests returns every request so far, in arrival order.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Successes counts, per webhook-id, the requests answered 2xx.
func (r *Receiver) Successes() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, q := range r.requests {
		if q.Status >= 200 && q.Status < 300 {
			out[q.Header.Get("webhook-id")]++
		}
	}
	return out
}

func (r *Receiver) serve(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	req := Request{At: time.Now(), Header: hr.Header.Clone(), Body: body}
	_ = json.Unmarshal(body, &req.Envelope)
	r.mu.Lock()
	secrets := append([]string(nil), r.secrets...)
	r.mu.Unlock()
	req.VerifyErr = standardwebhooks.ErrNoMatchingSignature
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			req.VerifyErr = err
			continue
		}
		if r.CheckTimestamp {
			err = wh.Verify(body, hr.Header)
		} else {
			err = wh.VerifyIgnoringTimestamp(body, hr.Header)
		}
		if req.VerifyErr = err; err == nil {
			break
		}
	}
	r.mu.Lock()
	id := hr.Header.Get("webhook-id")
	r.attempts[id]++
	req.Attempt = r.attempts[id]
	req.Status = r.respond(&req)
	r.requests = append(r.requests, req)
	r.mu.Unlock()
	w.WriteHeader(req.Status)
}
