package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/videos"
)

// staleAfter is how long a video may stay in one status before the audit calls it stuck (decision 37).
const staleAfter = 14 * 24 * time.Hour

// researchFreshDays is the age after which research counts as stale (decision 33's default).
const researchFreshDays = 7

type staleVideo struct {
	VideoID       string `json:"videoId"`
	Title         string `json:"title"`
	Status        string `json:"status"`
	DaysUnchanged int    `json:"daysUnchanged"`
}

type researchAge struct {
	Status     string     `json:"status"` // never, or the last run's status
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	AgeDays    *int       `json:"ageDays,omitempty"`
	Source     string     `json:"source,omitempty"`
	VideoCount int        `json:"videoCount"`
	Stale      bool       `json:"stale"`
	// What the run spent of YouTube's quota, bucket by bucket (decision 47).
	UnitsSpent       int `json:"unitsSpent"`
	SearchCallsSpent int `json:"searchCallsSpent"`
	StatsCallsSpent  int `json:"statsCallsSpent"`
}

type audit struct {
	Pipeline        map[string]int `json:"pipeline"`
	BacklogIdeas    int            `json:"backlogIdeas"`
	StaleVideos     []staleVideo   `json:"staleVideos"`
	EmptySlots      []slotRef      `json:"emptyPublishSlots"`
	Research        researchAge    `json:"research"`
	GenerationMix   map[string]int `json:"generationMix"`
	OwnResults      *ownResults    `json:"ownResults,omitempty"`
	Recommendations []string       `json:"recommendations"`
}

// ownResults is how the channel's own linked and reviewed videos did (decisions 44–45): present once
// a video is linked to its upload.
type ownResults struct {
	Linked   int        `json:"linked"`   // pipeline videos linked to an upload
	Unlinked int        `json:"unlinked"` // published videos without a link
	Best     []ownVideo `json:"best"`
	Worst    []ownVideo `json:"worst"`
}

type ownVideo struct {
	VideoID         string  `json:"videoId"`
	Title           string  `json:"title"`
	ContentType     string  `json:"contentType"`
	FormulaType     string  `json:"formulaType"`
	OwnOutlierScore float64 `json:"ownOutlierScore"`
}

// ownResultsOf reads the linked videos' reviews of the last 90 days: the best and worst by own outlier score.
func ownResultsOf(vs []videos.Video, now time.Time) *ownResults {
	r := &ownResults{Best: []ownVideo{}, Worst: []ownVideo{}}
	for _, v := range vs {
		switch {
		case v.YouTubeVideoID != nil:
			r.Linked++
		case v.Status == videos.Published:
			r.Unlinked++
		}
	}
	if r.Linked == 0 {
		return nil
	}
	view := func(list []ownperf.Scored) []ownVideo {
		out := []ownVideo{}
		for _, s := range list {
			out = append(out, ownVideo{VideoID: s.Video.ID, Title: s.Video.Title, ContentType: s.Video.ContentType,
				FormulaType: s.Video.FormulaType, OwnOutlierScore: s.Score})
		}
		return out
	}
	best, worst := ownperf.BestAndWorst(vs, nil, now, ownperf.BriefVideos)
	r.Best, r.Worst = view(best), view(worst)
	return r
}

// contentAudit reports the state of the channel's content operation with recommendations.
func (s *server) contentAudit(ctx context.Context, p auth.Principal, _ json.RawMessage) (any, string, error) {
	now := s.cfg.Now().UTC()
	var vids struct {
		Videos []videos.Video `json:"videos"`
	}
	if err := s.read(ctx, p, "listMyVideos", nil, &vids); err != nil {
		return nil, "", err
	}
	var ideas struct {
		Total int `json:"total"`
	}
	if err := s.read(ctx, p, "listVideoIdeas", map[string]any{"limit": 1}, &ideas); err != nil {
		return nil, "", err
	}
	a := audit{Pipeline: map[string]int{}, BacklogIdeas: ideas.Total, StaleVideos: []staleVideo{},
		EmptySlots: []slotRef{}, GenerationMix: map[string]int{}, Recommendations: []string{}}
	for _, st := range []videos.Status{videos.Planned, videos.Scripted, videos.Filmed, videos.Edited, videos.Published} {
		a.Pipeline[string(st)] = 0
	}
	for _, v := range vids.Videos {
		a.Pipeline[string(v.Status)]++
		changed := v.UpdatedAt
		if changed.IsZero() {
			changed = v.CreatedAt
		}
		if v.Status != videos.Published && now.Sub(changed) >= staleAfter {
			a.StaleVideos = append(a.StaleVideos, staleVideo{VideoID: v.ID, Title: v.Title, Status: string(v.Status),
				DaysUnchanged: int(now.Sub(changed) / (24 * time.Hour))})
		}
	}
	// The empty publish slots of this week (from today) and the next.
	today := now.Format(time.DateOnly)
	for _, week := range []string{today, now.AddDate(0, 0, 7).Format(time.DateOnly)} {
		view, err := s.schedule(ctx, p, week)
		if err != nil {
			return nil, "", err
		}
		for _, sl := range publishSlots(view) {
			if date := slotDate(view.WeekStart, sl.DayOfWeek); date >= today {
				a.EmptySlots = append(a.EmptySlots, slotRef{DayOfWeek: sl.DayOfWeek, PublishTime: sl.PublishTime,
					ContentType: sl.ContentType, Date: date})
			}
		}
	}
	var err error
	if a.Research, err = s.researchAge(ctx, p, now); err != nil {
		return nil, "", err
	}
	var hist struct {
		History []json.RawMessage `json:"history"`
	}
	if err := s.read(ctx, p, "listHistory", map[string]any{"limit": 100}, &hist); err != nil {
		return nil, "", err
	}
	for _, run := range hist.History {
		at, _ := time.Parse(time.RFC3339Nano, gjson.GetBytes(run, "generatedAt").Str)
		if now.Sub(at) <= 30*24*time.Hour {
			a.GenerationMix[gjson.GetBytes(run, "toolName").Str]++
		}
	}
	a.OwnResults = ownResultsOf(vids.Videos, now)
	a.Recommendations = recommend(a)
	return a, fmt.Sprintf("Audit: %s in the pipeline (%d stuck 14+ days), %s in the next two weeks, research %s; %s.",
		plural(len(vids.Videos), "video"), len(a.StaleVideos), plural(len(a.EmptySlots), "empty publish slot"),
		describeResearch(a.Research), plural(len(a.Recommendations), "recommendation")), nil
}

func recommend(a audit) []string {
	var out []string
	inProgress := a.Pipeline["scripted"] + a.Pipeline["filmed"] + a.Pipeline["edited"]
	if inProgress+a.Pipeline["planned"] == 0 {
		out = append(out, "The pipeline is empty: commit ideas from the backlog (get_video_ideas, commit_video) or brainstorm new ones (generate_video_ideas).")
	} else if a.Pipeline["planned"] > 2*inProgress+2 {
		out = append(out, "Many videos are only planned: script them (weekly_content_batch or generate_long_script / generate_short_script).")
	}
	if len(a.StaleVideos) > 0 {
		out = append(out, fmt.Sprintf("%d videos have not moved in 14 days: advance them (update_video_status) or drop them.", len(a.StaleVideos)))
	}
	if len(a.EmptySlots) > 0 {
		out = append(out, fmt.Sprintf("%d publish slots of the next two weeks are empty: fill them with plan_my_week.", len(a.EmptySlots)))
	}
	if a.Research.Stale {
		out = append(out, "Research is missing or older than 7 days: keep the niche profile's keywords current; research runs again on its schedule, or start it from the app.")
	}
	if a.BacklogIdeas < 5 {
		out = append(out, "The backlog is nearly empty: generate_video_ideas adds ideas from the niche's research.")
	}
	if o := a.OwnResults; o != nil {
		if len(o.Best) > 0 {
			out = append(out, fmt.Sprintf("Your own best recent video is %q (%.1f× your usual views at the same age): "+
				"make more like it (its format %s, formula %s); generation briefs already lead with your own results.",
				o.Best[0].Title, o.Best[0].OwnOutlierScore, o.Best[0].ContentType, o.Best[0].FormulaType))
		}
		if len(o.Worst) > 0 && o.Worst[0].OwnOutlierScore < 1 {
			out = append(out, fmt.Sprintf("%q did %.1f× your usual: rework its title and thumbnail (generate_reoptimize) or avoid its angle.",
				o.Worst[0].Title, o.Worst[0].OwnOutlierScore))
		}
		if o.Unlinked > 0 {
			out = append(out, fmt.Sprintf("%d published videos are not linked to their YouTube upload, so they get no review: "+
				"keep their titles as published, or link them with PATCH /api/v1/my-videos/{id}.", o.Unlinked))
		}
	}
	if a.GenerationMix["titles"] == 0 && len(a.GenerationMix) > 0 {
		out = append(out, "No titles were generated in 30 days: titles drive clicks; try generate_titles on the next video.")
	}
	if a.GenerationMix["thumbnails"] == 0 && len(a.GenerationMix) > 0 {
		out = append(out, "No thumbnail strategy in 30 days: generate_thumbnail_strategy pairs with each title.")
	}
	return out
}

func describeResearch(r researchAge) string {
	if r.AgeDays == nil {
		return r.Status
	}
	return fmt.Sprintf("%d days old", *r.AgeDays)
}

// researchAge reports the channel's last research run.
func (s *server) researchAge(ctx context.Context, p auth.Principal, now time.Time) (researchAge, error) {
	run, err := s.cfg.Research.LastRun(ctx, p.ChannelID)
	if err != nil {
		return researchAge{}, err
	}
	if run == nil {
		return researchAge{Status: "never", Stale: true}, nil
	}
	r := researchAge{Status: string(run.Status), FinishedAt: run.FinishedAt, Source: run.Source, VideoCount: run.VideoCount, Stale: true,
		UnitsSpent: run.Spent.Units, SearchCallsSpent: run.Spent.Searches, StatsCallsSpent: run.Spent.Stats}
	if run.FinishedAt != nil {
		days := int(math.Floor(now.Sub(*run.FinishedAt).Hours() / 24))
		r.AgeDays = &days
		r.Stale = days >= researchFreshDays
	}
	return r, nil
}

type contextInput struct {
	Context string `json:"context,omitempty" jsonschema:"extra context for the niche score"`
}

type keywordCoverage struct {
	Keyword string `json:"keyword"`
	Videos  int    `json:"videos"`
}

type healthCheck struct {
	Score           part              `json:"score"`
	Research        researchAge       `json:"research"`
	KeywordCoverage []keywordCoverage `json:"keywordCoverage"`
	Uncovered       []string          `json:"uncoveredKeywords"`
}

// nicheHealthCheck runs the niche score and adds research age and keyword coverage: how many of the
// niche's research videos mention each of the profile's keywords in their title.
func (s *server) nicheHealthCheck(ctx context.Context, p auth.Principal, args json.RawMessage) (any, string, error) {
	var in contextInput
	if err := decode(args, &in); err != nil {
		return nil, "", err
	}
	var prof struct {
		Keywords []string `json:"keywords"`
	}
	if err := s.read(ctx, p, "getNicheProfile", nil, &prof); err != nil {
		return nil, "", err
	}
	h := healthCheck{KeywordCoverage: []keywordCoverage{}, Uncovered: []string{}}
	var err error
	if h.Research, err = s.researchAge(ctx, p, s.cfg.Now().UTC()); err != nil {
		return nil, "", err
	}
	var rv struct {
		Videos []struct {
			Title string `json:"title"`
		} `json:"videos"`
	}
	if err := s.read(ctx, p, "listResearchVideos", map[string]any{"limit": 100, "sort": "views"}, &rv); err != nil {
		return nil, "", err
	}
	for _, k := range prof.Keywords {
		n := 0
		for _, v := range rv.Videos {
			if strings.Contains(strings.ToLower(v.Title), strings.ToLower(k)) {
				n++
			}
		}
		h.KeywordCoverage = append(h.KeywordCoverage, keywordCoverage{Keyword: k, Videos: n})
		if n == 0 {
			h.Uncovered = append(h.Uncovered, k)
		}
	}
	scoreArgs := map[string]any{}
	if in.Context != "" {
		scoreArgs["context"] = in.Context
	}
	h.Score = s.runPart(ctx, p, "get_niche_scorecard", scoreArgs)
	text := fmt.Sprintf("Niche health: score %s; research %s; %d of %d keywords found in the top research videos.",
		h.Score.Status, describeResearch(h.Research), len(prof.Keywords)-len(h.Uncovered), len(prof.Keywords))
	return h, text, nil
}

type exportInput struct {
	VideoID string `json:"videoId" jsonschema:"the id of a committed video (from get_my_videos)"`
}

type brief struct {
	VideoID  string `json:"videoId"`
	Title    string `json:"title"`
	Markdown string `json:"markdown"`
}

// exportBrief writes a Markdown production brief of a committed video.
func (s *server) exportBrief(ctx context.Context, p auth.Principal, args json.RawMessage) (any, string, error) {
	var in exportInput
	if err := decode(args, &in); err != nil {
		return nil, "", err
	}
	if !contract.IsUUID(in.VideoID) {
		return nil, "", apperr.Invalid("videoId", "must be a UUID")
	}
	v, err := s.cfg.Videos.Get(ctx, p.ChannelID, strings.ToLower(in.VideoID))
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", v.Title)
	fmt.Fprintf(&b, "- Content type: %s\n- Formula: %s\n- Status: %s\n", v.ContentType, v.FormulaType, v.Status)
	for _, c := range v.StatusHistory {
		fmt.Fprintf(&b, "  - %s on %s\n", c.Status, c.At.UTC().Format(time.DateOnly))
	}
	if v.SeriesID != nil {
		if sr, err := s.cfg.Series.Get(ctx, p.ChannelID, *v.SeriesID); err == nil {
			fmt.Fprintf(&b, "\n## Series: %s\n\n", sr.Name)
			if sr.Description != "" {
				fmt.Fprintf(&b, "%s\n\n", sr.Description)
			}
			if sr.ScriptFormula != "" {
				fmt.Fprintf(&b, "Script formula:\n\n%s\n", sr.ScriptFormula)
			}
		}
	}
	var h struct {
		History []json.RawMessage `json:"history"`
	}
	if err := s.read(ctx, p, "listHistory", map[string]any{"search": clip(v.Title, 200), "limit": 100}, &h); err != nil {
		return nil, "", err
	}
	latest := map[string]json.RawMessage{}
	var order []string
	for _, run := range h.History { // newest first
		tool := gjson.GetBytes(run, "toolName").Str
		if gjson.GetBytes(run, "status").Str != "success" || !strings.EqualFold(gjson.GetBytes(run, "input.title").Str, v.Title) {
			continue
		}
		if _, ok := latest[tool]; !ok {
			latest[tool] = run
			order = append(order, tool)
		}
	}
	slices.Sort(order)
	for _, tool := range order {
		run := latest[tool]
		fmt.Fprintf(&b, "\n## %s\n\n_Generated %s (generationId %s)_\n\n", heading(tool),
			gjson.GetBytes(run, "generatedAt").Str, gjson.GetBytes(run, "id").Str)
		renderMarkdown(&b, gjson.GetBytes(run, "output"), 0)
	}
	if len(order) == 0 {
		b.WriteString("\n_No generations for this title yet: full_video_package makes them._\n")
	}
	return brief{VideoID: v.ID, Title: v.Title, Markdown: b.String()},
		fmt.Sprintf("Production brief of %q with %d generated sections.", v.Title, len(order)), nil
}

func heading(tool string) string {
	h := strings.ReplaceAll(tool, "_", " ")
	return strings.ToUpper(h[:1]) + h[1:]
}

// renderMarkdown writes a generation's output as nested bullets: strings as text, objects as
// "key: value" lines, arrays as items.
func renderMarkdown(b *strings.Builder, v gjson.Result, depth int) {
	indent := strings.Repeat("  ", depth)
	switch {
	case v.IsArray():
		for _, item := range v.Array() {
			if item.IsObject() || item.IsArray() {
				fmt.Fprintf(b, "%s-\n", indent)
				renderMarkdown(b, item, depth+1)
				continue
			}
			fmt.Fprintf(b, "%s- %s\n", indent, item.String())
		}
	case v.IsObject():
		v.ForEach(func(k, item gjson.Result) bool {
			if item.IsObject() || item.IsArray() {
				fmt.Fprintf(b, "%s- **%s**:\n", indent, k.String())
				renderMarkdown(b, item, depth+1)
				return true
			}
			fmt.Fprintf(b, "%s- **%s**: %s\n", indent, k.String(), item.String())
			return true
		})
	case v.Exists():
		fmt.Fprintf(b, "%s%s\n", indent, v.String())
	}
}
