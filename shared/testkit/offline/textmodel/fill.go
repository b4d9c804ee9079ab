package textmodel

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/research"
)

// writer fills one answer: the brief, its vocabulary, and the seeded generator every choice comes from.
type writer struct {
	b       *generation.Brief
	task    string
	rng     *rand.Rand
	in      input
	english bool
	neutral bool // the brief's words are left out
	// The vocabulary: phrases of the brief made of words only (no markup, URL or bracket survives), none
	// of them addressed to an assistant.
	topic, niche, aud string
	kws               []string
	n                 int             // strings written so far: rotates keywords and numbers
	cursor            map[*string]int // the next frame of each list (by its first element)
	base              int             // where the fixed lists start
}

// input is what the hooks read of the tools' request bodies (contract.TitlesRequest, ...); a member of
// another JSON type is left empty.
type input struct {
	Title       string `json:"title"`
	VideoTitle  string `json:"videoTitle"` // POST /api/generate's spelling
	Topic       string `json:"topic"`
	Type        string `json:"type"`
	EpisodeType string `json:"episodeType"`
	GuestName   string `json:"guestName"`
}

func newWriter(b *generation.Brief, task string, seed uint64, neutral bool) *writer {
	w := &writer{b: b, task: task, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), cursor: map[*string]int{}, neutral: neutral}
	w.base = w.rng.IntN(16)
	_ = json.Unmarshal(b.Input, &w.in)
	lang := strings.ToLower(strings.TrimSpace(b.Language))
	w.english = lang == "" || lang == "english"
	p := &b.Profile
	if !neutral {
		w.topic = firstSafe(6, w.in.Title, w.in.VideoTitle, w.in.Topic, p.FocusedNiche, p.BroadNiche)
		w.niche = firstSafe(5, p.FocusedNiche, p.BroadNiche)
		w.aud = firstSafe(8, p.TargetAudience)
		// The channel's own search terms (decision 53) are its real demand: they come first, as a model
		// told to prefer their words would use them.
		var own []string
		if b.OwnResults != nil {
			for _, t := range b.OwnResults.SearchTerms {
				own = append(own, t.Term)
			}
		}
		for _, k := range append(own, p.Keywords...) {
			if s := safe(k, 4); s != "" && !slices.Contains(w.kws, s) && len(w.kws) < 8 {
				w.kws = append(w.kws, s)
			}
		}
	}
	if w.topic == "" {
		w.topic = firstSafe(4, append(w.kws, "this topic")...)
	}
	w.niche, w.aud = cmp.Or(w.niche, w.topic), cmp.Or(w.aud, "viewers")
	if len(w.kws) == 0 {
		w.kws = []string{w.topic}
	}
	return w
}

// safe is s as a phrase of at most maxWords words (and 8 characters a word) of letters and digits, or ""
// when nothing is left or it reads as text addressed to an assistant.
func safe(s string, maxWords int) string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-'
	})
	words := make([]string, 0, maxWords)
	for _, w := range f {
		if w = strings.Trim(w, "'-"); w != "" && len(words) < maxWords {
			words = append(words, w)
		}
	}
	out := clip(strings.Join(words, " "), 8*maxWords)
	if research.AddressesAssistant(out) {
		return ""
	}
	return out
}

func firstSafe(maxWords int, list ...string) string {
	for _, s := range list {
		if v := safe(s, maxWords); v != "" {
			return v
		}
	}
	return ""
}

// kw is the keyword of the i-th item.
func (w *writer) kw(i int) string { return w.kws[i%len(w.kws)] }

// say renders a frame: {topic}, {niche}, {aud}, {kw} (the next keyword) and {n} (a small number).
func (w *writer) say(frame string) string {
	w.n++
	return upperFirst(strings.NewReplacer("{topic}", w.topic, "{niche}", w.niche, "{aud}", w.aud,
		"{kw}", w.kw(w.n), "{n}", strconv.Itoa(3+w.n%5)).Replace(frame))
}

// pick renders the next frame of a list: each list is read in turn from a seeded place, so no frame comes
// back before the others have been used.
func (w *writer) pick(frames []string) string {
	at, ok := w.cursor[&frames[0]]
	if !ok {
		at = w.rng.IntN(len(frames))
	}
	w.cursor[&frames[0]] = at + 1
	return w.say(frames[at%len(frames)])
}

// sentences renders the next k frames of a list.
func (w *writer) sentences(frames []string, k int) string {
	out := make([]string, k)
	for i := range out {
		out[i] = w.pick(frames)
	}
	return strings.Join(out, " ")
}

// fill returns a value of schema s for the property name (the array's name for its items), i being the
// item's index in its array: enums cycle by it, so a list as long as an enum holds each value once.
func (w *writer) fill(s map[string]any, name string, i int) any {
	if enum, _ := s["enum"].([]any); len(enum) > 0 {
		return enum[i%len(enum)]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} { // the first alternative
		if alts, _ := s[k].([]any); len(alts) > 0 {
			first, _ := alts[0].(map[string]any)
			return w.fill(first, name, i)
		}
	}
	t, _ := s["type"].(string)
	if types, _ := s["type"].([]any); len(types) > 0 { // ["string", "null"]: the first type
		t, _ = types[0].(string)
	}
	switch t {
	case "object":
		props, _ := s["properties"].(map[string]any)
		out := make(map[string]any, len(props))
		for _, k := range slices.Sorted(maps.Keys(props)) {
			ps, _ := props[k].(map[string]any)
			out[k] = w.fill(ps, k, i)
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		lo, hi := bound(s, "minItems", 0), bound(s, "maxItems", 1<<30)
		n := min(max(3, lo), hi)
		if enum, _ := items["enum"].([]any); len(enum) > 0 {
			n = max(min(n, len(enum)), lo)
		}
		out := make([]any, 0, n)
		for j := 0; len(out) < n; j++ {
			v := w.fill(items, name, j)
			if str, ok := v.(string); ok && slices.Contains(out, any(str)) { // strings of a list differ while they can
				if j < 3*n {
					continue
				} else if len(out) >= lo {
					break
				}
			}
			out = append(out, v)
		}
		return out
	case "string":
		return w.str(s, name, i)
	case "integer", "number":
		lo, hasLo := s["minimum"].(float64)
		hi, hasHi := s["maximum"].(float64)
		v := float64(i) + lo // an index or a count: the item's place
		if hasLo && hasHi {
			v = lo + (hi-lo)*(0.7+0.2*w.rng.Float64()) // a score: good, not perfect
		} else if hasHi {
			v = min(float64(i), hi)
		}
		if t == "integer" {
			return math.Round(v)
		}
		return math.Round(v*10) / 10
	case "boolean":
		return false
	}
	return nil
}

func bound(s map[string]any, key string, def int) int {
	if v, ok := s[key].(float64); ok {
		return int(v)
	}
	return def
}

// str writes a string for the property name within the schema's lengths and pattern.
func (w *writer) str(s map[string]any, name string, i int) string {
	var v string
	if list, ok := lists[name]; ok {
		v = list[(i+w.base)%len(list)]
	} else {
		switch kinds[name] {
		case head:
			v = w.pick(heads)
		case question:
			v = w.pick(questions)
		case opener:
			v = w.pick(openers)
		case cta:
			v = w.pick(ctas)
		case tag:
			v = hashtag(w.kw(i))
		case keyword:
			v = w.kw(i)
		case overlay: // read in a glance: three words at most
			f := strings.Fields(w.kw(i))
			v = strings.ToUpper(strings.Join(f[:min(len(f), 3)], " "))
		default:
			v = w.sentences(prose, 2+len(name)%3)
		}
	}
	if f, ok := formats[fmt.Sprint(s["format"])]; ok {
		v = f
	}
	if p, ok := s["pattern"].(string); ok {
		if re, err := regexp.Compile(p); err == nil && !re.MatchString(v) {
			v = hms(i * 30) // the one pattern the answers have: a time as H:MM:SS
		}
	}
	return w.fit(v, bound(s, "minLength", 1), bound(s, "maxLength", 0))
}

// fit cuts v to at most hi characters (0: no bound) and lengthens it to at least lo.
func (w *writer) fit(v string, lo, hi int) string {
	for utf8.RuneCountInString(v) < lo {
		v = strings.TrimSpace(v + " " + w.sentences(prose, 1))
	}
	if hi > 0 {
		v = clip(v, hi)
	}
	return v
}

// Kinds of text, by property name; any other property is prose.
const (
	_ = iota
	head
	question
	opener
	cta
	tag
	keyword
	overlay
)

var kinds = map[string]int{
	"title": head, "episodeTitle": head, "name": head, "topic": head, "subject": head, "textOverlay": overlay,
	"option": head, "pollOptions": head, "keyPoints": head, "formulaType": head,
	"question": question, "hook": opener, "first5Seconds": opener, "openingHook": opener,
	"cta": cta, "closingCTA": cta, "text": cta, "hashtags": tag, "keyword": keyword,
}

// formats are a value of each string format an answer may ask for.
var formats = map[string]string{
	"date": "2026-01-05", "date-time": "2026-01-05T09:00:00Z", "time": "09:00:00Z", "email": "creator@example.com",
	"uuid": "00000000-0000-4000-8000-000000000000", "uri": "https://example.com/",
}

// lists are properties whose values come from a fixed list.
var lists = map[string][]string{
	"colorPalette":    {"#FFD400", "#111111", "#FFFFFF", "#E53935", "#1E88E5"},
	"label":           {"Subscribe", "Comment", "Watch next", "Free guide", "Share"},
	"bestPostingTime": {"Thursday, 6 pm in your audience's time zone", "Sunday, 10 am in your audience's time zone", "Tuesday, 5 pm in your audience's time zone"},
}

var heads = []string{
	"{topic}, explained simply", "The truth about {kw}", "{n} things nobody tells you about {kw}",
	"Why {kw} matters for {topic}", "{topic} in {n} simple steps", "What I wish I knew about {kw}",
	"{kw} for {aud}", "The {kw} mistake that costs you", "A week of {kw}", "{topic}, done right",
}

var questions = []string{
	"What is the hardest part of {kw} for you?", "How did you get started with {topic}?",
	"Which {kw} myth do you hear most often?", "What would you change about {topic} if you started today?",
	"What is one {kw} habit that actually stuck?",
}

var openers = []string{
	"Most people get {kw} wrong, and it takes one change to fix it.", "Here is what {n} weeks of {kw} taught me.",
	"Stop doing {kw} the hard way.", "This is the {topic} video I wish I had found first.",
	"You are one habit away from better {kw}.",
}

var ctas = []string{
	"Subscribe for a new {kw} video every week.", "Tell me in the comments what you want to see next about {topic}.",
	"Watch the next video for the full {kw} walkthrough.", "Save this and try it this week.",
	"Share this with someone who is starting with {kw}.",
}

var prose = []string{
	"{topic} works best when you start with one clear goal.",
	"Most {aud} skip the basics of {kw}, and that is where the results hide.",
	"Start small: one step today, one more tomorrow, and keep what works.",
	"The fastest win is {kw}, because it takes minutes and pays off every time.",
	"Show the result first, then explain how you got there.",
	"A concrete example from your own week beats a general rule.",
	"If you remember one thing about {topic}, make it this: steady beats intense.",
	"Put the before and the after side by side so the change is plain to see.",
	"Track one number for {n} days and you will know what to change.",
	"{aud} ask about {kw} more than anything else, so answer it first.",
	"Keep every step short enough to try today.",
	"The common mistake is doing too much at once, so pick {n} things and drop the rest.",
	"Here is the simple version of {kw} that fits a busy week.",
	"Good {niche} content answers one question well instead of ten questions badly.",
	"Plan it once, repeat it weekly, and it stops feeling like work.",
	"When {kw} feels hard, make the next step smaller.",
	"Write down what you tried, what it cost and what changed.",
	"The second week is where most people quit, so plan for it now.",
	"Ask {n} people in your circle what they struggle with, and start there.",
	"A checklist turns {kw} from a chore into a routine.",
	"Cut the step that nobody would miss.",
	"Timing matters less than showing up every week.",
	"The best {kw} setup is the one you will actually use.",
	"Borrow what works from others in {niche}, then make it yours.",
	"Small gains stack: {n} percent a week adds up fast.",
	"Test one change at a time so you know what made the difference.",
	"{aud} do not need more options, they need one clear next step.",
	"Keep the tools simple and the results visible.",
	"If it takes more than ten minutes to explain, split it in two.",
	"Celebrate the first small result, because it keeps you going.",
}

// markFirst puts Marker before the answer's main text when the channel's language is not English: its
// first prose string where the marker fits, else its first sentence of another kind (a call to action...).
func (w *writer) markFirst(s map[string]any, v any) any {
	done := w.english
	var walk func(s map[string]any, name string, v any, main func(kind int) bool) any
	walk = func(s map[string]any, name string, v any, main func(kind int) bool) any {
		switch x := v.(type) {
		case map[string]any:
			props, _ := s["properties"].(map[string]any)
			for _, k := range slices.Sorted(maps.Keys(x)) {
				ps, _ := props[k].(map[string]any)
				x[k] = walk(ps, k, x[k], main)
			}
		case []any:
			items, _ := s["items"].(map[string]any)
			for i := range x {
				x[i] = walk(items, name, x[i], main)
			}
		case string:
			done = done || strings.Contains(x, Marker) // a hook marked it
			_, listed := lists[name]
			if !done && main(kinds[name]) && !listed && s["enum"] == nil && s["pattern"] == nil &&
				utf8.RuneCountInString(x)+len(Marker)+1 <= bound(s, "maxLength", 1<<30) {
				done = true
				return Marker + " " + x
			}
		}
		return v
	}
	v = walk(s, "", v, func(kind int) bool { return kind == 0 })
	return walk(s, "", v, func(kind int) bool { return kind == cta || kind == opener || kind == question })
}

// ---- text helpers

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// clip cuts s to at most max characters, at a word boundary when one is near.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut := string([]rune(s)[:max])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	if t := strings.TrimRight(cut, " ,;:-"); t != "" {
		return t
	}
	return cut
}

// hashtag turns a phrase into a hashtag: letters and digits only ("meal prep" → #mealprep).
func hashtag(s string) string {
	return "#" + strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// hms formats seconds as H:MM:SS, as clips are written.
func hms(sec int) string {
	return strconv.Itoa(sec/3600) + ":" + two(sec/60%60) + ":" + two(sec%60)
}

func two(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }
