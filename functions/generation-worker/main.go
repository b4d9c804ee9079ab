// Command generation-worker is the Lambda that runs generation jobs from the generation queue.
package main

import "github.com/creatorstrategy/css/shared/lambdaapp/generationworker"

func main() { generationworker.Run() }
