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
	sch := compileComponent(t, "ToolRun")
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

// An operation's response schema is its 2xx JSON body: one body as it is, two (a generation's result and
// its 202 pending) as an object that is any of them, none for a 204.
func TestResponseSchema(t *testing.T) {
	profile, err := contract.ResponseSchema("getNicheProfile")
	if err != nil {
		t.Fatal(err)
	}
	want, err := contract.JSONSchema("NicheProfile")
	if err != nil {
		t.Fatal(err)
	}
	delete(want, "$schema")
	if a, b := mustJSON(t, profile), mustJSON(t, want); a != b {
		t.Errorf("getNicheProfile: %s\nwant the NicheProfile component %s", a, b)
	}
	titles, err := contract.ResponseSchema("generateTitles")
	if err != nil {
		t.Fatal(err)
	}
	anyOf, _ := titles["anyOf"].([]any)
	if titles["type"] != "object" || len(anyOf) != 2 {
		t.Fatalf("generateTitles: %v", titles)
	}
	sch := compile(t, titles)
	for doc, valid := range map[string]bool{
		`{"generationId":"7d3c9f1e-2a4b-4c5d-8e6f-0a1b2c3d4e5f","status":"pending"}`: true,
		`{"titles":[]}`: false,
		`[]`:            false,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if got := sch.Validate(v) == nil; got != valid {
			t.Errorf("generateTitles %s: valid=%v, want %v", doc, got, valid)
		}
	}
	if none, err := contract.ResponseSchema("deleteNote"); err != nil || none != nil {
		t.Errorf("deleteNote (204): %v %v, want none", none, err)
	}
	if _, err := contract.ResponseSchema("noSuchOperation"); err == nil {
		t.Error("an unknown operation has a response schema")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func compile(t *testing.T, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	if err := c.AddResource("response.json", schema); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("response.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// A URL field's published schema refuses what the service refuses for want of a host, so a client checking
// against the schema alone is not surprised by a 400: format "uri" is an annotation to most validators, the
// pattern is not.
func TestJSONSchemaURLsNeedAHost(t *testing.T) {
	sch := compileComponent(t, "WebhookCreate")
	for url, want := range map[string]bool{
		"https://example.com/hook": true, "http://[2001:db8::1]:8080/h": true, "https://user@example.com": true,
		"http://": false, "https:///path": false, "http://?q": false, "http:// example.com": false, "ftp://example.com": false,
	} {
		b, _ := json.Marshal(url)
		doc := `{"url":` + string(b) + `,"events":["titles.generated"]}`
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if got := sch.Validate(v) == nil; got != want {
			t.Errorf("%s: valid by the published schema %v, want %v", url, got, want)
		}
		if _, err := contract.ValidateJSON("WebhookCreate", []byte(doc)); (err == nil) != want {
			t.Errorf("%s: the service's validator says %v, want valid %v", url, err, want)
		}
	}
}

// compileComponent is a component's JSON Schema, compiled by an independent implementation.
func compileComponent(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	s, err := contract.JSONSchema(name)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name+".json", s); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}
