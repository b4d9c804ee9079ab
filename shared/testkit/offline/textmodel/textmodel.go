// Package textmodel is the offline text model, a stand-in of the local stack and the tests that no Lambda
// links: the model adapter that needs no network and no account. It writes every task's answer from the
// structured brief (ai.Request.Brief) instead of from the prompt text, with sentence frames of its own in
// the channel's language and the creator's own words (niche, keywords, insider terms, audience, notes,
// series formula, research) filling them. It is the local default, so `make run` gives
// schema-valid, personalised results from every tool.
//
// The same brief always gives the same bytes: every choice is drawn from a generator seeded with a hash of
// the brief. The answer matches generation.Schema(task) and the format rules of each tool by construction
// (the tests check every task and every enum value of its request).
//
// Languages: english, spanish, french, german and portuguese have phrasebooks. Any other language is written
// in english, and the answer's main text field starts with Marker so the pipeline can surface it (see
// Fallback).
package textmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/generation"
)

// Name is the model name every answer reports.
const Name = "offline"

// Marker starts the main text of an answer written in english because the channel's language has no
// phrasebook.
const Marker = "[offline sample, written in english]"

// Model is the offline model. The zero value is ready to use; it holds no state.
type Model struct{}

// New returns the offline model.
func New() *Model { return &Model{} }

var _ ai.Model = (*Model)(nil)

// Generate writes the answer of req.Task from req.Brief, which must be set.
func (m *Model) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	if err := ctx.Err(); err != nil {
		return ai.Result{}, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	b := req.Brief
	if b == nil {
		return ai.Result{}, failed("the offline model writes from the request's brief, and it has none")
	}
	task := req.Task
	if task == "" {
		task = b.Task
	}
	// The seed hashes the whole brief; its raw JSON fields go in as bytes, so a malformed one still
	// hashes (the writers treat it as absent).
	raw, err := json.Marshal(struct {
		*generation.Brief
		Input    []byte `json:"input"`
		Original []byte `json:"original"`
	}{b, b.Input, b.Original})
	if err != nil {
		return ai.Result{}, failed("brief: %v", err)
	}
	out, err := write(task, b, seed(task, raw))
	if err != nil {
		return ai.Result{}, err
	}
	answer, err := json.Marshal(out)
	if err != nil {
		return ai.Result{}, failed("answer: %v", err)
	}
	in := utf8.RuneCountInString(req.System)
	for _, msg := range req.Messages {
		in += utf8.RuneCountInString(msg.Text)
	}
	if in == 0 { // no prompt rendered: the brief is what was read
		in = utf8.RuneCount(raw)
	}
	return ai.Result{JSON: answer, InputTokens: tokens(in), OutputTokens: tokens(utf8.RuneCount(answer)), Model: Name}, nil
}

// tokens estimates a token count from a character count (about four characters a token).
func tokens(chars int) int { return (chars + 3) / 4 }

func seed(task string, brief []byte) uint64 {
	h := fnv.New64a()
	h.Write([]byte(task))
	h.Write([]byte{0})
	h.Write(brief)
	return h.Sum64()
}

func failed(format string, args ...any) error {
	return &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("offline: "+format, args...)}
}

// errUnknownTask is wrapped in the ai.Error of a task the offline model has no writer for.
var errUnknownTask = errors.New("no such task")

// write dispatches to the task's writer.
func write(task string, b *generation.Brief, seed uint64) (any, error) {
	if task == generation.TaskRefine {
		return refine(b, seed)
	}
	fn, ok := writers[task]
	if !ok {
		return nil, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("offline: task %q: %w", task, errUnknownTask)}
	}
	return fn(newWriter(b, seed, nil)), nil
}

// writers are the task writers (TaskRefine aside, which reruns one of them).
var writers = map[string]func(*writer) any{
	generation.TaskTitles:              titles,
	generation.TaskLongScript:          longScript,
	generation.TaskShortScript:         shortScript,
	generation.TaskDescription:         description,
	generation.TaskThumbnail:           thumbnail,
	generation.TaskHooks:               hooks,
	generation.TaskCTAs:                ctas,
	generation.TaskPodcastPrep:         podcastPrep,
	generation.TaskNewsletter:          newsletter,
	generation.TaskClips:               clips,
	generation.TaskCommunityPosts:      communityPosts,
	generation.TaskChannelDescription:  channelDescription,
	generation.TaskChannelPlaylists:    channelPlaylists,
	generation.TaskChannelBanner:       channelBanner,
	generation.TaskReoptimize:          reoptimize,
	generation.TaskNicheScore:          nicheScore,
	generation.TaskGradeTitles:         gradeTitles,
	generation.TaskGradeContent:        gradeContent,
	generation.TaskPatternTitles:       patterns("titles"),
	generation.TaskPatternThumbnails:   patterns("thumbnails"),
	generation.TaskPatternLongScripts:  patterns("longScripts"),
	generation.TaskPatternShortScripts: patterns("shortScripts"),
	generation.TaskPatternDescriptions: patterns("descriptions"),
	generation.TaskPatternIdeas:        patterns("ideas"),
	generation.TaskIdeas:               ideas,
}
