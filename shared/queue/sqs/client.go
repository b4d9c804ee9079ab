// Package sqs is the SQS adapter of the queue port: a Sender (SendMessageBatch), a Lambda handler for an
// SQS event source with partial batch responses, and a Poller that runs a queue.Handler against a queue
// URL (ElasticMQ locally and in tests) through that same handler. It is tested against ElasticMQ by the
// conformance suite of queue/queuetest, which the in-process queue runs too.
//
// A function consuming a queue needs sqs:ChangeMessageVisibility and sqs:GetQueueUrl on it besides what
// the event source mapping needs (a RetryAfterError changes the message's visibility), and the event
// source mapping must report batch item failures (FunctionResponseTypes: [ReportBatchItemFailures]).
package sqs

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/creatorstrategy/css/shared/awsenv"
)

// localRegion is the region given to a client of an emulator when none is configured: the SDK wants one,
// ElasticMQ ignores it.
const localRegion = "us-east-1"

// NewClient returns an SQS client for region that makes no call until used. With an endpoint (ElasticMQ)
// it signs with dummy static credentials; without one it uses the credentials in the environment, where
// Lambda puts the function role's. Like the DynamoDB client, it leaves out the SDK's config loader, which
// costs milliseconds of every cold start and which Lambda does not need.
func NewClient(endpoint, region string) (*sqs.Client, error) {
	if endpoint != "" {
		if region == "" {
			region = localRegion
		}
		return sqs.New(sqs.Options{
			Region:       region,
			Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
			BaseEndpoint: aws.String(endpoint),
		}), nil
	}
	if region == "" {
		return nil, errors.New("sqs: no region: set AWS_REGION")
	}
	return sqs.New(sqs.Options{Region: region, Credentials: aws.NewCredentialsCache(awsenv.Credentials{})}), nil
}
