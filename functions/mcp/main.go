// Command mcp is the Lambda serving the MCP endpoint ({app_url}/mcp, decision 34): the tools, resources and
// prompts of shared/mcp over every group's operations.
package main

import (
	"os"
	"runtime/debug"

	"github.com/creatorstrategy/css/shared/lambdaapp"
	"github.com/creatorstrategy/css/shared/mcp"
)

// gcPercent is the function's GOGC unless the environment sets one. Building the MCP server at start
// allocates about 3 MB (the tools' schemas), which with Go's default of 100 passes the heap's first 4 MB
// goal: the runtime then collects once during every cold start (about 1 ms of 10-12 here). 400, the local
// stack's, leaves that collection to a later request for a few MB more of heap.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	lambdaapp.Run(lambdaapp.MCP, lambdaapp.WithServe(mcp.ForAPI))
}
