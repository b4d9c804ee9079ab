package mcp

import (
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
)

// TestMirrorsFollowTheRegistry: every mirror the contract declares (x-css-mcp) is a tool of the server,
// of an operation the contract has, with annotations and a summary; a mirrored generation job is a
// generate tool, and a generate tool runs a generation job.
func TestMirrorsFollowTheRegistry(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	ms := contract.Mirrors()
	if len(ms) != len(mirroredTools) {
		t.Fatalf("%d mirrors in the contract, %d mirrored tools", len(ms), len(mirroredTools))
	}
	for i, m := range ms {
		tool := mirroredTools[i]
		if tool.name != m.Name || tool.op != m.Operation {
			t.Errorf("mirroredTools[%d] is %s (%s), the contract's %s (%s)", i, tool.name, tool.op, m.Name, m.Operation)
		}
		if c.Operation(m.Operation) == nil {
			t.Errorf("%s mirrors %s, which the contract does not have", m.Name, m.Operation)
		}
		if _, ok := kinds[m.Kind]; !ok {
			t.Errorf("%s: kind %q has no annotations", m.Name, m.Kind)
		}
		if tool.summary == nil {
			t.Errorf("%s: summary style %q has no function", m.Name, m.Summary.Style)
		}
		if _, job := contract.GenerationOf(m.Operation); job != (m.Kind == contract.MirrorGenerate) {
			t.Errorf("%s: kind %s, but its operation %s runs as a generation job: %v", m.Name, m.Kind, m.Operation, job)
		}
	}
	// The composites run these mirrored tools by name (runPart, pickType).
	for _, name := range []string{"generate_titles", "generate_long_script", "generate_short_script", "generate_description",
		"generate_thumbnail_strategy", "generate_hooks", "generate_ctas", "get_niche_scorecard"} {
		if mirroredOp(name) == "" {
			t.Errorf("a composite runs %s, which no operation mirrors", name)
		}
	}
}
