package queuetest

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/queue"
)

// testSendReceive: bodies and attributes arrive exactly as sent, once, on the first attempt, each with its
// own id and the time it was sent; handled messages are deleted.
func testSendReceive(t *testing.T, s suite) {
	q := s.New(t, Config{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 3})
	r := newRecorder(q, nil)
	q.Start(t, r.handle, 2)

	msgs := []queue.Outgoing{
		{Body: []byte(`{"job":"titles","n":1}`), Attributes: map[string]string{"requestId": "req-1", "kind": "generation"}},
		{Body: []byte("plain text, ünïcødé and emoji 🎉\ttab\nnewline\r")},
		{Body: []byte("third"), Attributes: map[string]string{"a.b-c_d": "x", "Z9": "value with spaces"}},
	}
	before := q.Now()
	send(t, q, msgs...)
	after := q.Now()

	ids := map[string]bool{}
	for _, m := range msgs {
		got := r.waitFor(t, s, string(m.Body), 1)[0].msg
		if got.Attempt != 1 {
			t.Errorf("%q: Attempt %d; want 1", m.Body, got.Attempt)
		}
		if !maps.Equal(got.Attributes, m.Attributes) {
			t.Errorf("%q: attributes %v; want %v", m.Body, got.Attributes, m.Attributes)
		}
		if got.ID == "" || ids[got.ID] {
			t.Errorf("%q: id %q empty or not unique", m.Body, got.ID)
		}
		ids[got.ID] = true
		// SQS keeps SentTimestamp in milliseconds.
		if got.SentAt.Before(before.Truncate(time.Millisecond).Add(-s.slack)) || got.SentAt.After(after.Add(s.slack)) {
			t.Errorf("%q: SentAt %s; want within [%s, %s]", m.Body, got.SentAt, before, after)
		}
	}
	s.waitCounts(t, q, Counts{})
	for _, m := range msgs {
		noMore(t, r, string(m.Body), 1)
	}
}

// testInvalidMessages: a Send holding one message that breaks a rule is refused whole, with
// queue.ErrInvalidMessage; the bounds themselves are accepted.
func testInvalidMessages(t *testing.T, s suite) {
	q := s.New(t, Config{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 3})
	attrs := func(n int) map[string]string {
		a := map[string]string{}
		for i := range n {
			a[fmt.Sprintf("attr%d", i)] = "v"
		}
		return a
	}
	bad := []struct {
		name string
		msg  queue.Outgoing
	}{
		{"empty body", queue.Outgoing{}},
		{"invalid UTF-8", queue.Outgoing{Body: []byte("a\xffb")}},
		{"NUL in body", queue.Outgoing{Body: []byte("a\x00b")}},
		{"U+FFFF in body", queue.Outgoing{Body: []byte("a\uffffb")}},
		{"negative delay", queue.Outgoing{Body: []byte("x"), Delay: -time.Second}},
		{"delay over MaxDelay", queue.Outgoing{Body: []byte("x"), Delay: queue.MaxDelay + time.Second}},
		{"too many attributes", queue.Outgoing{Body: []byte("x"), Attributes: attrs(queue.MaxAttributes + 1)}},
		{"empty attribute name", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"": "v"}}},
		{"reserved prefix AWS.", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"AWS.trace": "v"}}},
		{"reserved prefix amazon.", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"amazon.x": "v"}}},
		{"leading period", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{".a": "v"}}},
		{"trailing period", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"a.": "v"}}},
		{"two periods", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"a..b": "v"}}},
		{"space in name", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"a b": "v"}}},
		{"name too long", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{strings.Repeat("n", queue.MaxAttributeNameLen+1): "v"}}},
		{"empty attribute value", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"k": ""}}},
		{"control character in value", queue.Outgoing{Body: []byte("x"), Attributes: map[string]string{"k": "a\x01"}}},
		{"body over the limit", queue.Outgoing{Body: []byte(strings.Repeat("b", queue.MaxMessageSize+1))}},
		{"attributes push it over the limit", queue.Outgoing{
			Body:       []byte(strings.Repeat("b", queue.MaxMessageSize-len("k")-len("String"))),
			Attributes: map[string]string{"k": "vv"},
		}},
	}
	for _, tc := range bad {
		err := q.Send(t.Context(), msg("valid, sent in the same call"), tc.msg)
		if !errors.Is(err, queue.ErrInvalidMessage) {
			t.Errorf("%s: Send = %v; want queue.ErrInvalidMessage", tc.name, err)
		}
	}
	if err := q.Send(t.Context()); err != nil {
		t.Errorf("Send of nothing: %v", err)
	}
	s.waitCounts(t, q, Counts{})

	// The bounds: the longest delay, the most attributes, the longest name.
	edge := []queue.Outgoing{
		{Body: []byte("longest delay"), Delay: queue.MaxDelay},
		{Body: []byte("most attributes"), Attributes: attrs(queue.MaxAttributes), Delay: queue.MaxDelay},
		{Body: []byte("longest name"), Attributes: map[string]string{strings.Repeat("n", queue.MaxAttributeNameLen): "v"}, Delay: queue.MaxDelay},
	}
	send(t, q, edge...)
	s.waitCounts(t, q, Counts{Delayed: len(edge)})
}

// testLargestMessage: messages of exactly MaxMessageSize (attributes included) arrive intact, several in
// one Send.
func testLargestMessage(t *testing.T, s suite) {
	q := s.New(t, Config{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 3})
	r := newRecorder(q, nil)
	q.Start(t, r.handle, 2)
	attrs := map[string]string{"part": "1"}
	var msgs []queue.Outgoing
	for i := range 3 {
		head := fmt.Sprintf("message %d:", i)
		body := head + strings.Repeat("é", (queue.MaxMessageSize-len(head)-len("part")-len("String")-len("1"))/2)
		body += strings.Repeat("x", queue.MaxMessageSize-len(body)-len("part")-len("String")-len("1"))
		m := queue.Outgoing{Body: []byte(body), Attributes: attrs}
		if n := queue.Size(m); n != queue.MaxMessageSize {
			t.Fatalf("test message of %d bytes; want %d", n, queue.MaxMessageSize)
		}
		msgs = append(msgs, m)
	}
	send(t, q, msgs...)
	for _, m := range msgs {
		got := r.waitFor(t, s, string(m.Body), 1)[0].msg
		if !maps.Equal(got.Attributes, attrs) {
			t.Errorf("attributes %v; want %v", got.Attributes, attrs)
		}
	}
	s.waitCounts(t, q, Counts{})
}

// testDelay: a delayed message stays delayed until its delay has passed; the others flow meanwhile.
func testDelay(t *testing.T, s suite) {
	q := s.New(t, Config{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 3})
	r := newRecorder(q, nil)
	q.Start(t, r.handle, 2)
	const delay = 2 * time.Second
	sent := q.Now()
	send(t, q, queue.Outgoing{Body: []byte("later"), Delay: delay}, msg("now"))

	r.waitFor(t, s, "now", 1)
	if !s.RealTime {
		s.waitCounts(t, q, Counts{Delayed: 1})
		q.Advance(delay - time.Millisecond)
		s.waitCounts(t, q, Counts{Delayed: 1})
		noMore(t, r, "later", 0)
		q.Advance(time.Millisecond)
	}
	got := r.waitFor(t, s, "later", 1)[0]
	s.atLeast(t, "the delayed message came", sent, got.at, delay)
	if got.msg.Attempt != 1 {
		t.Errorf("Attempt %d; want 1", got.msg.Attempt)
	}
	s.waitCounts(t, q, Counts{})
}

// testVisibilityTimeout: a message whose handler failed comes back once the visibility timeout of its
// receive has passed, with the same id and the attempt counted, until a handler succeeds.
func testVisibilityTimeout(t *testing.T, s suite) {
	const vt = 2 * time.Second
	q := s.New(t, Config{VisibilityTimeout: vt, MaxReceiveCount: 5})
	r := newRecorder(q, func(m queue.Message) error {
		if m.Attempt < 3 {
			return errHandler
		}
		return nil
	})
	q.Start(t, r.handle, 2)
	send(t, q, queue.Outgoing{Body: []byte("flaky"), Attributes: map[string]string{"k": "v"}})

	for attempt := 1; attempt < 3; attempt++ {
		r.waitFor(t, s, "flaky", attempt)
		if !s.RealTime {
			s.waitCounts(t, q, Counts{InFlight: 1})
			q.Advance(vt - time.Millisecond)
			s.waitCounts(t, q, Counts{InFlight: 1})
			noMore(t, r, "flaky", attempt)
			q.Advance(time.Millisecond)
		}
	}
	ds := r.waitFor(t, s, "flaky", 3)
	s.waitCounts(t, q, Counts{})
	noMore(t, r, "flaky", 3)
	for i, d := range ds {
		if d.msg.Attempt != i+1 || d.msg.ID != ds[0].msg.ID || !maps.Equal(d.msg.Attributes, map[string]string{"k": "v"}) {
			t.Errorf("delivery %d: Attempt %d id %s attributes %v; want Attempt %d, id %s, the attributes sent",
				i, d.msg.Attempt, d.msg.ID, d.msg.Attributes, i+1, ds[0].msg.ID)
		}
		if i > 0 {
			s.atLeast(t, fmt.Sprintf("attempt %d came", i+1), ds[i-1].at, d.at, vt)
		}
	}
}

// testRetryAfter: a RetryAfterError brings the message back after its delay, not the visibility timeout.
func testRetryAfter(t *testing.T, s suite) {
	const vt, retry = time.Second, 3 * time.Second
	q := s.New(t, Config{VisibilityTimeout: vt, MaxReceiveCount: 5})
	r := newRecorder(q, func(m queue.Message) error {
		if m.Attempt == 1 {
			return queue.RetryAfter(retry, errHandler)
		}
		return nil
	})
	q.Start(t, r.handle, 2)
	send(t, q, msg("later please"))

	r.waitFor(t, s, "later please", 1)
	if !s.RealTime {
		q.Settle(t)
		q.Advance(vt) // the visibility timeout alone does not bring it back
		s.waitCounts(t, q, Counts{InFlight: 1})
		noMore(t, r, "later please", 1)
		q.Advance(retry - vt - time.Millisecond)
		s.waitCounts(t, q, Counts{InFlight: 1})
		noMore(t, r, "later please", 1)
		q.Advance(time.Millisecond)
	}
	ds := r.waitFor(t, s, "later please", 2)
	s.atLeast(t, "the retry came", ds[0].at, ds[1].at, retry)
	if ds[1].msg.Attempt != 2 || ds[1].msg.ID != ds[0].msg.ID {
		t.Errorf("retry: Attempt %d id %s; want 2, %s", ds[1].msg.Attempt, ds[1].msg.ID, ds[0].msg.ID)
	}
	s.waitCounts(t, q, Counts{})
	noMore(t, r, "later please", 2)
}

// testRetryAfterZero: RetryAfter(0) makes the message visible again at once, long before its visibility
// timeout.
func testRetryAfterZero(t *testing.T, s suite) {
	const vt = 30 * time.Second
	q := s.New(t, Config{VisibilityTimeout: vt, MaxReceiveCount: 5})
	r := newRecorder(q, func(m queue.Message) error {
		if m.Attempt == 1 {
			return queue.RetryAfter(0, errHandler)
		}
		return nil
	})
	q.Start(t, r.handle, 1)
	send(t, q, msg("again"))
	ds := r.waitFor(t, s, "again", 2) // no time passes on a manual clock
	if got := ds[1].at.Sub(ds[0].at); got >= vt {
		t.Errorf("retried after %s; want well before the visibility timeout %s", got, vt)
	}
	if ds[1].msg.Attempt != 2 {
		t.Errorf("Attempt %d; want 2", ds[1].msg.Attempt)
	}
	s.waitCounts(t, q, Counts{})
}

// testPartialBatchFailure: of messages received together, the one whose handler failed comes back; the
// others are deleted and never delivered again.
func testPartialBatchFailure(t *testing.T, s suite) {
	const vt = time.Second
	q := s.New(t, Config{VisibilityTimeout: vt, MaxReceiveCount: 5})
	r := newRecorder(q, func(m queue.Message) error {
		if string(m.Body) == "m2" && m.Attempt == 1 {
			return errHandler
		}
		return nil
	})
	bodies := []string{"m0", "m1", "m2", "m3", "m4"}
	var msgs []queue.Outgoing
	for _, b := range bodies {
		msgs = append(msgs, msg(b))
	}
	// Sent before the workers start, so that a batch-receiving adapter gets them together.
	send(t, q, msgs...)
	q.Start(t, r.handle, 1)
	for _, b := range bodies {
		r.waitFor(t, s, b, 1)
	}
	q.Settle(t)
	q.Advance(vt)
	ds := r.waitFor(t, s, "m2", 2)
	if ds[1].msg.Attempt != 2 {
		t.Errorf("m2 redelivered with Attempt %d; want 2", ds[1].msg.Attempt)
	}
	// Had the others not been deleted, they would be visible again by now, and counted.
	s.waitCounts(t, q, Counts{})
	for _, b := range bodies {
		if b != "m2" {
			noMore(t, r, b, 1)
		}
	}
}

// testDeadLetter: a message received MaxReceiveCount times without success moves to the dead-letter queue,
// with its id, body and attributes, and is not delivered again.
func testDeadLetter(t *testing.T, s suite) {
	const vt, maxReceives = time.Second, 2
	q := s.New(t, Config{VisibilityTimeout: vt, MaxReceiveCount: maxReceives})
	r := newRecorder(q, func(queue.Message) error { return errHandler })
	q.Start(t, r.handle, 1)
	attrs := map[string]string{"requestId": "req-dead"}
	send(t, q, queue.Outgoing{Body: []byte("poison"), Attributes: attrs}, msg("poison too"))

	for attempt := 1; attempt <= maxReceives; attempt++ {
		r.waitFor(t, s, "poison", attempt)
		q.Settle(t)
		q.Advance(vt)
	}
	s.waitCounts(t, q, Counts{Dead: 2})
	noMore(t, r, "poison", maxReceives)
	noMore(t, r, "poison too", maxReceives)

	first := r.deliveries("poison")[0].msg
	var found bool
	for _, m := range q.DeadLetters(t) {
		if string(m.Body) != "poison" {
			continue
		}
		found = true
		if m.ID != first.ID || !maps.Equal(m.Attributes, attrs) {
			t.Errorf("dead letter id %s attributes %v; want %s, %v", m.ID, m.Attributes, first.ID, attrs)
		}
	}
	if !found {
		t.Errorf("poison is not in the dead-letter queue")
	}
}

// testConcurrent: concurrent senders and workers, a third of the first attempts failing: every message is
// handled, exactly as many times as its attempts say, with nothing left over.
func testConcurrent(t *testing.T, s suite) {
	const senders, perSender, workers = 4, 60, 4
	q := s.New(t, Config{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
	failsFirst := func(body string) bool {
		h := fnv.New32a()
		h.Write([]byte(body))
		return h.Sum32()%3 == 0
	}
	r := newRecorder(q, func(m queue.Message) error {
		if m.Attempt == 1 && failsFirst(string(m.Body)) {
			return queue.RetryAfter(0, errHandler)
		}
		return nil
	})
	q.Start(t, r.handle, workers)

	var wg sync.WaitGroup
	errs := make([]error, senders)
	for i := range senders {
		wg.Go(func() {
			// Calls of 1 to 13 messages, so that adapters sending in batches split some.
			for n, size := 0, 1; n < perSender; size = size%13 + 1 {
				var batch []queue.Outgoing
				for ; len(batch) < size && n < perSender; n++ {
					batch = append(batch, queue.Outgoing{
						Body: []byte(fmt.Sprintf("sender %d message %03d", i, n)), Attributes: map[string]string{"sender": fmt.Sprint(i)},
					})
				}
				if err := q.Send(t.Context(), batch...); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i := range senders {
		for n := range perSender {
			body := fmt.Sprintf("sender %d message %03d", i, n)
			want := 1
			if failsFirst(body) {
				want = 2
			}
			r.waitFor(t, s, body, want)
		}
	}
	s.waitCounts(t, q, Counts{})
	seen := r.all()
	if len(seen) != senders*perSender {
		t.Errorf("%d distinct messages delivered; want %d", len(seen), senders*perSender)
	}
	for body, ds := range seen {
		want := 1
		if failsFirst(body) {
			want = 2
		}
		if len(ds) != want {
			t.Errorf("%q delivered %d times; want %d", body, len(ds), want)
			continue
		}
		for i, d := range ds {
			if d.msg.Attempt != i+1 || d.msg.ID != ds[0].msg.ID {
				t.Errorf("%q delivery %d: Attempt %d id %s; want %d, %s", body, i, d.msg.Attempt, d.msg.ID, i+1, ds[0].msg.ID)
			}
		}
	}
}
