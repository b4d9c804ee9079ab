// Package secrets reads secret strings from AWS Secrets Manager: the one place the service speaks to it.
// The webhook signing secrets are sealed with a key whose material CloudFormation generates into a
// Secrets Manager secret (template.yaml, WebhookSecretsKey); the functions that seal or open them read it
// once, on first use.
package secrets

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/creatorstrategy/css/shared/awsenv"
)

// Reader reads secrets.
type Reader struct {
	client *secretsmanager.Client
}

// New returns a Reader for region, or for endpoint (tests), that makes no call until used (awsenv.Config).
func New(endpoint, region string) (*Reader, error) {
	cfg, err := awsenv.Config(endpoint, region)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return &Reader{client: secretsmanager.NewFromConfig(cfg)}, nil
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
