// Package apperr holds the error codes of the API's Error shape. Domain packages return *Error values;
// the HTTP layer maps each code to its status and renders the documented body.
package apperr

import (
	"errors"
	"fmt"
)

// Code is one value of the Error schema's `code` enum.
type Code string

const (
	Validation       Code = "VALIDATION_ERROR"
	Unauthorized     Code = "UNAUTHORIZED"
	AccessExpired    Code = "ACCESS_EXPIRED"
	RateLimit        Code = "RATE_LIMIT"
	UsageLimit       Code = "USAGE_LIMIT"
	GenerationFailed Code = "GENERATION_FAILED"
	NotFound         Code = "NOT_FOUND"
	Conflict         Code = "CONFLICT"
	// NotImplemented: the deployment does not offer what was asked (generation in a function not configured
	// for it, a transfer encoding the local server does not read).
	NotImplemented Code = "NOT_IMPLEMENTED"
	// Unavailable: the operation needs something this deployment lacks or an outside service did not
	// answer (503): the message names it.
	Unavailable Code = "SERVICE_UNAVAILABLE"
	// Internal is never sent as a code of its own: unexpected failures answer 500 with GENERATION_FAILED
	// only where generation failed; other 500s carry this code.
	Internal Code = "INTERNAL"
)

// Error is an error a client can act on: a code, a message naming what is wrong, and (for validation) the
// offending field.
type Error struct {
	Code    Code
	Message string
	// Field names the request field at fault (dotted path), when there is one.
	Field string
	// Status overrides the status the code maps to (413 for an over-size body is a VALIDATION_ERROR).
	Status int
	// RetryAfter, in seconds, is sent as the Retry-After header of a 429.
	RetryAfter int
	// Cause is the underlying error; it is logged, and shown as `detail` in development mode only.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a VALIDATION_ERROR about one field.
func Invalid(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &Error{Code: Validation, Message: msg, Field: field}
}

// NotFoundf is a NOT_FOUND error.
func NotFoundf(format string, args ...any) *Error { return New(NotFound, format, args...) }

// Conflictf is a CONFLICT error.
func Conflictf(format string, args ...any) *Error { return New(Conflict, format, args...) }

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) { return errors.AsType[*Error](err) }

// CodeOf returns the code of err, or "" when err carries none.
func CodeOf(err error) Code {
	if e, ok := As(err); ok {
		return e.Code
	}
	return ""
}
