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

func TestConfig(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cret")
	local, err := Config("http://127.0.0.1:1", "")
	if err != nil || local.Region != localRegion || local.BaseEndpoint == nil || *local.BaseEndpoint != "http://127.0.0.1:1" {
		t.Fatalf("with an endpoint: %+v, %v", local, err)
	}
	if c, err := local.Credentials.Retrieve(context.Background()); err != nil || c.AccessKeyID != "local" {
		t.Errorf("an emulator's client signs with %+v, %v; want the dummy static credentials", c, err)
	}
	cloud, err := Config("", "eu-west-1")
	if err != nil || cloud.Region != "eu-west-1" || cloud.BaseEndpoint != nil {
		t.Fatalf("without an endpoint: %+v, %v", cloud, err)
	}
	if c, err := cloud.Credentials.Retrieve(context.Background()); err != nil || c.AccessKeyID != "AKID" {
		t.Errorf("a cloud client signs with %+v, %v; want the environment's", c, err)
	}
	if _, err := Config("", ""); err == nil {
		t.Error("no region and no endpoint was accepted")
	}
}
