package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/videos"
)

type packageInput struct {
	Title       string `json:"title" jsonschema:"the video's working title"`
	ContentType string `json:"contentType" jsonschema:"Long or Short: which script to write"`
	Type        string `json:"type,omitempty" jsonschema:"the video's format (e.g. how-to, listicle, story); used by the tools that know it"`
	SeriesID    string `json:"seriesId,omitempty" jsonschema:"a series of the channel whose formula the script follows"`
}

type packageResult struct {
	Title       string `json:"title"`
	ContentType string `json:"contentType"`
	Parts       []part `json:"parts"`
}

// fullVideoPackage runs titles, the script, description, thumbnail strategy, hooks and CTAs at once.
func (s *server) fullVideoPackage(ctx context.Context, p auth.Principal, args json.RawMessage) (any, string, error) {
	var in packageInput
	if err := decode(args, &in); err != nil {
		return nil, "", err
	}
	parts := s.videoParts(ctx, p, in, true)
	return packageResult{Title: in.Title, ContentType: in.ContentType, Parts: parts},
		partsSummary(fmt.Sprintf("Package for %q", in.Title), parts), nil
}

// videoParts generates a video's pieces in parallel: titles, the script of its content type and a
// description, and with all, the thumbnail strategy, hooks and CTAs too.
func (s *server) videoParts(ctx context.Context, p auth.Principal, in packageInput, all bool) []part {
	scriptTool, scriptDefault := "generate_long_script", "how-to"
	if in.ContentType == "Short" {
		scriptTool, scriptDefault = "generate_short_script", "quick-tip"
	}
	script := map[string]any{"title": in.Title, "type": s.pickType(scriptTool, in.Type, scriptDefault)}
	if in.SeriesID != "" {
		script["seriesId"] = in.SeriesID
	}
	type job struct {
		tool string
		args map[string]any
	}
	jobs := []job{
		{"generate_titles", map[string]any{"title": in.Title,
			"type": s.pickType("generate_titles", in.Type, "how-to"), "videoType": in.ContentType}},
		{scriptTool, script},
		{"generate_description", map[string]any{"title": in.Title}},
	}
	if all {
		jobs = append(jobs,
			job{"generate_thumbnail_strategy", map[string]any{"title": in.Title,
				"type": s.pickType("generate_thumbnail_strategy", in.Type, "emotions")}},
			job{"generate_hooks", map[string]any{"title": in.Title}},
			job{"generate_ctas", map[string]any{}},
		)
	}
	parts := make([]part, len(jobs))
	fns := make([]func(), len(jobs))
	for i, j := range jobs {
		fns[i] = func() { parts[i] = s.runPart(ctx, p, j.tool, j.args) }
	}
	parallel(fns...)
	return parts
}

type batchVideo struct {
	VideoID     string `json:"videoId"`
	Title       string `json:"title"`
	ContentType string `json:"contentType"`
	Parts       []part `json:"parts,omitempty"`
	// Skipped says why the video got nothing.
	Skipped string `json:"skipped,omitempty"`
}

type weeklyBatchResult struct {
	WeekStart string       `json:"weekStart"`
	Videos    []batchVideo `json:"videos"`
}

// maxBatchVideos bounds the videos one weekly batch generates for (3 generations each).
const maxBatchVideos = 10

// weeklyBatch generates titles, script and description for each of the week's assigned videos without a
// script yet: still planned, and no script generated for its title.
func (s *server) weeklyBatch(ctx context.Context, p auth.Principal, args json.RawMessage) (any, string, error) {
	var in weekInput
	if err := decode(args, &in); err != nil {
		return nil, "", err
	}
	view, err := s.schedule(ctx, p, in.WeekStart)
	if err != nil {
		return nil, "", err
	}
	res := weeklyBatchResult{WeekStart: view.WeekStart, Videos: []batchVideo{}}
	seen := map[string]bool{}
	done := 0
	for _, sl := range view.Slots {
		if sl.AssignedVideoID == nil || seen[*sl.AssignedVideoID] {
			continue
		}
		seen[*sl.AssignedVideoID] = true
		v, err := s.cfg.Videos.Get(ctx, p.ChannelID, *sl.AssignedVideoID)
		if err != nil {
			continue // an assignment whose video is gone: nothing to write for
		}
		bv := batchVideo{VideoID: v.ID, Title: v.Title, ContentType: v.ContentType}
		switch {
		case v.Status != videos.Planned:
			bv.Skipped = "already " + string(v.Status)
		case v.ContentType != "Long" && v.ContentType != "Short":
			bv.Skipped = "no script tool for " + v.ContentType
		case s.hasScript(ctx, p, v.Title):
			bv.Skipped = "a script was already generated for this title"
		case done == maxBatchVideos:
			bv.Skipped = fmt.Sprintf("over the batch limit of %d videos: run the tool again", maxBatchVideos)
		default:
			bv.Parts = s.videoParts(ctx, p, packageInput{Title: v.Title, ContentType: v.ContentType,
				Type: v.FormulaType, SeriesID: contract.Value(v.SeriesID)}, false)
			done++
		}
		res.Videos = append(res.Videos, bv)
	}
	var all []part
	for _, v := range res.Videos {
		all = append(all, v.Parts...)
	}
	return res, fmt.Sprintf("Week of %s: %d of %d assigned videos got titles, a script and a description. %s",
		res.WeekStart, done, len(res.Videos), partsSummary("Generations", all)), nil
}

// hasScript reports whether a script generation succeeded for a video titled title.
func (s *server) hasScript(ctx context.Context, p auth.Principal, title string) bool {
	for _, tool := range []string{"long_scripts", "short_scripts"} {
		var h struct {
			History []json.RawMessage `json:"history"`
		}
		if s.read(ctx, p, "listHistory", map[string]any{"tool": tool, "search": clip(title, 200), "limit": 100}, &h) != nil {
			continue
		}
		for _, run := range h.History {
			if gjson.GetBytes(run, "status").Str == "success" && strings.EqualFold(gjson.GetBytes(run, "input.title").Str, title) {
				return true
			}
		}
	}
	return false
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

type batchInput struct {
	Tool  string           `json:"tool" jsonschema:"the generation tool to run, e.g. generate_titles"`
	Items []map[string]any `json:"items" jsonschema:"1 to 10 inputs, each an object of that tool's arguments"`
}

const maxBatchItems = 10

// batchTools are the tools batch_generate may run: the mirrored generations.
func batchToolNames() []any {
	var out []any
	for _, t := range mirroredTools {
		if t.kind == generate {
			out = append(out, t.name)
		}
	}
	return out
}

type batchResult struct {
	Tool    string `json:"tool"`
	Results []part `json:"results"`
}

// batchParallel bounds how many of a batch's generations run at once.
const batchParallel = 3

// batchGenerate runs one generation tool over several inputs, a few at a time; each input is validated
// and run as the tool itself would run it.
func (s *server) batchGenerate(ctx context.Context, p auth.Principal, args json.RawMessage) (any, string, error) {
	var in batchInput
	if err := decode(args, &in); err != nil {
		return nil, "", err
	}
	var tool *mirrored
	for i := range mirroredTools {
		if mirroredTools[i].name == in.Tool && mirroredTools[i].kind == generate {
			tool = &mirroredTools[i]
		}
	}
	if tool == nil {
		return nil, "", apperr.Invalid("tool", "must be one of the generation tools")
	}
	res := batchResult{Tool: in.Tool, Results: make([]part, len(in.Items))}
	sem := make(chan struct{}, batchParallel)
	var wg sync.WaitGroup
	for i, item := range in.Items {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			body, _, err := s.callWith(ctx, p, tool.op, item)
			if err != nil {
				res.Results[i] = part{Tool: tool.name, Status: "failed", Error: fmt.Sprintf("items[%d]: %s", i, errorText(err))}
				return
			}
			status := "success"
			if isPending(body) {
				status = "pending"
			}
			res.Results[i] = part{Tool: tool.name, Status: status, Result: body}
		})
	}
	wg.Wait()
	return res, partsSummary(fmt.Sprintf("Batch of %d %s", len(in.Items), in.Tool), res.Results), nil
}

// errorText is an error as a tool's text shows it: the REST code, then the message.
func errorText(err error) string {
	e, ok := apperr.As(err)
	if !ok || e.Code == apperr.Internal {
		return "INTERNAL: internal error"
	}
	return string(e.Code) + ": " + e.Message
}
