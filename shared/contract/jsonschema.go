package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
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

// ResponseSchema returns the JSON Schema of what operation id answers on success, as JSONSchema writes a
// component: its 2xx JSON body, or, when it has more than one (a generation's 200 result and its 202
// pending), an object that is any of them. nil when it answers no JSON body (a 204). MCP publishes it as a
// mirrored tool's output schema, whose structuredContent is that body (decision 35). It reads the served
// document: for what is generated, not for serving.
func ResponseSchema(id string) (map[string]any, error) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]response `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(document), &doc); err != nil {
		return nil, fmt.Errorf("contract: the served document: %w", err)
	}
	comps, err := loadRawSchemas()
	if err != nil {
		return nil, err
	}
	for _, item := range doc.Paths {
		for _, raw := range item {
			var op struct {
				ID        string              `json:"operationId"`
				Responses map[string]response `json:"responses"`
			}
			if json.Unmarshal(raw, &op) != nil || op.ID != id {
				continue // not an operation (parameters), or another one
			}
			var bodies []any
			for _, code := range slices.Sorted(maps.Keys(op.Responses)) {
				r := op.Responses[code]
				if !strings.HasPrefix(code, "2") {
					continue
				}
				if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
					r = doc.Components.Responses[name]
				}
				if s, ok := r.Content["application/json"]; ok {
					body, err := inline(comps, s.Schema, nil)
					if err != nil {
						return nil, fmt.Errorf("contract: %s %s response: %w", id, code, err)
					}
					bodies = append(bodies, body)
				}
			}
			switch len(bodies) {
			case 0:
				return nil, nil
			case 1:
				return bodies[0].(map[string]any), nil
			}
			return map[string]any{"type": "object", "anyOf": bodies}, nil
		}
	}
	return nil, fmt.Errorf("contract: no operation %q", id)
}

// response is a response of the document, or a reference to one.
type response struct {
	Ref     string `json:"$ref"`
	Content map[string]struct {
		Schema any `json:"schema"`
	} `json:"content"`
}
