// Package secrets reads secret strings from AWS Secrets Manager: the one place the service speaks to it.
// The webhook signing secrets are sealed with a key whose material CloudFormation generates into a
// Secrets Manager secret (template.yaml, WebhookSecretsKey); the functions that seal or open them read it
// once, on first use.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Reader reads secrets.
type Reader struct {
	client *secretsmanager.Client
}

// New returns a Reader for region that makes no call until used. With an endpoint (tests) it signs with
// dummy credentials; without one it uses the credentials Lambda puts in the environment, skipping the
// SDK's config loader as the table client does (it costs milliseconds of every cold start).
func New(endpoint, region string) (*Reader, error) {
	if region == "" {
		return nil, errors.New("secrets: no region: set AWS_REGION")
	}
	o := secretsmanager.Options{Region: region, Credentials: aws.NewCredentialsCache(envCredentials{})}
	if endpoint != "" {
		o.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
		o.BaseEndpoint = aws.String(endpoint)
	}
	return &Reader{client: secretsmanager.New(o)}, nil
}

// String returns the current SecretString of the secret id (a name or an ARN).
func (r *Reader) String(ctx context.Context, id string) (string, error) {
	out, err := r.client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", fmt.Errorf("secrets: read %s: %w", id, err)
	}
	if out.SecretString == nil || *out.SecretString == "" {
		return "", fmt.Errorf("secrets: %s holds no secret string", id)
	}
	return *out.SecretString, nil
}

// envCredentials reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
type envCredentials struct{}

func (envCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Credentials{}, errors.New("secrets: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		Source: "EnvironmentVariables"}, nil
}
