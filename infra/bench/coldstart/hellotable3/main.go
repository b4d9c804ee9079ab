// Command hellotable3 is the cold-start baseline of the table rows since issue 21: hellotable with the
// three table calls a function's first authenticated read now makes (the key, which carries what
// authentication needs of the account, GetItem; the rate lease, UpdateItem; the read, Query), one after
// the other, through the service's client setup and nothing else: what those calls cost through the SDK in
// a fresh process, without authentication, routing, validation or a handler. hellotable4 adds the account
// read the same request made before.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/creatorstrategy/css/shared/store/dynamo"
)

func main() {
	client, err := dynamo.NewClient(os.Getenv("CSS_DYNAMODB_ENDPOINT"), os.Getenv("AWS_REGION"))
	if err != nil {
		os.Exit(1)
	}
	table := aws.String(os.Getenv("CSS_TABLE_NAME"))
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "X"}}
	}
	lambda.Start(func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		fail := events.APIGatewayV2HTTPResponse{StatusCode: 500}
		if _, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key("HELLO#KEY")}); err != nil {
			return fail, nil
		}
		if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("HELLO#RATE"),
			UpdateExpression:          aws.String("ADD c :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}}); err != nil {
			return fail, nil
		}
		if _, err := client.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "HELLO#LIST"}}}); err != nil {
			return fail, nil
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: `{"hello":"table"}`}, nil
	})
}
