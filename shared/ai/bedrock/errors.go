package bedrock

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/creatorstrategy/css/shared/ai"
)

// class is what the adapter does with an error: retry it or not, and which ai kind it ends as once no
// retry is left (ai.ErrThrottled: the API answers 429 RATE_LIMIT; ai.ErrFailed: 500 GENERATION_FAILED).
type class struct {
	Status int // the HTTP status Bedrock answers it with (documentation; unknown codes are judged by it)
	Retry  bool
	Kind   error
}

// errorTable maps every error Bedrock Runtime's Converse can answer, by code, to what the adapter does.
var errorTable = map[string]class{
	// Too many requests or tokens for the account's quota: wait and retry; in the end, the client should.
	"ThrottlingException": {http.StatusTooManyRequests, true, ai.ErrThrottled},
	// The model is being loaded (on-demand imported models): it will be ready shortly.
	"ModelNotReadyException": {http.StatusTooManyRequests, true, ai.ErrThrottled},
	// A quota that waiting seconds will not lift (e.g. tokens per day): no retry, but a 429 all the same.
	"ServiceQuotaExceededException": {http.StatusBadRequest, false, ai.ErrThrottled},
	// Transient on AWS's side.
	"ServiceUnavailableException": {http.StatusServiceUnavailable, true, ai.ErrFailed},
	"InternalServerException":     {http.StatusInternalServerError, true, ai.ErrFailed},
	"ModelTimeoutException":       {http.StatusRequestTimeout, true, ai.ErrFailed},
	// The model failed on this input: the same request fails the same way.
	"ModelErrorException":       {http.StatusFailedDependency, false, ai.ErrFailed},
	"ModelStreamErrorException": {http.StatusFailedDependency, false, ai.ErrFailed},
	// Our request or our configuration is wrong (schema refused, model id unknown or not enabled, no
	// access): retrying cannot help, and an operator must look.
	"ValidationException":         {http.StatusBadRequest, false, ai.ErrFailed},
	"ResourceNotFoundException":   {http.StatusNotFound, false, ai.ErrFailed},
	"AccessDeniedException":       {http.StatusForbidden, false, ai.ErrFailed},
	"ConflictException":           {http.StatusBadRequest, false, ai.ErrFailed},
	"UnrecognizedClientException": {http.StatusForbidden, false, ai.ErrFailed},
	"InvalidSignatureException":   {http.StatusForbidden, false, ai.ErrFailed},
	"ExpiredTokenException":       {http.StatusForbidden, false, ai.ErrFailed},
}

// transport is the class of an error below HTTP (connection refused or reset, a response cut short):
// transient.
var transport = class{Retry: true, Kind: ai.ErrFailed}

// classify says what err is. An unknown code is judged by its status: 429 as throttling, 5xx as
// transient, anything else as final.
func classify(ctx context.Context, err error) class {
	if ctx.Err() != nil {
		return class{Kind: ai.ErrFailed}
	}
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok {
		if c, ok := errorTable[apiErr.ErrorCode()]; ok {
			return c
		}
	}
	// Both come wrapped in a ResponseError (status 0, or the cut response's), so they are looked for first.
	if _, ok := errors.AsType[*smithyhttp.RequestSendError](err); ok {
		return transport
	}
	if _, ok := errors.AsType[*smithy.DeserializationError](err); ok {
		return transport // a response cut short reads as one
	}
	if respErr, ok := errors.AsType[*smithyhttp.ResponseError](err); ok {
		switch s := respErr.HTTPStatusCode(); {
		case s == http.StatusTooManyRequests:
			return class{Status: s, Retry: true, Kind: ai.ErrThrottled}
		case s >= 500:
			return class{Status: s, Retry: true, Kind: ai.ErrFailed}
		default:
			return class{Status: s, Kind: ai.ErrFailed}
		}
	}
	return class{Kind: ai.ErrFailed}
}

// quotaRetryAfter is the hint given with a throttling that was not retried (a quota) when the response
// has none: the client should not come back at once.
const quotaRetryAfter = time.Minute

// retryAfter is the Retry-After seconds of the response, if it has one (Bedrock rarely sends it).
func retryAfter(err error) time.Duration {
	var respErr *smithyhttp.ResponseError
	if !errors.As(err, &respErr) || respErr.Response == nil {
		return 0
	}
	secs, perr := strconv.Atoi(respErr.Response.Header.Get("Retry-After"))
	if perr != nil || secs <= 0 {
		return 0
	}
	return time.Duration(min(secs, 3600)) * time.Second
}

// causeOf names a failed call for the caller in the adapter's own words (ai.Error.Cause): the error code
// Bedrock answered, or that it could not be reached; never the service's message, which may echo input.
func causeOf(err error) string {
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok {
		msg := strings.ToLower(apiErr.ErrorMessage())
		if apiErr.ErrorCode() == "ValidationException" && (strings.Contains(msg, "too long") || strings.Contains(msg, "context")) {
			return ai.CauseContext
		}
		return "Bedrock answered " + apiErr.ErrorCode()
	}
	if c := classify(context.Background(), err); c == transport {
		return ai.CauseUnreachable
	}
	return ""
}
