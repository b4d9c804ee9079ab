// Command researchworker is the Lambda consuming the research queue: each message is one step of a
// research run (shared/research.Pipeline).
package main

import "github.com/creatorstrategy/css/shared/researchapp/worker"

func main() { worker.Run() }
