// Command hellotable is the second cold-start baseline, for the harness's table rows: the hello-world
// function plus one DynamoDB GetItem through the service's own client setup (shared/store/dynamo), so a
// table row can be set beside what any function that reads the table pays on its first request (the HTTP
// client's and the SDK's first use).
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
	table := os.Getenv("CSS_TABLE_NAME")
	lambda.Start(func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		_, err := client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(table),
			Key: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "HELLO"},
				"SK": &types.AttributeValueMemberS{Value: "WORLD"},
			},
		})
		if err != nil {
			return events.APIGatewayV2HTTPResponse{StatusCode: 500, Body: `{"error":"table"}`}, nil
		}
		return events.APIGatewayV2HTTPResponse{
			StatusCode: 200,
			Headers:    map[string]string{"Content-Type": "application/json"},
			Body:       `{"hello":"table"}`,
		}, nil
	})
}
