package contract

import (
	"slices"
	"testing"
)

// The Function constants are exactly the document's x-css-function values: an operation moved to a new
// function, or a function left without operations, fails here.
func TestFunctionsAreTheDocuments(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	inDocument := map[Function]bool{}
	for _, op := range c.Operations {
		f := Function(op.Function)
		inDocument[f] = true
		if !slices.Contains(Functions(), f) {
			t.Errorf("%s: x-css-function %q has no Function constant", op.ID, op.Function)
		}
	}
	for _, f := range Functions() {
		if !inDocument[f] {
			t.Errorf("Function%s: no operation of the document names %q", f, f)
		}
	}
	if len(inDocument) != len(Functions()) {
		t.Errorf("%d functions in the document, %d constants", len(inDocument), len(Functions()))
	}
}
