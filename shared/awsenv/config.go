package awsenv

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// localRegion is the region given to a client of an emulator when none is configured: the SDK wants one,
// the emulators ignore it.
const localRegion = "us-east-1"

// Config is the SDK configuration every client of the service is built from (sqs, dynamo, secrets,
// ssmparam: each passes it to its service's NewFromConfig). It makes no call. With an endpoint (an emulator
// or a test server) it signs with dummy static credentials; without one it uses the credentials Lambda puts
// in the environment (Credentials), for region.
//
// Its HTTP client trusts only Amazon's roots (HTTPClient), plus SSL_CERT_FILE's certificates for an endpoint
// behind TLS.
func Config(endpoint, region string) (aws.Config, error) {
	client, err := HTTPClient()
	if err != nil {
		return aws.Config{}, err
	}
	if endpoint != "" {
		if region == "" {
			region = localRegion
		}
		return aws.Config{Region: region, BaseEndpoint: aws.String(endpoint), HTTPClient: client,
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, nil
	}
	if region == "" {
		return aws.Config{}, errors.New("no AWS region: set AWS_REGION")
	}
	return aws.Config{Region: region, HTTPClient: client, Credentials: aws.NewCredentialsCache(Credentials{})}, nil
}
