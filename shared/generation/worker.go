package generation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Handle runs one generation job (the generation worker's queue.Handler). A job delivered again (a crash,
// a timeout) finds its run finished and only emits its events again, or finds it pending and runs it:
// the run's conditional update lets one attempt complete it, so a job never makes two runs.
func (g *Generator) Handle(ctx context.Context, m queue.Message) error {
	var job Job
	if err := json.Unmarshal(m.Body, &job); err != nil || job.RunID == "" || job.ChannelID == "" {
		// A message no attempt can read: dropping it loses nothing acknowledged (Submit wrote no such job).
		g.log.ErrorContext(ctx, "unreadable generation job dropped", "message", m.ID, "err", err)
		return nil
	}
	run, version, err := g.cfg.Runs.GetRun(ctx, job.ChannelID, job.RunID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			g.log.ErrorContext(ctx, "generation job for an unknown run dropped", "run", job.RunID)
			return nil
		}
		return err
	}
	switch run.Status {
	case Success:
		return g.emit(ctx, job, run)
	case Failed:
		return nil
	}

	runCtx, cancel := context.WithTimeout(ctx, g.cfg.Deadline)
	output, usage, err := g.execute(runCtx, job, run)
	cancel()
	if err != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		// The run's own deadline, not the worker's end: a failure for good, recorded with its reason.
		err = &apperr.Error{Code: apperr.GenerationFailed, Message: errTooLate, Cause: err}
	}
	g.meter(ctx, job.AccountID, run, usage)
	if err != nil && ctx.Err() != nil {
		// The worker is stopping (a shutdown cancels in-flight model calls): the job stays on the queue
		// and runs again, rather than failing for the stop.
		return fmt.Errorf("generation %s: stopped: %w", run.ID, err)
	}
	if err != nil {
		var ae *apperr.Error
		if !errors.As(err, &ae) && m.Attempt < g.cfg.MaxAttempts {
			if usage.Calls > 0 {
				// The next attempt's run remembers what this one was billed for.
				run.InputTokens, run.OutputTokens = plus(run.InputTokens, usage.InputTokens), plus(run.OutputTokens, usage.OutputTokens)
				if err := g.cfg.Runs.UpdateRun(ctx, job.ChannelID, run, version); err != nil {
					g.log.WarnContext(ctx, "recording a failed attempt's tokens failed", "run", run.ID, "err", err)
				}
			}
			return fmt.Errorf("generation %s: attempt %d: %w", run.ID, m.Attempt, err) // the queue retries it
		}
		reason := string(apperr.GenerationFailed) + ": the generation failed"
		if ae != nil {
			reason = string(ae.Code) + ": " + ae.Message
		}
		g.log.WarnContext(ctx, "generation failed", "run", run.ID, "tool", run.ToolName, "err", err)
		g.fail(ctx, job.ChannelID, job.AccountID, run, reason, usage)
		return nil
	}
	model := usage.Model
	done, err := run.Complete(Completion{Status: Success, Output: output, Model: &model,
		InputTokens: plus(run.InputTokens, usage.InputTokens), OutputTokens: plus(run.OutputTokens, usage.OutputTokens)})
	if err != nil {
		return nil // completed meanwhile by another delivery
	}
	if err := g.cfg.Runs.UpdateRun(ctx, job.ChannelID, done, version); err != nil {
		if apperr.CodeOf(err) == apperr.Conflict {
			return nil // another delivery completed it first, and emits for it
		}
		return err
	}
	return g.emit(ctx, job, done)
}

// execute runs the tool of a pending run and returns its response body, checked against the contract,
// and what its model calls cost: also when it fails, so a failed run keeps the tokens it was billed for
// (issue 19 item 4).
func (g *Generator) execute(ctx context.Context, job Job, tr ToolRun) (json.RawMessage, *Usage, error) {
	usage := &Usage{}
	body, err := g.executeWith(ctx, job, tr, usage)
	return body, usage, err
}

func (g *Generator) executeWith(ctx context.Context, job Job, tr ToolRun, usage *Usage) (json.RawMessage, error) {
	tool, ok := ToolNamed(tr.ToolName)
	if !ok {
		return nil, apperr.New(apperr.GenerationFailed, "no tool %q", tr.ToolName)
	}
	r := &run{id: tr.ID, channelID: job.ChannelID, tool: tool, transcript: job.Transcript, usage: usage}
	var (
		draft  json.RawMessage
		result any
		err    error
	)
	refineGen, refining := refineOf(job.Operation)
	if refining {
		result, err = g.refine(ctx, r, tr)
	} else {
		if r.in, err = tool.decode(tr.Input); err != nil {
			return nil, err
		}
		r.seriesID = seriesOf(r.in)
		if draft, err = tool.draft(ctx, g, r); err == nil {
			result, err = tool.finish(ctx, g, r, draft)
		}
	}
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	component := tool.Result
	if refining {
		component = refineGen.Result
	}
	// What the API returns matches the contract, whatever the model wrote.
	if _, err := contract.ValidateJSON(component, body); err != nil {
		return nil, &apperr.Error{Code: apperr.GenerationFailed, Message: "the generated " + component + " does not match the contract", Cause: err}
	}
	return body, nil
}

// refine applies feedback to a successful run: the model rewrites the original's draft, and the tool
// finishes it as it finished the original (grades, images, computed fields).
func (g *Generator) refine(ctx context.Context, r *run, refineRun ToolRun) (any, error) {
	var req contract.RefineRequest
	if err := json.Unmarshal(refineRun.Input, &req); err != nil {
		return nil, apperr.Invalid("body", "%v", err)
	}
	orig, _, err := g.cfg.Runs.GetRun(ctx, r.channelID, req.GenerationID)
	if err != nil {
		return nil, err
	}
	if r.in, err = r.tool.decode(orig.Input); err != nil {
		return nil, err
	}
	r.seriesID = seriesOf(r.in)
	task := r.tool.task(r.in)
	var draft json.RawMessage
	if err := g.write(ctx, r, Brief{Task: TaskRefine, OriginalTask: task, Original: orig.Output,
		Feedback: req.Feedback, SpecificItem: contract.Value(req.SpecificItem)}, &draft); err != nil {
		return nil, err
	}
	out, err := r.tool.finish(ctx, g, r, draft)
	if err != nil {
		return nil, err
	}
	output, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return contract.RefineResult{Output: output, OriginalGenerationID: orig.ID}, nil
}

func seriesOf(in any) string {
	switch x := in.(type) {
	case *contract.LongScriptRequest:
		return contract.Value(x.SeriesID)
	case *contract.ShortScriptRequest:
		return contract.Value(x.SeriesID)
	}
	return ""
}

// emit publishes a successful run's events: the tool's own and content.generated (decision 22). A
// failure returns an error so the queue delivers the job again, which then only emits.
func (g *Generator) emit(ctx context.Context, job Job, run ToolRun) error {
	if g.cfg.Emitter == nil {
		return nil
	}
	tool, _ := ToolNamed(run.ToolName)
	data := map[string]any{"generationId": run.ID, "toolName": run.ToolName, "input": run.Input, "output": run.Output}
	// titles.generated carries the titles with their grades and the formula, so a receiver needs no second
	// call (the events table's message template reads title, formula and grade).
	titlesData := data
	if run.ToolName == ToolTitles {
		var in struct{ Title, Type string }
		var out struct {
			Titles json.RawMessage `json:"titles"`
		}
		_ = json.Unmarshal(run.Input, &in)
		_ = json.Unmarshal(run.Output, &out)
		titlesData = map[string]any{"generationId": run.ID, "toolName": run.ToolName, "input": run.Input, "output": run.Output,
			"title": in.Title, "type": in.Type, "titles": out.Titles}
	}
	// The same job's events keep their ids when it is delivered again, so receivers get each once.
	ctx = webhooks.WithEventKey(ctx, run.ID)
	// A refinement emits content.generated only, not the refined tool's own event.
	if _, refining := refineOf(job.Operation); !refining && tool != nil && tool.Event != "" {
		if err := g.cfg.Emitter.Emit(ctx, job.ChannelID, tool.Event, titlesData); err != nil {
			return fmt.Errorf("generation: emit %s: %w", tool.Event, err)
		}
	}
	if err := g.cfg.Emitter.Emit(ctx, job.ChannelID, "content.generated", data); err != nil {
		return fmt.Errorf("generation: emit content.generated: %w", err)
	}
	return nil
}

// plus returns a pointer to prior (nil: 0) plus n.
func plus(prior *int, n int) *int {
	if prior != nil {
		n += *prior
	}
	return &n
}

// TokenMeter adds up the tokens an account's generations were billed for per month (store.Store; GET /me
// shows them). Optional: a QuotaStore that is one too is used.
type TokenMeter interface {
	AddGenerationTokens(ctx context.Context, accountID, month string, in, out int) error
}

// meter records what one attempt's model calls were billed for, whatever its outcome.
func (g *Generator) meter(ctx context.Context, accountID string, run ToolRun, u *Usage) {
	m, ok := g.cfg.Quota.(TokenMeter)
	if !ok || u == nil || u.Calls == 0 || accountID == "" {
		return
	}
	if err := m.AddGenerationTokens(context.WithoutCancel(ctx), accountID, run.GeneratedAt.UTC().Format("2006-01"), u.InputTokens, u.OutputTokens); err != nil {
		g.log.WarnContext(ctx, "recording a generation's tokens failed", "run", run.ID, "err", err)
	}
}
