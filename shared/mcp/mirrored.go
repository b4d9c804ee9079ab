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

func (k kind) annotations(title string) *sdk.ToolAnnotations {
	no, yes := false, true
	a := &sdk.ToolAnnotations{Title: title, OpenWorldHint: &no}
	switch k {
	case read:
		a.ReadOnlyHint, a.IdempotentHint = true, true
	case generate, write:
		a.DestructiveHint = &no
	case replace:
		a.DestructiveHint, a.IdempotentHint = &yes, true
	case remove:
		a.DestructiveHint, a.IdempotentHint = &yes, true
	}
	return a
}

// mirrored is a tool that runs one REST operation (decision 36).
type mirrored struct {
	name, op, title, description string
	kind                         kind
	summary                      func(js string) string
}

// hiddenHeaders are parameters an MCP caller never gives: the channel comes from the key (decision 34),
// and a tool waits for its generation as a REST call without Prefer does.
var hiddenHeaders = []string{"X-Channel-Id", "Prefer"}

var mirroredTools = []mirrored{
	// Context
	{"get_niche_profile", "getNicheProfile", "Niche profile",
		"The channel's niche profile: niche, audience, keywords, goals, tone. Read it before generating.", read, profileSummary},
	{"get_niche_scorecard", "scoreNiche", "Niche scorecard",
		"Score the channel's niche (demand, competition, fit) with a model; recorded in history.", generate, generatedSummary("niche scorecard")},
	{"get_my_videos", "listMyVideos", "My videos",
		"Videos in the channel's pipeline (planned, scripted, filmed, edited, published) with status history.", read, listSummary("videos", "video")},
	{"get_video_ideas", "listVideoIdeas", "Video ideas",
		"The backlog of video ideas not yet committed, newest first (paged).", read, listSummary("ideas", "idea")},
	{"get_schedule", "getSchedule", "Weekly schedule",
		"The publishing schedule of one week (default this week): slots and the videos assigned to them.", read, scheduleSummary},
	{"get_my_series", "listSeries", "Series",
		"The channel's recurring content series with their script formulas.", read, listSummary("series", "series")},
	{"get_research_insights", "getResearchInsights", "Research insights",
		"What works in the channel's niche, from research of its top videos: patterns for titles, thumbnails, scripts, descriptions and ideas.", read, plainSummary("Research insights of the niche.")},
	{"get_history", "listHistory", "Generation history",
		"Past generations (ToolRun: status pending, success or failed, input, output), filterable by tool and text.", read, listSummary("history", "generation")},
	{"get_trending", "listResearchVideos", "Trending in the niche",
		"Research videos of the niche, strongest outliers first (or by views or recency).", read, listSummary("videos", "research video")},

	// Content creation
	{"generate_titles", "generateTitles", "Generate titles",
		"Title options for a video idea, graded, personalised from the channel's data.", generate, generatedSummary("titles")},
	{"generate_long_script", "generateLongScript", "Generate long-form script",
		"A full script for a long-form video (optionally in a series' formula).", generate, generatedSummary("long-form script")},
	{"generate_short_script", "generateShortScript", "Generate Short script",
		"A script for a Short (vertical, under a minute).", generate, generatedSummary("Short script")},
	{"generate_description", "generateDescription", "Generate description",
		"A video description with keywords, links section and chapters when a transcript is available.", generate, generatedSummary("description")},
	{"generate_thumbnail_strategy", "generateThumbnail", "Generate thumbnail",
		"Thumbnail concepts and a 16:9 2K image, using the creator's emotion reference photos.", generate, generatedSummary("thumbnail strategy")},
	{"generate_video_ideas", "generateIdeas", "Generate video ideas",
		"New video ideas from the niche's research, added to the backlog.", generate, generatedSummary("video ideas")},
	{"generate_ctas", "generateCtas", "Generate calls to action",
		"Calls to action for the channel's videos.", generate, generatedSummary("calls to action")},
	{"generate_hooks", "generateHooks", "Generate hooks",
		"Opening hooks for a video (or improvements of the current one).", generate, generatedSummary("hooks")},
	{"generate_community_post", "generateCommunityPosts", "Generate community posts",
		"Community tab posts (poll, update, teaser, ...).", generate, generatedSummary("community posts")},
	{"generate_podcast_prep", "generatePodcastPrep", "Prepare a podcast episode",
		"Episode preparation: outline, questions, guest research.", generate, generatedSummary("podcast preparation")},
	{"analyze_clips", "generateClips", "Find clips",
		"Moments of a long video's transcript worth cutting into Shorts, with timestamps.", generate, generatedSummary("clips")},
	{"generate_newsletter", "generateNewsletter", "Generate newsletter",
		"A newsletter issue from a video and its transcript.", generate, generatedSummary("newsletter")},
	{"channel_optimize", "generateChannelOptimize", "Optimise channel",
		"Channel-level optimisation: channel description, playlists or banner (2560x1440 with safe zones).", generate, generatedSummary("channel optimisation")},
	{"reoptimize", "generateReoptimize", "Re-optimise a video",
		"New title, description and thumbnail ideas for a published video that underperforms.", generate, generatedSummary("re-optimisation")},

	// Actions
	{"commit_video", "commitVideo", "Commit a video",
		"Put a video into the pipeline at planned: from a backlog idea (ideaId) or new (title, contentType, formulaType).", write, videoSummary("Committed")},
	{"update_video_status", "updateVideoStatus", "Update video status",
		"Move a pipeline video to planned, scripted, filmed, edited or published.", replace, videoSummary("Updated")},
	{"dismiss_idea", "deleteVideoIdea", "Dismiss an idea",
		"Remove an idea from the backlog for good.", remove, plainSummary("Idea dismissed.")},
	{"update_schedule", "upsertScheduleSlot", "Update schedule",
		"Create or replace a publish slot of the schedule, optionally assigning a video to it.", replace, plainSummary("Schedule slot saved.")},

	// Creator memory
	{"save_note", "createNote", "Save a note",
		"Remember something about the creator (preference, fact, idea) for future generations.", write, plainSummary("Note saved.")},
	{"get_notes", "listNotes", "Notes",
		"The creator's saved notes, optionally of one category.", read, listSummary("notes", "note")},
	{"delete_note", "deleteNote", "Delete a note",
		"Delete one of the creator's notes.", remove, plainSummary("Note deleted.")},

	// Intelligence
	{"get_performance", "getPerformance", "Performance",
		"Channel performance: monthly report, pipeline counts, recent activity, generation stats, top research videos.", read, plainSummary("Channel performance overview.")},
	{"refine", "refine", "Refine a generation",
		"Improve a past generation (generationId from get_history) with feedback, optionally one item of it.", generate, generatedSummary("refinement")},
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
	return &sdk.Tool{Name: t.name, Title: t.title, Description: t.description,
		InputSchema: schema, Annotations: t.kind.annotations(t.title)}, nil
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
