// Command generation is the Lambda serving the Generation operations of the API (see the OpenAPI document's tags).
package main

import "github.com/creatorstrategy/css/shared/lambdaapp"

func main() { lambdaapp.Run("generation") }
