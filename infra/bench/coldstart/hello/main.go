// Command hello is the cold-start baseline: the smallest aws-lambda-go function that answers an API
// Gateway HTTP API event, built like the real functions. The harness reports every function's cold start
// as a multiple of this one's.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{
			StatusCode: 200,
			Headers:    map[string]string{"Content-Type": "application/json"},
			Body:       `{"hello":"world"}`,
		}, nil
	})
}
