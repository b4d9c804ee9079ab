package wire

import (
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
