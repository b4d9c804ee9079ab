package wire

import (
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
)

// Store is the service's table (DynamoDB: CSS_TABLE_NAME, or CSS_DYNAMODB_ENDPOINT's emulator).
func Store(env Env, opts ...store.Option) (*store.Store, error) {
	table, err := dynamo.Open(env.Config.DynamoDBEndpoint, env.Config.Region, env.Config.TableName)
	if err != nil {
		return nil, err
	}
	return store.New(table, opts...), nil
}

// SQS is the client of the function's queues (SQS, or CSS_SQS_ENDPOINT's emulator): one per function, shared
// by its senders and its queue handlers.
func SQS(env Env) (*awssqs.Client, error) {
	return sqs.NewClient(env.Config.SQSEndpoint, env.Config.Region)
}
