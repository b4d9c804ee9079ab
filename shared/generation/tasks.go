package generation

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/creatorstrategy/css/shared/contract"
)

// A task is one kind of model call. Every tool makes one or more (titles: TaskTitles per video type, then
// TaskGradeTitles), and each task has its answer's JSON Schema: the tool's response component of the
// contract minus what code computes (grades, word counts, image URLs), so the model writes only what a
// model should and the contract stays the one source of every shape.
const (
	TaskTitles             = "titles"
	TaskLongScript         = "long_script"
	TaskShortScript        = "short_script"
	TaskDescription        = "description"
	TaskThumbnail          = "thumbnail"
	TaskHooks              = "hooks"
	TaskCTAs               = "ctas"
	TaskPodcastPrep        = "podcast_prep"
	TaskNewsletter         = "newsletter"
	TaskClips              = "clips"
	TaskCommunityPosts     = "community_posts"
	TaskChannelDescription = "channel_description"
	TaskChannelPlaylists   = "channel_playlists"
	TaskChannelBanner      = "channel_banner"
	TaskReoptimize         = "reoptimize"
	TaskNicheScore         = "niche_score"
	TaskGradeTitles        = "grade_titles"  // the grading model scores titles on four dimensions
	TaskGradeContent       = "grade_content" // the grading model scores a script, description or strategy
	TaskRefine             = "refine"        // answers in the schema of Brief.OriginalTask
)

// Tasks lists every task but TaskRefine (whose schema is its original task's).
var Tasks = []string{
	TaskTitles, TaskLongScript, TaskShortScript, TaskDescription, TaskThumbnail, TaskHooks, TaskCTAs,
	TaskPodcastPrep, TaskNewsletter, TaskClips, TaskCommunityPosts, TaskChannelDescription,
	TaskChannelPlaylists, TaskChannelBanner, TaskReoptimize, TaskNicheScore, TaskGradeTitles, TaskGradeContent,
	TaskPatternTitles, TaskPatternThumbnails, TaskPatternLongScripts, TaskPatternShortScripts,
	TaskPatternDescriptions, TaskPatternIdeas, TaskIdeas,
}

// MaxTitlesPerCall is the most titles one TaskTitles call writes (up to 10 Long and 10 Short).
const MaxTitlesPerCall = 10

// TitleDraft is the answer of TaskTitles.
type TitleDraft struct {
	Titles []struct {
		Title string `json:"title"`
	} `json:"titles"`
}

// TitleGrades is the answer of TaskGradeTitles: one entry per title of Brief.Items, by index. The fifth
// dimension, rulesCompliance, is computed by code (Rules), not asked of a model.
type TitleGrades struct {
	Grades []TitleGrade `json:"grades"`
}

// TitleGrade scores one title, each dimension 1..10.
type TitleGrade struct {
	Index             int     `json:"index"`
	NicheRelevance    float64 `json:"nicheRelevance"`
	ResearchAlignment float64 `json:"researchAlignment"`
	HookStrength      float64 `json:"hookStrength"`
	BrandVoice        float64 `json:"brandVoice"`
	Feedback          string  `json:"feedback"`
}

// ContentGrade is the answer of TaskGradeContent.
type ContentGrade struct {
	Score    float64 `json:"score"` // 0..100
	Feedback string  `json:"feedback"`
}

func dimension() map[string]any { return map[string]any{"type": "number", "minimum": 1, "maximum": 10} }

// custom are the tasks whose answer is not a contract component.
var custom = map[string]func() map[string]any{
	TaskTitles: func() map[string]any {
		return object(map[string]any{
			"titles": map[string]any{"type": "array", "minItems": 1, "maxItems": MaxTitlesPerCall,
				"items": object(map[string]any{"title": map[string]any{"type": "string", "minLength": 1, "maxLength": 100}}, "title")},
		}, "titles")
	},
	TaskGradeTitles: func() map[string]any {
		return object(map[string]any{
			"grades": map[string]any{"type": "array", "minItems": 1, "items": object(map[string]any{
				"index": map[string]any{"type": "integer", "minimum": 0}, "nicheRelevance": dimension(),
				"researchAlignment": dimension(), "hookStrength": dimension(), "brandVoice": dimension(),
				"feedback": map[string]any{"type": "string", "maxLength": 300},
			}, "index", "nicheRelevance", "researchAlignment", "hookStrength", "brandVoice", "feedback")},
		}, "grades")
	},
	TaskGradeContent: func() map[string]any {
		return object(map[string]any{
			"score":    map[string]any{"type": "number", "minimum": 0, "maximum": 100},
			"feedback": map[string]any{"type": "string", "minLength": 1, "maxLength": 600},
		}, "score", "feedback")
	},
}

// derived are the tasks whose answer is a contract component less the parts code computes (paths of
// properties, "*" for every array item).
var derived = map[string]struct {
	component string
	omit      []string
}{
	TaskLongScript:         {"GeneratedScript", []string{"grade", "score", "feedback", "wordCount", "estimatedDuration"}},
	TaskShortScript:        {"GeneratedScript", []string{"grade", "score", "feedback", "wordCount", "estimatedDuration"}},
	TaskDescription:        {"GeneratedDescription", []string{"grade"}},
	TaskThumbnail:          {"ThumbnailStrategy", []string{"imageUrl", "grade"}},
	TaskHooks:              {"HooksResult", nil},
	TaskCTAs:               {"CtasResult", nil},
	TaskPodcastPrep:        {"PodcastPrep", nil},
	TaskNewsletter:         {"Newsletter", []string{"estimatedReadTime"}},
	TaskClips:              {"ClipsResult", []string{"clips/*/duration"}},
	TaskCommunityPosts:     {"CommunityPostsResult", nil},
	TaskChannelDescription: {"ChannelDescription", nil},
	TaskChannelPlaylists:   {"PlaylistSuggestion", nil},
	TaskChannelBanner:      {"BannerStrategy", []string{"imageUrl", "safeZones"}},
	TaskReoptimize: {"ReoptimizeResult", []string{"titles/*/grade", "titles/*/score", "titles/*/feedback",
		"titles/*/videoType", "titles/*/dimensions", "thumbnail/imageUrl", "thumbnail/grade"}},
	TaskNicheScore: {"NicheScore", []string{"overallScore", "letterGrade"}},
}

var schemaCache sync.Map // task → json.RawMessage; the schemas never change

// Schema returns the JSON Schema of a task's answer.
func Schema(task string) (json.RawMessage, error) {
	if s, ok := schemaCache.Load(task); ok {
		return s.(json.RawMessage), nil
	}
	var s map[string]any
	if build, ok := custom[task]; ok {
		s = build()
		s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	} else if build, ok := shaped[task]; ok {
		var err error
		if s, err = build(); err != nil {
			return nil, fmt.Errorf("generation: task %s: %w", task, err)
		}
		s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	} else if d, ok := derived[task]; ok {
		var err error
		if s, err = contract.JSONSchema(d.component); err != nil {
			return nil, err
		}
		for _, path := range d.omit {
			if err := omit(s, strings.Split(path, "/")); err != nil {
				return nil, fmt.Errorf("generation: task %s: omit %s: %w", task, path, err)
			}
		}
	} else {
		return nil, fmt.Errorf("generation: no task %q", task)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	schemaCache.Store(task, json.RawMessage(raw))
	return raw, nil
}

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		o["required"] = req
	}
	return o
}

// omit removes the property at path from an object schema, and from its required list.
func omit(s map[string]any, path []string) error {
	if path[0] == "*" {
		items, ok := s["items"].(map[string]any)
		if !ok {
			return fmt.Errorf("no items")
		}
		return omit(items, path[1:])
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return fmt.Errorf("no properties")
	}
	if len(path) > 1 {
		next, ok := props[path[0]].(map[string]any)
		if !ok {
			return fmt.Errorf("no property %s", path[0])
		}
		return omit(next, path[1:])
	}
	if _, ok := props[path[0]]; !ok {
		return fmt.Errorf("no property %s", path[0])
	}
	delete(props, path[0])
	if req, ok := s["required"].([]any); ok {
		kept := req[:0]
		for _, r := range req {
			if r != path[0] {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(s, "required")
		} else {
			s["required"] = kept
		}
	}
	return nil
}
