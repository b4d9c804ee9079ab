package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
)

// kind sets a tool's annotations truthfully.
type kind int

const (
	read     kind = iota // reads only
	generate             // a generation: writes history, counts in the quota, calls a model
	write                // adds or changes data, nothing lost
	replace              // may overwrite data (idempotent)
	remove               // deletes (idempotent: a second call changes nothing more)
)

// annotations states all four hints, none left to its default (directories refuse a tool whose
// destructiveHint is implicit). openWorld: the tool may reach a system outside the service (README).
func (k kind) annotations(title string, openWorld bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: k == read,
		DestructiveHint: ptr(k == replace || k == remove),
		IdempotentHint:  k == read || k == replace || k == remove, OpenWorldHint: ptr(openWorld)}
}

// openWorld are the mirrored tools that may reach YouTube while they run: a videoUrl of the channel's own
// video has its captions fetched as the transcript (decision 41). TestOpenWorldToolsFetchTranscripts
// holds the list to the generation tools that fetch one.
var openWorld = map[string]bool{"generate_description": true, "analyze_clips": true,
	"generate_newsletter": true, "reoptimize": true}

// mirrored is a tool that runs one REST operation (decision 36).
type mirrored struct {
	name, op, title, description string
	kind                         kind
	summary                      func(js string) string
}

// hiddenHeaders are parameters an MCP caller never gives: the channel comes from the key (decision 34),
// and a tool waits for its generation as a REST call without Prefer does.
var hiddenHeaders = []string{"X-Channel-Id", "Prefer"}

// mirroredTools are the contract's mirrors (x-css-mcp in openapi.yaml), in the order the tool list
// publishes them.
var mirroredTools = mirrorsOf(contract.Mirrors())

// kinds maps a mirror's kind in the contract to its annotations' kind.
var kinds = map[contract.MirrorKind]kind{
	contract.MirrorRead: read, contract.MirrorGenerate: generate, contract.MirrorWrite: write,
	contract.MirrorReplace: replace, contract.MirrorRemove: remove,
}

// summaryOf returns the summary function a mirror's summary style names (nil for an unknown style, which
// the generator refuses and TestMirrorsFollowTheRegistry catches).
func summaryOf(s contract.MirrorSummary) func(js string) string {
	switch s.Style {
	case "profile":
		return profileSummary
	case "schedule":
		return scheduleSummary
	case "list":
		return listSummary(s.Arg, s.Noun)
	case "generated":
		return generatedSummary(s.Arg)
	case "text":
		return plainSummary(s.Arg)
	case "video":
		return videoSummary(s.Arg)
	}
	return nil
}

// mirroredOps maps a mirrored tool's name to its operation, for the composites that run mirrored tools.
var mirroredOps = func() map[string]string {
	ops := make(map[string]string, len(mirroredTools))
	for _, t := range mirroredTools {
		ops[t.name] = t.op
	}
	return ops
}()

// mirroredOp is the operation of the mirrored tool name ("" for none, which no operation has).
func mirroredOp(name string) string { return mirroredOps[name] }

func mirrorsOf(ms []*contract.Mirror) []mirrored {
	out := make([]mirrored, len(ms))
	for i, m := range ms {
		out[i] = mirrored{name: m.Name, op: m.Operation, title: m.Title, description: m.Description,
			kind: kinds[m.Kind], summary: summaryOf(m.Summary)}
	}
	return out
}

// mirroredTool is t as published: its operation's arguments as input schema.
func mirroredTool(c *contract.Contract, t mirrored) (*sdk.Tool, error) {
	op := c.Operation(t.op)
	if op == nil {
		return nil, fmt.Errorf("mcp: tool %s: no operation %s in the contract", t.name, t.op)
	}
	schema, err := op.Arguments(hiddenHeaders...).Schema()
	if err != nil {
		return nil, fmt.Errorf("mcp: tool %s: %w", t.name, err)
	}
	tool := &sdk.Tool{Name: t.name, Title: t.title, Description: t.description,
		InputSchema: schema, Annotations: t.kind.annotations(t.title, openWorld[t.name])}
	// structuredContent is the operation's success body (decision 35); an operation answering 204 has
	// none, so its tool has no output schema (a tool with one must return structuredContent).
	out, err := contract.ResponseSchema(t.op)
	if err != nil {
		return nil, fmt.Errorf("mcp: tool %s: %w", t.name, err)
	}
	if out != nil {
		// MCP wants an object schema. Every body of the contract is an object, but an allOf of objects
		// (ResearchInsights) does not say so itself; the answers are checked against it
		// (TestEveryToolWorks).
		if _, typed := out["type"]; !typed {
			out["type"] = "object"
		}
		tool.OutputSchema = out
	}
	return tool, nil
}

// mirror is the handler of a mirrored tool.
func (s *server) mirror(t mirrored) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p, ok := principal(req.Extra)
		if !ok {
			return failure(apperr.New(apperr.Unauthorized, "no API key")), nil
		}
		body, _, err := s.call(ctx, p, t.op, req.Params.Arguments)
		if err != nil {
			return failure(err), nil
		}
		return success(body, t.summary), nil
	}
}
