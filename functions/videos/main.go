// Command videos is the Lambda serving the Videos operations of the API (see the OpenAPI document's tags).
package main

import "github.com/creatorstrategy/css/shared/lambdaapp"

func main() { lambdaapp.Run("videos") }
