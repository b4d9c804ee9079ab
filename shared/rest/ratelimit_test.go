package rest_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// rateHeaders returns the X-RateLimit trio of r, failing the test when one is missing.
func rateHeaders(t *testing.T, r resp) (limit, remaining, reset int) {
	t.Helper()
	vals := make([]int, 3)
	for i, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		v, err := strconv.Atoi(r.header.Get(name))
		if err != nil {
			t.Fatalf("%s = %q on a %d answer; want an integer", name, r.header.Get(name), r.status)
		}
		vals[i] = v
	}
	return vals[0], vals[1], vals[2]
}

// TestRateLimits drives the limits of decision 7 through HTTP: 600 other calls a minute per key, 60
// generation calls, apart per key and per group, reset with the window; every answer of a limited
// operation carries the X-RateLimit headers; the 601st call answers 429 RATE_LIMIT with Retry-After.
func TestRateLimits(t *testing.T) {
	e := newEnv(t)
	e.advance(15 * time.Second) // 45 s left in the window
	a := func(cred, method, path string) resp {
		return e.do(req{method: method, path: v1 + path, cred: cred})
	}
	for i := range 600 {
		r := a(e.keyA, "GET", "/notes")
		if r.status != 200 {
			t.Fatalf("call %d: %d %s", i+1, r.status, r.raw)
		}
		if limit, remaining, reset := rateHeaders(t, r); limit != 600 || remaining != 599-i || reset != 45 {
			t.Fatalf("call %d: limit %d, remaining %d, reset %d; want 600, %d, 45", i+1, limit, remaining, reset, 599-i)
		}
	}
	over := a(e.keyA, "GET", "/notes").must(t, 429, "RATE_LIMIT")
	if over.header.Get("Retry-After") != "45" || !strings.Contains(over.str("error"), "retry in 45 s") {
		t.Fatalf("429: Retry-After %q, message %q; want 45 and the time to retry", over.header.Get("Retry-After"), over.str("error"))
	}
	if _, remaining, _ := rateHeaders(t, over); remaining != 0 {
		t.Errorf("429 remaining %d; want 0", remaining)
	}
	// Any limited operation is refused now, invalid requests too, before validation.
	a(e.keyA, "POST", "/notes").must(t, 429, "RATE_LIMIT")
	// Another key of the same account has its own budget; public operations are not limited.
	if _, remaining, _ := rateHeaders(t, a(e.keyB, "GET", "/notes").must(t, 200)); remaining != 599 {
		t.Errorf("key B remaining %d; want 599", remaining)
	}
	if h := a("", "GET", "/health").must(t, 200).header.Get("X-RateLimit-Limit"); h != "" {
		t.Errorf("/health carries X-RateLimit-Limit %q", h)
	}
	// Refusals of the credential come before counting and carry no rate headers.
	if h := a("sk-css-00000000000000000000000000000000", "GET", "/notes").must(t, 401).header.Get("X-RateLimit-Limit"); h != "" {
		t.Errorf("a 401 carries X-RateLimit-Limit %q", h)
	}

	// The generation group is counted apart (its operations answer 501 until they land; they still count).
	for i := range 60 {
		r := a(e.keyA, "POST", "/generate/titles")
		if r.status == 429 {
			t.Fatalf("generation call %d refused: %s", i+1, r.raw)
		}
		if limit, remaining, _ := rateHeaders(t, r); limit != 60 || remaining != 59-i {
			t.Fatalf("generation call %d: limit %d remaining %d", i+1, limit, remaining)
		}
	}
	a(e.keyA, "POST", "/generate/titles").must(t, 429, "RATE_LIMIT")

	// The window resets at the minute.
	e.advance(45 * time.Second)
	if limit, remaining, reset := rateHeaders(t, a(e.keyA, "GET", "/notes").must(t, 200)); limit != 600 || remaining != 599 || reset != 60 {
		t.Errorf("new window: limit %d, remaining %d, reset %d; want 600, 599, 60", limit, remaining, reset)
	}
}

// TestSessionTokensShareTheAccountBudget: a session token's calls count for its account, whichever
// channel they name.
func TestSessionTokensShareTheAccountBudget(t *testing.T) {
	e := newEnv(t)
	tok := e.session(e.accountA)
	for i, ch := range []string{e.channelA, e.channelA2, e.channelA} {
		r := e.do(req{method: "GET", path: v1 + "/notes", cred: tok, header: map[string]string{"X-Channel-Id": ch}}).must(t, 200)
		if _, remaining, _ := rateHeaders(t, r); remaining != 599-i {
			t.Fatalf("call %d on channel %s: remaining %d; want %d", i+1, ch, remaining, 599-i)
		}
	}
	// Key management counts in the same budget; the channel's API key does not.
	if _, remaining, _ := rateHeaders(t, e.do(req{method: "GET", path: v1 + "/keys", cred: tok}).must(t, 200)); remaining != 596 {
		t.Errorf("GET /keys remaining %d; want 596", remaining)
	}
	if _, remaining, _ := rateHeaders(t, e.do(req{method: "GET", path: v1 + "/notes", cred: e.keyA}).must(t, 200)); remaining != 599 {
		t.Errorf("key A remaining %d; want 599", remaining)
	}
}

func TestMe(t *testing.T) {
	e := newEnv(t)
	e.advance(20 * time.Second)
	e.do(req{method: "POST", path: v1 + "/generate/hooks", cred: e.keyA, body: map[string]any{"title": "t"}})
	r := e.do(req{method: "GET", path: v1 + "/me", cred: e.keyA}).must(t, 200)
	if r.str("accountId") != e.accountA || r.str("channelId") != e.channelA || r.str("credential") != "api_key" ||
		r.str("keyPrefix") != e.keyA[:11] || r.str("keyId") == "" {
		t.Fatalf("GET /me with key A: %s", r.raw)
	}
	if strings.Contains(string(r.raw), e.keyA) {
		t.Fatal("GET /me shows the key itself")
	}
	if want := time.Date(2027, 11, 18, 12, 0, 0, 0, time.UTC).Format(time.RFC3339); r.str("accessUntil") != want {
		t.Errorf("accessUntil %s; want %s", r.str("accessUntil"), want)
	}
	limits, _ := r.json["rateLimits"].(map[string]any)
	other, _ := limits["other"].(map[string]any)
	gen, _ := limits["generation"].(map[string]any)
	// /me counts as an "other" call and reports the budget after it; the generation call above counted
	// in its own group.
	if other["limit"] != 600.0 || other["remaining"] != 599.0 || other["resetSeconds"] != 40.0 ||
		other["resetAt"] != "2026-11-18T12:01:00Z" {
		t.Errorf("rateLimits.other = %v", other)
	}
	if gen["limit"] != 60.0 || gen["remaining"] != 59.0 || gen["resetSeconds"] != 40.0 {
		t.Errorf("rateLimits.generation = %v", gen)
	}
	if _, remaining, _ := rateHeaders(t, r); remaining != 599 {
		t.Errorf("X-RateLimit-Remaining %d; want 599 like the body", remaining)
	}
	// The month's generations against the quota, and the tokens they were billed for (issue 19 item 4).
	usage, _ := r.json["generationUsage"].(map[string]any)
	if usage["month"] != "2026-11" || usage["limit"] == nil || usage["inputTokens"] == nil || usage["outputTokens"] == nil ||
		usage["resetsAt"] != "2026-12-01T00:00:00Z" {
		t.Errorf("generationUsage = %v", usage)
	}

	// A session token names its channel; it has no key.
	tok := e.session(e.accountA)
	s := e.do(req{method: "GET", path: v1 + "/me", cred: tok, header: map[string]string{"X-Channel-Id": e.channelA2}}).must(t, 200)
	if s.str("channelId") != e.channelA2 || s.str("credential") != "session" || s.str("keyPrefix") != "" || s.str("keyId") != "" {
		t.Errorf("GET /me with a session token: %s", s.raw)
	}
	e.do(req{method: "GET", path: v1 + "/me", cred: tok}).must(t, 400, "VALIDATION_ERROR")
	e.do(req{method: "GET", path: v1 + "/me"}).must(t, 401, "UNAUTHORIZED")

	// Key B sees its own account and channel.
	b := e.do(req{method: "GET", path: v1 + "/me", cred: e.keyB}).must(t, 200)
	if b.str("accountId") != e.accountB || b.str("channelId") != e.channelB || b.str("keyPrefix") != e.keyB[:11] {
		t.Errorf("GET /me with key B: %s", b.raw)
	}
}

// advance moves the env's clock forward.
func (e *env) advance(d time.Duration) {
	next := e.now.Load().Add(d)
	e.now.Store(&next)
}
