package generation

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
)

// TestToolsFollowTheRegistry: every generation of the contract's registry has its logic (refine being
// Generator.refine), no logic is left without an operation, and what a tool says of the contract (its
// event) is the contract's.
func TestToolsFollowTheRegistry(t *testing.T) {
	refines := 0
	for _, gen := range contract.Generations() {
		if gen.Tool == ToolRefine {
			refines++
			if gen.Result != "RefineResult" {
				t.Errorf("refine answers %s", gen.Result)
			}
			continue
		}
		if _, ok := toolLogic[gen.Tool]; !ok {
			t.Errorf("%s: x-css-tool %s has no logic in toolLogic", gen.Operation, gen.Tool)
			continue
		}
		tool, ok := ToolFor(gen.Operation)
		if !ok || tool.Name != gen.Tool || tool.Result != gen.Result {
			t.Errorf("ToolFor(%s) = %+v, %v", gen.Operation, tool, ok)
		}
		if named, ok := ToolNamed(gen.Tool); !ok || named != tool {
			t.Errorf("ToolNamed(%s) = %+v, %v", gen.Tool, named, ok)
		}
	}
	if refines != 1 {
		t.Errorf("%d operations run the refine tool, want 1", refines)
	}
	if _, ok := ToolNamed(ToolRefine); ok {
		t.Error("refine is a Tool: its runs would be filed under its own name")
	}
	for name, l := range toolLogic {
		tool, ok := ToolNamed(name)
		if !ok {
			t.Errorf("toolLogic %s is the x-css-tool of no operation", name)
			continue
		}
		if l.event != "" {
			if _, err := contract.ValidateJSON("EventName", []byte(strconv.Quote(l.event))); err != nil {
				t.Errorf("%s emits %s, which is no EventName of the contract: %v", name, l.event, err)
			}
		}
		if l.transcript != "" && l.transcript != "optional" && l.transcript != "required" {
			t.Errorf("%s: transcript %q", name, l.transcript)
		}
		if tool.task == nil || tool.draft == nil || tool.finish == nil {
			t.Errorf("%s: logic incomplete", name)
		}
	}
	if len(AllTools()) != len(toolLogic) {
		t.Errorf("%d tools, %d with logic", len(AllTools()), len(toolLogic))
	}
}

// TestToolEventsAreTheDocumented: the events a tool emits are the ones its operation's description
// promises ("Emits `titles.generated` and `content.generated`."). A description that promises none
// (scoreNiche: "as for the Generation operations") is of a tool without an event of its own.
func TestToolEventsAreTheDocumented(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(contract.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	described := map[string]string{}
	for _, item := range doc.Paths {
		for _, raw := range item {
			var op struct {
				ID          string `json:"operationId"`
				Description string `json:"description"`
			}
			if json.Unmarshal(raw, &op) == nil && op.ID != "" {
				described[op.ID] = op.Description
			}
		}
	}
	for _, tool := range AllTools() {
		_, sentence, ok := strings.Cut(described[tool.Operation], "Emits ")
		sentence, _, _ = strings.Cut(sentence, ".\n")
		var promised []string
		for i, part := range strings.Split(sentence, "`") {
			if i%2 == 1 {
				promised = append(promised, part)
			}
		}
		want := []string{"content.generated"}
		if tool.Event != "" {
			want = append([]string{tool.Event}, want...)
		}
		if !ok {
			if tool.Event != "" {
				t.Errorf("%s emits %s, which its operation %s does not promise", tool.Name, tool.Event, tool.Operation)
			}
			continue
		}
		if !slices.Equal(promised, want) {
			t.Errorf("%s emits %v; its operation %s promises %v", tool.Name, want, tool.Operation, promised)
		}
	}
}
