package generation

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/brief"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/research"
)

// DefaultPromptBudget is the default bound, in estimated tokens (Tokens), of one prompt: system prompt and
// user message together, whatever the channel holds.
const DefaultPromptBudget = 8000

// Limits of the parts of a prompt, in bytes, so one long record cannot starve the others.
const (
	maxPatternBytes = 3000
	maxRecentBytes  = 200
	maxRecent       = 10
	maxOutliers     = 10
	// transcriptShare is the part of the budget a transcript may take.
	transcriptShare = 0.6
)

// ChannelData is what the brief is assembled from.
type ChannelData interface {
	GetProfile(ctx context.Context, channelID string) (profile.NicheProfile, error) // NOT_FOUND when none
	ListNotes(ctx context.Context, channelID string) ([]notes.Note, error)          // newest first
	GetSeries(ctx context.Context, channelID, id string) (planning.Series, int64, error)
	GetPatterns(ctx context.Context, channelID string) (research.Patterns, error)
	RunPage(ctx context.Context, channelID, tool string, match func(Summary) bool, limit, offset int) ([]Stored, int, error)
}

// OutlierSource gives the niche's strongest research videos for a content kind (the research issue plugs
// it in; nil: none).
type OutlierSource interface {
	Outliers(ctx context.Context, channelID, kind string, n int) ([]Outlier, error)
}

// OwnResultsSource gives a connected channel's own best and worst reviewed videos (decision 45;
// ownperf.BriefSource); nil, or nil results: none.
type OwnResultsSource interface {
	OwnResults(ctx context.Context, channelID string) (*brief.OwnResults, error)
}

// Assembler writes briefs within the prompt budget.
type Assembler struct {
	Data     ChannelData
	Outliers OutlierSource
	Own      OwnResultsSource
	Budget   int // estimated tokens; DefaultPromptBudget when 0
	// Window is the model's context window in tokens (CSS_MODEL_CONTEXT_TOKENS; 0: not set): a prompt gets
	// at most what it leaves after the answer, when that is less than Budget.
	Window int
}

// noteOrder is the order notes are kept in when the budget is short: what the creator said about earlier
// output and how they write first.
var noteOrder = map[string]int{"feedback": 0, "style": 1, "preference": 2, "decision": 3, "insight": 4, "general": 5}

// kindOf maps a tool to the research pattern and outlier kind it learns from.
var kindOf = map[string]string{
	ToolTitles: "titles", ToolThumbnails: "thumbnails", ToolLongScripts: "longScripts", ToolShortScripts: "shortScripts",
	ToolDescriptions: "descriptions", ToolHooks: "longScripts", ToolClips: "shortScripts", ToolReoptimize: "titles",
	ToolCommunityPosts: "ideas", ToolIdeas: "ideas", ToolChannelOptimize: "titles", ToolPodcastPrep: "ideas",
	ToolNewsletter: "descriptions", ToolCTAs: "longScripts",
}

// wordsTools are the tools that write or fix a video's words: their brief keeps where the channel's own
// videos lost viewers (decision 53).
var wordsTools = map[string]bool{ToolLongScripts: true, ToolShortScripts: true, ToolHooks: true, ToolReoptimize: true}

// Assemble returns the brief of one model call of tool for the channel: base (task, input and the call's
// own material) completed with the channel's data, in priority order, as far as the budget allows.
func (a *Assembler) Assemble(ctx context.Context, channelID, tool string, seriesID string, base Brief) (*Brief, error) {
	limit := limitOf(a.Budget, a.Window)
	budget := limit.Tokens
	b, err := a.fixedParts(ctx, channelID, seriesID, base)
	if err != nil {
		return nil, err
	}
	// The call's material (a transcript, the texts to grade) gets its share of what the fixed parts leave,
	// and the rest goes to the channel; fixed parts that do not fit are a VALIDATION_ERROR naming the field
	// to shorten, which no retry mends (issue 19 item 5).
	if _, err := fitMaterial(tool, b, limit); err != nil {
		return nil, err
	}
	used, err := cost(b) // what the prompt renders, so a tool that shows no transcript pays for none
	if err != nil {
		return nil, err
	}
	if used > budget {
		return nil, overBudget(tool, b, used, limit)
	}
	left := budget - used

	// take adds a part when it fits, counting its rendered line and some framing.
	take := func(text string, framing int) bool {
		c := Tokens(text) + framing
		if c > left {
			return false
		}
		left -= c
		return true
	}

	// The channel's own results come before the research of other channels (decision 45).
	if a.Own != nil {
		own, err := a.Own.OwnResults(ctx, channelID)
		if err != nil {
			return nil, fmt.Errorf("generation: own results: %w", err)
		}
		if own != nil && kindOf[tool] != "titles" && own.TitlePatterns != nil {
			// The title patterns by CTR are for the tools that write titles (decision 52).
			o := *own
			o.TitlePatterns, own = nil, &o
		}
		if own != nil && own.LostViewers != nil && !wordsTools[tool] {
			cp := *own
			cp.LostViewers = nil
			own = &cp
		}
		if own != nil {
			raw, _ := json.Marshal(own)
			if take(string(raw), 24) {
				b.OwnResults = own
			}
		}
	}

	kind := kindOf[tool]
	pats, err := a.Data.GetPatterns(ctx, channelID)
	if err != nil {
		return nil, fmt.Errorf("generation: patterns: %w", err)
	}
	if pat := cut(patternFor(pats, kind), maxPatternBytes); pat != "" && take(pat, 12) {
		b.Patterns = pat
	}

	ns, err := a.Data.ListNotes(ctx, channelID)
	if err != nil {
		return nil, fmt.Errorf("generation: notes: %w", err)
	}
	ns = slices.Clone(ns)
	slices.SortStableFunc(ns, func(x, y notes.Note) int { return cmp.Compare(noteOrder[x.Category], noteOrder[y.Category]) })
	for _, n := range ns {
		if !take(n.Content+n.Category, 6) {
			break
		}
		b.Notes = append(b.Notes, BriefNote{Category: n.Category, Content: n.Content})
	}

	if a.Outliers != nil && kind != "" {
		outs, err := a.Outliers.Outliers(ctx, channelID, kind, maxOutliers)
		if err != nil {
			return nil, fmt.Errorf("generation: outliers: %w", err)
		}
		for _, o := range outs {
			if !take(o.Title, 12) {
				break
			}
			b.Outliers = append(b.Outliers, o)
		}
	}

	runs, _, err := a.Data.RunPage(ctx, channelID, tool, nil, maxRecent, 0)
	if err != nil {
		return nil, fmt.Errorf("generation: recent runs: %w", err)
	}
	for _, r := range runs {
		text := recentText(r)
		if text == "" {
			continue
		}
		if !take(text, 4) {
			break
		}
		b.Recent = append(b.Recent, text)
	}
	// The parts were counted one by one; the whole is what is bounded, so drop the least important parts
	// until it fits (rounding and framing make the sum and the whole differ by a few tokens).
	for {
		total, err := cost(b)
		if err != nil {
			return nil, err
		}
		switch {
		case total <= budget:
			return b, nil
		case len(b.Recent) > 0:
			b.Recent = b.Recent[:len(b.Recent)-1]
		case len(b.Outliers) > 0:
			b.Outliers = b.Outliers[:len(b.Outliers)-1]
		case len(b.Notes) > 0:
			b.Notes = b.Notes[:len(b.Notes)-1]
		case b.Patterns != "":
			b.Patterns = ""
		case b.OwnResults != nil:
			b.OwnResults = nil
		default:
			return nil, overBudget(tool, b, total, limit)
		}
	}
}

// fixedParts is base with the channel's profile, language and series: the parts a prompt cannot leave out.
func (a *Assembler) fixedParts(ctx context.Context, channelID, seriesID string, base Brief) (*Brief, error) {
	b := base
	p, err := a.Data.GetProfile(ctx, channelID)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return nil, fmt.Errorf("generation: profile: %w", err)
	}
	b.Profile = p
	b.Language = cmp.Or(p.ContentLanguage, profile.DefaultLanguage)
	if seriesID != "" {
		se, _, err := a.Data.GetSeries(ctx, channelID, seriesID)
		if err != nil {
			if apperr.CodeOf(err) == apperr.NotFound {
				return nil, apperr.NotFoundf("series %s not found", seriesID)
			}
			return nil, fmt.Errorf("generation: series: %w", err)
		}
		b.Series = &BriefSeries{Name: se.Name, Description: se.Description, ScriptFormula: se.ScriptFormula}
	}
	return &b, nil
}

// cost is the estimated tokens of a brief's rendered prompt.
func cost(b *Brief) (int, error) {
	sys, usr, err := Render(b)
	if err != nil {
		return 0, err
	}
	return Tokens(sys) + Tokens(usr), nil
}

func patternFor(p research.Patterns, kind string) string {
	switch kind {
	case "titles":
		return p.Titles
	case "thumbnails":
		return p.Thumbnails
	case "longScripts":
		return p.LongScripts
	case "shortScripts":
		return p.ShortScripts
	case "descriptions":
		return p.Descriptions
	case "ideas":
		return p.Ideas
	}
	return ""
}

// recentText is what a prompt is told of an earlier successful run: the start of its output's text.
func recentText(stored Stored) string {
	r := gjson.ParseBytes(stored)
	if r.Get("status").Str != string(Success) {
		return ""
	}
	out := r.Get("output")
	if !out.Exists() {
		return ""
	}
	return string(appendValues(nil, out, maxRecentBytes))
}

// inputJSON is the request body as a brief carries it.
func inputJSON(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("generation: input: %w", err)
	}
	return raw, nil
}
