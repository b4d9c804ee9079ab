// Package awsenv is the one place the service's AWS SDK clients get their configuration (Config): the
// region, an endpoint override for emulators and test servers, and the credentials Lambda puts in the
// environment, without the SDK's config loader: that loader (shared files, SSO, STS, IMDS) costs
// milliseconds of every cold start and a Lambda needs none of it. Tools run by people (infra/admin) load
// the full credential chain themselves. Every client's HTTP client trusts Amazon Trust Services' roots only
// (roots.go), plus SSL_CERT_FILE's certificates: loading the system's root pool, which Go's default client
// does on its first TLS connection, was most of a function's first table call in the cloud.
package awsenv

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Credentials reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when asked. Wrap it in
// aws.NewCredentialsCache.
type Credentials struct{}

// ErrMissing says the environment holds no credentials.
var ErrMissing = errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")

func (Credentials) Retrieve(context.Context) (aws.Credentials, error) {
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Credentials{}, ErrMissing
	}
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		Source: "EnvironmentVariables"}, nil
}
