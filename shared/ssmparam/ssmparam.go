// Package ssmparam reads a secret from an SSM Parameter Store SecureString: how a Lambda gets a key that
// must not sit in its environment (the YouTube Data API key). It is read once, at start.
package ssmparam

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/creatorstrategy/css/shared/awsenv"
	"github.com/creatorstrategy/css/shared/config"
)

// API is what Read needs of SSM.
type API interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// NewClient returns an SSM client for region, or for endpoint (tests), that makes no call until used
// (awsenv.Config).
func NewClient(endpoint, region string) (*ssm.Client, error) {
	cfg, err := awsenv.Config(endpoint, region)
	if err != nil {
		return nil, fmt.Errorf("ssmparam: %w", err)
	}
	return ssm.NewFromConfig(cfg), nil
}

// Read returns the decrypted value of the parameter called name. An empty value is an error: a secret
// parameter left blank is a deployment mistake to report at start, not a key to send.
func Read(ctx context.Context, api API, name string) (config.Secret, error) {
	out, err := api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("ssmparam: read %s: %w", name, err)
	}
	if out.Parameter == nil || aws.ToString(out.Parameter.Value) == "" {
		return "", fmt.Errorf("ssmparam: %s is empty", name)
	}
	return config.Secret(aws.ToString(out.Parameter.Value)), nil
}
