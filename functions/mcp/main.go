// Command mcp is the Lambda serving the MCP endpoint ({app_url}/mcp, decision 34): the tools, resources and
// prompts of shared/mcp over every group's operations.
package main

import (
	"github.com/creatorstrategy/css/shared/lambdaapp"
	"github.com/creatorstrategy/css/shared/mcp"
)

func main() { lambdaapp.Run(lambdaapp.MCP, lambdaapp.WithServe(mcp.ForAPI)) }
