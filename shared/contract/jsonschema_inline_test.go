package contract

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestInlineRefs: a $ref is replaced by its component (keeping a description beside it); one naming no
// component, or one that leads back to itself, is an error rather than a schema that accepts anything.
func TestInlineRefs(t *testing.T) {
	comps := map[string]any{
		"Name": map[string]any{"type": "string", "description": "a name"},
		"Loop": map[string]any{"type": "object", "properties": map[string]any{
			"next": map[string]any{"$ref": "#/components/schemas/Loop"}}},
		"Pair": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/Name"}},
	}
	for _, tt := range []struct {
		name string
		in   any
		want any    // when err is empty
		err  string // what the error says
	}{
		{"a component", map[string]any{"$ref": "#/components/schemas/Pair"},
			map[string]any{"type": "array", "items": map[string]any{"type": "string", "description": "a name"}}, ""},
		{"a description beside the $ref", map[string]any{"$ref": "#/components/schemas/Name", "description": "the title"},
			map[string]any{"type": "string", "description": "the title"}, ""},
		{"no such component", map[string]any{"$ref": "#/components/schemas/Missing"}, nil, `unresolved $ref "#/components/schemas/Missing"`},
		{"a missing component deep down", []any{map[string]any{"properties": map[string]any{
			"a": map[string]any{"$ref": "#/components/schemas/Gone"}}}}, nil, `unresolved $ref "#/components/schemas/Gone"`},
		{"not a component", map[string]any{"$ref": "#/definitions/Name"}, nil, `unresolved $ref "#/definitions/Name"`},
		{"a recursive component", map[string]any{"$ref": "#/components/schemas/Loop"}, nil, `recursive $ref "#/components/schemas/Loop"`},
	} {
		got, err := inline(comps, tt.in, nil)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, %v; want an error containing %s", tt.name, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

// TestInlineDropsOnlyWhatItShould: the OpenAPI-only keywords and x- extensions are left out, and every
// other keyword of the same schema is kept, whatever order a map is walked in (many schemas, so an order
// that happens to put the dropped keywords last cannot hide a lost keyword).
func TestInlineDropsOnlyWhatItShould(t *testing.T) {
	var in, want []any
	for i := range 40 {
		in = append(in, map[string]any{
			"type": "string", "minLength": 1.0, "maxLength": float64(i + 1), "description": fmt.Sprint("field ", i),
			"pattern": "^a", "enum": []any{"a", "ab"}, "nullable": true,
			"example": "a", "externalDocs": map[string]any{"url": "https://example.com"}, "xml": map[string]any{},
			"discriminator": map[string]any{}, "x-css-note": "n", "x-other": 1.0,
			"properties": map[string]any{"p": map[string]any{"type": "integer", "example": 3.0, "x-css-note": "n", "minimum": 0.0}},
		})
		want = append(want, map[string]any{
			"type": []any{"string", "null"}, "minLength": 1.0, "maxLength": float64(i + 1), "description": fmt.Sprint("field ", i),
			"pattern": "^a", "enum": []any{"a", "ab", nil},
			"properties": map[string]any{"p": map[string]any{"type": "integer", "minimum": 0.0}},
		})
	}
	got, err := inline(map[string]any{}, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !reflect.DeepEqual(got.([]any)[i], want[i]) {
			t.Fatalf("schema %d = %v\nwant %v", i, got.([]any)[i], want[i])
		}
	}
}
