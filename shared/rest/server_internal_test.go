package rest

import (
	"slices"
	"strings"
	"testing"
)

func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"req-123": true, "A.b_C-9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a b": false, "a/b": false, "é": false, "a\nb": false,
	} {
		if got := ValidRequestID(id); got != want {
			t.Errorf("ValidRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestPathParams(t *testing.T) {
	for path, want := range map[string][]string{
		"/api/v1/health":                 nil,
		"/api/v1/series/{id}":            {"id"},
		"/api/v1/a/{first}/b/{second_2}": {"first", "second_2"},
	} {
		if got := pathParams(path); !slices.Equal(got, want) {
			t.Errorf("pathParams(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestHandlersTakeTheirOperationsInput: each handler is keyed by the operation whose generated input type
// it takes, so no handler reads another operation's parameters or body.
func TestHandlersTakeTheirOperationsInput(t *testing.T) {
	s := &Server{}
	for id, h := range s.handlers() {
		if h.input != id {
			t.Errorf("handler %s takes the input of %s", id, h.input)
		}
	}
}
