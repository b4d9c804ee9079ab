package mcp

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"

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
	Name        string               `json:"name"`
	Title       string               `json:"title"`
	Description string               `json:"description"`
	InputSchema json.RawMessage      `json:"inputSchema"`
	Annotations *sdk.ToolAnnotations `json:"annotations"`
}

// ToolList is every tool as the server publishes it, in order, as JSON: the mirrored tools with their
// operations' arguments from c, then the composites. go generate writes it to tools.json.
func ToolList(c *contract.Contract) ([]byte, error) {
	var tools []*sdk.Tool
	for _, t := range mirroredTools {
		tool, err := mirroredTool(c, t)
		if err != nil {
			return nil, err
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
