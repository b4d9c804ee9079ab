package mcp

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/contract"
)

// The tool list is built from the contract and the composites' Go types when the code is generated, not
// when a function starts: building it (39 schemas out of the contract, reflection over the composites'
// types) took 5 ms and 3 MB of a cold start. `go generate ./shared/mcp` writes tools.json;
// TestToolListIsCurrent fails when it is stale.
//
//go:generate go run ./internal/toolsgen
//go:embed tools.json
var toolsJSON []byte

// publishedTool is a tool as tools.json holds it, its input schema kept as JSON.
type publishedTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is absent for a tool whose operation answers no body.
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *sdk.ToolAnnotations `json:"annotations"`
}

// ToolList is every tool as the server publishes it, in order, as JSON: the mirrored tools with their
// operations' arguments from c, then the composites. go generate writes it to tools.json, from the
// served document (contract.LoadDocument) so that arguments carry their descriptions; the body fields'
// descriptions come from doc, the same document's JSON, which the runtime schemas leave out.
func ToolList(c *contract.Contract, doc []byte) ([]byte, error) {
	bodies, err := bodyFieldDescriptions(doc)
	if err != nil {
		return nil, err
	}
	var tools []*sdk.Tool
	for _, t := range mirroredTools {
		tool, err := mirroredTool(c, t)
		if err != nil {
			return nil, err
		}
		op := c.Operation(t.op)
		describe(tool.InputSchema.(map[string]any), bodies[strings.ToLower(op.Method)+" "+op.Path])
		tool.InputSchema = portable(tool.InputSchema)
		if tool.OutputSchema != nil {
			tool.OutputSchema = portable(tool.OutputSchema)
		}
		tools = append(tools, tool)
	}
	for _, comp := range compositeTools {
		tool, err := compositeTool(comp)
		if err != nil {
			return nil, err
		}
		tools = append(tools, tool)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tools); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// bodyFieldDescriptions maps "method path" to the descriptions of its request body's fields.
func bodyFieldDescriptions(doc []byte) (map[string]map[string]string, error) {
	type schema struct {
		Ref        string `json:"$ref"`
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("mcp: the served document: %w", err)
	}
	out := map[string]map[string]string{}
	for path, item := range d.Paths {
		for method, raw := range item {
			var op struct {
				RequestBody struct {
					Content map[string]struct {
						Schema schema `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue // not an operation (parameters, summary)
			}
			body := op.RequestBody.Content["application/json"].Schema
			if name, ok := strings.CutPrefix(body.Ref, "#/components/schemas/"); ok {
				body = d.Components.Schemas[name]
			}
			for field, p := range body.Properties {
				if p.Description != "" {
					if out[method+" "+path] == nil {
						out[method+" "+path] = map[string]string{}
					}
					out[method+" "+path][field] = strings.TrimSpace(p.Description)
				}
			}
		}
	}
	return out, nil
}

// describe gives the arguments of schema without a description the one descriptions has for them, and
// writes every description on one line. It changes copies: the schema's maps belong to the contract's
// Arguments.
func describe(schema map[string]any, descriptions map[string]string) {
	props, _ := schema["properties"].(map[string]any)
	props = maps.Clone(props)
	for name, p := range props {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		d, _ := p["description"].(string)
		d = cmp.Or(d, descriptions[name])
		if d != "" {
			p = maps.Clone(p)
			p["description"] = strings.Join(strings.Fields(d), " ")
			props[name] = p
		}
	}
	schema["properties"] = props
}

// portable returns a copy of the JSON Schema v in which every list of types with "null" in it
// ({"type": ["string", "null"], ...}, the contract's `nullable`) is written as
// {"anyOf": [{"type": "string", ...}, {"type": "null"}], ...}: the same values are valid, and clients that
// read only one type per schema (the MCP Inspector warns about the list) read it. The keywords of the
// non-null type go into its branch; the ones that describe the member (description, title, default,
// examples) stay beside anyOf. An enum's null goes too (the null branch allows it).
func portable(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = portable(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = portable(e)
		}
		types, ok := out["type"].([]any)
		if !ok || !slices.Contains(types, any("null")) {
			return out
		}
		others := slices.DeleteFunc(slices.Clone(types), func(t any) bool { return t == "null" })
		branch, outer := map[string]any{}, map[string]any{}
		for k, e := range out {
			switch k {
			case "description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly":
				outer[k] = e
			case "type":
			case "enum":
				enum, _ := e.([]any)
				branch[k] = slices.DeleteFunc(slices.Clone(enum), func(e any) bool { return e == nil })
			default:
				branch[k] = e
			}
		}
		switch len(others) {
		case 0:
			return out // only null: already portable
		case 1:
			branch["type"] = others[0]
		default:
			branch["type"] = others
		}
		outer["anyOf"] = []any{branch, map[string]any{"type": "null"}}
		return outer
	}
	return v
}

// readToolList reads tools.json, which must list exactly the server's tools.
func readToolList() ([]publishedTool, error) {
	var published []publishedTool
	if err := json.Unmarshal(toolsJSON, &published); err != nil {
		return nil, fmt.Errorf("mcp: tools.json: %w", err)
	}
	names := map[string]bool{}
	for _, t := range mirroredTools {
		names[t.name] = true
	}
	for _, c := range compositeTools {
		names[c.name] = true
	}
	for _, t := range published {
		if !names[t.Name] {
			return nil, fmt.Errorf("mcp: tools.json lists %s, which the server does not have: run go generate ./shared/mcp", t.Name)
		}
		delete(names, t.Name)
	}
	if len(names) > 0 {
		return nil, fmt.Errorf("mcp: tools.json misses %d of the server's tools: run go generate ./shared/mcp", len(names))
	}
	return published, nil
}

// addHandlers makes every tool's handler.
func (s *server) addHandlers() {
	for _, t := range mirroredTools {
		s.tools[t.name] = s.mirror(t)
	}
	for _, c := range compositeTools {
		s.tools[c.name] = s.composite(c)
	}
}
