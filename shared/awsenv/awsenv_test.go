package awsenv

import (
	"context"
	"errors"
	"testing"
)

func TestCredentials(t *testing.T) {
	for _, tc := range []struct {
		name              string
		id, secret, token string
		wantErr           bool
	}{
		{name: "all three", id: "AKID", secret: "s3cret", token: "tok"},
		{name: "no session token", id: "AKID", secret: "s3cret"},
		{name: "no secret", id: "AKID", wantErr: true},
		{name: "no id", secret: "s3cret", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", tc.id)
			t.Setenv("AWS_SECRET_ACCESS_KEY", tc.secret)
			t.Setenv("AWS_SESSION_TOKEN", tc.token)
			c, err := Credentials{}.Retrieve(context.Background())
			if tc.wantErr {
				if !errors.Is(err, ErrMissing) {
					t.Fatalf("err %v, want ErrMissing", err)
				}
				return
			}
			if err != nil || c.AccessKeyID != tc.id || c.SecretAccessKey != tc.secret || c.SessionToken != tc.token {
				t.Fatalf("got %+v, %v", c, err)
			}
		})
	}
}
