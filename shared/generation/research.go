package generation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/research"
)

// Research tasks: the analysis of a niche's strongest outliers, one task per content kind of
// ResearchPatterns, and the backlog ideas written from them (by research runs and POST /generate/ideas).
const (
	TaskPatternTitles       = "patterns_titles"
	TaskPatternThumbnails   = "patterns_thumbnails"
	TaskPatternLongScripts  = "patterns_long_scripts"
	TaskPatternShortScripts = "patterns_short_scripts"
	TaskPatternDescriptions = "patterns_descriptions"
	TaskPatternIdeas        = "patterns_ideas"
	TaskIdeas               = "ideas"
)

// PatternKind is a content kind of ResearchPatterns and the task that writes its text.
type PatternKind struct {
	Kind string // the ResearchPatterns field: titles, thumbnails, longScripts, shortScripts, descriptions, ideas
	Task string
}

// PatternKinds are the six kinds, in the contract's order.
var PatternKinds = []PatternKind{
	{"titles", TaskPatternTitles}, {"thumbnails", TaskPatternThumbnails}, {"longScripts", TaskPatternLongScripts},
	{"shortScripts", TaskPatternShortScripts}, {"descriptions", TaskPatternDescriptions}, {"ideas", TaskPatternIdeas},
}

// Bounds of the research tasks.
const (
	// MaxPatternChars bounds one pattern text: a few paragraphs that a generation prompt quotes whole.
	MaxPatternChars = research.MaxPatternChars
	// MaxIdeas is the most ideas one call writes: a research run adds at most 20, /generate/ideas asks for
	// 1..20 (decision 32).
	MaxIdeas = 20
	// MaxIdeaTitleChars: YouTube cuts a title at 100 characters.
	MaxIdeaTitleChars = 100
	// MaxFormulaChars bounds an idea's formulaType (a name: "listicle", "myth-buster", ...).
	MaxFormulaChars = 60
	// patternVideos is the most outliers one pattern call reads (fewer when the prompt budget is short).
	patternVideos = 40
	// ideaOutliers is the most outliers an idea call chooses from.
	ideaOutliers = 40
	// maxTakenBytes bounds the taken titles a prompt lists (the backlog holds up to 200); code drops a
	// repeated title whatever the model writes, so this only saves the model a wasted idea.
	maxTakenBytes = 4000
	// Description and tag bounds of a video as a pattern prompt shows it.
	promptDescriptionChars = 200
	promptTags             = 6
)

// IdeaDrafts is the answer of TaskIdeas.
type IdeaDrafts struct {
	Ideas []IdeaDraft `json:"ideas"`
}

// IdeaDraft is one idea as the model writes it. Outlier is the number of the outlier video
// (Brief.Outliers) that inspired it, when one did: code copies its title, URL and views, so the model
// never retypes them.
type IdeaDraft struct {
	Title       string `json:"title"`
	ContentType string `json:"contentType"`
	FormulaType string `json:"formulaType"`
	Outlier     *int   `json:"outlier,omitempty"`
}

// shaped are the tasks whose answer is a contract component reshaped: the pattern tasks one field of
// ResearchPatterns, required and bounded; TaskIdeas the fields of VideoIdea a model writes, in the formats
// IdeasRequest offers, with the outlier each draws on.
var shaped = map[string]func() (map[string]any, error){
	TaskPatternTitles:       patternSchema("titles"),
	TaskPatternThumbnails:   patternSchema("thumbnails"),
	TaskPatternLongScripts:  patternSchema("longScripts"),
	TaskPatternShortScripts: patternSchema("shortScripts"),
	TaskPatternDescriptions: patternSchema("descriptions"),
	TaskPatternIdeas:        patternSchema("ideas"),
	TaskIdeas:               ideasSchema,
}

func patternSchema(kind string) func() (map[string]any, error) {
	return func() (map[string]any, error) {
		s, err := contract.JSONSchema("ResearchPatterns")
		if err != nil {
			return nil, err
		}
		props, _ := s["properties"].(map[string]any)
		p, ok := props[kind].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("ResearchPatterns has no property %s", kind)
		}
		p["minLength"], p["maxLength"] = 1, MaxPatternChars
		s["properties"] = map[string]any{kind: p}
		s["required"] = []any{kind}
		s["additionalProperties"] = false
		return s, nil
	}
}

func ideasSchema() (map[string]any, error) {
	item, err := contract.JSONSchema("VideoIdea")
	if err != nil {
		return nil, err
	}
	req, err := contract.JSONSchema("IdeasRequest")
	if err != nil {
		return nil, err
	}
	delete(item, "$schema")
	for _, p := range []string{"id", "createdAt", "inspiredBy", "viewCount"} {
		if err := omit(item, []string{p}); err != nil {
			return nil, fmt.Errorf("VideoIdea: omit %s: %w", p, err)
		}
	}
	props := item["properties"].(map[string]any)
	title, _ := props["title"].(map[string]any)
	formula, _ := props["formulaType"].(map[string]any)
	asked, _ := req["properties"].(map[string]any)["contentType"].(map[string]any)
	if title == nil || formula == nil || asked == nil {
		return nil, errors.New("VideoIdea or IdeasRequest lost a property")
	}
	title["maxLength"] = MaxIdeaTitleChars
	formula["minLength"], formula["maxLength"] = 1, MaxFormulaChars
	props["contentType"] = map[string]any{"type": "string", "enum": asked["enum"]}
	// Optional, as the prompt says: it asks for it when outlier videos are listed, and to leave it out
	// when none are (checkIdeas holds it to the listed numbers).
	props["outlier"] = map[string]any{"type": "integer", "minimum": 0,
		"description": `the "n" of the outlier video that inspired the idea, as the outlier_videos block numbers them (from 0); left out when no outlier videos are listed`}
	item["additionalProperties"] = false
	return object(map[string]any{
		"ideas": map[string]any{"type": "array", "minItems": 1, "maxItems": MaxIdeas, "items": item},
	}, "ideas"), nil
}

// checkIdeas: each idea's outlier is one the prompt listed, and its format the one asked for.
func checkIdeas(b *Brief, answer json.RawMessage) []string {
	var d IdeaDrafts
	_ = json.Unmarshal(answer, &d)
	var out []string
	for i, idea := range d.Ideas {
		if o := idea.Outlier; o != nil && *o >= len(b.Outliers) {
			if len(b.Outliers) == 0 {
				out = append(out, fmt.Sprintf("ideas/%d/outlier: no outlier videos are listed; leave outlier out", i))
			} else {
				out = append(out, fmt.Sprintf("ideas/%d/outlier: %d is not the number of a listed outlier video (0 to %d)", i, *o, len(b.Outliers)-1))
			}
		}
		if b.ContentType != "" && idea.ContentType != b.ContentType {
			out = append(out, fmt.Sprintf("ideas/%d/contentType: every idea is a %s video", i, b.ContentType))
		}
	}
	return out
}

// errBadAnswer marks a GENERATION_FAILED whose cause is the answer, not the call: the model answered, but
// not in the schema, even after the repairs allowed.
var errBadAnswer = errors.New("the answer broke its schema")

// ResearchWriter writes research's pattern texts and backlog ideas with the writer model: one call per
// content kind (six, at once) and one for the ideas (with one repair turn), each prompt within the prompt
// budget. It implements research.PatternWriter and research.IdeaWriter. A kind whose answer breaks its
// schema, or ideas that do after their repair, are written by research.Statistics instead (logged), so a
// run never fails for one bad text; a failing model fails the step, which the research queue tries again
// (throttling as research.ErrThrottled, a minute later).
type ResearchWriter struct {
	Model   ai.Model
	Answers AnswerChecker // checks the model's answers against their schemas (schemacheck.New())
	Budget  int           // estimated tokens per prompt; DefaultPromptBudget when 0
	Window  int           // the model's context window in tokens (0: not set), as Assembler.Window
	Log     *slog.Logger
}

var (
	_ research.PatternWriter = (*ResearchWriter)(nil)
	_ research.IdeaWriter    = (*ResearchWriter)(nil)
)

func (w *ResearchWriter) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// WritePatterns implements research.PatternWriter: at most six model calls, none when there are no videos.
func (w *ResearchWriter) WritePatterns(ctx context.Context, in research.PatternInput) (research.Patterns, research.Usage, error) {
	var u Usage
	if len(in.Videos) == 0 {
		return research.Patterns{}, research.Usage{}, nil
	}
	texts := make([]string, len(PatternKinds))
	used := make([][]research.PatternSource, len(PatternKinds)) // the videos each prompt showed
	errs := make([]error, len(PatternKinds))
	var wg sync.WaitGroup
	for i, k := range PatternKinds {
		vs := kindVideos(in.Videos, k.Kind)
		if len(vs) == 0 {
			continue // nothing to learn from: no text rather than a guess
		}
		wg.Go(func() { texts[i], used[i], errs[i] = w.pattern(ctx, in, k, vs, &u) })
	}
	wg.Wait()
	var fallback research.Patterns
	for i, k := range PatternKinds {
		switch err := errs[i]; {
		case err == nil:
		case errors.Is(err, errBadAnswer):
			if fallback == (research.Patterns{}) {
				fallback, _, _ = research.Statistics{}.WritePatterns(ctx, in)
			}
			w.log().Warn("research: a pattern answer broke its schema; the statistics write it", "kind", k.Kind, "error", err.Error())
			texts[i] = patternFor(fallback, k.Kind)
			used[i] = research.SourcesOf(fallback, in.Videos).Of(k.Kind)
		default:
			return research.Patterns{}, usageOf(&u), researchError(err)
		}
	}
	pats := research.GuardPatterns(research.Patterns{Titles: texts[0], Thumbnails: texts[1], LongScripts: texts[2], ShortScripts: texts[3],
		Descriptions: texts[4], Ideas: texts[5]}, in.Videos)
	pats.Sources = research.SourcesFrom(pats, func(kind string) []research.PatternSource {
		for i, k := range PatternKinds {
			if k.Kind == kind {
				return used[i]
			}
		}
		return nil
	})
	return pats, usageOf(&u), nil
}

// kindVideos are the videos a kind learns from, strongest outliers first: Long videos for long scripts,
// Shorts for short scripts, all of them for the other kinds (research.KindVideos, whose strongest are the
// kind's stored sources).
func kindVideos(vs []research.Video, kind string) []research.Video {
	return research.KindVideos(vs, kind, patternVideos)
}

// pattern writes one kind's text: one call, no repair (six kinds, at most six calls).
// Its sources are the strongest of the videos the prompt showed (fewer than 40 when the budget is short).
func (w *ResearchWriter) pattern(ctx context.Context, in research.PatternInput, k PatternKind, vs []research.Video, u *Usage) (string, []research.PatternSource, error) {
	b := &Brief{Task: k.Task, Kind: k.Kind, Language: languageOf(in.Profile), Profile: in.Profile}
	all := make([]ResearchVideo, len(vs))
	for i, v := range vs {
		all[i] = researchVideo(v, k.Kind)
	}
	n, err := fit(limitOf(w.Budget, w.Window), len(all), func(n int) *Brief { b.Videos = all[:n]; return b })
	if err != nil {
		return "", nil, err
	}
	b.Videos = all[:n]
	var out map[string]string
	if err := askRepairs(ctx, w.Answers, w.Model, ai.Generation, b, u, checkPattern, &out, 0); err != nil {
		return "", nil, err
	}
	sources := make([]research.PatternSource, 0, min(n, research.MaxPatternSources))
	for _, v := range vs[:min(n, research.MaxPatternSources)] {
		sources = append(sources, research.SourceOf(v))
	}
	return strings.TrimSpace(out[k.Kind]), sources, nil
}

// checkPattern refuses a pattern text addressed to an assistant: the text was written from other
// creators' titles and descriptions, and generation prompts show it to every channel of the niche.
// (Its URLs other than the source videos' are gone already: briefURLs; WritePatterns guards the rest.)
func checkPattern(b *Brief, answer json.RawMessage) []string {
	var out map[string]string
	_ = json.Unmarshal(answer, &out)
	if research.AddressesAssistant(out[b.Kind]) {
		return []string{b.Kind + ": write about the videos only; no text addressed to an assistant"}
	}
	return nil
}

// researchVideo is a research video as the kind's prompt shows it: what the kind looks at, nothing more.
func researchVideo(v research.Video, kind string) ResearchVideo {
	r := ResearchVideo{Title: v.Title, URL: v.URL, Views: v.Views, Score: v.OutlierScore, ContentType: v.ContentType,
		Formula: research.FormulaOf(v.Title)}
	switch kind {
	case "thumbnails":
		r.Tags = v.Tags[:min(len(v.Tags), promptTags)]
	case "longScripts", "shortScripts":
		r.DurationSeconds, r.ViewsPerDay = v.DurationSeconds, v.ViewsPerDay
		r.Description = cutRunes(oneLine(v.Description), promptDescriptionChars)
	case "descriptions":
		r.Description = cutRunes(oneLine(v.Description), promptDescriptionChars)
		r.Tags = v.Tags[:min(len(v.Tags), promptTags)]
	case "ideas":
		r.ChannelTitle, r.ViewsPerDay = v.ChannelTitle, v.ViewsPerDay
	}
	return r
}

// WriteIdeas implements research.IdeaWriter: one model call (and one repair turn when its answer breaks
// the schema), the ideas inspired by in.Outliers, none repeating a taken title.
func (w *ResearchWriter) WriteIdeas(ctx context.Context, in research.IdeaInput) ([]research.IdeaDraft, research.Usage, error) {
	var u Usage
	count := min(in.Count, MaxIdeas)
	if count <= 0 {
		return nil, research.Usage{}, nil
	}
	outs := in.Outliers[:min(len(in.Outliers), ideaOutliers)]
	b := &Brief{Task: TaskIdeas, Language: languageOf(in.Profile), Profile: in.Profile, Count: count,
		Patterns: cut(in.Patterns.Ideas, maxPatternBytes)}
	all := make([]Outlier, len(outs))
	for i, v := range outs {
		all[i] = Outlier{Title: v.Title, URL: v.URL, Views: v.Views, Score: v.OutlierScore, ContentType: v.ContentType}
	}
	// The outliers first (they are what the ideas come from), then as many taken titles as still fit.
	n, err := fit(limitOf(w.Budget, w.Window), len(all), func(n int) *Brief { b.Outliers = all[:n]; return b })
	if err != nil {
		return nil, research.Usage{}, err
	}
	b.Outliers = all[:n]
	taken := takenForPrompt(in.Taken)
	k, err := fit(limitOf(w.Budget, w.Window), len(taken), func(k int) *Brief { b.Taken = taken[:k]; return b })
	if err != nil {
		return nil, research.Usage{}, err
	}
	b.Taken = taken[:k]
	var d IdeaDrafts
	if err := askRepairs(ctx, w.Answers, w.Model, ai.Generation, b, &u, checkIdeas, &d, 1); err != nil {
		if !errors.Is(err, errBadAnswer) {
			return nil, usageOf(&u), researchError(err)
		}
		w.log().Warn("research: the ideas answer broke its schema after a repair; the statistics write them", "error", err.Error())
		drafts, _, _ := research.Statistics{}.WriteIdeas(ctx, in)
		return drafts, usageOf(&u), nil
	}
	seen := map[string]bool{}
	for _, t := range in.Taken {
		seen[titleKey(t)] = true
	}
	var out []research.IdeaDraft
	for _, idea := range d.Ideas {
		title := strings.TrimSpace(idea.Title)
		if len(out) == count || seen[titleKey(title)] {
			continue
		}
		seen[titleKey(title)] = true
		draft := research.IdeaDraft{Title: title, ContentType: idea.ContentType, FormulaType: strings.TrimSpace(idea.FormulaType)}
		if idea.Outlier != nil && *idea.Outlier < len(outs) {
			draft.Inspiration = outs[*idea.Outlier]
		}
		out = append(out, draft)
	}
	return out, usageOf(&u), nil
}

// takenForPrompt keeps the taken titles a prompt lists within maxTakenBytes.
func takenForPrompt(taken []string) []string {
	out := make([]string, 0, len(taken))
	n := 0
	for _, t := range taken {
		if n += len(t) + 4; n > maxTakenBytes {
			break
		}
		out = append(out, t)
	}
	return out
}

func titleKey(t string) string { return strings.ToLower(strings.TrimSpace(t)) }

// fit returns the largest n ≤ max for which the brief set(n) returns renders within the budget (binary
// search: the cost grows with n). An error when even n = 0 is over it.
func fit(limit promptLimit, max int, set func(n int) *Brief) (int, error) {
	budget := limit.Tokens
	over := func(n int) (bool, error) {
		c, err := cost(set(n))
		return c > budget, err
	}
	if o, err := over(0); err != nil || o {
		if err == nil {
			err = fmt.Errorf("generation: %s: the prompt needs more than %s without any material", set(0).Task, limit)
		}
		return 0, err
	}
	if o, err := over(max); err != nil || !o { // all of it, the usual case: one render
		return max, err
	}
	lo, hi := 0, max-1 // lo fits; find the largest that does
	for lo < hi {
		mid := (lo + hi + 1) / 2
		o, err := over(mid)
		if err != nil {
			return 0, err
		}
		if o {
			hi = mid - 1
		} else {
			lo = mid
		}
	}
	return lo, nil
}

// researchError is a model failure as research's pipeline reads it: throttling is research.ErrThrottled
// (the step is tried again a minute later), anything else fails this attempt of the step.
func researchError(err error) error {
	if apperr.CodeOf(err) == apperr.RateLimit {
		return fmt.Errorf("%w: %w", research.ErrThrottled, err)
	}
	return err
}

func usageOf(u *Usage) research.Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return research.Usage{ModelCalls: u.Calls, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
}

func languageOf(p profile.NicheProfile) string {
	if p.ContentLanguage == "" {
		return profile.DefaultLanguage
	}
	return p.ContentLanguage
}

// oneLine folds a text's lines into one, so a description reads as one line of a prompt's list.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutRunes cuts s to at most n characters, marked when cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
