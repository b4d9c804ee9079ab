package contract_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/creatorstrategy/css/shared/contract"
)

// Every component converts to a self-contained schema that an independent JSON Schema implementation
// compiles, and that agrees with the contract's validator on a valid and an invalid value.
func TestJSONSchemaOfEveryComponent(t *testing.T) {
	var doc struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	}
	raw, err := os.ReadFile("schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for name := range doc.Schemas {
		s, err := contract.JSONSchema(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(s)
		if strings.Contains(string(b), "$ref") || strings.Contains(string(b), "nullable") {
			t.Errorf("%s: not self-contained: %s", name, b)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(name+".json", s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.Compile(name + ".json"); err != nil {
			t.Errorf("%s: does not compile: %v", name, err)
		}
	}
}

func TestJSONSchemaKeepsBoundsAndNullables(t *testing.T) {
	s, err := contract.JSONSchema("ToolRun")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("ToolRun.json", s); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("ToolRun.json")
	if err != nil {
		t.Fatal(err)
	}
	ok := `{"id":"8b0f6c1e-2f6a-4c1b-9a55-0d6f1c2e3a4b","toolName":"titles","status":"pending","model":null,"generatedAt":"2026-01-01T00:00:00Z"}`
	for doc, want := range map[string]bool{
		ok: true,
		strings.Replace(ok, `"pending"`, `"done"`, 1):              false,
		strings.Replace(ok, `"model":null`, `"model":3`, 1):        false,
		strings.Replace(ok, `"model":null`, `"inputTokens":-1`, 1): false,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if got := sch.Validate(v) == nil; got != want {
			t.Errorf("%s: valid=%v, want %v", doc, got, want)
		}
	}
	if _, err := contract.JSONSchema("NoSuchThing"); err == nil {
		t.Error("an unknown component converted")
	}
}
