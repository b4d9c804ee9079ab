// Command hellotable is the cold-start baseline of the harness's table rows: the hello-world function plus
// a fixed sequence of DynamoDB calls through the service's own client setup (shared/store/dynamo), one after
// the other, and nothing else (no authentication, routing, validation or handler). A table row is set beside
// the baseline that makes the same calls: what those calls cost through the SDK in a fresh process.
//
// The sequence comes from the function's name, which the harness derives from the target's name
// (css-bench-<name>): hellotable (or hellotable1) makes one GetItem, the floor of any table read;
// hellotable2 the two calls of a served API-key request since issue 21 (an UpdateItem of the key's lookup
// item, which reads the key and leases rate tokens at once, then a Query); hellotable3 the three it made before
// (GetItem of the key, UpdateItem of the rate lease, Query); hellotable4 the four before that (the account's
// GetItem besides).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/creatorstrategy/css/shared/store/dynamo"
)

// sequences are the calls of each baseline, by the suffix of its name. KeyLease is an UpdateItem as the key's
// read-and-lease makes it (an add under a bound, answering the whole item either way); UpdateItem is the
// plain conditional add of a separate rate counter the requests made before.
var sequences = map[string][]string{
	"":  {"GetItem"},
	"1": {"GetItem"},
	"2": {"KeyLease", "Query"},
	"3": {"GetItem", "UpdateItem", "Query"},
	"4": {"GetItem", "GetItem", "UpdateItem", "Query"},
}

func main() {
	calls, err := sequenceOf(os.Getenv("AWS_LAMBDA_FUNCTION_NAME"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "hellotable:", err)
		os.Exit(1)
	}
	client, err := dynamo.NewClient(os.Getenv("CSS_DYNAMODB_ENDPOINT"), os.Getenv("AWS_REGION"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "hellotable:", err)
		os.Exit(1)
	}
	table := aws.String(os.Getenv("CSS_TABLE_NAME"))
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "X"}}
	}
	call := func(ctx context.Context, op string) error {
		var err error
		switch op {
		case "GetItem":
			_, err = client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key("HELLO#KEY")})
		case "KeyLease":
			_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("HELLO#KEY"),
				UpdateExpression:         aws.String("ADD #c :one"),
				ConditionExpression:      aws.String("attribute_not_exists(#c) OR #c <= :max"),
				ExpressionAttributeNames: map[string]string{"#c": "c#other@0"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"},
					":max": &types.AttributeValueMemberN{Value: "1000000000"}},
				ReturnValues:                        types.ReturnValueAllNew,
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		case "UpdateItem":
			_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("HELLO#RATE"),
				UpdateExpression:          aws.String("ADD c :one"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}})
		case "Query":
			_, err = client.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :pk"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "HELLO#LIST"}}})
		}
		return err
	}
	lambda.Start(func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		for _, op := range calls {
			if err := call(ctx, op); err != nil {
				return events.APIGatewayV2HTTPResponse{StatusCode: 500}, nil
			}
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: `{"hello":"table"}`}, nil
	})
}

// sequenceOf returns the calls of the baseline named in the function name css-bench-hellotable<N>[@label].
func sequenceOf(function string) ([]string, error) {
	name, _, _ := strings.Cut(strings.TrimPrefix(function, "css-bench-"), "@")
	suffix, ok := strings.CutPrefix(name, "hellotable")
	calls, known := sequences[suffix]
	if !ok || !known {
		return nil, fmt.Errorf("function %q: want css-bench-hellotable followed by 1 to 4", function)
	}
	return calls, nil
}
