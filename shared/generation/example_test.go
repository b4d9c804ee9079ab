package generation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/inproc"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
)

// answers is a model that gives the answers written for it, in turn, and says what it was asked.
type answers []string

func (a *answers) Generate(_ context.Context, req ai.Request) (ai.Result, error) {
	fmt.Printf("model: task %s, %d messages\n", req.Task, len(req.Messages)) // a repair adds the answer and the errors
	next := (*a)[0]
	*a = (*a)[1:]
	return ai.Result{JSON: json.RawMessage(next), InputTokens: 100, OutputTokens: 50, Model: "scripted"}, nil
}

func hookAnswer(approaches ...string) string {
	var hs []map[string]string
	for _, a := range approaches {
		hs = append(hs, map[string]string{"approach": a, "first5Seconds": "Wait for it.",
			"first30Seconds": "Wait for it: the one change that made meal prep stick.", "whyItWorks": "It opens a loop."})
	}
	b, _ := json.Marshal(map[string]any{"hooks": hs})
	return string(b)
}

// One tool, end to end, on a scripted model: Submit (the API side) stores a pending run and queues a job;
// Handle (the worker side) builds the prompt, asks the model, checks the answer against the tool's rules
// (three hooks, one per approach), asks once more with the errors when it breaks them, and completes the
// run, which Submit was waiting for.
func ExampleGenerator_Submit() {
	ctx := context.Background()
	table, err := pebble.OpenMemory()
	if err != nil {
		panic(err)
	}
	defer table.Close()
	st := store.New(table)
	jobs, err := inproc.OpenSpec(queue.Specs()[queue.Generation], inproc.Options{})
	if err != nil {
		panic(err)
	}
	defer jobs.Close(ctx)

	model := &answers{
		hookAnswer("Curiosity", "Curiosity", "Bold Claim/Contrarian"),               // breaks the rule: repaired
		hookAnswer("Curiosity", "Bold Claim/Contrarian", "Story/Pattern Interrupt"), // valid
	}
	gen := generation.New(generation.Config{
		Runs: st, Data: st, Idempotency: st, Quota: st, Backlog: st, Queue: jobs,
		Models:       generation.Models{Writer: model, Grader: model},
		Answers:      schemacheck.New(),
		MonthlyQuota: 2000, Wait: 10 * time.Second, NewID: st.NewID,
	})
	if err := jobs.Start(gen.Handle, 1); err != nil {
		panic(err)
	}

	body := contract.HooksRequest{Title: "5 vegan lunches under $3"}
	if err := body.Validate(); err != nil { // what the REST handler and the MCP tool have done already
		panic(err)
	}
	out, err := gen.Submit(ctx, generation.Submission{Operation: "generateHooks", ChannelID: "ch1", AccountID: "acct1", Body: &body})
	if err != nil {
		panic(err)
	}
	var res contract.HooksResult
	json.Unmarshal(out.Output, &res)
	fmt.Println("done:", out.Done)
	for _, h := range res.Hooks {
		fmt.Println(h.Approach)
	}
	run, _, _ := st.GetRun(ctx, "ch1", out.RunID)
	fmt.Println("run:", run.Status, *run.Model, *run.InputTokens, "input tokens")
	// Output:
	// model: task hooks, 1 messages
	// model: task hooks, 3 messages
	// done: true
	// Curiosity
	// Bold Claim/Contrarian
	// Story/Pattern Interrupt
	// run: success scripted 200 input tokens
}
