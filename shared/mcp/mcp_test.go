package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/wire"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/mcp"
)

// The 39 tools of the specification (webhooks-mcp-integrations.md, MCP interface 3).
var specTools = []string{
	"get_niche_profile", "get_niche_scorecard", "get_my_videos", "get_video_ideas", "get_schedule", "get_my_series",
	"get_research_insights", "get_history", "get_trending",
	"generate_titles", "generate_long_script", "generate_short_script", "generate_description",
	"generate_thumbnail_strategy", "generate_video_ideas", "generate_ctas", "generate_hooks", "generate_community_post",
	"generate_podcast_prep", "analyze_clips", "generate_newsletter", "channel_optimize", "reoptimize",
	"plan_my_week", "full_video_package", "content_audit", "weekly_content_batch", "niche_health_check",
	"commit_video", "update_video_status", "dismiss_idea", "update_schedule",
	"save_note", "get_notes", "delete_note",
	"get_performance", "refine", "batch_generate", "export_brief",
}

var specPrompts = []string{"plan-my-week", "video-package", "content-audit", "brainstorm", "optimize-titles",
	"meet-my-channel", "repurpose-video", "title-workshop", "thumbnail-brainstorm", "series-planner"}

func TestServerListsEverything(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	init := cs.InitializeResult()
	if init.ServerInfo.Name != "creator-strategy-service" || init.ServerInfo.Version != "2.6.0" {
		t.Fatalf("server info %+v", init.ServerInfo)
	}
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.Title == "" || tool.Annotations == nil {
			t.Errorf("%s: want a title, a description and annotations", tool.Name)
		}
	}
	if want := slices.Sorted(slices.Values(specTools)); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	// 31 KB of input schemas and descriptions, 37 KB of output schemas (issue 34).
	raw, _ := json.Marshal(tools)
	if len(raw) >= 80_000 {
		t.Errorf("tools/list is %d bytes, want under 80 KB", len(raw))
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
		if r.MIMEType != "application/json" {
			t.Errorf("%s: MIME type %q", r.URI, r.MIMEType)
		}
	}
	if want := []string{"css://my-videos", "css://niche-profile", "css://research-insights", "css://schedule"}; !slices.Equal(slices.Sorted(slices.Values(uris)), want) {
		t.Fatalf("resources %v", uris)
	}
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var templates []string
	for _, r := range tmpls.ResourceTemplates {
		templates = append(templates, r.URITemplate)
	}
	if want := []string{"css://series/{id}", "css://video/{id}"}; !slices.Equal(slices.Sorted(slices.Values(templates)), want) {
		t.Fatalf("templates %v", templates)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pnames []string
	for _, p := range prompts.Prompts {
		pnames = append(pnames, p.Name)
	}
	if !slices.Equal(slices.Sorted(slices.Values(pnames)), slices.Sorted(slices.Values(specPrompts))) {
		t.Fatalf("prompts %v", pnames)
	}
}

// TestMirroredSchemasComeFromTheContract: a mirrored tool's input schema is its operation's arguments as
// the contract states them, so REST and MCP cannot drift; spot checks prove the bounds and enums are there.
func TestMirroredSchemasComeFromTheContract(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		byName[tool.Name] = m
	}
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	mirrored := map[string]string{
		"get_niche_profile": "getNicheProfile", "get_niche_scorecard": "scoreNiche", "get_my_videos": "listMyVideos",
		"get_video_ideas": "listVideoIdeas", "get_schedule": "getSchedule", "get_my_series": "listSeries",
		"get_research_insights": "getResearchInsights", "get_history": "listHistory", "get_trending": "listResearchVideos",
		"generate_titles": "generateTitles", "generate_long_script": "generateLongScript",
		"generate_short_script": "generateShortScript", "generate_description": "generateDescription",
		"generate_thumbnail_strategy": "generateThumbnail", "generate_video_ideas": "generateIdeas",
		"generate_ctas": "generateCtas", "generate_hooks": "generateHooks", "generate_community_post": "generateCommunityPosts",
		"generate_podcast_prep": "generatePodcastPrep", "analyze_clips": "generateClips", "generate_newsletter": "generateNewsletter",
		"channel_optimize": "generateChannelOptimize", "reoptimize": "generateReoptimize", "commit_video": "commitVideo",
		"update_video_status": "updateVideoStatus", "dismiss_idea": "deleteVideoIdea", "update_schedule": "upsertScheduleSlot",
		"save_note": "createNote", "get_notes": "listNotes", "delete_note": "deleteNote", "get_performance": "getPerformance",
		"refine": "refine",
	}
	if len(mirrored) != 32 {
		t.Fatalf("%d mirrored tools listed", len(mirrored))
	}
	for tool, opID := range mirrored {
		schema, err := c.Operation(opID).Arguments("X-Channel-Id", "Prefer").Schema()
		if err != nil {
			t.Fatal(err)
		}
		var contractSchema any
		b, _ := json.Marshal(schema)
		_ = json.Unmarshal(b, &contractSchema)
		// Published with nullable members as anyOf with null (mcp.Portable), the same values valid.
		want, _ := mcp.Portable(contractSchema).(map[string]any)
		got := byName[tool]
		// Arguments carry the served document's descriptions, which the runtime contract leaves out;
		// everything else is the runtime contract's.
		for _, m := range []map[string]any{got, want} {
			for _, p := range m["properties"].(map[string]any) {
				delete(p.(map[string]any), "description")
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: input schema\n got %v\nwant %v", tool, got, want)
		}
		if _, has := got["properties"].(map[string]any)["X-Channel-Id"]; has {
			t.Errorf("%s: the channel must come from the key, not an argument", tool)
		}
	}
	prop := func(tool, name string) map[string]any {
		return byName[tool]["properties"].(map[string]any)[name].(map[string]any)
	}
	listed := map[string]map[string]any{}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		listed[tool.Name] = m
	}
	described := func(tool, name string) string {
		d, _ := listed[tool]["properties"].(map[string]any)[name].(map[string]any)["description"].(string)
		return d
	}
	for _, c := range []struct{ tool, arg, want string }{
		{"get_video_ideas", "limit", "Page size."},                      // a parameter's
		{"generate_titles", "title", "The video topic."},                // a body field's
		{"generate_titles", "idempotencyKey", "Repeating a generation"}, // a header's
	} {
		if d := described(c.tool, c.arg); !strings.HasPrefix(d, c.want) {
			t.Errorf("%s %s: description %q, want it to start %q", c.tool, c.arg, d, c.want)
		}
	}
	if l := prop("get_video_ideas", "limit"); l["minimum"] != 1.0 || l["maximum"] != 100.0 {
		t.Errorf("get_video_ideas limit bounds: %v", l)
	}
	if s := prop("update_video_status", "status"); len(s["enum"].([]any)) != 5 {
		t.Errorf("update_video_status status enum: %v", s)
	}
	if s := prop("generate_titles", "title"); s["maxLength"] != 200.0 || s["minLength"] != 1.0 {
		t.Errorf("generate_titles title bounds: %v", s)
	}
	if r := byName["generate_titles"]["required"].([]any); !slices.Contains(r, any("title")) || !slices.Contains(r, any("type")) {
		t.Errorf("generate_titles required: %v", r)
	}
	if s := prop("batch_generate", "items"); s["minItems"] != 1.0 || s["maxItems"] != 10.0 {
		t.Errorf("batch_generate items bounds: %v", s)
	}
}

// TestEveryToolWorks calls every tool, reads every resource and gets every prompt on one channel.
func TestEveryToolWorks(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	ctx := context.Background()
	called := map[string]bool{}
	outputs := outputSchemas(t, cs)
	do := func(name string, args any) callResult {
		t.Helper()
		called[name] = true
		r := ok(t, cs, name, args)
		matchesOutputSchema(t, outputs, name, r)
		return r
	}

	if r := do("get_niche_profile", map[string]any{}); r.structured == nil || r.text == "" {
		t.Fatalf("profile: %+v", r)
	}
	// Notes: save_note writes source mcp.
	note := do("save_note", map[string]any{"category": "preference", "content": "Short intros, no music"})
	if note.structured["source"] != "mcp" {
		t.Fatalf("save_note source %v", note.structured["source"])
	}
	if n := do("get_notes", map[string]any{"category": "preference"}); len(list(n.structured, "notes")) != 1 {
		t.Fatalf("get_notes: %v", n.structured)
	}

	// Generations: each answers its REST response and lands in history.
	titles := do("generate_titles", map[string]any{"title": "How to plan a week of videos", "type": "how-to", "videoType": "Long"})
	if len(list(titles.structured, "titles")) == 0 {
		t.Fatalf("titles: %v", titles.structured)
	}
	do("generate_long_script", map[string]any{"title": "How to plan a week of videos", "type": "how-to"})
	do("generate_short_script", map[string]any{"title": "Plan a week in 60 seconds", "type": "quick-tip"})
	do("generate_description", map[string]any{"title": "How to plan a week of videos"})
	do("generate_thumbnail_strategy", map[string]any{"title": "How to plan a week of videos", "type": "emotions", "peopleMode": "no_person"})
	do("generate_ctas", map[string]any{})
	do("generate_hooks", map[string]any{"title": "How to plan a week of videos"})
	do("generate_community_post", map[string]any{"postType": "poll", "title": "Planning week"})
	do("generate_podcast_prep", map[string]any{"episodeType": "solo", "topic": "Planning"})
	transcript := "0:00 Welcome to the channel, today we plan a week of videos.\n0:20 First, pick your publish days and stick to them.\n0:45 Second, batch your filming so one day covers the week.\n1:10 Third, keep a backlog of ideas you can pull from.\n1:40 That is the whole system, see you next week."
	do("analyze_clips", map[string]any{"title": "Planning", "transcript": transcript, "clipCount": 1})
	do("generate_newsletter", map[string]any{"title": "Planning", "style": "recap", "transcript": transcript})
	do("channel_optimize", map[string]any{"type": "description"})
	do("reoptimize", map[string]any{"videoUrl": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"})
	do("get_niche_scorecard", map[string]any{})
	ideas := do("generate_video_ideas", map[string]any{"count": 2, "contentType": "Long"})
	hist := do("get_history", map[string]any{"tool": "titles"})
	runs := list(hist.structured, "history")
	if len(runs) != 1 {
		t.Fatalf("history of titles: %v", hist.structured)
	}
	genID := runs[0].(map[string]any)["id"].(string)
	do("refine", map[string]any{"generationId": genID, "feedback": "shorter, and with a number"})

	// Pipeline and schedule.
	video := do("commit_video", map[string]any{"title": "How to plan a week of videos", "contentType": "Long", "formulaType": "how-to"})
	videoID := str(video.structured, "id")
	if r := do("get_my_videos", map[string]any{"status": "planned"}); len(list(r.structured, "videos")) != 1 {
		t.Fatalf("get_my_videos: %v", r.structured)
	}
	do("update_video_status", map[string]any{"videoId": videoID, "status": "scripted"})
	idea := list(ideas.structured, "ideas")
	if len(idea) == 0 {
		t.Fatalf("generate_video_ideas added none: %v", ideas.structured)
	}
	if r := do("get_video_ideas", map[string]any{"limit": 100}); len(list(r.structured, "ideas")) != len(idea) {
		t.Fatalf("get_video_ideas: %v", r.structured)
	}
	do("dismiss_idea", map[string]any{"id": idea[0].(map[string]any)["id"]})
	// Two publish slots this week, on the last day so neither is in the past: the pipeline video and the
	// remaining backlog idea fill them.
	week := e.now.Load().Format(time.DateOnly)
	for _, hhmm := range []string{"10:00", "18:00"} {
		do("update_schedule", map[string]any{"dayOfWeek": 6, "slotType": "publish", "contentType": "Long", "publishTime": hhmm})
	}
	plan := do("plan_my_week", map[string]any{"weekStart": week})
	if props := list(plan.structured, "proposals"); len(props) != 2 || str(props[0].(map[string]any), "source") != "pipeline" ||
		str(props[1].(map[string]any), "source") != "backlog" {
		t.Fatalf("plan_my_week: %v", plan.structured)
	}
	applied := do("plan_my_week", map[string]any{"weekStart": week, "apply": true})
	for _, p := range list(applied.structured, "proposals") {
		if p.(map[string]any)["applied"] != true {
			t.Fatalf("plan_my_week apply: %v", applied.structured)
		}
	}
	sched := do("get_schedule", map[string]any{"weekStart": week})
	assigned := 0
	for _, s := range list(sched.structured, "slots") {
		if s.(map[string]any)["assignedVideoId"] != nil {
			assigned++
		}
	}
	if assigned != 2 {
		t.Fatalf("after apply, %d slots assigned: %v", assigned, sched.structured)
	}
	if r := do("get_video_ideas", map[string]any{}); len(list(r.structured, "ideas")) != len(idea)-2 {
		t.Fatalf("the committed backlog pick is still in the backlog: %v", r.structured)
	}
	// The backlog pick is planned and has no script: the batch writes titles, script and description.
	batch := do("weekly_content_batch", map[string]any{"weekStart": week})
	var generated int
	for _, v := range list(batch.structured, "videos") {
		generated += len(list(v.(map[string]any), "parts"))
	}
	if generated != 3 {
		t.Fatalf("weekly_content_batch: %v", batch.structured)
	}
	pkg := do("full_video_package", map[string]any{"title": "How to plan a week of videos", "contentType": "Long", "type": "how-to"})
	if parts := list(pkg.structured, "parts"); len(parts) != 6 {
		t.Fatalf("full_video_package: %v", pkg.structured)
	}
	for _, p := range list(pkg.structured, "parts") {
		if p.(map[string]any)["status"] != "success" {
			t.Fatalf("full_video_package part: %v", p)
		}
	}
	brief := do("export_brief", map[string]any{"videoId": videoID})
	if md := str(brief.structured, "markdown"); !strings.HasPrefix(md, "# How to plan a week of videos") || !strings.Contains(md, "## Titles") {
		t.Fatalf("export_brief: %s", md)
	}
	batchRes := do("batch_generate", map[string]any{"tool": "generate_hooks", "items": []any{
		map[string]any{"title": "One"}, map[string]any{"title": "Two"}}})
	for _, r := range list(batchRes.structured, "results") {
		if r.(map[string]any)["status"] != "success" {
			t.Fatalf("batch_generate: %v", batchRes.structured)
		}
	}
	audit := do("content_audit", map[string]any{})
	if audit.structured["pipeline"].(map[string]any)["scripted"] != 1.0 {
		t.Fatalf("content_audit: %v", audit.structured)
	}
	do("niche_health_check", map[string]any{})
	do("get_my_series", map[string]any{})
	do("get_research_insights", map[string]any{})
	do("get_trending", map[string]any{"sort": "views"})
	do("get_performance", map[string]any{})
	do("delete_note", map[string]any{"id": str(note.structured, "id")})
	if n := do("get_notes", map[string]any{}); len(list(n.structured, "notes")) != 0 {
		t.Fatalf("note not deleted: %v", n.structured)
	}
	for _, name := range specTools {
		if !called[name] {
			t.Errorf("tool %s not exercised", name)
		}
	}

	// Resources, in the REST shapes.
	for _, uri := range []string{"css://niche-profile", "css://research-insights", "css://my-videos", "css://schedule", "css://video/" + videoID} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		var v map[string]any
		if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" || json.Unmarshal([]byte(res.Contents[0].Text), &v) != nil {
			t.Fatalf("%s: %+v", uri, res.Contents)
		}
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "css://video/" + videoID})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"statusHistory":[{"status":"planned"`) {
		t.Fatalf("video resource lacks its status history: %v %v", res, err)
	}

	// Prompts expand into a message naming the tools.
	for _, name := range specPrompts {
		args := map[string]string{"title": "Planning", "video": videoID, "theme": "productivity", "week": week}
		p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("prompt %s: %v", name, err)
		}
		text := p.Messages[0].Content.(*sdk.TextContent).Text
		if p.Messages[0].Role != "user" || !strings.Contains(text, "Call ") && !strings.Contains(text, "call ") {
			t.Errorf("prompt %s: %q", name, text)
		}
	}
}

func TestSeriesResource(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	// A series made through REST, read through MCP.
	res, err := e.api.Invoke(context.Background(), e.principalA(), "createSeries", contract.RawRequest{
		Body: []byte(`{"name":"Weekly planning","description":"d","scriptFormula":"hook, steps, recap"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ ID string }
	_ = json.Unmarshal(res.Body, &s)
	got, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "css://series/" + s.ID})
	if err != nil || !strings.Contains(got.Contents[0].Text, `"scriptFormula":"hook, steps, recap"`) {
		t.Fatalf("series resource: %v %v", got, err)
	}
	// Another channel's series, an unknown id and a malformed one are all not found.
	csB := e.connect(e.keyB)
	for _, uri := range []string{"css://series/" + s.ID, "css://series/00000000-0000-4000-8000-000000000000", "css://series/nope"} {
		if _, err := csB.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s read by another channel: %v", uri, err)
		}
	}
}

func TestToolErrors(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	// A missing argument, each bound at its edge, a wrong type, an unknown argument.
	fails(t, cs, "generate_titles", map[string]any{"type": "how-to"}, "VALIDATION_ERROR: title")
	fails(t, cs, "generate_titles", map[string]any{"title": strings.Repeat("a", 201), "type": "how-to"}, "VALIDATION_ERROR: title")
	ok(t, cs, "get_video_ideas", map[string]any{"limit": 1})
	ok(t, cs, "get_video_ideas", map[string]any{"limit": 100})
	fails(t, cs, "get_video_ideas", map[string]any{"limit": 0}, "VALIDATION_ERROR: limit")
	fails(t, cs, "get_video_ideas", map[string]any{"limit": 101}, "VALIDATION_ERROR: limit")
	fails(t, cs, "get_video_ideas", map[string]any{"limit": "ten"}, "VALIDATION_ERROR: limit")
	fails(t, cs, "get_video_ideas", map[string]any{"offset": -1}, "VALIDATION_ERROR: offset")
	fails(t, cs, "get_my_videos", map[string]any{"status": "done"}, "VALIDATION_ERROR: status")
	fails(t, cs, "get_my_videos", map[string]any{"channelId": "x"}, "VALIDATION_ERROR: channelId")
	fails(t, cs, "update_schedule", map[string]any{"dayOfWeek": 7, "slotType": "publish"}, "VALIDATION_ERROR: dayOfWeek")
	fails(t, cs, "generate_titles", map[string]any{"title": "t", "type": "how-to", "idempotencyKey": strings.Repeat("k", 256)},
		"VALIDATION_ERROR: idempotencyKey")
	fails(t, cs, "save_note", map[string]any{"category": "preference", "content": ""}, "VALIDATION_ERROR: content")
	fails(t, cs, "delete_note", map[string]any{"id": "not-a-uuid"}, "VALIDATION_ERROR: id")
	fails(t, cs, "delete_note", map[string]any{"id": "00000000-0000-4000-8000-000000000000"}, "NOT_FOUND")
	fails(t, cs, "refine", map[string]any{"generationId": "00000000-0000-4000-8000-000000000000", "feedback": "more"}, "NOT_FOUND")
	fails(t, cs, "export_brief", map[string]any{"videoId": "00000000-0000-4000-8000-000000000000"}, "NOT_FOUND")
	fails(t, cs, "export_brief", map[string]any{}, "VALIDATION_ERROR")
	fails(t, cs, "full_video_package", map[string]any{"title": "t", "contentType": "Podcast"}, "VALIDATION_ERROR: contentType")
	fails(t, cs, "batch_generate", map[string]any{"tool": "generate_hooks", "items": []any{}}, "VALIDATION_ERROR: items")
	eleven := make([]any, 11)
	for i := range eleven {
		eleven[i] = map[string]any{"title": "x"}
	}
	fails(t, cs, "batch_generate", map[string]any{"tool": "generate_hooks", "items": eleven}, "VALIDATION_ERROR: items")
	fails(t, cs, "batch_generate", map[string]any{"tool": "get_notes", "items": []any{map[string]any{}}}, "VALIDATION_ERROR: tool")
	// One bad item fails alone, naming its index and field.
	r := ok(t, cs, "batch_generate", map[string]any{"tool": "generate_hooks", "items": []any{map[string]any{"title": "ok"}, map[string]any{}}})
	results := list(r.structured, "results")
	if results[0].(map[string]any)["status"] != "success" || !strings.HasPrefix(str(results[1].(map[string]any), "error"), "items[1]: VALIDATION_ERROR: title") {
		t.Fatalf("batch with a bad item: %v", r.structured)
	}
	fails(t, cs, "plan_my_week", map[string]any{"weekStart": "2026-13-01"}, "VALIDATION_ERROR: weekStart")
	// Nothing was written by the failures.
	if n := ok(t, cs, "get_notes", map[string]any{}); len(list(n.structured, "notes")) != 0 {
		t.Fatalf("a failed call wrote: %v", n.structured)
	}
	// An unknown tool and a missing prompt argument are protocol errors of their own kind.
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("unknown tool accepted")
	}
	if _, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "video-package"}); err == nil || !strings.Contains(err.Error(), "VALIDATION_ERROR: title") {
		t.Errorf("prompt without its title: %v", err)
	}
}

func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	a, b := e.connect(e.keyA), e.connect(e.keyB)
	note := ok(t, a, "save_note", map[string]any{"category": "insight", "content": "A's secret"})
	video := ok(t, a, "commit_video", map[string]any{"title": "A's video", "contentType": "Long", "formulaType": "how-to"})
	ok(t, a, "generate_hooks", map[string]any{"title": "A's hook"})
	if r := ok(t, b, "get_notes", map[string]any{}); len(list(r.structured, "notes")) != 0 {
		t.Fatalf("B sees A's notes: %v", r.structured)
	}
	if r := ok(t, b, "get_my_videos", map[string]any{}); len(list(r.structured, "videos")) != 0 {
		t.Fatalf("B sees A's videos: %v", r.structured)
	}
	if r := ok(t, b, "get_history", map[string]any{}); len(list(r.structured, "history")) != 0 {
		t.Fatalf("B sees A's history: %v", r.structured)
	}
	videoID := str(video.structured, "id")
	fails(t, b, "delete_note", map[string]any{"id": str(note.structured, "id")}, "NOT_FOUND")
	fails(t, b, "update_video_status", map[string]any{"videoId": videoID, "status": "filmed"}, "NOT_FOUND")
	fails(t, b, "export_brief", map[string]any{"videoId": videoID}, "NOT_FOUND")
	if _, err := b.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "css://video/" + videoID}); err == nil {
		t.Fatal("B reads A's video resource")
	}
	if r := ok(t, b, "content_audit", map[string]any{}); r.structured["pipeline"].(map[string]any)["planned"] != 0.0 {
		t.Fatalf("B's audit counts A's videos: %v", r.structured)
	}
	// A's data is intact.
	if r := ok(t, a, "get_notes", map[string]any{}); len(list(r.structured, "notes")) != 1 {
		t.Fatalf("A's note: %v", r.structured)
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	check := func(name string, header map[string]string, status int, code string) {
		t.Helper()
		res := e.rawPost(init, header)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != status || !strings.Contains(string(body), `"code":"`+code+`"`) {
			t.Fatalf("%s: %d %s", name, res.StatusCode, body)
		}
		if status == http.StatusUnauthorized && !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("%s: no WWW-Authenticate", name)
		}
	}
	check("no key", nil, 401, "UNAUTHORIZED")
	check("malformed key", map[string]string{"Authorization": "Bearer sk-css-xyz"}, 401, "UNAUTHORIZED")
	check("unknown key", map[string]string{"Authorization": "Bearer sk-css-0123456789abcdef0123456789abcdef"}, 401, "UNAUTHORIZED")
	check("basic auth", map[string]string{"Authorization": "Basic " + e.keyA}, 401, "UNAUTHORIZED")
	if res := e.rawPost(init, map[string]string{"Authorization": "Bearer " + e.keyA}); res.StatusCode != http.StatusOK {
		t.Fatalf("good key: %d", res.StatusCode)
	}

	// A revoked key stops working once the cache forgets it (decision 2: within its TTL).
	ctx := context.Background()
	if err := e.accounts.RevokeKey(ctx, e.accountA, e.keyIDA); err != nil {
		t.Fatal(err)
	}
	later := e.now.Load().Add(time.Minute)
	e.now.Store(&later)
	check("revoked key", map[string]string{"Authorization": "Bearer " + e.keyA}, 401, "UNAUTHORIZED")

	// An expired account answers 403 ACCESS_EXPIRED.
	account, _, key, _ := e.newAccount(ctx, later.Add(time.Hour))
	_ = account
	expired := later.Add(2 * time.Hour)
	e.now.Store(&expired)
	check("expired account", map[string]string{"Authorization": "Bearer " + key}, 403, "ACCESS_EXPIRED")

	// GET and DELETE answer 405 (decision 34).
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		r, _ := http.NewRequest(method, e.srv.URL+mcp.Path, nil)
		r.Header.Set("Authorization", "Bearer "+e.keyB)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", method, res.StatusCode)
		}
	}
}

// TestRateLimitsAreShared: MCP calls count in the REST rate groups (decision 35).
func TestRateLimitsAreShared(t *testing.T) {
	e := newEnv(t, func(c *wire.APIConfig) { c.GenerationsPerMinute = 2 })
	cs := e.connect(e.keyA)
	ok(t, cs, "generate_hooks", map[string]any{"title": "one"})
	res := e.rawPost(`{}`, nil)
	res.Body.Close()
	// The second generation of the minute goes through REST, the third through MCP: refused.
	r, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/generate/hooks", strings.NewReader(`{"title":"two"}`))
	r.Header.Set("Authorization", "Bearer "+e.keyA)
	r.Header.Set("Content-Type", "application/json")
	rr, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	rr.Body.Close()
	if rr.StatusCode != http.StatusOK {
		t.Fatalf("REST generation: %d", rr.StatusCode)
	}
	fails(t, cs, "generate_hooks", map[string]any{"title": "three"}, "RATE_LIMIT")
	// Reads are another group.
	ok(t, cs, "get_notes", map[string]any{})
}

// TestIdempotencyAcrossMCP: a repeated key returns the first result; the same key with another input is
// a CONFLICT.
func TestIdempotencyAcrossMCP(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	first := ok(t, cs, "generate_hooks", map[string]any{"title": "same", "idempotencyKey": "k-1"})
	again := ok(t, cs, "generate_hooks", map[string]any{"title": "same", "idempotencyKey": "k-1"})
	if !reflect.DeepEqual(first.structured, again.structured) {
		t.Fatalf("a repeated key gave another result")
	}
	fails(t, cs, "generate_hooks", map[string]any{"title": "other", "idempotencyKey": "k-1"}, "CONFLICT")
	if r := ok(t, cs, "get_history", map[string]any{"tool": "hooks"}); len(list(r.structured, "history")) != 1 {
		t.Fatalf("history: %v", r.structured)
	}
}

// TestToolListIsCurrent: the tool list the server serves (tools.json, written by go generate) is the one
// the contract and the composites' Go types give today.
func TestToolListIsCurrent(t *testing.T) {
	c, err := contract.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	want, err := mcp.ToolList(c, contract.Document())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("tools.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("tools.json is stale: run go generate ./shared/mcp")
	}
}

// niche_health_check reports what the channel's last research run spent of YouTube's quota, bucket by bucket
// (decision 47), as the REST run does.
func TestHealthCheckReportsTheRunsQuota(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	run := research.NewRun("0190f000-0000-7000-8000-00000000a001", e.channelA, research.TriggerSchedule, research.SourceYouTube,
		research.Niche{Keywords: []string{"vegan"}, Language: "English"}, now)
	st, err := e.store.ResearchState(ctx, e.channelA)
	if err != nil {
		t.Fatal(err)
	}
	st.ActiveRun, st.LeaseUntil = run.ID, now.Add(time.Hour)
	if err := e.store.StartResearchRun(ctx, st, run, nil); err != nil {
		t.Fatal(err)
	}
	if run, err = e.store.ResearchRun(ctx, e.channelA, run.ID); err != nil {
		t.Fatal(err)
	}
	run.Status, run.FinishedAt, run.VideoCount = research.Succeeded, &now, 500
	run.Spent = quota.Cost{Units: 35, Searches: 1, Stats: 10}
	if err := e.store.SaveResearchRun(ctx, &run, nil); err != nil {
		t.Fatal(err)
	}
	r := ok(t, cs, "niche_health_check", map[string]any{})
	got, _ := r.structured["research"].(map[string]any)
	if got["status"] != "succeeded" || got["unitsSpent"] != 35.0 || got["searchCallsSpent"] != 1.0 || got["statsCallsSpent"] != 10.0 {
		t.Fatalf("niche_health_check's research: %v", got)
	}
}

// outputSchemas are the output schemas tools/list publishes, resolved, by tool name (nil for a tool that
// has none).
func outputSchemas(t *testing.T, cs *sdk.ClientSession) map[string]*jsonschema.Resolved {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tool := range tools.Tools {
		out[tool.Name] = nil
		if tool.OutputSchema == nil {
			continue
		}
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		if s.Type != "object" {
			t.Errorf("%s: output schema of type %q, MCP wants an object", tool.Name, s.Type)
		}
		if out[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
	}
	return out
}

// matchesOutputSchema fails unless r, a tool's successful answer, has structuredContent exactly when the
// tool publishes an output schema, and that content is valid against it.
func matchesOutputSchema(t *testing.T, schemas map[string]*jsonschema.Resolved, name string, r callResult) {
	t.Helper()
	schema, listed := schemas[name]
	switch {
	case !listed:
		t.Fatalf("%s: not in tools/list", name)
	case schema == nil && r.raw.StructuredContent != nil:
		t.Errorf("%s: structuredContent %v, but no output schema", name, r.structured)
	case schema == nil:
	case r.raw.StructuredContent == nil:
		t.Errorf("%s: an output schema, but no structuredContent", name)
	default:
		if err := schema.Validate(r.structured); err != nil {
			t.Errorf("%s: structuredContent does not match the output schema: %v\n%v", name, err, r.structured)
		}
	}
}

// TestEveryToolStatesItsMetadata: as tools/list sends them, every tool has a title and states all four
// annotations (directories refuse a tool that leaves destructiveHint to its default), and every tool but
// those whose operation answers no body has an object output schema.
func TestEveryToolStatesItsMetadata(t *testing.T) {
	e := newEnv(t)
	res := e.rawPost(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Authorization": "Bearer " + e.keyA})
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("tools/list: %d %v", res.StatusCode, err)
	}
	t.Logf("tools/list: %d bytes", len(body))
	var list struct {
		Result struct {
			Tools []struct {
				Name         string                     `json:"name"`
				Title        string                     `json:"title"`
				Annotations  map[string]json.RawMessage `json:"annotations"`
				OutputSchema map[string]any             `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	noBody := []string{"dismiss_idea", "delete_note"} // their operations answer 204
	for _, tool := range list.Result.Tools {
		if tool.Title == "" || string(tool.Annotations["title"]) != strconv.Quote(tool.Title) {
			t.Errorf("%s: title %q, annotations' title %s", tool.Name, tool.Title, tool.Annotations["title"])
		}
		for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if v := string(tool.Annotations[hint]); v != "true" && v != "false" {
				t.Errorf("%s: %s is %q, want it stated", tool.Name, hint, v)
			}
		}
		if (tool.OutputSchema == nil) != slices.Contains(noBody, tool.Name) {
			t.Errorf("%s: output schema %v", tool.Name, tool.OutputSchema != nil)
		} else if tool.OutputSchema != nil && tool.OutputSchema["type"] != "object" {
			t.Errorf("%s: output schema of type %v, MCP wants an object", tool.Name, tool.OutputSchema["type"])
		}
	}
	if len(list.Result.Tools) != len(specTools) {
		t.Fatalf("%d tools listed", len(list.Result.Tools))
	}
}

// TestOpenWorldToolsFetchTranscripts: a mirrored tool is open-world exactly when its generation may fetch
// a video's captions from YouTube, and of the composites only batch_generate, which may run one of those.
func TestOpenWorldToolsFetchTranscripts(t *testing.T) {
	e := newEnv(t)
	tools, err := e.connect(e.keyA).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"batch_generate": true}
	for _, m := range contract.Mirrors() {
		g, ok := generation.ToolFor(m.Operation)
		want[m.Name] = ok && g.Transcript != ""
	}
	var open []string
	for _, tool := range tools.Tools {
		if a := tool.Annotations; a == nil || a.OpenWorldHint == nil || *a.OpenWorldHint != want[tool.Name] {
			t.Errorf("%s: openWorldHint not %v", tool.Name, want[tool.Name])
		}
		if want[tool.Name] {
			open = append(open, tool.Name)
		}
	}
	if len(open) < 2 {
		t.Fatalf("open-world tools %v: the generation registry lost its transcripts?", open)
	}
}
