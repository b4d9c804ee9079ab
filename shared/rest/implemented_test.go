package rest

import (
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
)

func TestImplemented(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, op := range c.Operations {
		known[op.ID] = true
	}
	for id := range (&Server{}).handlers() {
		if !known[id] {
			t.Errorf("handler %s is for no operation of the contract", id)
		}
	}
	if !Implemented("getHealth") || Implemented("nope") {
		t.Error("Implemented: getHealth is, nope is not")
	}
}
