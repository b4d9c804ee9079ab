package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/creatorstrategy/css/shared/contract/internal/docgen"
	"github.com/creatorstrategy/css/shared/contract/internal/typegen"
)

func TestRegistryUpToDate(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	regs, err := docgen.Registry(src)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	want, err := typegen.Registry(regs, "contract")
	if err != nil {
		t.Fatal(err)
	}
	if current, err := os.ReadFile("registry_gen.go"); err != nil || !bytes.Equal(current, want) {
		t.Fatalf("registry_gen.go is out of date with openapi.yaml (%v): run `go generate ./shared/contract` and commit it", err)
	}
	if bytes.Contains(Document(), []byte(`"x-css-tool"`)) || bytes.Contains(Document(), []byte(`"x-css-mcp"`)) ||
		bytes.Contains([]byte(contract), []byte(`"x-css-mcp"`)) {
		t.Error("the registry extensions are served: docgen must leave them out")
	}
}

// enumOf returns the enum of a component schema (or of one of its properties).
func enumOf(t *testing.T, component, property string) []string {
	t.Helper()
	var all struct {
		Schemas map[string]struct {
			Enum       []string `json:"enum"`
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"schemas"`
	}
	if err := json.Unmarshal([]byte(schemasJSON), &all); err != nil {
		t.Fatal(err)
	}
	s, ok := all.Schemas[component]
	if !ok {
		t.Fatalf("no component %s", component)
	}
	if property == "" {
		return s.Enum
	}
	return s.Properties[property].Enum
}

// TestRegistryAgreesWithTheContract: each registration names an operation of the contract, a generation's
// body and result are that operation's, and the tool names the contract lists elsewhere (the history's
// filter, the unversioned `tool`) are exactly the registry's.
func TestRegistryAgreesWithTheContract(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var tools, legacy []string
	for _, r := range Registrations() {
		op := c.Operation(r.Operation)
		if op == nil {
			t.Errorf("registry: %s is no operation of the contract", r.Operation)
			continue
		}
		if g := r.Generation; g != nil {
			tools = append(tools, g.Tool)
			if g.Legacy != "" {
				legacy = append(legacy, g.Legacy)
			}
			if got, ok := GenerationOf(r.Operation); !ok || got != g || g.Operation != r.Operation {
				t.Errorf("GenerationOf(%s) = %v, %v", r.Operation, got, ok)
			}
			if op.Method != "POST" || !op.HasBody || op.RateGroup != RateGeneration {
				t.Errorf("%s runs as a generation job but is %s, body %v, rate group %s", op.ID, op.Method, op.HasBody, op.RateGroup)
			}
			if b, err := json.Marshal(g.NewBody()); err != nil || b[0] != '{' {
				t.Errorf("%s: NewBody = %s, %v", g.Body, b, err)
			}
			req, err := g.Bind(op, Params{Header: map[string]any{"Prefer": "respond-async", "Idempotency-Key": "k"}}, map[string]any{})
			if err != nil || req.Body == nil || Value(req.Prefer) != "respond-async" || Value(req.IdempotencyKey) != "k" {
				t.Errorf("%s: Bind = %+v, %v", op.ID, req, err)
			}
			if other := c.Operation("getHealth"); other != nil {
				if _, err := g.Bind(other, Params{}, nil); err == nil {
					t.Errorf("%s: bound to getHealth", op.ID)
				}
			}
		}
		if m := r.Mirror; m != nil && m.Operation != r.Operation {
			t.Errorf("mirror %s: operation %s in registration %s", m.Name, m.Operation, r.Operation)
		}
	}
	for _, name := range enumOf(t, "HistoryTool", "") {
		if name != "all" && !slices.Contains(tools, name) {
			t.Errorf("HistoryTool %s is no x-css-tool", name)
		}
	}
	want := enumOf(t, "LegacyGenerateRequest", "tool")
	slices.Sort(want)
	slices.Sort(legacy)
	if !slices.Equal(legacy, want) {
		t.Errorf("x-css-legacy-tool values %v, LegacyGenerateRequest.tool enum %v", legacy, want)
	}
	for _, name := range want {
		if g, ok := LegacyGeneration(name); !ok || g.Legacy != name {
			t.Errorf("LegacyGeneration(%s) = %v, %v", name, g, ok)
		}
	}
	if _, ok := LegacyGeneration(""); ok {
		t.Error(`LegacyGeneration("") found one`)
	}
	ms := Mirrors()
	for i, m := range ms {
		if m.Position != i+1 {
			t.Errorf("Mirrors()[%d] is %s at position %d", i, m.Name, m.Position)
		}
	}
}
