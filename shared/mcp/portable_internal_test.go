package mcp

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

func TestPortable(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"nullable string", `{"type":["string","null"],"format":"uuid","description":"d"}`,
			`{"anyOf":[{"type":"string","format":"uuid"},{"type":"null"}],"description":"d"}`},
		{"null first", `{"type":["null","array"],"items":{"type":"object"},"minItems":1}`,
			`{"anyOf":[{"type":"array","items":{"type":"object"},"minItems":1},{"type":"null"}]}`},
		{"enum with null", `{"type":["string","null"],"enum":["a","b",null],"title":"T"}`,
			`{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}],"title":"T"}`},
		{"two types and null", `{"type":["string","integer","null"]}`,
			`{"anyOf":[{"type":["string","integer"]},{"type":"null"}]}`},
		{"nested", `{"type":"object","properties":{"a":{"type":"array","items":{"type":["integer","null"],"maximum":3}}}}`,
			`{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"type":"integer","maximum":3},{"type":"null"}]}}}}`},
		{"not nullable", `{"type":"string","maxLength":3,"enum":["a"]}`, `{"type":"string","maxLength":3,"enum":["a"]}`},
		{"a property named type", `{"type":"object","properties":{"type":{"type":"string"}}}`,
			`{"type":"object","properties":{"type":{"type":"string"}}}`},
	} {
		var in, want any
		if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		before, _ := json.Marshal(in)
		got := portable(in)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			t.Errorf("%s: got %s, want %s", tc.name, g, tc.want)
		}
		if after, _ := json.Marshal(in); string(after) != string(before) {
			t.Errorf("%s: the input changed: %s", tc.name, after)
		}
	}
}

// TestPublishedSchemasArePortable: no published input schema gives a list of types (the MCP Inspector's
// portability warning), at any depth.
func TestPublishedSchemasArePortable(t *testing.T) {
	var tools []struct {
		Name        string `json:"name"`
		InputSchema any    `json:"inputSchema"`
	}
	if err := json.Unmarshal(toolsJSON, &tools); err != nil {
		t.Fatal(err)
	}
	var walk func(tool, at string, v any)
	walk = func(tool, at string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, list := x["type"].([]any); list {
				t.Errorf("%s: %s has a list of types: %v", tool, at, x["type"])
			}
			for k, e := range x {
				walk(tool, at+"/"+k, e)
			}
		case []any:
			for i, e := range x {
				walk(tool, at+"/"+strconv.Itoa(i), e)
			}
		}
	}
	for _, tool := range tools {
		walk(tool.Name, "", tool.InputSchema)
	}
	if len(tools) != 39 {
		t.Errorf("%d tools", len(tools))
	}
}
