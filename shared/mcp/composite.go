package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
)

// composite is a tool of decision 37: it combines operations, each run through Invoke (so every
// generation it starts is its own ToolRun, counted, rate-limited and emitted as over REST). Its input
// schema comes from its Go type.
type composite struct {
	name, title, description string
	kind                     kind
	openWorld                bool
	schema, output           func() (*jsonschema.Schema, error) // its arguments', its result's
	run                      func(s *server, ctx context.Context, p auth.Principal, args json.RawMessage) (any, string, error)
}

var compositeTools = []composite{
	{"plan_my_week", "Plan my week",
		"Propose pipeline or backlog videos for the week's empty publish slots and name the slots left empty; with apply, commit the backlog picks and write the assignments.",
		write, false, schemaOf[planWeekInput](nil), schemaOf[weekPlan](nil), (*server).planMyWeek},
	{"full_video_package", "Full video package",
		"Titles, the script, description, thumbnail strategy, hooks and CTAs for one video, generated in parallel (each its own history entry).",
		generate, false, schemaOf[packageInput](func(s *jsonschema.Schema) {
			s.Properties["contentType"].Enum = []any{"Long", "Short"}
			s.Properties["title"].MinLength, s.Properties["title"].MaxLength = ptr(1), ptr(200)
		}), schemaOf[packageResult](nil), (*server).fullVideoPackage},
	{"content_audit", "Content audit",
		"Pipeline balance, videos unchanged for 14 days, empty publish slots of the next two weeks, research age, the generation mix and, for a connected YouTube channel, its own best and worst reviewed videos, with recommendations.",
		read, false, schemaOf[struct{}](nil), schemaOf[audit](nil), (*server).contentAudit},
	{"weekly_content_batch", "Weekly content batch",
		"For each video assigned to the week's slots that has no script yet: titles, the script and a description.",
		generate, false, schemaOf[weekInput](nil), schemaOf[weeklyBatchResult](nil), (*server).weeklyBatch},
	{"niche_health_check", "Niche health check",
		"The niche score (a generation) plus research age and how well research covers the profile's keywords.",
		generate, false, schemaOf[contextInput](func(s *jsonschema.Schema) { s.Properties["context"].MaxLength = ptr(5000) }),
		schemaOf[healthCheck](nil), (*server).nicheHealthCheck},
	{"batch_generate", "Batch generate",
		"Run one generation tool over 1 to 10 inputs (each input is that tool's arguments).",
		// Open-world: an item may give a videoUrl to a tool that fetches its captions from YouTube.
		generate, true, schemaOf[batchInput](func(s *jsonschema.Schema) {
			s.Properties["tool"].Enum = batchToolNames()
			// A Go slice may be nil, so the derived type is ["null", "array"]; the items are required
			// (1 to 10), so an array it is.
			s.Properties["items"].Types, s.Properties["items"].Type = nil, "array"
			s.Properties["items"].MinItems, s.Properties["items"].MaxItems = ptr(1), ptr(maxBatchItems)
		}), schemaOf[batchResult](nil), (*server).batchGenerate},
	{"export_brief", "Export production brief",
		"A Markdown production brief of a committed video: its data, its series formula and the latest generations for its title.",
		read, false, schemaOf[exportInput](nil), schemaOf[brief](nil), (*server).exportBrief},
}

func ptr[T any](v T) *T { return &v }

// schemaOf derives a composite's input schema from its Go type, then lets edit add the bounds and enums
// a Go type cannot say.
func schemaOf[T any](edit func(*jsonschema.Schema)) func() (*jsonschema.Schema, error) {
	return func() (*jsonschema.Schema, error) {
		// A part's result is the body of the operation it ran (a mirrored tool's structuredContent), a JSON
		// object, not the bytes a json.RawMessage would be taken for.
		s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
			reflect.TypeFor[json.RawMessage](): {Type: "object"}}})
		if err != nil {
			return nil, err
		}
		if s.Properties == nil {
			s.Properties = map[string]*jsonschema.Schema{}
		}
		if edit != nil {
			edit(s)
		}
		return s, nil
	}
}

// compositeTool is c as published: the input schema from its Go type.
func compositeTool(c composite) (*sdk.Tool, error) {
	schema, err := c.schema()
	if err != nil {
		return nil, fmt.Errorf("mcp: tool %s: %w", c.name, err)
	}
	if _, err := schema.Resolve(nil); err != nil {
		return nil, fmt.Errorf("mcp: tool %s: %w", c.name, err)
	}
	out, err := c.output()
	if err != nil {
		return nil, fmt.Errorf("mcp: tool %s: %w", c.name, err)
	}
	// As a map, to be made portable as the mirrored tools' schemas are.
	var outMap map[string]any
	b, err := json.Marshal(out)
	if err == nil {
		err = json.Unmarshal(b, &outMap)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: tool %s: %w", c.name, err)
	}
	return &sdk.Tool{Name: c.name, Title: c.title, Description: c.description, InputSchema: schema,
		OutputSchema: portable(outMap), Annotations: c.kind.annotations(c.title, c.openWorld)}, nil
}

// composite is the handler of c, whose arguments are checked against its input schema as published
// (resolved on the tool's first call, not at start).
func (s *server) composite(c composite) sdk.ToolHandler {
	resolve := sync.OnceValues(func() (*jsonschema.Resolved, error) {
		published, err := s.published()
		if err != nil {
			return nil, err
		}
		for _, t := range published {
			if t.Name == c.name {
				var schema jsonschema.Schema
				if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
					return nil, fmt.Errorf("mcp: tool %s: %w", c.name, err)
				}
				return schema.Resolve(nil)
			}
		}
		return nil, fmt.Errorf("mcp: tool %s is not in tools.json", c.name)
	})
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p, ok := principal(req.Extra)
		if !ok {
			return failure(apperr.New(apperr.Unauthorized, "no API key")), nil
		}
		resolved, err := resolve()
		if err != nil {
			return failure(err), nil
		}
		args := req.Params.Arguments
		if err := validateArgs(resolved, args); err != nil {
			// Refused before any operation runs: one call in the group of reads, as REST would count it.
			if lerr := s.take(ctx, p, contract.RateOther); lerr != nil {
				return failure(lerr), nil
			}
			return failure(err), nil
		}
		out, text, err := c.run(s, ctx, p, args)
		if err != nil {
			return failure(err), nil
		}
		body, err := json.Marshal(out)
		if err != nil {
			return failure(err), nil
		}
		return success(body, plainSummary(text)), nil
	}
}

// validateArgs checks a composite's arguments against its schema; the error names the argument.
func validateArgs(schema *jsonschema.Resolved, args json.RawMessage) error {
	var v any = map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 && string(bytes.TrimSpace(args)) != "null" {
		if err := json.Unmarshal(args, &v); err != nil {
			return apperr.Invalid("arguments", "must be a JSON object")
		}
	}
	if err := schema.Validate(v); err != nil {
		return apperr.Invalid(schemaErrorField(err.Error()), "%s", schemaErrorReason(err.Error()))
	}
	return nil
}

// schemaErrorField names the argument a jsonschema-go error is about ("validating /properties/items:
// ..." is about items), "arguments" when it is about the whole object.
func schemaErrorField(msg string) string {
	field := "arguments"
	for rest := msg; ; {
		_, after, ok := strings.Cut(rest, "/properties/")
		if !ok {
			return field
		}
		name, tail, _ := strings.Cut(after, ":")
		field, _, _ = strings.Cut(name, "/")
		rest = tail
	}
}

// schemaErrorReason is the last clause of a jsonschema-go error, without the paths that led to it.
func schemaErrorReason(msg string) string {
	for {
		_, after, ok := strings.Cut(msg, "validating ")
		if !ok {
			return strings.TrimSpace(msg)
		}
		_, reason, ok := strings.Cut(after, ": ")
		if !ok {
			return strings.TrimSpace(msg)
		}
		msg = reason
	}
}

// decode reads a composite's arguments, already validated, into in.
func decode(args json.RawMessage, in any) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, in); err != nil {
		return apperr.Invalid("arguments", "%v", err)
	}
	return nil
}

// part is the outcome of one operation a composite ran: its response, or the error that stopped it.
type part struct {
	Tool   string          `json:"tool"`
	Status string          `json:"status"` // success, pending or failed
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// runPart runs one generation of a composite, as the mirrored tool named tool, and records its outcome;
// failures stay in the part, so one failed piece does not hide the others.
func (s *server) runPart(ctx context.Context, p auth.Principal, tool string, args any) part {
	body, _, err := s.callWith(ctx, p, mirroredOp(tool), args)
	if err != nil {
		return part{Tool: tool, Status: "failed", Error: errorText(err)}
	}
	status := "success"
	if isPending(body) {
		status = "pending"
	}
	return part{Tool: tool, Status: status, Result: body}
}

// parallel runs fns at once and waits for all.
func parallel(fns ...func()) {
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(f)
	}
	wg.Wait()
}

// partsSummary counts the parts by outcome.
func partsSummary(what string, parts []part) string {
	var ok, pending, failed []string
	for _, p := range parts {
		switch p.Status {
		case "success":
			ok = append(ok, p.Tool)
		case "pending":
			pending = append(pending, p.Tool)
		default:
			failed = append(failed, p.Tool+" ("+p.Error+")")
		}
	}
	s := fmt.Sprintf("%s: %d generated", what, len(ok))
	if len(pending) > 0 {
		s += fmt.Sprintf(", %d still running (see get_history): %s", len(pending), strings.Join(pending, ", "))
	}
	if len(failed) > 0 {
		s += fmt.Sprintf(", %d failed: %s", len(failed), strings.Join(failed, "; "))
	}
	return s + "."
}

// enumOf returns the enum of argument name of operation opID, from the contract.
func (s *server) enumOf(opID, name string) []string {
	args, err := s.arguments(opID)
	if err != nil {
		return nil
	}
	schema, err := args.Schema()
	if err != nil {
		return nil
	}
	props, _ := schema["properties"].(map[string]any)
	prop, _ := props[name].(map[string]any)
	var out []string
	for _, v := range asSlice(prop["enum"]) {
		if str, ok := v.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// pickType is the caller's type where the mirrored tool knows it, else the tool's default.
func (s *server) pickType(tool, given, fallback string) string {
	if given != "" && slices.Contains(s.enumOf(mirroredOp(tool), "type"), given) {
		return given
	}
	return fallback
}
