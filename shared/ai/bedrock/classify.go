package bedrock

import (
	"context"
	"time"
)

// Class is what an error of a Bedrock Runtime call means to the caller.
type Class struct {
	// Retry: another attempt may succeed.
	Retry bool
	// Kind is ai.ErrThrottled or ai.ErrFailed, what the error ends as once no retry is left.
	Kind error
	// RetryAfter is the response's Retry-After, if it had one.
	RetryAfter time.Duration
}

// QuotaRetryAfter is the Retry-After to give with a throttling that was not retried (a quota) when the
// response had none.
const QuotaRetryAfter = quotaRetryAfter

// Classify judges an error of any Bedrock Runtime operation by this package's error table: InvokeModel
// answers the same errors as Converse, so the image adapter (ai/bedrockimage) maps them the same way.
func Classify(ctx context.Context, err error) Class {
	c := classify(ctx, err)
	return Class{Retry: c.Retry, Kind: c.Kind, RetryAfter: retryAfter(err)}
}
