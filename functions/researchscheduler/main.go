// Command researchscheduler is the Lambda an EventBridge schedule invokes: it starts the research runs
// that are due, within the day's YouTube unit budget (shared/research.Service.Schedule).
package main

import "github.com/creatorstrategy/css/shared/researchapp"

func main() { researchapp.RunScheduler() }
