package generation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/research"
)

var blockRE = regexp.MustCompile(`(?s)<(data-[0-9a-f]{16}) name="([^"]*)">\n(.*?)\n</(data-[0-9a-f]{16})>\n`)

// dataBlocks returns a user message's data blocks by name, and the message with every block cut out.
func dataBlocks(tb testing.TB, user string) (map[string]string, string) {
	tb.Helper()
	out := map[string]string{}
	rest := blockRE.ReplaceAllStringFunc(user, func(m string) string {
		sub := blockRE.FindStringSubmatch(m)
		if sub[1] != sub[4] {
			tb.Errorf("block %s closed by %s", sub[1], sub[4])
		}
		if !json.Valid([]byte(sub[3])) || strings.Contains(sub[3], "\n") {
			tb.Errorf("block %s is not one line of JSON: %s", sub[2], sub[3])
		}
		out[sub[2]] = sub[3]
		return ""
	})
	return out, rest
}

func dataBlock(tb testing.TB, user, name string) string {
	tb.Helper()
	blocks, _ := dataBlocks(tb, user)
	b, ok := blocks[name]
	if !ok {
		tb.Errorf("no data block %q in:\n%s", name, user)
	}
	return b
}

// corpusTasks are every task with a prompt.
var corpusTasks = []string{
	generation.TaskTitles, generation.TaskLongScript, generation.TaskShortScript, generation.TaskDescription,
	generation.TaskThumbnail, generation.TaskHooks, generation.TaskCTAs, generation.TaskPodcastPrep,
	generation.TaskNewsletter, generation.TaskClips, generation.TaskCommunityPosts, generation.TaskChannelDescription,
	generation.TaskChannelPlaylists, generation.TaskChannelBanner, generation.TaskReoptimize, generation.TaskNicheScore,
	generation.TaskGradeTitles, generation.TaskGradeContent, generation.TaskRefine, generation.TaskIdeas,
	generation.TaskPatternTitles, generation.TaskPatternThumbnails, generation.TaskPatternLongScripts,
	generation.TaskPatternShortScripts, generation.TaskPatternDescriptions, generation.TaskPatternIdeas,
}

// hostileBrief is a brief of task with s in every untrusted input: the profile's texts, notes, series,
// research patterns, outliers and research videos (titles, channels, descriptions, tags), recent outputs,
// every free-text field of the request, the transcript, the texts to grade, the output to refine, the
// feedback and the taken titles.
func hostileBrief(t *testing.T, task, s string) *generation.Brief {
	t.Helper()
	in, err := json.Marshal(map[string]any{"title": s, "type": s, "context": s, "currentHook": s, "topic": s,
		"guestName": s, "guestBio": s, "videoUrl": s, "postType": "poll", "style": "story", "episodeType": "interview",
		"peopleMode": "you", "clipCount": 3, "hasBackground": true})
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := json.Marshal(map[string]any{"titles": []map[string]string{{"title": s}}})
	return &generation.Brief{Task: task, Language: "english",
		Profile: profile.NicheProfile{BroadNiche: s, FocusedNiche: s, Slogan: s, NicheStatement: s, Mission: s, Purpose: s,
			Passion: s, Keywords: []string{s, s}, InsiderTerms: []string{s}, TargetAudience: s, ChannelGoals: s, PainPoints: s,
			ProfitModel: s, TopCompetitors: []string{s}, Sponsors: []string{s}, ContentLanguage: "english"},
		Notes:    []generation.BriefNote{{Category: "style", Content: s}, {Category: "feedback", Content: s}},
		Series:   &generation.BriefSeries{Name: s, Description: s, ScriptFormula: s},
		Patterns: s,
		Outliers: []generation.Outlier{{Title: s, URL: "https://www.youtube.com/watch?v=out", Views: 10, Score: 2, ContentType: "Long"}},
		Recent:   []string{s},
		Input:    in, VideoType: "Long", Transcript: "0:00 " + s + "\n0:30 " + s,
		Items: []string{s, s}, GradedTool: "long_scripts", Original: orig, OriginalTask: generation.TaskTitles,
		Feedback: s, SpecificItem: s, Kind: "titles", Count: 3, ContentType: "Long", Taken: []string{s},
		Videos: []generation.ResearchVideo{{Title: s, URL: "https://www.youtube.com/watch?v=src", ChannelTitle: s, Views: 1, Score: 2,
			ContentType: "Long", DurationSeconds: 600, Formula: s, Description: s, Tags: []string{s}}},
	}
}

// fragments are the parts of s that must never appear outside a data block: each line of it.
func fragments(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if l := strings.TrimSpace(line); len(l) >= 4 {
			out = append(out, l)
		}
	}
	return out
}

// holds reports whether a block's JSON value has a string containing s.
func holds(block, s string) bool {
	var v any
	if json.Unmarshal([]byte(block), &v) != nil {
		return false
	}
	found := false
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			found = found || strings.Contains(x, s)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

// Every corpus string, placed in every untrusted input of every task's prompt, lands only inside data
// blocks of the user message: never in the system prompt, never in the task's text, never able to close
// a block (each block is one line of JSON between tags of the message's random boundary).
func TestInjectionCorpusStaysInDataBlocks(t *testing.T) {
	corpus := generation.InjectionCorpus(t)
	landed := make([]map[string]bool, len(corpus))
	boundaries := map[string]bool{}
	for i, s := range corpus {
		landed[i] = map[string]bool{}
		for _, task := range corpusTasks {
			sys, usr, err := generation.Render(hostileBrief(t, task, s))
			if err != nil {
				t.Fatalf("%s: %v", task, err)
			}
			blocks, rest := dataBlocks(t, usr)
			if len(blocks) == 0 {
				t.Errorf("%s: no data block", task)
			}
			if m := blockRE.FindStringSubmatch(usr); m != nil {
				tag := m[1]
				boundaries[tag] = true
				// The tags in the message are the blocks' and the two of the explanation, no more.
				if opens, closes := strings.Count(usr, "<"+tag), strings.Count(usr, "</"+tag+">"); opens != len(blocks)+1 || closes != len(blocks)+1 {
					t.Errorf("%s: %d opening and %d closing tags for %d blocks", task, opens, closes, len(blocks))
				}
			}
			for _, where := range []struct{ name, text string }{{"system prompt", sys}, {"text outside the blocks", rest}} {
				for _, f := range append(fragments(s), "evil.example") {
					if strings.Contains(where.text, f) {
						t.Errorf("corpus %d in %s's %s: %q\n%s", i, task, where.name, f, where.text)
					}
				}
			}
			for name, b := range blocks {
				if holds(b, s) {
					landed[i][name] = true
				}
			}
		}
	}
	if len(boundaries) < len(corpus)*len(corpusTasks)/2 {
		t.Errorf("%d distinct boundaries in %d prompts: not per message", len(boundaries), len(corpus)*len(corpusTasks))
	}
	for i, s := range corpus {
		names := slices.Sorted(maps.Keys(landed[i]))
		t.Logf("| %d | %s | %d blocks: %s | outside: 0 |", i+1, strconv.QuoteToASCII(cutFor(s, 60)), len(names), strings.Join(names, ", "))
	}
}

func cutFor(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// An answer that echoes a corpus string from the channel's research is cleaned (no HTML, active link,
// control or bidi character, or URL that was in no input survives) or refused (text addressed to an
// assistant: a repair turn, then GENERATION_FAILED).
func TestInjectionCorpusEchoIsCleanedOrRefused(t *testing.T) {
	for i, s := range generation.InjectionCorpus(t) {
		e := newEnv(t, 100)
		if err := e.st.PutPatterns(context.Background(), "ch1", research.Patterns{Titles: s}); err != nil {
			t.Fatal(err)
		}
		var answers []string
		for j := range 4 {
			title, _ := json.Marshal(fmt.Sprintf("Edit %d videos a day %s", j+1, s))
			answers = append(answers, fmt.Sprintf(`{"title":%s}`, title))
		}
		answer := `{"titles":[` + strings.Join(answers, ",") + `]}`
		e.writer.answers[generation.TaskTitles] = []string{answer}
		e.grader.answers[generation.TaskGradeTitles] = []string{gradesFor(4, 10)}
		out, err := titles(t, e, contract.TitlesRequest{Title: "Editing a week of videos in a day", Type: "how-to"}, "")
		outcome := ""
		switch {
		case err != nil:
			outcome = "refused: " + string(apperr.CodeOf(err))
			if apperr.CodeOf(err) != apperr.GenerationFailed || e.writer.count("") < 2 {
				t.Errorf("corpus %d: %v after %d writer calls", i+1, err, e.writer.count(""))
			}
		case !out.Done:
			t.Fatal("not done")
		default:
			var res contract.TitlesResult
			if err := json.Unmarshal(out.Output, &res); err != nil {
				t.Fatal(err)
			}
			for _, ti := range res.Titles {
				if what := forbiddenIn(ti.Title, nil); what != "" || strings.Contains(ti.Title, "evil.example") || research.AddressesAssistant(ti.Title) {
					t.Errorf("corpus %d: stored title %q keeps %s", i+1, ti.Title, what)
				}
			}
			outcome = "cleaned: " + strconv.QuoteToASCII(res.Titles[0].Title)
		}
		t.Logf("| %d | %s | %s |", i+1, strconv.QuoteToASCII(cutFor(s, 50)), outcome)
	}
}

// The system prompt is the service's own: the same text whatever the channel, the research and the
// request hold (only the language, an enum, varies).
func TestSystemPromptHoldsNoData(t *testing.T) {
	want, _, err := generation.Render(&generation.Brief{Task: generation.TaskTitles, Language: "english", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range generation.InjectionCorpus(t)[:3] {
		for _, task := range corpusTasks {
			sys, _, err := generation.Render(hostileBrief(t, task, s))
			if err != nil {
				t.Fatal(err)
			}
			if sys != want {
				t.Fatalf("%s: the system prompt varies with the data:\n%s", task, sys)
			}
		}
	}
}
