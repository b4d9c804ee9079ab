package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/shared/apperr"
)

// viaAPIGateway sends the authorizer's answer through JSON, as API Gateway does, and returns the context
// the group Lambda sees.
func viaAPIGateway(t *testing.T, a *Authenticator, headers map[string]string) map[string]any {
	t.Helper()
	resp, err := a.Authorize(context.Background(), events.APIGatewayV2CustomAuthorizerV2Request{Headers: headers})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.IsAuthorized {
		t.Fatal("the authorizer denied: API Gateway would answer with its own body")
	}
	for k, v := range resp.Context {
		if _, ok := v.(string); !ok {
			t.Errorf("context value %s is a %T, want string", k, v)
		}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var back events.APIGatewayV2CustomAuthorizerSimpleResponse
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back.Context
}

func TestAuthorizerRoundTrip(t *testing.T) {
	dir, clock := newFixture(t)
	second := "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
	acct := dir.accounts["acct-1"]
	acct.ChannelIDs = append(acct.ChannelIDs, second)
	acct.AccessUntil = time.Date(2027, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	dir.accounts["acct-1"] = acct
	a := NewAuthenticator(dir, fakeTokens{exp: clock.Now().Add(time.Hour)}, 20*time.Second, WithClock(clock.Now))

	tests := []struct {
		name, header, value string
	}{
		{"api key", "authorization", "Bearer " + testKey},
		{"session", "authorization", "Bearer ok.x.acct-1"},
		{"header case", "Authorization", "Bearer " + testKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := a.Resolve(context.Background(), tt.value)
			if err != nil {
				t.Fatal(err)
			}
			got, err := IdentityFromAuthorizer(viaAPIGateway(t, a, map[string]string{tt.header: tt.value}))
			if err != nil {
				t.Fatal(err)
			}
			if !got.AccessUntil.Equal(want.AccessUntil) {
				t.Errorf("AccessUntil = %v, want %v", got.AccessUntil, want.AccessUntil)
			}
			got.AccessUntil = want.AccessUntil
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("round trip = %+v, want %+v", got, want)
			}
		})
	}
}

func TestAuthorizerRefusals(t *testing.T) {
	dir, clock := newFixture(t)
	a := NewAuthenticator(dir, nil, 20*time.Second, WithClock(clock.Now))
	_, err := IdentityFromAuthorizer(viaAPIGateway(t, a, map[string]string{}))
	wantCode(t, err, apperr.Unauthorized)
	if e, _ := apperr.As(err); e.Message == "" {
		t.Error("the refusal lost its message")
	}

	dir.fail = errors.New("table down")
	_, err = IdentityFromAuthorizer(viaAPIGateway(t, a, map[string]string{"authorization": "Bearer " + testKey}))
	wantCode(t, err, apperr.Internal)

	// A route reached without the authorizer has no context: a failure of ours, not of the client.
	_, err = IdentityFromAuthorizer(nil)
	wantCode(t, err, apperr.Internal)
	_, err = IdentityFromAuthorizer(map[string]any{"accountId": "acct-1", "method": "api_key", "accessUntil": "2027-01-01T00:00:00Z"})
	wantCode(t, err, apperr.Internal)
}
