package generation

import (
	"cmp"
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
		var d contract.GeneratedDescription
		_ = json.Unmarshal(answer, &d)
		if strings.TrimSpace(contract.Value(d.FAQSection)) == "" {
			return []string{"faqSection: write the FAQ section"}
		}
		return nil
	},
	TaskIdeas: checkIdeas,
	TaskHooks: func(_ *Brief, answer json.RawMessage) []string {
		var d contract.HooksResult
		_ = json.Unmarshal(answer, &d)
		return oneEach("hooks", "approach", hookApproaches, d.Hooks, func(h contract.Hook) contract.HookApproach { return h.Approach })
	},
	TaskCTAs: func(_ *Brief, answer json.RawMessage) []string {
		var d contract.CTAsResult
		_ = json.Unmarshal(answer, &d)
		return oneEach("ctas", "slotPosition", ctaSlots, d.CTAs, func(c contract.CTA) contract.CTASlotPosition { return c.SlotPosition })
	},
	TaskClips: func(b *Brief, answer json.RawMessage) []string {
		var in contract.ClipsRequest
		_ = json.Unmarshal(b.Input, &in)
		var d contract.ClipsResult
		_ = json.Unmarshal(answer, &d)
		var out []string
		want := cmp.Or(contract.Value(in.ClipCount), 5)
		length := TranscriptSeconds(b.Transcript)
		// A short video holds fewer clips of at least MinClipSeconds than were asked for.
		if length > 0 && length/MinClipSeconds < want {
			want = max(length/MinClipSeconds, 1)
		}
		if len(d.Clips) != want {
			out = append(out, fmt.Sprintf("clips: write exactly %d clips, not %d", want, len(d.Clips)))
		}
		for i, c := range d.Clips {
			start, ok1 := parseHMS(c.StartTime)
			end, ok2 := parseHMS(c.EndTime)
			switch {
			case !ok1 || !ok2:
				out = append(out, fmt.Sprintf("clips/%d: startTime and endTime are required, as H:MM:SS", i))
			case end <= start:
				out = append(out, fmt.Sprintf("clips/%d: endTime must come after startTime", i))
			case end-start > 99*60+59:
				out = append(out, fmt.Sprintf("clips/%d: a clip lasts at most a few minutes", i))
			case length > 0 && end > length:
				out = append(out, fmt.Sprintf("clips/%d: endTime %s is past the end of the video (%s)", i, c.EndTime, hms(length)))
			}
		}
		return out
	},
	TaskCommunityPosts: func(b *Brief, answer json.RawMessage) []string {
		var in contract.CommunityPostsRequest
		_ = json.Unmarshal(b.Input, &in)
		var d contract.CommunityPostsResult
		_ = json.Unmarshal(answer, &d)
		var out []string
		for i, p := range d.Posts {
			if p.PostType != in.PostType {
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
				if q.IsCorrect {
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
		var d contract.NicheScore
		_ = json.Unmarshal(answer, &d)
		for _, n := range NicheDimensions {
			if !slices.ContainsFunc(d.Dimensions, func(x contract.NicheDimension) bool { return x.Name == n }) {
				return []string{fmt.Sprintf("dimensions: score each of %s exactly once", join(NicheDimensions, ", "))}
			}
		}
		return nil
	},
}

func scriptRules(answer json.RawMessage, markers []string, minWords, maxWords int, length string) []string {
	var d contract.GeneratedScript
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

// hookApproaches and ctaSlots are the enums whose lists hold exactly one item per value, in this order.
var (
	hookApproaches = []contract.HookApproach{contract.HookApproachCuriosity, contract.HookApproachBoldClaimContrarian,
		contract.HookApproachStoryPatternInterrupt}
	ctaSlots = []contract.CTASlotPosition{contract.CTASlotPositionEarly, contract.CTASlotPositionMiddle,
		contract.CTASlotPositionEnd, contract.CTASlotPositionExtra1, contract.CTASlotPositionExtra2}
)

// oneEach checks that items (the answer's list, named list) hold exactly one item per value of order,
// read by key (named keyName).
func oneEach[T any, K comparable](list, keyName string, order []K, items []T, key func(T) K) []string {
	count := map[K]int{}
	for _, it := range items {
		count[key(it)]++
	}
	for _, v := range order {
		if count[v] != 1 {
			return []string{fmt.Sprintf("%s: write exactly one per %s: %v", list, keyName, order)}
		}
	}
	return nil
}

// join joins the values of a string enum.
func join[S ~string](values []S, sep string) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return strings.Join(out, sep)
}

// MinClipSeconds is the shortest clip worth cutting.
const MinClipSeconds = 15

// parseHMS reads H:MM:SS as seconds.
func parseHMS(s string) (int, bool) {
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

// noText is the problem of an answer whose required free-text strings (no enum, const or format) are all
// blank: it matches a schema without minLength, but says nothing (issue 36 item 7: a thumbnail strategy
// of empty strings passed as a success).
func noText(schema, answer json.RawMessage) []string {
	var s, v any
	if json.Unmarshal(schema, &s) != nil || json.Unmarshal(answer, &v) != nil {
		return nil
	}
	texts, blank := requiredText(s, v)
	if texts > 0 && texts == blank {
		return []string{"every text of the answer is empty: write them"}
	}
	return nil
}

// requiredText counts the free-text strings of v in required places of schema s, and the blank ones.
func requiredText(s, v any) (texts, blank int) {
	sm, _ := s.(map[string]any)
	if sm == nil {
		return 0, 0
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		alts, _ := sm[k].([]any)
		for _, alt := range alts {
			t, b := requiredText(alt, v)
			texts, blank = texts+t, blank+b
		}
	}
	switch x := v.(type) {
	case string:
		_, enum := sm["enum"]
		_, constant := sm["const"]
		_, format := sm["format"]
		if !enum && !constant && !format {
			texts++
			if strings.TrimSpace(x) == "" {
				blank++
			}
		}
	case []any:
		for _, e := range x {
			t, b := requiredText(sm["items"], e)
			texts, blank = texts+t, blank+b
		}
	case map[string]any:
		props, _ := sm["properties"].(map[string]any)
		required, _ := sm["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			if e, ok := x[name]; ok {
				t, b := requiredText(props[name], e)
				texts, blank = texts+t, blank+b
			}
		}
	}
	return texts, blank
}
