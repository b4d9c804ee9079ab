// Package sqs is the SQS adapter of the queue port: a Sender (SendMessageBatch) and a Lambda handler for
// an SQS event source with partial batch responses. It is tested against ElasticMQ by the conformance
// suite of queue/queuetest (a test poller feeds ElasticMQ's messages to that same handler), which the
// in-process queue runs too.
//
// A function consuming a queue needs sqs:ChangeMessageVisibility and sqs:GetQueueUrl on it besides what
// the event source mapping needs (a RetryAfterError changes the message's visibility), and the event
// source mapping must report batch item failures (FunctionResponseTypes: [ReportBatchItemFailures]).
package sqs

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/creatorstrategy/css/shared/awsenv"
)

// NewClient returns an SQS client for region, or for endpoint (ElasticMQ), that makes no call until used
// (awsenv.Config).
func NewClient(endpoint, region string) (*sqs.Client, error) {
	cfg, err := awsenv.Config(endpoint, region)
	if err != nil {
		return nil, fmt.Errorf("sqs: %w", err)
	}
	return sqs.NewFromConfig(cfg), nil
}
