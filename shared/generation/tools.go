package generation

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
)

// Tool names as the history files them (HistoryTool in the API; niche scoring records ToolNicheScore):
// each is the x-css-tool of its operation in the contract, which binds the operation to the logic below.
const (
	ToolTitles          = "titles"
	ToolThumbnails      = "thumbnails"
	ToolLongScripts     = "long_scripts"
	ToolShortScripts    = "short_scripts"
	ToolDescriptions    = "descriptions"
	ToolReoptimize      = "reoptimize"
	ToolHooks           = "hooks"
	ToolCTAs            = "ctas"
	ToolPodcastPrep     = "podcast_prep"
	ToolNewsletter      = "newsletter"
	ToolClips           = "clips"
	ToolCommunityPosts  = "community_posts"
	ToolChannelOptimize = "channel_optimize"
	ToolIdeas           = "ideas"
	ToolNicheScore      = "niche_score"
	// ToolRefine rewrites a successful run of another tool (Generator.refine); the new run is filed under
	// that tool's name, so refine is no Tool of its own and has no history name.
	ToolRefine = "refine"
)

// Tool is one generation endpoint: its model calls (draft), what code adds to their answer (finish), and
// how the contract names its request and response. Name, Operation and Result come from the contract's
// registry (contract.Generations); the rest is the tool's logic (toolLogic).
type Tool struct {
	Name      string // history name
	Operation string // contract operation id
	Event     string // the tool's own event, beside content.generated ("" when none)
	Result    string // the contract component of its response
	// Transcript says whether the tool reads a video's words: "required" (clips, newsletter), "optional"
	// (chapters of a description, reoptimize) or "".
	Transcript string

	decode func(raw json.RawMessage) (any, error)
	logic
}

// logic is what code does for a tool, keyed by its name in toolLogic.
type logic struct {
	event, transcript string // Tool.Event, Tool.Transcript
	// task is the answer shape of the tool's draft (what refine asks for).
	task   func(in any) string
	draft  func(ctx context.Context, g *Generator, r *run) (json.RawMessage, error)
	finish func(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error)
}

// run is one generation in progress.
type run struct {
	id         string
	channelID  string
	tool       *Tool
	in         any // the typed request body
	seriesID   string
	transcript string
	usage      *Usage
	// videoTypes remembers, per draft title, the format it was written for.
	videoTypes []contract.GeneratedTitleVideoType
}

// brief assembles the brief of one call of the run.
func (g *Generator) brief(ctx context.Context, r *run, base Brief) (*Brief, error) {
	raw, err := inputJSON(r.in)
	if err != nil {
		return nil, err
	}
	base.Input = raw
	base.Transcript = cmp.Or(base.Transcript, r.transcript)
	return g.assembler.Assemble(ctx, r.channelID, r.tool.Name, r.seriesID, base)
}

// write makes one call of the writer model.
func (g *Generator) write(ctx context.Context, r *run, base Brief, out any) error {
	b, err := g.brief(ctx, r, base)
	if err != nil {
		return err
	}
	task := base.Task
	if task == TaskRefine {
		task = base.OriginalTask // a refinement answers to the original tool's rules too
	}
	return ask(ctx, g.cfg.Answers, g.models.Writer, ai.Generation, b, r.usage, checks[task], out)
}

// singleDraft is the draft of the tools that make one writer call of one task.
func singleDraft(task string) func(ctx context.Context, g *Generator, r *run) (json.RawMessage, error) {
	return func(ctx context.Context, g *Generator, r *run) (json.RawMessage, error) {
		var out json.RawMessage
		err := g.write(ctx, r, Brief{Task: task}, &out)
		return out, err
	}
}

func fixed(task string) func(any) string { return func(any) string { return task } }

// decoder reads a stored or queued body of gen's operation into its typed body.
func decoder(gen *contract.Generation) func(raw json.RawMessage) (any, error) {
	return func(raw json.RawMessage) (any, error) {
		v := gen.NewBody()
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, apperr.Invalid("body", "%v", err)
		}
		// The same rules as at the REST edge, whatever path the input took.
		if err := v.Validate(); err != nil {
			return nil, err
		}
		return v, nil
	}
}

// refineOf returns the registry's generation of operation when it runs the refine tool.
func refineOf(operation string) (*contract.Generation, bool) {
	gen, ok := contract.GenerationOf(operation)
	return gen, ok && gen.Tool == ToolRefine
}

var (
	toolsOnce sync.Once
	toolsByOp map[string]*Tool
	toolsByNm map[string]*Tool
)

// ToolFor returns the tool of a contract operation id.
func ToolFor(operation string) (*Tool, bool) {
	toolsOnce.Do(buildTools)
	t, ok := toolsByOp[operation]
	return t, ok
}

// ToolNamed returns the tool of a history name.
func ToolNamed(name string) (*Tool, bool) {
	toolsOnce.Do(buildTools)
	t, ok := toolsByNm[name]
	return t, ok
}

// AllTools lists every tool.
func AllTools() []*Tool {
	toolsOnce.Do(buildTools)
	return slices.SortedFunc(maps.Values(toolsByOp), func(a, b *Tool) int { return strings.Compare(a.Operation, b.Operation) })
}

// toolLogic is the code of every tool, by history name. A name the registry does not know, or a registry
// tool without logic, fails TestToolsFollowTheRegistry.
var toolLogic = map[string]logic{
	ToolTitles:         {event: "titles.generated", task: fixed(TaskTitles), draft: draftTitles, finish: finishTitles},
	ToolLongScripts:    {event: "script.generated", task: fixed(TaskLongScript), draft: singleDraft(TaskLongScript), finish: finishScript},
	ToolShortScripts:   {event: "script.generated", task: fixed(TaskShortScript), draft: singleDraft(TaskShortScript), finish: finishScript},
	ToolDescriptions:   {event: "description.generated", transcript: "optional", task: fixed(TaskDescription), draft: singleDraft(TaskDescription), finish: finishDescription},
	ToolThumbnails:     {event: "thumbnail.strategy", task: fixed(TaskThumbnail), draft: singleDraft(TaskThumbnail), finish: finishThumbnail},
	ToolHooks:          {task: fixed(TaskHooks), draft: singleDraft(TaskHooks), finish: finishHooks},
	ToolCTAs:           {task: fixed(TaskCTAs), draft: singleDraft(TaskCTAs), finish: finishCTAs},
	ToolPodcastPrep:    {task: fixed(TaskPodcastPrep), draft: singleDraft(TaskPodcastPrep), finish: passThrough[contract.PodcastPrep]},
	ToolNewsletter:     {transcript: "required", task: fixed(TaskNewsletter), draft: singleDraft(TaskNewsletter), finish: finishNewsletter},
	ToolClips:          {transcript: "required", task: fixed(TaskClips), draft: singleDraft(TaskClips), finish: finishClips},
	ToolCommunityPosts: {task: fixed(TaskCommunityPosts), draft: singleDraft(TaskCommunityPosts), finish: passThrough[contract.CommunityPostsResult]},
	ToolChannelOptimize: {task: channelTask, finish: finishChannel,
		draft: func(ctx context.Context, g *Generator, r *run) (json.RawMessage, error) {
			return singleDraft(channelTask(r.in))(ctx, g, r)
		}},
	ToolReoptimize: {transcript: "optional", task: fixed(TaskReoptimize), draft: singleDraft(TaskReoptimize), finish: finishReoptimize},
	ToolIdeas:      {task: fixed(TaskIdeas), draft: draftIdeas, finish: finishIdeas},
	ToolNicheScore: {task: fixed(TaskNicheScore), draft: singleDraft(TaskNicheScore), finish: finishNicheScore},
}

// buildTools joins each generation of the contract's registry to its logic.
func buildTools() {
	toolsByOp, toolsByNm = map[string]*Tool{}, map[string]*Tool{}
	for _, gen := range contract.Generations() {
		l, ok := toolLogic[gen.Tool]
		if !ok { // refine, which rewrites another tool's run; or a tool without logic (the test fails)
			continue
		}
		t := &Tool{Name: gen.Tool, Operation: gen.Operation, Result: gen.Result, Event: l.event, Transcript: l.transcript,
			decode: decoder(gen), logic: l}
		toolsByOp[t.Operation], toolsByNm[t.Name] = t, t
	}
}

func channelTask(in any) string {
	switch in.(*contract.ChannelOptimizeRequest).Type {
	case "playlists":
		return TaskChannelPlaylists
	case "banner":
		return TaskChannelBanner
	}
	return TaskChannelDescription
}

// Titles: one writer call per asked video type, in parallel; then one batched grading call.

func draftTitles(ctx context.Context, g *Generator, r *run) (json.RawMessage, error) {
	types := askedTypes(r.in.(*contract.TitlesRequest))
	drafts := make([]TitleDraft, len(types))
	errs := make([]error, len(types))
	var wg sync.WaitGroup
	for i, vt := range types {
		wg.Go(func() { errs[i] = g.write(ctx, r, Brief{Task: TaskTitles, VideoType: string(vt)}, &drafts[i]) })
	}
	wg.Wait()
	var merged TitleDraft
	seen := map[string]bool{}
	for i, d := range drafts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		for _, t := range d.Titles {
			key := strings.ToLower(strings.TrimSpace(t.Title))
			if seen[key] {
				continue
			}
			seen[key] = true
			merged.Titles = append(merged.Titles, t)
			r.videoTypes = append(r.videoTypes, types[i])
		}
	}
	return json.Marshal(merged)
}

// askedTypes are the formats titles are written for: the one asked, or Long and Short for Both (the
// default).
func askedTypes(in *contract.TitlesRequest) []contract.GeneratedTitleVideoType {
	if vt := contract.Value(in.VideoType); vt != "" && vt != contract.TitlesRequestVideoTypeBoth {
		return []contract.GeneratedTitleVideoType{contract.GeneratedTitleVideoType(vt)}
	}
	return []contract.GeneratedTitleVideoType{contract.GeneratedTitleVideoTypeLong, contract.GeneratedTitleVideoTypeShort}
}

// gradeTitles grades titles in one call of the grading model and adds the rules computed in code.
func (g *Generator) gradeTitles(ctx context.Context, r *run, titles []string, videoTypes []contract.GeneratedTitleVideoType) ([]contract.GeneratedTitle, error) {
	b, err := g.brief(ctx, r, Brief{Task: TaskGradeTitles, Items: titles})
	if err != nil {
		return nil, err
	}
	var grades TitleGrades
	if err := ask(ctx, g.cfg.Answers, g.models.Grader, ai.Grading, b, r.usage, checks[TaskGradeTitles], &grades); err != nil {
		return nil, err
	}
	byIndex := map[int]TitleGrade{}
	for _, gr := range grades.Grades {
		byIndex[gr.Index] = gr
	}
	out := make([]contract.GeneratedTitle, len(titles))
	for i, t := range titles {
		gr := byIndex[i]
		rules, broken := TitleRules(t, videoTypes[i])
		d := contract.TitleDimensions{NicheRelevance: &gr.NicheRelevance, ResearchAlignment: &gr.ResearchAlignment,
			RulesCompliance: &rules, HookStrength: &gr.HookStrength, BrandVoice: &gr.BrandVoice}
		feedback := gr.Feedback
		if len(broken) > 0 {
			feedback = strings.TrimSpace(feedback + " Rules: " + strings.Join(broken, ", ") + ".")
		}
		score, videoType := TitleScore(d), videoTypes[i]
		out[i] = contract.GeneratedTitle{Title: t, Grade: Letter(score), Score: &score, Feedback: nonEmpty(feedback),
			VideoType: &videoType, Dimensions: &d}
	}
	return out, nil
}

// nonEmpty is s, or nil (the member left out) when s is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func finishTitles(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error) {
	in := r.in.(*contract.TitlesRequest)
	d, err := decodeDraft[TitleDraft](draft)
	if err != nil {
		return nil, err
	}
	titles := make([]string, len(d.Titles))
	for i, t := range d.Titles {
		titles[i] = t.Title
	}
	types := r.videoTypes
	if len(types) != len(titles) { // a refined draft: one format, the first asked
		types = slices.Repeat(askedTypes(in)[:1], len(titles))
	}
	graded, err := g.gradeTitles(ctx, r, titles, types)
	if err != nil {
		return nil, err
	}
	kept := FilterTitles(graded, contract.Value(in.Count))
	return contract.TitlesResult{Titles: kept, Generated: len(graded), Filtered: len(kept)}, nil
}

// decodeDraft reads a model's answer, which its task's schema has accepted, into the response type it
// becomes; code then fills in what it computes.
func decodeDraft[T any](draft json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(draft, &v); err != nil {
		return v, &apperr.Error{Code: apperr.GenerationFailed, Message: "the model's answer could not be read", Cause: fmt.Errorf("%w: %w", errBadAnswer, err)}
	}
	return v, nil
}

// Scripts and descriptions: graded by the grading model.

// SpokenWordsPerMinute is the speaking rate durations are estimated at.
const SpokenWordsPerMinute = 150

func (g *Generator) gradeContent(ctx context.Context, r *run, what, text string) (ContentGrade, error) {
	b, err := g.brief(ctx, r, Brief{Task: TaskGradeContent, GradedTool: what, Items: []string{text}})
	if err != nil {
		return ContentGrade{}, err
	}
	var cg ContentGrade
	err = ask(ctx, g.cfg.Answers, g.models.Grader, ai.Grading, b, r.usage, nil, &cg)
	cg.Score = math.Round(cg.Score*10) / 10
	return cg, err
}

func finishScript(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.GeneratedScript](draft)
	if err != nil {
		return nil, err
	}
	words := SpokenWords(d.Script)
	cg, err := g.gradeContent(ctx, r, strings.ReplaceAll(r.tool.Name, "_", " "), d.Script)
	if err != nil {
		return nil, err
	}
	secs := int(math.Round(float64(words) * 60 / SpokenWordsPerMinute))
	duration := fmt.Sprintf("%d:%02d", min(secs/60, 99), secs%60)
	d.Grade, d.Score, d.Feedback, d.WordCount, d.EstimatedDuration = Letter(cg.Score), &cg.Score, &cg.Feedback, &words, &duration
	return d, nil
}

// SpokenWords counts the words of a script a presenter says: production cues ([B-ROLL: …], [GRAPHIC: …],
// [VISUAL: …]) are not spoken.
func SpokenWords(script string) int {
	n, depth := 0, 0
	for _, f := range strings.Fields(script) {
		opens, closes := strings.Count(f, "["), strings.Count(f, "]")
		if depth == 0 && opens == 0 {
			n++
		}
		depth = max(depth+opens-closes, 0)
	}
	return n
}

func finishDescription(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.GeneratedDescription](draft)
	if err != nil {
		return nil, err
	}
	cg, err := g.gradeContent(ctx, r, "video description", d.Description+"\n\n"+contract.Value(d.FAQSection))
	if err != nil {
		return nil, err
	}
	grade := Letter(cg.Score)
	d.Grade = &grade
	return d, nil
}

func finishNewsletter(_ context.Context, _ *Generator, _ *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.Newsletter](draft)
	if err != nil {
		return nil, err
	}
	// Reading speed of an email: about 200 words a minute; to the half minute, at least half a minute.
	minutes := max(math.Round(float64(len(strings.Fields(d.BodyText)))/200*2)/2, 0.5)
	d.EstimatedReadTime = &minutes
	return d, nil
}

// passThrough finishes a tool whose response is its draft, read into the response type T.
func passThrough[T any](_ context.Context, _ *Generator, _ *run, draft json.RawMessage) (any, error) {
	return decodeDraft[T](draft)
}

// Hooks and CTAs come in the order of their enum (the checks made sure there is exactly one of each).

func finishHooks(_ context.Context, _ *Generator, _ *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.HooksResult](draft)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(d.Hooks, func(a, b contract.Hook) int {
		return slices.Index(hookApproaches, a.Approach) - slices.Index(hookApproaches, b.Approach)
	})
	return d, nil
}

func finishCTAs(_ context.Context, _ *Generator, _ *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.CTAsResult](draft)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(d.CTAs, func(a, b contract.CTA) int {
		return slices.Index(ctaSlots, a.SlotPosition) - slices.Index(ctaSlots, b.SlotPosition)
	})
	return d, nil
}

func finishClips(_ context.Context, _ *Generator, _ *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.ClipsResult](draft)
	if err != nil {
		return nil, err
	}
	for i := range d.Clips {
		c := &d.Clips[i]
		start, _ := parseHMS(c.StartTime)
		end, _ := parseHMS(c.EndTime)
		secs := end - start
		duration := fmt.Sprintf("%02d:%02d", min(secs/60, 99), secs%60)
		c.Duration = &duration
	}
	return d, nil
}

// Images: the thumbnail and the banner are drawn by the image model and stored; the response carries the
// URL.

// bannerSafeZones is the contract's safeZones of a banner.
func bannerSafeZones() *contract.BannerStrategySafeZones {
	z := ai.BannerSafeZones(ai.BannerWidth, ai.BannerHeight)
	zone := func(z ai.Zone) *contract.SafeZone {
		return &contract.SafeZone{X: z.X, Y: z.Y, Width: z.Width, Height: z.Height}
	}
	return &contract.BannerStrategySafeZones{TV: zone(z.TV), Desktop: zone(z.Desktop), Mobile: zone(z.Mobile)}
}

func (g *Generator) picture(ctx context.Context, r *run, task, prompt string, w, h int, palette []string, text string) (string, error) {
	if g.models.Images == nil || g.images == nil {
		return "", &apperr.Error{Code: apperr.GenerationFailed, Message: "no image model is configured"}
	}
	img, err := g.models.Images.Image(ctx, ai.ImageRequest{Task: task, Prompt: prompt, Width: w, Height: h, Palette: palette, Text: text})
	if err != nil {
		return "", modelError(ctx, err)
	}
	key, err := ai.NewImageKey(r.channelID, img.ContentType)
	if err != nil {
		return "", &apperr.Error{Code: apperr.GenerationFailed, Message: "the image model answered an unusable picture", Cause: err}
	}
	url, err := g.images.Put(ctx, key, img)
	if err != nil {
		return "", &apperr.Error{Code: apperr.GenerationFailed, Message: "the image could not be stored", Cause: err}
	}
	return url, nil
}

func finishThumbnail(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.ThumbnailStrategy](draft)
	if err != nil {
		return nil, err
	}
	in := r.in.(*contract.ThumbnailRequest)
	if err := g.thumbnail(ctx, r, &d, in.Title); err != nil {
		return nil, err
	}
	return d, nil
}

// thumbnail grades a thumbnail strategy, draws its picture and fills in both.
func (g *Generator) thumbnail(ctx context.Context, r *run, d *contract.ThumbnailStrategy, title string) error {
	concept, overlay := contract.Value(d.DesignConcept), contract.Value(d.TextOverlay)
	cg, err := g.gradeContent(ctx, r, "thumbnail strategy", fmt.Sprintf("Title: %s\nStrategy: %s\nConcept: %s\nText overlay: %s", title, d.Strategy, concept, overlay))
	if err != nil {
		return err
	}
	url, err := g.picture(ctx, r, "thumbnail", concept+"\n"+d.Strategy, ai.ThumbnailWidth, ai.ThumbnailHeight, d.ColorPalette, overlay)
	if err != nil {
		return err
	}
	grade := Letter(cg.Score)
	d.ImageURL, d.Grade = url, &grade
	return nil
}

func finishChannel(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error) {
	switch channelTask(r.in) {
	case TaskChannelPlaylists:
		d, err := decodeDraft[contract.PlaylistSuggestion](draft)
		return contract.ChannelOptimizeResult{PlaylistSuggestion: &d}, err
	case TaskChannelBanner:
		d, err := decodeDraft[contract.BannerStrategy](draft)
		if err != nil {
			return nil, err
		}
		url, err := g.picture(ctx, r, "banner", d.Strategy, ai.BannerWidth, ai.BannerHeight, nil, "")
		if err != nil {
			return nil, err
		}
		d.ImageURL, d.SafeZones = url, bannerSafeZones()
		return contract.ChannelOptimizeResult{BannerStrategy: &d}, nil
	}
	d, err := decodeDraft[contract.ChannelDescription](draft)
	return contract.ChannelOptimizeResult{ChannelDescription: &d}, err
}

func finishReoptimize(ctx context.Context, g *Generator, r *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.ReoptimizeResult](draft)
	if err != nil {
		return nil, err
	}
	titles := make([]string, len(d.Titles))
	for i, t := range d.Titles {
		titles[i] = t.Title
	}
	d.Titles = []contract.GeneratedTitle{}
	first := ""
	if len(titles) > 0 {
		first = titles[0]
		long := slices.Repeat([]contract.GeneratedTitleVideoType{contract.GeneratedTitleVideoTypeLong}, len(titles))
		if d.Titles, err = g.gradeTitles(ctx, r, titles, long); err != nil {
			return nil, err
		}
	}
	if err := g.thumbnail(ctx, r, &d.Thumbnail, first); err != nil {
		return nil, err
	}
	return d, nil
}

// NicheDimensions are the five dimensions of the niche score, in the order they are reported.
var NicheDimensions = []contract.NicheDimensionName{
	contract.NicheDimensionNameNicheClarity, contract.NicheDimensionNameBrandIdentity,
	contract.NicheDimensionNameAudienceUnderstanding, contract.NicheDimensionNameCompetitiveEdge,
	contract.NicheDimensionNameMonetizationReadiness,
}

func finishNicheScore(_ context.Context, _ *Generator, _ *run, draft json.RawMessage) (any, error) {
	d, err := decodeDraft[contract.NicheScore](draft)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(d.Dimensions, func(a, b contract.NicheDimension) int {
		return slices.Index(NicheDimensions, a.Name) - slices.Index(NicheDimensions, b.Name)
	})
	sum := 0.0
	for _, x := range d.Dimensions {
		sum += x.Score
	}
	d.OverallScore = math.Round(sum/float64(len(NicheDimensions))*10*10) / 10 // decision 21
	grade := Letter(d.OverallScore)
	d.LetterGrade = &grade
	return d, nil
}
