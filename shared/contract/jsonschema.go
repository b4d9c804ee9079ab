package contract

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// JSONSchema returns the component schema name as a self-contained JSON Schema (draft 2020-12): every $ref
// inlined and OpenAPI 3.0's `nullable` written as a "null" type. Model adapters hand it to a model as the
// shape of its answer, and MCP publishes it as a tool's input schema, so the contract stays the one source
// of both. The result is a fresh value the caller may change.
func JSONSchema(name string) (map[string]any, error) {
	comps, err := loadRawSchemas()
	if err != nil {
		return nil, err
	}
	if _, ok := comps[name]; !ok {
		return nil, fmt.Errorf("contract: no component schema %q", name)
	}
	out, err := inline(comps, map[string]any{"$ref": "#/components/schemas/" + name}, nil)
	if err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	m := out.(map[string]any)
	m["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	return m, nil
}

var loadRawSchemas = sync.OnceValues(func() (map[string]any, error) {
	var doc struct {
		Schemas map[string]any `json:"schemas"`
	}
	if err := json.Unmarshal([]byte(schemasJSON), &doc); err != nil {
		return nil, fmt.Errorf("contract: schemas.json: %w", err)
	}
	return doc.Schemas, nil
})

// dropped are OpenAPI keywords with no JSON Schema meaning, or none a consumer of the schema needs.
// A switch, not a map: no code at init.
func dropped(k string) bool {
	switch k {
	case "nullable", "example", "externalDocs", "xml", "discriminator":
		return true
	}
	return false
}

func inline(comps map[string]any, v any, seen []string) (any, error) {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := inline(comps, e, seen)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "#/components/schemas/")
			target, exists := comps[name]
			if !found || !exists {
				return nil, fmt.Errorf("unresolved $ref %q", ref)
			}
			for _, s := range seen {
				if s == name {
					return nil, fmt.Errorf("recursive $ref %q", ref)
				}
			}
			r, err := inline(comps, target, append(seen, name))
			if err != nil {
				return nil, err
			}
			// OpenAPI 3.0 ignores siblings of $ref except description; keep the description.
			if d, ok := x["description"]; ok {
				r.(map[string]any)["description"] = d
			}
			return r, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if dropped(k) || strings.HasPrefix(k, "x-") {
				continue
			}
			if k == "properties" {
				props := map[string]any{}
				for pn, ps := range e.(map[string]any) {
					r, err := inline(comps, ps, seen)
					if err != nil {
						return nil, err
					}
					props[pn] = r
				}
				out[k] = props
				continue
			}
			r, err := inline(comps, e, seen)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		if x["nullable"] == true {
			if t, ok := out["type"].(string); ok {
				out["type"] = []any{t, "null"}
			}
			if enum, ok := out["enum"].([]any); ok {
				out["enum"] = append(enum, nil)
			}
		}
		return out, nil
	default:
		return v, nil
	}
}
