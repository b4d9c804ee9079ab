package auth

import (
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
)

func TestPrincipal(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const (
		ch1 = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
		ch2 = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
		ch3 = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5d"
	)
	key := Identity{AccountID: "acct", Method: MethodAPIKey, KeyID: "key-1", KeyChannelID: ch1,
		ChannelIDs: []string{ch1, ch2}, AccessUntil: now.Add(time.Hour)}
	session := Identity{AccountID: "acct", Method: MethodSession, ChannelIDs: []string{ch1, ch2}, AccessUntil: now.Add(time.Hour)}
	expired := session
	expired.AccessUntil = now.Add(-time.Second)

	tests := []struct {
		name    string
		id      Identity
		header  string
		want    Principal
		code    apperr.Code
		field   string
		message string
	}{
		{name: "key uses its channel", id: key, want: Principal{AccountID: "acct", ChannelID: ch1, KeyID: "key-1", Method: MethodAPIKey}},
		{name: "key ignores the header", id: key, header: ch2, want: Principal{AccountID: "acct", ChannelID: ch1, KeyID: "key-1", Method: MethodAPIKey}},
		{name: "session with header", id: session, header: ch2, want: Principal{AccountID: "acct", ChannelID: ch2, Method: MethodSession}},
		{name: "session header upper case", id: session, header: " 0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5C ", want: Principal{AccountID: "acct", ChannelID: ch2, Method: MethodSession}},
		{name: "session without header", id: session, want: Principal{AccountID: "acct", Method: MethodSession}},
		{name: "session other channel", id: session, header: ch3, code: apperr.NotFound, message: "channel not found"},
		{name: "session malformed header", id: session, header: "not-a-uuid", code: apperr.Validation, field: "X-Channel-Id"},
		{name: "session braced uuid", id: session, header: "{" + ch1 + "}", code: apperr.Validation, field: "X-Channel-Id"},
		{name: "access expired", id: expired, header: ch1, code: apperr.AccessExpired},
		{name: "key access expired", id: func() Identity { k := key; k.AccessUntil = now.Add(-time.Nanosecond); return k }(), code: apperr.AccessExpired},
		{name: "access until now still open", id: func() Identity { s := session; s.AccessUntil = now; return s }(), want: Principal{AccountID: "acct", Method: MethodSession}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.id.Principal(tt.header, now)
			if tt.code != "" {
				e, ok := apperr.As(err)
				if !ok || e.Code != tt.code || e.Field != tt.field || (tt.message != "" && e.Message != tt.message) {
					t.Fatalf("Principal error = %v, want code %s field %q message %q", err, tt.code, tt.field, tt.message)
				}
				return
			}
			if err != nil || p != tt.want {
				t.Fatalf("Principal = %+v, %v; want %+v", p, err, tt.want)
			}
		})
	}
}
