package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/contract"
)

// prompt is a slash command (decision 40): its arguments and the user message it expands into, which names
// the tools to call and in what order.
type prompt struct {
	name, title, description string
	args                     []*sdk.PromptArgument
	text                     func(a map[string]string) string
}

func arg(name, description string, required bool) *sdk.PromptArgument {
	return &sdk.PromptArgument{Name: name, Description: description, Required: required}
}

// maxPromptArg bounds a prompt argument, as the REST API bounds a title or a context.
const maxPromptArg = 2000

// optional renders an optional argument as a sentence, or nothing.
func optional(a map[string]string, name, format string) string {
	if v := strings.TrimSpace(a[name]); v != "" {
		return " " + fmt.Sprintf(format, v)
	}
	return ""
}

var prompts = []prompt{
	{"plan-my-week", "Plan my week", "Fill the week's publish slots from the pipeline and the backlog.",
		[]*sdk.PromptArgument{arg("week", "A date in the week to plan (YYYY-MM-DD; weeks start on Sunday); default this week.", false)},
		func(a map[string]string) string {
			week := "this week"
			if w := strings.TrimSpace(a["week"]); w != "" {
				week = "the week starting " + w
			}
			return "Plan my publishing for " + week + ". 1. Call plan_my_week" + optional(a, "week", `with weekStart %q`) +
				" (apply false) to see the proposal and the empty slots. 2. Check the proposed videos against " +
				"get_my_videos and get_video_ideas and tell me the plan in a short table. 3. Only after I agree, call " +
				"plan_my_week again with apply true. 4. For any slot still empty, suggest ideas with generate_video_ideas."
		}},
	{"video-package", "Video package", "Everything to produce one video: titles, script, description, thumbnail, hooks, CTAs.",
		[]*sdk.PromptArgument{arg("title", "Working title or topic of the video.", true),
			arg("contentType", "Long or Short (default Long).", false)},
		func(a map[string]string) string {
			ct := "Long"
			if strings.EqualFold(strings.TrimSpace(a["contentType"]), "short") {
				ct = "Short"
			}
			return fmt.Sprintf("Build the production package for my video %q. 1. Call get_niche_profile and "+
				"get_research_insights to ground yourself. 2. Call full_video_package with title %q and contentType %q. "+
				"3. Present the best title, the hook, the script outline, the description and the thumbnail concept, "+
				"and say which parts you would refine (refine with the generationId of that part).", a["title"], a["title"], ct)
		}},
	{"content-audit", "Content audit", "Audit the pipeline, the schedule and the research, with recommendations.", nil,
		func(map[string]string) string {
			return "Audit my channel's content operation. 1. Call content_audit. 2. Call get_performance (with a connected " +
				"YouTube channel, its monthlyReport is YouTube Analytics' last 28 days and ownChannel.reviews how my linked " +
				"videos did 7 and 28 days after publishing; read css://video/{id} for one of them). 3. Summarise what is stuck, " +
				"what is missing from the next two weeks, whether research is stale, which of my own videos did best and " +
				"worst against my usual and what they share, and give me the three actions that matter most, each with the " +
				"tool that would do it."
		}},
	{"brainstorm", "Brainstorm ideas", "New video ideas grounded in the niche's research.",
		[]*sdk.PromptArgument{arg("topic", "Optional angle or topic to brainstorm around.", false)},
		func(a map[string]string) string {
			return "Brainstorm video ideas for my channel" + optional(a, "topic", "around %q") + ". 1. Call get_niche_profile " +
				"and get_research_insights. 2. Call get_trending to see the niche's outliers. 3. Call generate_video_ideas" +
				optional(a, "topic", "with context %q") + ". 4. Rank the ideas by fit with my niche and explain why; offer to " +
				"commit the best ones with commit_video."
		}},
	{"optimize-titles", "Optimise titles", "Better titles for one video, graded against the niche's patterns.",
		[]*sdk.PromptArgument{arg("title", "The current title.", true)},
		func(a map[string]string) string {
			return fmt.Sprintf("Improve the title %q. 1. Call get_research_insights for the niche's title patterns. "+
				"2. Call generate_titles with title %q. 3. Show the five best with their grades and say why each works; "+
				"if none fits, call refine with feedback.", a["title"], a["title"])
		}},
	{"meet-my-channel", "Meet my channel", "Get to know the channel before working on it.", nil,
		func(map[string]string) string {
			return "Get to know my channel. Call get_niche_profile, get_performance, get_my_series, get_notes and " +
				"get_research_insights, then read css://schedule. Summarise my niche, audience, what performs, my " +
				"series and preferences in a few lines, and ask me what I want to work on."
		}},
	{"repurpose-video", "Repurpose a video", "Turn one video into Shorts, a newsletter and community posts.",
		[]*sdk.PromptArgument{arg("video", "A video URL, or the id of a video in my pipeline.", true)},
		func(a map[string]string) string {
			v := strings.TrimSpace(a["video"])
			first := fmt.Sprintf("The video is %s.", v)
			if contract.IsUUID(v) {
				first = fmt.Sprintf("Read css://video/%s for its title and status.", strings.ToLower(v))
			}
			return "Repurpose one of my videos. " + first + " 1. Call analyze_clips for the moments worth cutting into " +
				"Shorts (it needs the transcript; ask me for it if you do not have it). 2. Call generate_short_script " +
				"for the best clip. 3. Call generate_newsletter and generate_community_post for the video. 4. Present " +
				"the set as a checklist."
		}},
	{"title-workshop", "Title workshop", "Iterate on titles with feedback until one is right.",
		[]*sdk.PromptArgument{arg("topic", "What the video is about (optional: I will ask).", false)},
		func(a map[string]string) string {
			return "Run a title workshop with me" + optional(a, "topic", "for a video about %q") + ". 1. Call " +
				"get_research_insights. 2. Call generate_titles. 3. Ask me which directions I like, then call refine with " +
				"that feedback and the generationId; repeat until I pick one. 4. Offer to commit_video with the title."
		}},
	{"thumbnail-brainstorm", "Thumbnail brainstorm", "Thumbnail concepts and an image for a video.",
		[]*sdk.PromptArgument{arg("title", "The video's title (optional: I will ask).", false)},
		func(a map[string]string) string {
			return "Brainstorm thumbnails" + optional(a, "title", "for %q") + ". 1. Call get_research_insights for the " +
				"niche's thumbnail patterns. 2. Call generate_thumbnail_strategy. 3. Describe each concept (emotion, " +
				"text, composition) and show the image link; refine the one I choose."
		}},
	{"series-planner", "Series planner", "Design a recurring series and its first episodes.",
		[]*sdk.PromptArgument{arg("theme", "The theme of the series.", true)},
		func(a map[string]string) string {
			return fmt.Sprintf("Plan a recurring series on %q. 1. Call get_my_series to avoid overlap and "+
				"get_research_insights for what works. 2. Propose a name, a promise and a script formula. 3. Call "+
				"generate_video_ideas with context %q for the first episodes. 4. After I approve, commit the "+
				"episodes with commit_video and place them with update_schedule.", a["theme"], "series: "+a["theme"])
		}},
}

func (s *server) addPrompts(srv *sdk.Server) {
	for _, p := range prompts {
		srv.AddPrompt(&sdk.Prompt{Name: p.name, Title: p.title, Description: p.description, Arguments: p.args},
			func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				// countReads has counted it, as one call in the group of reads.
				a := req.Params.Arguments
				for _, pa := range p.args {
					v := strings.TrimSpace(a[pa.Name])
					if pa.Required && v == "" {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("VALIDATION_ERROR: %s: is required", pa.Name)}
					}
					if len(v) > maxPromptArg {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("VALIDATION_ERROR: %s: must be at most %d characters", pa.Name, maxPromptArg)}
					}
				}
				return &sdk.GetPromptResult{Description: p.description, Messages: []*sdk.PromptMessage{
					{Role: "user", Content: &sdk.TextContent{Text: p.text(a)}},
				}}, nil
			})
	}
}
