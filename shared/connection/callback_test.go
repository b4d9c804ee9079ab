package connection_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/connection"
)

// The callback's error parameter is anyone's to write (a link with a state its sender started): the page
// shows sentences of ours for Google's codes and never the parameter's own text (issue 32 item 3).
func TestCallbackErrorShowsOnlyOurSentences(t *testing.T) {
	f := newFixture(t)
	svc := f.service()
	for _, c := range []struct{ code, want string }{
		{"access_denied", "Access was not granted"},
		{"temporarily_unavailable", "Google could not complete"},
		{"server_error", "Google could not complete"},
		{"admin_policy_enforced", "administrator"},
		{"invalid_scope", "Google refused this service's request (invalid_scope)"},
		{"Your account is locked. Call +1 555 0100 now", "Google did not complete the connection"},
		{"access_denied: call +1 555 0100", "Google did not complete the connection"},
		{strings.Repeat("x", 256), "Google did not complete the connection"},
	} {
		b := begin(t, svc, "chan-a") // the owner's browser, through the start step
		u, _ := url.Parse(b.AuthorizationURL)
		_, err := svc.Complete(t.Context(), connection.Callback{State: u.Query().Get("state"), Error: c.code, Browser: b.Browser})
		msg := refusal(t, err)
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "555") || strings.Contains(msg, "xxx") {
			t.Errorf("error=%.40q: the page says %q; want a sentence of ours saying %q", c.code, msg, c.want)
		}
	}
}
