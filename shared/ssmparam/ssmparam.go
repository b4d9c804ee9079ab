// Package ssmparam reads a secret from an SSM Parameter Store SecureString: how a Lambda gets a key that
// must not sit in its environment (the YouTube Data API key). It is read once, at start.
package ssmparam

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/creatorstrategy/css/shared/awsenv"
	"github.com/creatorstrategy/css/shared/config"
)

// API is what Read needs of SSM.
type API interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// NewClient returns an SSM client for region, signing with the credentials in the environment (where Lambda
// puts the function role's), or, with an endpoint (tests), with static dummy ones. Like the DynamoDB and
// SQS clients, it leaves the SDK's config loader out: a Lambda needs none of it.
func NewClient(endpoint, region string) (*ssm.Client, error) {
	if endpoint != "" {
		return ssm.New(ssm.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}), nil
	}
	if region == "" {
		return nil, errors.New("ssmparam: no region: set AWS_REGION")
	}
	return ssm.New(ssm.Options{Region: region, Credentials: aws.NewCredentialsCache(awsenv.Credentials{})}), nil
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
