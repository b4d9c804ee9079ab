package main

import (
	"slices"
	"testing"
)

func TestSequenceOf(t *testing.T) {
	for function, want := range map[string][]string{
		"css-bench-hellotable":         {"GetItem"},
		"css-bench-hellotable2":        {"KeyLease", "Query"},
		"css-bench-hellotable3@before": {"GetItem", "UpdateItem", "Query"},
		"css-bench-hellotable4":        {"GetItem", "GetItem", "UpdateItem", "Query"},
	} {
		if got, err := sequenceOf(function); err != nil || !slices.Equal(got, want) {
			t.Errorf("sequenceOf(%q) = %v, %v; want %v", function, got, err, want)
		}
	}
	for _, function := range []string{"css-bench-hellotable5", "css-bench-videos", "", "css-bench-hellotablex"} {
		if got, err := sequenceOf(function); err == nil {
			t.Errorf("sequenceOf(%q) = %v, want an error", function, got)
		}
	}
}
