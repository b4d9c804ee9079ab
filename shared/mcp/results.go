package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
)

// call runs operation opID with a tool's arguments and returns the REST response body and status.
func (s *server) call(ctx context.Context, p auth.Principal, opID string, arguments json.RawMessage) (json.RawMessage, int, error) {
	args, err := s.arguments(opID)
	if err != nil {
		return nil, 0, err
	}
	raw, err := args.Request(arguments)
	if err != nil {
		// Refused before the operation runs (and counts itself): counted here instead, a RATE_LIMIT first,
		// as REST counts a call before it validates it.
		if op := s.cfg.Contract.Operation(opID); op != nil {
			if lerr := s.take(ctx, p, op.RateGroup); lerr != nil {
				return nil, 0, lerr
			}
		}
		return nil, 0, err
	}
	res, err := s.ops.Invoke(ctx, p, opID, raw)
	if err != nil {
		return nil, 0, renameFields(args, err)
	}
	return res.Body, res.Status, nil
}

// callWith runs opID with arguments given as a Go value (the composite tools).
func (s *server) callWith(ctx context.Context, p auth.Principal, opID string, arguments any) (json.RawMessage, int, error) {
	raw, err := json.Marshal(arguments)
	if err != nil {
		return nil, 0, err
	}
	return s.call(ctx, p, opID, raw)
}

// arguments returns the arguments of opID, made on first use.
func (s *server) arguments(opID string) (*contract.Arguments, error) {
	s.argsMu.Lock()
	defer s.argsMu.Unlock()
	if a, ok := s.args[opID]; ok {
		return a, nil
	}
	op := s.cfg.Contract.Operation(opID)
	if op == nil {
		return nil, fmt.Errorf("mcp: no operation %s", opID)
	}
	a := op.Arguments(hiddenHeaders...)
	s.args[opID] = a
	return a, nil
}

// renameFields names a header parameter in err by its argument name (idempotencyKey, not
// Idempotency-Key), so the message names what the caller sent.
func renameFields(args *contract.Arguments, err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Field == "" {
		return err
	}
	arg := args.ArgumentName(e.Field)
	if arg == "" {
		return err
	}
	c := *e
	c.Message = arg + strings.TrimPrefix(e.Message, e.Field)
	c.Field = arg
	return &c
}

// success is a tool's result: the REST response as structuredContent (decision 35), a short summary, and
// the same JSON as text for clients that show only text content.
func success(body json.RawMessage, summary func(string) string) *sdk.CallToolResult {
	js := string(body) // the text block, and what the summary reads
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: summary(js)}}}
	if len(body) > 0 {
		res.StructuredContent = body
		res.Content = append(res.Content, &sdk.TextContent{Text: js})
	}
	return res
}

// isPending reports whether body is the 202 of a generation still running.
func isPending(body json.RawMessage) bool {
	_, pending := pendingGeneration(string(body))
	return pending
}

// pendingGeneration returns the generationId of a body that is the 202 of a generation still running.
func pendingGeneration(js string) (generationID string, pending bool) {
	f := gjson.GetMany(js, "status", "generationId")
	return f[1].Str, f[0].Str == "pending" && f[1].Exists()
}

func pendingText(generationID string) string {
	return fmt.Sprintf("Still generating (generationId %s, status pending). Its result will appear in "+
		"get_history; refine it with this generationId once it has finished.", generationID)
}

// failure is a tool error (decision 35): isError, the text starting with the REST error code, naming the
// field or the reason, never internals.
func failure(err error) *sdk.CallToolResult {
	e, ok := apperr.As(err)
	if !ok || e.Code == apperr.Internal {
		e = &apperr.Error{Code: apperr.Internal, Message: "internal error"}
	}
	text := string(e.Code) + ": " + e.Message
	if e.Code == apperr.RateLimit || e.Code == apperr.UsageLimit {
		if e.RetryAfter > 0 {
			text += fmt.Sprintf(" (retry after %d s)", e.RetryAfter)
		}
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// Summaries: one line a person or a model can read before the JSON.

// listSummary names how many items a list holds (its total, across pages) and the first titles.
func listSummary(field, noun string) func(string) string {
	return func(js string) string {
		var items, total gjson.Result
		gjson.Parse(js).ForEach(func(key, value gjson.Result) bool { // one pass (GetMany makes one per path)
			switch key.Str {
			case field:
				items = value
			case "total":
				total = value
			}
			return true
		})
		var titles []string
		n := 0
		items.ForEach(func(_, item gjson.Result) bool {
			n++
			if len(titles) == 5 {
				return !total.Exists()
			}
			t := cmp.Or(item.Get("title").Str, item.Get("name").Str)
			if t != "" {
				titles = append(titles, fmt.Sprintf("%q", t))
			}
			// Without a total, every item is counted; with one, five titles are enough.
			return len(titles) < 5 || !total.Exists()
		})
		if total.Exists() {
			n = int(total.Int())
		}
		s := plural(n, noun)
		if len(titles) > 0 {
			s += ": " + strings.Join(titles, ", ")
			if n > len(titles) {
				s += ", ..."
			}
		}
		return s + "."
	}
}

func plural(n int, noun string) string {
	if n == 1 || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func plainSummary(text string) func(string) string {
	return func(string) string { return text }
}

func generatedSummary(what string) func(string) string {
	return func(js string) string {
		if id, pending := pendingGeneration(js); pending {
			return pendingText(id)
		}
		return "Generated " + what + ". It is in get_history and can be improved with refine."
	}
}

func profileSummary(js string) string {
	focused := cmp.Or(gjson.Get(js, "focusedNiche").Str, gjson.Get(js, "broadNiche").Str)
	if focused == "" {
		return "The niche profile is empty: fill it in the app (or PUT /niche-profile) for personalised results."
	}
	return fmt.Sprintf("Niche profile: %s.", focused)
}

func scheduleSummary(js string) string {
	slots := gjson.Get(js, "slots").Array()
	assigned := 0
	for _, s := range slots {
		if s.Get("assignedVideoId").Str != "" {
			assigned++
		}
	}
	return fmt.Sprintf("Week of %s: %s, %d with a video assigned.", gjson.Get(js, "weekStart").Str,
		plural(len(slots), "slot"), assigned)
}

func videoSummary(verb string) func(string) string {
	return func(js string) string {
		return fmt.Sprintf("%s %q (%s, status %s).", verb, gjson.Get(js, "title").Str,
			gjson.Get(js, "contentType").Str, gjson.Get(js, "status").Str)
	}
}
