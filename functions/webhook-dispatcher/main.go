// Command webhook-dispatcher is the Lambda of events and webhooks: it fans events out (events queue),
// attempts deliveries (webhook-deliveries queue) and sweeps the outbox (an EventBridge schedule). The logic
// is in shared/webhooks; shared/dispatchapp wires it.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/dispatchapp"
)

func main() {
	logger := config.Logger(os.Stdout).With("function", "webhook-dispatcher")
	l, err := dispatchapp.NewLambda(logger, time.Now)
	if err != nil {
		logger.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(l.Handle)
}
