package sqs

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/queue"
)

// AdminAPI is what CreateQueues needs of SQS.
type AdminAPI interface {
	CreateQueue(ctx context.Context, in *sqs.CreateQueueInput, opts ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// Queues names a queue and its dead-letter queue.
type Queues struct {
	URL, ARN                     string
	DeadLetterURL, DeadLetterARN string
}

// CreateQueues creates the queue spec describes and its dead-letter queue (spec.Name + "-dlq"), with the
// redrive policy, visibility timeout and retention periods template.yaml declares, for tests and a local
// ElasticMQ. Like CreateQueue it succeeds when they exist with the same attributes.
func CreateQueues(ctx context.Context, client AdminAPI, spec queue.Spec) (Queues, error) {
	var q Queues
	var err error
	dlqAttrs := map[string]string{}
	if spec.DeadLetterRetention > 0 {
		dlqAttrs[string(types.QueueAttributeNameMessageRetentionPeriod)] = secondsString(spec.DeadLetterRetention)
	}
	if q.DeadLetterURL, q.DeadLetterARN, err = create(ctx, client, queue.DeadLetterName(spec.Name), dlqAttrs); err != nil {
		return Queues{}, err
	}
	redrive, err := json.Marshal(map[string]any{"deadLetterTargetArn": q.DeadLetterARN, "maxReceiveCount": spec.MaxReceiveCount})
	if err != nil {
		return Queues{}, err
	}
	attrs := map[string]string{
		string(types.QueueAttributeNameVisibilityTimeout): secondsString(spec.VisibilityTimeout),
		string(types.QueueAttributeNameRedrivePolicy):     string(redrive),
	}
	if spec.Retention > 0 {
		attrs[string(types.QueueAttributeNameMessageRetentionPeriod)] = secondsString(spec.Retention)
	}
	if q.URL, q.ARN, err = create(ctx, client, spec.Name, attrs); err != nil {
		return Queues{}, err
	}
	return q, nil
}

func create(ctx context.Context, client AdminAPI, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", "", fmt.Errorf("sqs: create queue %s: %w", name, err)
	}
	url = aws.ToString(out.QueueUrl)
	got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("sqs: read the ARN of %s: %w", name, err)
	}
	return url, got.Attributes[string(types.QueueAttributeNameQueueArn)], nil
}

func secondsString(d time.Duration) string { return strconv.Itoa(int(seconds(d))) }
