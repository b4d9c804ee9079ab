package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/creatorstrategy/css/shared/awsenv"
)

// NewClient returns a DynamoDB client for region, or for endpoint (DynamoDB Local), that makes no call
// until used (awsenv.Config).
func NewClient(endpoint, region string) (*dynamodb.Client, error) {
	cfg, err := awsenv.Config(endpoint, region)
	if err != nil {
		return nil, fmt.Errorf("dynamo: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		// DynamoDB Local sends no x-amz-crc32 on error responses, which this SDK version then logs as a
		// failed checksum on every failed condition (aws/aws-sdk-go-v2#3545). It is local traffic.
		o.DisableValidateResponseChecksum = endpoint != ""
	}), nil
}

// Open returns the table adapter for a configured table over the client of NewClient. It makes no network
// call (the client connects on first use), so Lambdas can call it at init.
func Open(endpoint, region, table string) (*Table, error) {
	client, err := NewClient(endpoint, region)
	if err != nil {
		return nil, err
	}
	return New(client, table), nil
}

// tableActiveWait bounds how long CreateTable waits for the new table to become active.
const tableActiveWait = 5 * time.Minute

// CreateTable creates the table as template.yaml declares it (for tests and local use): PK (S) hash,
// SK (S) range, on-demand billing, TTL on the attribute ttl. It returns once the table is active.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrSK), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		return fmt.Errorf("dynamo: create table %s: %w", table, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 200 * time.Millisecond
		o.MaxDelay = 5 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &table}, tableActiveWait); err != nil {
		return fmt.Errorf("dynamo: wait for table %s: %w", table, err)
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: &table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attrTTL),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamo: enable TTL on %s: %w", table, err)
	}
	return nil
}
