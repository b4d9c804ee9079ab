package main

import (
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

func TestServesTheWebhooksOperations(t *testing.T) {
	c := wiretest.Setup(t)
	wiretest.CheckFunction(t, c, contract.FunctionWebhooks, wiretest.Build(t, "webhooks", build))
}
