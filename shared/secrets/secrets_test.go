package secrets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/secrets"
	"github.com/creatorstrategy/css/shared/testkit/secretstest"
)

func TestString(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:css-webhook-key-AbCdEf"
	srv := secretstest.Start(t, map[string]string{arn: "material", "empty": ""})
	r, err := secrets.New(srv.Endpoint(), "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v, err := r.String(ctx, arn); err != nil || v != "material" {
		t.Fatalf("String = %q, %v", v, err)
	}
	tests := []struct{ id, want string }{{"missing", "ResourceNotFoundException"}, {"empty", "no secret string"}}
	for _, tt := range tests {
		if _, err := r.String(ctx, tt.id); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.id, err, tt.want)
		}
	}
	if _, err := secrets.New("", ""); err == nil {
		t.Error("no region accepted")
	}
}
