package main

import (
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func TestServesTheIntelligenceOperations(t *testing.T) {
	c := wiretest.Setup(t)
	wiretest.CheckFunction(t, c, contract.FunctionIntelligence, wiretest.Build(t, "intelligence", build))
}
