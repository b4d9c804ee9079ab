package queue

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCheckText(t *testing.T) {
	tests := []struct {
		body string
		ok   bool
	}{
		{"tab\t, LF\n, CR\r", true},
		{"\u0020 to \ud7ff", true},
		{"\ue000 and \ufffd", true},
		{"\U00010000 and \U0010ffff", true},
		{"\x1f", false},
		{"\x00", false},
		{"\u007f is allowed", true},
		{"\ufffe", false},
		{"\uffff", false},
		{"\xed\xa0\x80", false}, // an encoded surrogate is not UTF-8
		{"\xc3", false},
	}
	for _, tc := range tests {
		err := Check(Outgoing{Body: []byte(tc.body)}, Outgoing{Body: []byte("x"), Attributes: map[string]string{"k": tc.body}})
		if (err == nil) != tc.ok {
			t.Errorf("Check(%q) = %v; want ok=%v", tc.body, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("Check(%q) = %v; want ErrInvalidMessage", tc.body, err)
		}
		// The same rule for attribute values alone.
		err = Check(Outgoing{Body: []byte("x"), Attributes: map[string]string{"k": tc.body}})
		if (err == nil) != tc.ok {
			t.Errorf("Check(attribute %q) = %v; want ok=%v", tc.body, err, tc.ok)
		}
	}
}

func TestCheckNamesTheMessage(t *testing.T) {
	err := Check(Outgoing{Body: []byte("ok")}, Outgoing{Body: []byte("ok")}, Outgoing{})
	if err == nil || !strings.Contains(err.Error(), "message 2: empty body") {
		t.Errorf("Check = %v; want it to name message 2 and why", err)
	}
}

func TestSize(t *testing.T) {
	m := Outgoing{Body: []byte("12345"), Attributes: map[string]string{"ab": "xyz", "c": "d"}}
	if got, want := Size(m), 5+(2+6+3)+(1+6+1); got != want {
		t.Errorf("Size = %d; want %d", got, want)
	}
	// At the limit, and one byte over.
	body := strings.Repeat("x", MaxMessageSize-Size(Outgoing{Body: nil, Attributes: m.Attributes}))
	if err := Check(Outgoing{Body: []byte(body), Attributes: m.Attributes}); err != nil {
		t.Errorf("a message of exactly MaxMessageSize: %v", err)
	}
	if err := Check(Outgoing{Body: []byte(body + "x"), Attributes: m.Attributes}); !errors.Is(err, ErrInvalidMessage) {
		t.Errorf("a message one byte over: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	base := errors.New("base")
	for _, tc := range []struct {
		in, want time.Duration
	}{
		{-time.Second, 0}, {0, 0}, {time.Minute, time.Minute}, {MaxRetryAfter, MaxRetryAfter}, {MaxRetryAfter + 1, MaxRetryAfter},
	} {
		err := fmt.Errorf("wrapped: %w", RetryAfter(tc.in, base))
		d, ok := RetryDelay(err)
		if !ok || d != tc.want || !errors.Is(err, base) {
			t.Errorf("RetryAfter(%s): delay %s, %v; want %s, wrapping base", tc.in, d, ok, tc.want)
		}
	}
	if _, ok := RetryDelay(base); ok {
		t.Error("RetryDelay of a plain error reported a delay")
	}
}

func TestSpecs(t *testing.T) {
	names := map[string]bool{}
	for name, s := range Specs() {
		if s.Name != name || names[name] {
			t.Errorf("spec %q named %q", name, s.Name)
		}
		names[name] = true
		if s.MaxReceiveCount < 1 || s.VisibilityTimeout <= 0 || s.VisibilityTimeout > MaxRetryAfter ||
			s.Retention <= 0 || s.DeadLetterRetention <= s.Retention || s.VisibilityTimeout%time.Second != 0 {
			t.Errorf("spec %+v", s)
		}
	}
	for _, n := range []string{Generation, Events, WebhookDeliveries, Research} {
		if !names[n] {
			t.Errorf("no spec for %s", n)
		}
	}
}
