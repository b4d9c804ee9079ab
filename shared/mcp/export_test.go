package mcp

import "net/http"

// WithoutFastPath returns h (a Handler) answering every request through the SDK, to compare the two.
func WithoutFastPath(h http.Handler) http.Handler {
	e := *h.(*endpoint)
	e.fast = false
	return &e
}

// Portable is portable, for the tests that compare a published schema with the contract's.
var Portable = portable
