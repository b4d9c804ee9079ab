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
}

// TestEveryOperationHasOneHandler: each operation of the contract is bound exactly once, either to a
// service call or, when the registry runs it as a generation job, to the one generation path; each
// handler takes its own operation's input.
func TestEveryOperationHasOneHandler(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	services, generations := s.serviceHandlers(), generationHandlers(Services{})
	for _, op := range c.Operations {
		h, inService := services[op.ID]
		g, inGeneration := generations[op.ID]
		switch {
		case inService && inGeneration:
			t.Errorf("%s has two handlers: a service call and a generation job", op.ID)
		case !inService && !inGeneration:
			t.Errorf("%s has no handler: it would answer 501", op.ID)
		case inGeneration:
			h = g
		}
		if h.input != op.ID {
			t.Errorf("the handler of %s takes the input of %s", op.ID, h.input)
		}
		if _, isJob := contract.GenerationOf(op.ID); isJob && !inGeneration {
			t.Errorf("%s runs as a generation job (x-css-tool) but is served as a service call", op.ID)
		}
	}
	if n := len(services) + len(generations); n != len(c.Operations) {
		t.Errorf("%d handlers for %d operations", n, len(c.Operations))
	}
}
