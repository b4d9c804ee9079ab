package main

import (
	"context"
	"testing"

	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// One invocation is one pass of the schedule over the table; without the research queue the function does
// not start.
func TestSchedulesFromTheTable(t *testing.T) {
	wiretest.Setup(t)
	rep, err := wiretest.Build(t, "research-scheduler", build)(context.Background())
	if err != nil || rep.Due != 0 || rep.Started != 0 {
		t.Errorf("a pass over a table with nothing due: %+v, %v", rep, err)
	}
	t.Setenv("CSS_RESEARCH_QUEUE_URL", "")
	if _, err := build(context.Background(), wiretest.Env(t, "research-scheduler")); err == nil {
		t.Error("started without CSS_RESEARCH_QUEUE_URL")
	}
}
