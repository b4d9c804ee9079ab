package contract

// Function is a Lambda function serving operations of the document: the value of an operation's
// x-css-function. Each function's main names the ones it serves with these constants, so what it serves
// is read in its main and checked by the compiler (TestFunctionsAreTheDocuments keeps them in step with the
// document).
type Function string

// The functions of the document's x-css-function values, one per REST group.
const (
	FunctionContext      Function = "context"
	FunctionVideos       Function = "videos"
	FunctionPlanning     Function = "planning"
	FunctionMemory       Function = "memory"
	FunctionGeneration   Function = "generation"
	FunctionIntelligence Function = "intelligence"
	FunctionUtility      Function = "utility"
	FunctionWebhooks     Function = "webhooks"
	FunctionIntegrations Function = "integrations"
	FunctionKeys         Function = "keys"
)

// Functions lists every function of the document's x-css-function values.
func Functions() []Function {
	return []Function{FunctionContext, FunctionVideos, FunctionPlanning, FunctionMemory, FunctionGeneration,
		FunctionIntelligence, FunctionUtility, FunctionWebhooks, FunctionIntegrations, FunctionKeys}
}
