package textmodel

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/generation"
)

// directives are what a refinement's feedback asks for, as the writers can follow it.
type directives struct {
	feedback        string
	shorter, longer bool
	question        bool
	numbers         bool
	include         string   // a quoted phrase to work in
	avoid           []string // phrases to leave out
	emphasis        []string // the feedback's content words: keywords they name lead
	topic           string   // the original's subject, when the input does not say it
}

func parseDirectives(feedback string, L *book) directives {
	d := directives{feedback: clean(feedback)}
	has := func(l, en []string) bool { return mentionsAny(feedback, l) || mentionsAny(feedback, en) }
	d.shorter = has(L.Shorter, english.Shorter)
	d.longer = has(L.Longer, english.Longer) && !d.shorter
	d.question = has(L.MoreQuestion, english.MoreQuestion)
	d.numbers = has(L.MoreNumbers, english.MoreNumbers)
	if has(L.Avoid, english.Avoid) {
		d.avoid = avoided(feedback, L)
	} else if q := quoted(feedback); len(q) > 0 && countWords(q[0]) <= 6 {
		d.include = q[0]
	}
	directive := map[string]bool{}
	for _, list := range [][]string{L.Shorter, L.Longer, L.MoreQuestion, L.MoreNumbers, L.Avoid, english.Shorter, english.Longer, english.MoreQuestion, english.MoreNumbers, english.Avoid} {
		for _, w := range list {
			directive[w] = true
		}
	}
	for _, w := range contentWords(feedback, stopwords(L), 6) {
		if !directive[w] {
			d.emphasis = append(d.emphasis, w)
		}
	}
	return d
}

// mainLists name each task's list of items, the one a specificItem index points into.
var mainLists = map[string]string{
	generation.TaskTitles: "titles", generation.TaskHooks: "hooks", generation.TaskCTAs: "ctas", generation.TaskIdeas: "ideas",
	generation.TaskCommunityPosts: "posts", generation.TaskClips: "clips", generation.TaskChannelPlaylists: "playlists",
	generation.TaskNicheScore: "dimensions", generation.TaskGradeTitles: "grades", generation.TaskPodcastPrep: "talkingPoints",
	generation.TaskReoptimize: "titles", generation.TaskDescription: "hashtags",
}

// kept are the fields of an item a narrowed refinement keeps from the original: its place (clip times),
// its enum (approach, slot, post type, dimension) and its identity.
var kept = []string{"startTime", "endTime", "approach", "slotPosition", "postType", "index", "name", "keyword"}

// refine answers in the schema of Brief.OriginalTask: the original task rewritten with the feedback as
// directives (shorter, longer, questions, numbers, a quoted phrase to include or avoid, the keywords it
// names first). With SpecificItem, only that item of the original changes: an index ("3" or "title 3":
// the third; "0": the first), a field name ("description", "subject"), an enum value ("early",
// "Curiosity") or text the item contains; the rest of the original is kept as it was.
func refine(b *generation.Brief, seed uint64) (any, error) {
	task := b.OriginalTask
	fn, ok := writers[task]
	if !ok {
		return nil, &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("offline: refine: original task %q: %w", task, errUnknownTask)}
	}
	L, _ := phrasebook(b.Language)
	d := parseDirectives(b.Feedback, L)
	d.topic = topicFrom(b.Original)
	w := newWriter(b, seed, &d)
	// What the original said counts as said: the rewrite looks for new lines.
	gjson.ParseBytes(b.Original).ForEach(func(_, v gjson.Result) bool {
		collectStrings(v, func(s string) { w.recent = append(w.recent, strings.ToLower(s)) })
		return true
	})
	fresh := fn(w)
	if strings.TrimSpace(b.SpecificItem) == "" || len(b.Original) == 0 {
		return fresh, nil
	}
	rawSchema, err := generation.Schema(task)
	if err != nil {
		return nil, &ai.Error{Kind: ai.ErrFailed, Err: err}
	}
	var schema map[string]any
	var orig, freshV any
	if json.Unmarshal(rawSchema, &schema) != nil || json.Unmarshal(b.Original, &orig) != nil {
		return fresh, nil
	}
	freshRaw, _ := json.Marshal(fresh)
	_ = json.Unmarshal(freshRaw, &freshV)
	if task == generation.TaskTitles {
		orig = titlesOfType(orig, b.VideoType)
	}
	projected, ok := project(orig, schema)
	obj, isObj := projected.(map[string]any)
	fv, _ := freshV.(map[string]any)
	if !ok || !isObj || fv == nil {
		return fresh, nil
	}
	// What the original lacks of the schema's required fields comes from the rewrite.
	for _, r := range required(schema) {
		if _, has := obj[r]; !has {
			obj[r] = fv[r]
		}
	}
	if !narrow(task, obj, fv, b.SpecificItem) {
		return fresh, nil
	}
	return obj, nil
}

// narrow replaces the item spec names in obj with the rewrite's; false when spec names nothing.
func narrow(task string, obj, fresh map[string]any, spec string) bool {
	spec = strings.TrimSpace(spec)
	ls := strings.ToLower(spec)
	// A field name: that field.
	for k := range obj {
		if strings.EqualFold(k, spec) {
			replaceField(task, obj, fresh, k)
			return true
		}
	}
	listKey := mainLists[task]
	items, _ := obj[listKey].([]any)
	freshItems, _ := fresh[listKey].([]any)
	if len(items) == 0 || len(freshItems) == 0 {
		if len(items) == 0 && listKey == "" {
			for k := range obj {
				if strings.Contains(ls, strings.ToLower(k)) {
					replaceField(task, obj, fresh, k)
					return true
				}
			}
		}
		return false
	}
	// The item's own text or an enum value of it first ("3 Budget Tips" names a title, not the third),
	// then an index when spec is short ("3", "title 3", "#3").
	idx := -1
	for pass := 0; pass < 2 && idx < 0; pass++ {
		for i, it := range items {
			if matchesItem(it, spec, ls, pass == 1) {
				idx = i
				break
			}
		}
	}
	if n, ok := firstInt(spec); ok && idx < 0 && countWords(spec) <= 3 {
		switch {
		case n == 0:
			idx = 0
		case n >= 1 && n <= len(items):
			idx = n - 1
		}
	}
	if idx < 0 {
		return false
	}
	repl := freshItems[min(idx, len(freshItems)-1)]
	// A rewritten title must differ from every title already there.
	if task == generation.TaskTitles || task == generation.TaskReoptimize {
		unique := false
		for _, cand := range append([]any{repl}, freshItems...) {
			if !slices.ContainsFunc(items, func(it any) bool { return sameTitle(it, cand) }) {
				repl, unique = cand, true
				break
			}
		}
		if !unique {
			return true // nothing new to say: the original stays as it was
		}
	}
	if m, ok := repl.(map[string]any); ok {
		if om, ok := items[idx].(map[string]any); ok {
			merged := make(map[string]any, len(m))
			for k, v := range m {
				merged[k] = v
			}
			for _, k := range kept {
				if v, has := om[k]; has {
					merged[k] = v
				}
			}
			repl = merged
		}
	}
	items[idx] = repl
	return true
}

// matchesItem reports whether an item says spec: one of its strings is spec (exact), or, loosely, one
// contains the other.
func matchesItem(it any, spec, lowerSpec string, loose bool) bool {
	var strs []string
	switch v := it.(type) {
	case string:
		strs = []string{v}
	case map[string]any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				strs = append(strs, s)
			}
		}
	}
	for _, s := range strs {
		if strings.EqualFold(s, spec) {
			return true
		}
		ls := strings.ToLower(s)
		if loose && ((len(lowerSpec) >= 4 && strings.Contains(ls, lowerSpec)) || (len(ls) >= 4 && strings.Contains(lowerSpec, ls))) {
			return true
		}
	}
	return false
}

func replaceField(task string, obj, fresh map[string]any, k string) {
	obj[k] = fresh[k]
	if task == generation.TaskNewsletter && (k == "bodyHtml" || k == "bodyText") {
		// The two bodies say the same: they change together.
		obj["bodyHtml"], obj["bodyText"] = fresh["bodyHtml"], fresh["bodyText"]
	}
}

func sameTitle(a, b any) bool {
	am, _ := a.(map[string]any)
	bm, _ := b.(map[string]any)
	return am != nil && bm != nil && strings.EqualFold(toString(am["title"]), toString(bm["title"]))
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

func firstInt(s string) (int, bool) {
	start := -1
	for i, r := range s {
		if r >= '0' && r <= '9' {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			n, err := strconv.Atoi(s[start:i])
			return n, err == nil
		}
	}
	if start < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s[start:])
	return n, err == nil
}

// titlesOfType keeps the titles written for one video type when the original is a titles result that
// mixes both (GeneratedTitle.videoType), since one titles answer holds one type's titles.
func titlesOfType(orig any, videoType string) any {
	m, ok := orig.(map[string]any)
	if !ok || videoType == "" {
		return orig
	}
	items, ok := m["titles"].([]any)
	if !ok {
		return orig
	}
	var keep []any
	for _, it := range items {
		im, _ := it.(map[string]any)
		if vt, has := im["videoType"]; !has || vt == videoType {
			keep = append(keep, it)
		}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	out["titles"] = keep
	return out
}

// project fits a JSON value to a JSON Schema the way the schema's constraints allow without inventing
// content: undeclared properties of a closed object are dropped, arrays and strings cut to their maximum,
// numbers clamped; ok is false when the value cannot fit (wrong type, too few items, an unknown enum
// value, a missing required property).
func project(v any, s map[string]any) (any, bool) {
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		return nil, false
	}
	switch t := v.(type) {
	case map[string]any:
		if !typeIs(s, "object") {
			return nil, false
		}
		props, _ := s["properties"].(map[string]any)
		closed := s["additionalProperties"] == false
		out := make(map[string]any, len(t))
		for k, val := range t {
			ps, declared := props[k].(map[string]any)
			if !declared {
				if !closed {
					out[k] = val
				}
				continue
			}
			if pv, ok := project(val, ps); ok {
				out[k] = pv
			}
		}
		for _, r := range required(s) {
			if _, has := out[r]; !has {
				return out, false
			}
		}
		return out, true
	case []any:
		if !typeIs(s, "array") {
			return nil, false
		}
		items, _ := s["items"].(map[string]any)
		if mx, ok := s["maxItems"].(float64); ok && len(t) > int(mx) {
			t = t[:int(mx)]
		}
		out := make([]any, 0, len(t))
		for _, it := range t {
			if items == nil {
				out = append(out, it)
			} else if pv, ok := project(it, items); ok {
				out = append(out, pv)
			}
		}
		if mn, ok := s["minItems"].(float64); ok && len(out) < int(mn) {
			return nil, false
		}
		return out, true
	case string:
		if !typeIs(s, "string") {
			return nil, false
		}
		if mx, ok := s["maxLength"].(float64); ok {
			t = clip(t, int(mx))
		}
		if mn, ok := s["minLength"].(float64); ok && len([]rune(t)) < int(mn) {
			return nil, false
		}
		if p, ok := s["pattern"].(string); ok && p != "" && !matches(p, t) {
			return nil, false
		}
		return t, true
	case float64:
		if !typeIs(s, "number") && !typeIs(s, "integer") {
			return nil, false
		}
		if typeIs(s, "integer") && !typeIs(s, "number") {
			t = math.Round(t)
		}
		if mn, ok := s["minimum"].(float64); ok && t < mn {
			t = mn
		}
		if mx, ok := s["maximum"].(float64); ok && t > mx {
			t = mx
		}
		return t, true
	case bool:
		return t, typeIs(s, "boolean")
	case nil:
		return nil, typeIs(s, "null")
	}
	return nil, false
}

func typeIs(s map[string]any, want string) bool {
	switch t := s["type"].(type) {
	case nil:
		return true
	case string:
		return t == want || (want == "integer" && t == "number")
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

func required(s map[string]any) []string {
	r, _ := s["required"].([]any)
	out := make([]string, 0, len(r))
	for _, v := range r {
		if k, ok := v.(string); ok {
			out = append(out, k)
		}
	}
	return out
}

// topicFrom reads what an original output is about: its first title, episode title, subject or the first
// spoken line of its script.
func topicFrom(original json.RawMessage) string {
	if len(original) == 0 {
		return ""
	}
	for _, path := range []string{"titles.0.title", "episodeTitle", "subject", "posts.0.content", "hooks.0.first5Seconds"} {
		if r := gjson.GetBytes(original, path); r.Type == gjson.String && r.Str != "" {
			return firstWords(strings.TrimPrefix(r.Str, Marker+" "), 10)
		}
	}
	for _, path := range []string{"script", "description", "strategy"} {
		if r := gjson.GetBytes(original, path); r.Type == gjson.String {
			return firstWords(firstSpoken(strings.TrimPrefix(r.Str, Marker)), 10)
		}
	}
	return ""
}

func matches(pattern, s string) bool {
	ok, err := regexp.MatchString(pattern, s)
	return err == nil && ok
}

// collectStrings calls add with every string of a JSON value.
func collectStrings(v gjson.Result, add func(string)) {
	switch {
	case v.IsArray() || v.IsObject():
		v.ForEach(func(_, e gjson.Result) bool {
			collectStrings(e, add)
			return true
		})
	case v.Type == gjson.String:
		add(v.Str)
	}
}
