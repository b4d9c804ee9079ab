// Command toolsgen writes tools.json, the MCP server's tool list, from the contract and the composite
// tools' Go types; `go generate ./shared/mcp` runs it (after `go generate ./shared/contract` when the
// contract changed).
package main

import (
	"fmt"
	"os"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/mcp"
)

func main() {
	if err := run("tools.json"); err != nil {
		fmt.Fprintln(os.Stderr, "toolsgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	c, err := contract.LoadDocument()
	if err != nil {
		return err
	}
	list, err := mcp.ToolList(c, contract.Document())
	if err != nil {
		return err
	}
	return os.WriteFile(out, list, 0o644)
}
