package generation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/creatorstrategy/css/shared/contract"
)

// The rules of an answer beyond its schema. A broken rule goes back to the model in the repair turn, so
// each message says what to change.
var checks = map[string]checker{
	TaskGradeTitles: func(b *Brief, answer json.RawMessage) []string {
		var g TitleGrades
		_ = json.Unmarshal(answer, &g)
		var out []string
		seen := map[int]bool{}
		for _, gr := range g.Grades {
			if gr.Index >= len(b.Items) {
				out = append(out, fmt.Sprintf("grades: index %d: there are only %d titles", gr.Index, len(b.Items)))
			}
			seen[gr.Index] = true
		}
		for i := range b.Items {
			if !seen[i] {
				out = append(out, fmt.Sprintf("grades: title %d has no grade", i))
			}
		}
		return out
	},
	TaskLongScript: func(_ *Brief, answer json.RawMessage) []string {
		return scriptRules(answer, []string{"[B-ROLL", "[GRAPHIC"}, 1000, 2600, "8 to 15 minutes: 1,200 to 2,250 words")
	},
	TaskShortScript: func(_ *Brief, answer json.RawMessage) []string {
		return scriptRules(answer, []string{"[VISUAL"}, 60, 180, "30 to 60 seconds: 75 to 150 words")
	},
	TaskDescription: func(_ *Brief, answer json.RawMessage) []string {
		var d struct {
			FAQ string `json:"faqSection"`
		}
		_ = json.Unmarshal(answer, &d)
		if strings.TrimSpace(d.FAQ) == "" {
			return []string{"faqSection: write the FAQ section"}
		}
		return nil
	},
	TaskIdeas: checkIdeas,
	TaskHooks: oneEach(TaskHooks),
	TaskCTAs:  oneEach(TaskCTAs),
	TaskClips: func(b *Brief, answer json.RawMessage) []string {
		var in contract.ClipsRequest
		_ = json.Unmarshal(b.Input, &in)
		var d struct {
			Clips []map[string]any `json:"clips"`
		}
		_ = json.Unmarshal(answer, &d)
		var out []string
		want := contract.Value(in.ClipCount)
		if want == 0 {
			want = 5
		}
		length := TranscriptSeconds(b.Transcript)
		// A short video holds fewer clips of at least MinClipSeconds than were asked for.
		if length > 0 && length/MinClipSeconds < want {
			want = max(length/MinClipSeconds, 1)
		}
		if len(d.Clips) != want {
			out = append(out, fmt.Sprintf("clips: write exactly %d clips, not %d", want, len(d.Clips)))
		}
		for i, c := range d.Clips {
			start, ok1 := parseHMS(c["startTime"])
			end, ok2 := parseHMS(c["endTime"])
			switch {
			case !ok1 || !ok2:
				out = append(out, fmt.Sprintf("clips/%d: startTime and endTime are required, as H:MM:SS", i))
			case end <= start:
				out = append(out, fmt.Sprintf("clips/%d: endTime must come after startTime", i))
			case end-start > 99*60+59:
				out = append(out, fmt.Sprintf("clips/%d: a clip lasts at most a few minutes", i))
			case length > 0 && end > length:
				out = append(out, fmt.Sprintf("clips/%d: endTime %s is past the end of the video (%s)", i, c["endTime"], hms(length)))
			}
		}
		return out
	},
	TaskCommunityPosts: func(b *Brief, answer json.RawMessage) []string {
		var in contract.CommunityPostsRequest
		_ = json.Unmarshal(b.Input, &in)
		var d struct {
			Posts []struct {
				PostType    string           `json:"postType"`
				PollOptions []string         `json:"pollOptions"`
				QuizOptions []map[string]any `json:"quizOptions"`
			} `json:"posts"`
		}
		_ = json.Unmarshal(answer, &d)
		var out []string
		for i, p := range d.Posts {
			if p.PostType != "" && p.PostType != string(in.PostType) {
				out = append(out, fmt.Sprintf("posts/%d/postType: must be %q", i, in.PostType))
			}
			switch {
			case in.PostType == "poll" && len(p.PollOptions) < 2:
				out = append(out, fmt.Sprintf("posts/%d/pollOptions: a poll needs 2 to 5 options", i))
			case in.PostType != "poll" && len(p.PollOptions) > 0:
				out = append(out, fmt.Sprintf("posts/%d/pollOptions: only poll posts have poll options", i))
			}
			correct := 0
			for _, q := range p.QuizOptions {
				if q["isCorrect"] == true {
					correct++
				}
			}
			switch {
			case in.PostType == "quiz" && (len(p.QuizOptions) < 2 || correct != 1):
				out = append(out, fmt.Sprintf("posts/%d/quizOptions: a quiz needs 2 to 4 options, exactly one correct", i))
			case in.PostType != "quiz" && len(p.QuizOptions) > 0:
				out = append(out, fmt.Sprintf("posts/%d/quizOptions: only quiz posts have quiz options", i))
			}
		}
		return out
	},
	TaskNicheScore: func(_ *Brief, answer json.RawMessage) []string {
		var d struct {
			Dimensions []struct {
				Name string `json:"name"`
			} `json:"dimensions"`
		}
		_ = json.Unmarshal(answer, &d)
		var names []string
		for _, x := range d.Dimensions {
			names = append(names, x.Name)
		}
		for _, n := range NicheDimensions {
			if !slices.Contains(names, n) {
				return []string{"dimensions: score each of " + strings.Join(NicheDimensions, ", ") + " exactly once"}
			}
		}
		return nil
	},
}

func scriptRules(answer json.RawMessage, markers []string, minWords, maxWords int, length string) []string {
	var d struct {
		Script string `json:"script"`
	}
	_ = json.Unmarshal(answer, &d)
	var out []string
	for _, m := range markers {
		if !strings.Contains(d.Script, m) {
			out = append(out, "script: mark visual cues with "+m+": …]")
		}
	}
	if n := SpokenWords(d.Script); n < minWords || n > maxWords {
		out = append(out, fmt.Sprintf("script: %d spoken words; the video runs %s", n, length))
	}
	return out
}

// orderedSpecs are the lists with exactly one item per value of an enum.
var orderedSpecs = map[string]struct {
	list, key string
	order     []any
}{
	TaskHooks: {"hooks", "approach", []any{"Curiosity", "Bold Claim/Contrarian", "Story/Pattern Interrupt"}},
	TaskCTAs:  {"ctas", "slotPosition", []any{"early", "middle", "end", "extra_1", "extra_2"}},
}

func oneEach(task string) checker {
	spec := orderedSpecs[task]
	return func(_ *Brief, answer json.RawMessage) []string {
		var d map[string][]map[string]any
		_ = json.Unmarshal(answer, &d)
		count := map[any]int{}
		for _, it := range d[spec.list] {
			count[it[spec.key]]++
		}
		for _, v := range spec.order {
			if count[v] != 1 {
				return []string{fmt.Sprintf("%s: write exactly one per %s: %v", spec.list, spec.key, spec.order)}
			}
		}
		return nil
	}
}

// MinClipSeconds is the shortest clip worth cutting.
const MinClipSeconds = 15

// parseHMS reads H:MM:SS as seconds.
func parseHMS(v any) (int, bool) {
	s, _ := v.(string)
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false
	}
	total := 0
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, false
		}
		total = total*60 + n
	}
	return total, true
}

func hms(secs int) string { return fmt.Sprintf("%d:%02d:%02d", secs/3600, secs/60%60, secs%60) }

// TranscriptSeconds estimates how long a transcript runs: the last of the timestamps (H:MM:SS or MM:SS,
// optionally in brackets) that start its lines, when at least two lines start with one, else its words at
// the speaking rate.
func TranscriptSeconds(t string) int {
	last, stamped, words := 0, 0, 0
	for line := range strings.Lines(t) {
		fields := strings.Fields(line)
		words += len(fields)
		if len(fields) == 0 {
			continue
		}
		if secs, ok := stampSeconds(strings.Trim(fields[0], "[]()")); ok {
			stamped++
			last = max(last, secs)
		}
	}
	if stamped >= 2 {
		return last
	}
	return words * 60 / SpokenWordsPerMinute
}

func stampSeconds(f string) (int, bool) {
	parts := strings.Split(f, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	secs := 0
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 2 {
			return 0, false
		}
		secs = secs*60 + n
	}
	return secs, true
}
