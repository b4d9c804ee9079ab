// Command hellotable2 is the cold-start baseline of the table rows since issue 21 item 1's last step:
// hellotable with the two table calls a function's first authenticated read now makes (the key's read and
// its rate lease, one conditional UpdateItem returning the item; the read, Query), one after the other,
// through the service's client setup and nothing else. A copy of hellotable3 with its GetItem folded into
// the UpdateItem (the lead is merging the hellotable programs into one that takes its calls from its
// event; this one goes with them).
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
		// As a lease: an add under a bound, answering the whole item either way.
		if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("HELLO#KEY"),
			UpdateExpression:         aws.String("ADD #c :one"),
			ConditionExpression:      aws.String("attribute_not_exists(#c) OR #c <= :max"),
			ExpressionAttributeNames: map[string]string{"#c": "c#other@0"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"},
				":max": &types.AttributeValueMemberN{Value: "1000000000"}},
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}); err != nil {
			return fail, nil
		}
		if _, err := client.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "HELLO#LIST"}}}); err != nil {
			return fail, nil
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: `{"hello":"table"}`}, nil
	})
}
