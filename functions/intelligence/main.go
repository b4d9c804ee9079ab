// Command intelligence is the Lambda serving the Intelligence operations of the API (see the OpenAPI document's tags).
package main

import "github.com/creatorstrategy/css/shared/lambdaapp"

func main() { lambdaapp.Run("intelligence") }
