package textmodel

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/generation"
)

// writer holds what one answer is written from: the brief, the phrasebook of its language, the facts drawn
// from the channel's data, and the seeded generator every choice comes from.
type writer struct {
	b        *generation.Brief
	L        *book
	fallback bool // the brief's language has no phrasebook: written in english, marked
	rng      *rand.Rand
	in       input
	f        facts
	dir      directives // a refinement's feedback (zero otherwise)
	slots    map[string]string
	rot      map[string][]string // slots that rotate through a list (keywords, terms, ...)
	used     map[string]int      // templates used so far, to prefer fresh ones
	recent   []string            // Brief.Recent, lower case
	anyPool  []string            // general sentences of a long script (see pool)
	n        int                 // the number of a listicle, a "N mistakes" title...
}

// input is the union of the tools' request bodies (contract.TitlesRequest, LongScriptRequest, ...): each
// tool's body decodes into it, so the writers read one shape.
type input struct {
	Title         string `json:"title"`
	Type          string `json:"type"`
	VideoType     string `json:"videoType"`
	Context       string `json:"context"`
	CurrentHook   string `json:"currentHook"`
	EpisodeType   string `json:"episodeType"`
	Topic         string `json:"topic"`
	GuestName     string `json:"guestName"`
	GuestBio      string `json:"guestBio"`
	Style         string `json:"style"`
	Transcript    string `json:"transcript"`
	VideoURL      string `json:"videoUrl"`
	ClipCount     *int   `json:"clipCount"`
	PostType      string `json:"postType"`
	PeopleMode    string `json:"peopleMode"`
	HasBackground bool   `json:"hasBackground"`
	// The unversioned POST /api/generate spells some fields its own way.
	VideoTitle string `json:"videoTitle"`
	TitleType  string `json:"titleType"`
}

func newWriter(b *generation.Brief, seed uint64, dir *directives) *writer {
	L, fallback := phrasebook(b.Language)
	w := &writer{
		b: b, L: L, fallback: fallback,
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		used: map[string]int{},
	}
	if len(b.Input) > 0 && string(b.Input) != "null" {
		// A body the contract accepted always decodes; anything else leaves the fields it could not read
		// empty, and every writer has a fallback for an empty field.
		_ = json.Unmarshal(b.Input, &w.in)
	}
	if w.in.Title == "" {
		w.in.Title = w.in.VideoTitle
	}
	if w.in.Type == "" {
		w.in.Type = w.in.TitleType
	}
	if dir != nil {
		w.dir = *dir
	}
	for _, r := range b.Recent {
		w.recent = append(w.recent, strings.ToLower(r))
	}
	w.f = gather(w)
	w.n = []int{3, 5, 7, 10}[w.rng.IntN(4)]
	w.buildSlots()
	return w
}

func (w *writer) buildSlots() {
	f := &w.f
	w.slots = map[string]string{
		"topic": f.short, "title": f.topic, "niche": f.niche, "aud": f.aud, "pain": f.pain,
		"n": strconv.Itoa(w.n), "slogan": f.slogan, "context": f.context, "catch": f.catch,
		"series": "", "mission": f.mission, "profit": f.profit, "guest": f.guest, "hook": f.hook,
		"focus": f.focus,
	}
	if f.series != nil {
		w.slots["series"] = f.series.Name
	}
	w.rot = map[string][]string{
		"kw": f.kws, "term": f.terms, "rival": f.rivals, "insight": f.insights, "style": f.style,
		"hot": f.hot, "sponsor": f.sponsors,
	}
}

// fill renders a template: {name} takes the slot's value (rotating slots by rot, {kw2} the keyword after
// {kw}); over gives name, value pairs that take precedence. A slot with no value makes the template
// unusable (ok false), so a frame about competitors is only used when the channel names some.
func (w *writer) fill(tpl string, rot int, over ...string) (string, bool) {
	if !strings.Contains(tpl, "{") {
		return tpl, true
	}
	var sb strings.Builder
	sb.Grow(len(tpl) + 32)
	for {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			sb.WriteString(tpl)
			break
		}
		j := strings.IndexByte(tpl[i:], '}')
		if j < 0 {
			sb.WriteString(tpl)
			break
		}
		sb.WriteString(tpl[:i])
		v, ok := w.slot(tpl[i+1:i+j], rot, over)
		if !ok {
			return "", false
		}
		sb.WriteString(v)
		tpl = tpl[i+j+1:]
	}
	return sb.String(), true
}

func (w *writer) slot(name string, rot int, over []string) (string, bool) {
	for k := 0; k+1 < len(over); k += 2 {
		if over[k] == name {
			return over[k+1], over[k+1] != ""
		}
	}
	if rot < 0 {
		rot = -rot
	}
	step := 0
	if strings.HasSuffix(name, "2") {
		name, step = name[:len(name)-1], 1
	}
	if list, ok := w.rot[name]; ok {
		if len(list) == 0 {
			return "", false
		}
		if step == 1 && len(list) == 1 && name == "kw" {
			return w.f.second, true // one keyword: "{kw} and {kw2}" must not say it twice
		}
		return list[(rot+step)%len(list)], true
	}
	v := w.slots[name]
	return v, v != ""
}

// line renders a template of pool for a sentence: templates used least so far first, starting at a
// seeded place, skipping those that cannot be filled or say a word the creator avoids. ok is false when
// none can be used.
func (w *writer) line(pool []string, rot int, over ...string) (string, bool) {
	return w.choose(pool, rot, false, over)
}

// fresh is line for the opening lines of an answer: it also steers clear of what recent outputs of the
// same tool said.
func (w *writer) fresh(pool []string, rot int, over ...string) (string, bool) {
	return w.choose(pool, rot, true, over)
}

func (w *writer) choose(pool []string, rot int, fresh bool, over []string) (string, bool) {
	if len(pool) == 0 {
		return "", false
	}
	start := w.rng.IntN(len(pool))
	best, bestTpl, bestCost, found := "", "", 0, false
	for k := range pool {
		tpl := pool[(start+k)%len(pool)]
		cost := 2 * w.used[tpl]
		if found && cost >= bestCost {
			continue
		}
		s, ok := w.fill(tpl, rot, over...)
		if !ok || w.avoids(s) {
			continue
		}
		if fresh && w.isRecent(s) {
			cost++
		}
		if found && cost >= bestCost {
			continue
		}
		best, bestTpl, bestCost, found = s, tpl, cost, true
		if cost == 0 {
			break
		}
	}
	if !found {
		return "", false
	}
	w.used[bestTpl]++
	return upperFirst(best), true
}

// must is line for pools that always render (their templates use only slots with fallbacks).
func (w *writer) must(pool []string, rot int, over ...string) string {
	s, ok := w.line(pool, rot, over...)
	if !ok && len(pool) > 0 {
		s, _ = w.fill(pool[0], rot, over...)
		s = upperFirst(s)
	}
	return s
}

// one renders a single template, or "" when a slot is missing.
func (w *writer) one(tpl string, rot int, over ...string) string {
	s, _ := w.fill(tpl, rot, over...)
	return upperFirst(s)
}

// raw renders a template as it is (a piece of a longer sentence), "" when a slot is missing.
func (w *writer) raw(tpl string, over ...string) string {
	s, _ := w.fill(tpl, 0, over...)
	return s
}

// isRecent reports whether s was part of a recent output of the same tool.
func (w *writer) isRecent(s string) bool {
	if len(s) < 12 {
		return false
	}
	ls := strings.ToLower(s)
	for _, r := range w.recent {
		if strings.Contains(r, ls) {
			return true
		}
	}
	return false
}

// avoids reports whether s says a word the creator's notes (or a refinement) ask to avoid.
func (w *writer) avoids(s string) bool {
	if len(w.f.banned) == 0 {
		return false
	}
	for _, b := range w.f.banned {
		if containsWordFold(s, b) {
			return true
		}
	}
	return false
}

// mark puts Marker before the main text of an answer written in english for a language without a
// phrasebook.
func (w *writer) mark(s string) string {
	if !w.fallback {
		return s
	}
	return Marker + " " + s
}

// pick returns one of list, seeded.
func pick[T any](w *writer, list []T) T {
	return list[w.rng.IntN(len(list))]
}

// ---- text helpers

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsUpper(r) {
		return s
	}
	// Keep acronyms and names in capitals ("SEO", "YouTube"): only lower a capital followed by a lower.
	r2, _ := utf8.DecodeRuneInString(s[n:])
	if !unicode.IsLower(r2) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// clean collapses whitespace.
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstWords returns at most n words of s, without trailing punctuation.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.TrimRight(strings.Join(f, " "), ",;:-–—")
}

// clip cuts s to at most max characters at a word boundary.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	rs := []rune(s)
	cut := string(rs[:max])
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:-–—")
}

// firstSentence returns the first sentence of s, at most n words.
func firstSentence(s string, n int) string {
	s = clean(s)
	for i, r := range s {
		if (r == '.' || r == '!' || r == '?' || r == '\n') && i > 0 {
			s = s[:i]
			break
		}
	}
	return firstWords(s, n)
}

// words splits s into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

// containsWord reports whether lower-case text contains the lower-case word or phrase w at word
// boundaries.
func containsWord(text, w string) bool {
	w = strings.ToLower(w)
	for off := 0; ; {
		i := strings.Index(text[off:], w)
		if i < 0 || w == "" {
			return false
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(w):])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		off = i + 1
	}
}

// containsWordFold is containsWord ignoring case, without lowering the text: w is compared with
// strings.EqualFold at every place its first byte could start.
func containsWordFold(text, w string) bool {
	if w == "" || len(w) > len(text) {
		return false
	}
	for i := 0; i+len(w) <= len(text); i++ {
		if !strings.EqualFold(text[i:i+len(w)], w) {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(w):])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// countWords counts the words of s as strings.Fields splits them, without building them (ASCII fast).
func countWords(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if space {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// spoken counts the words of a script a presenter says: not its [CUE] lines or ## headings.
func spoken(script string) int {
	n := 0
	for _, ln := range strings.Split(script, "\n") {
		t := strings.TrimSpace(ln)
		if strings.HasPrefix(t, "[") || strings.HasPrefix(t, "#") {
			continue
		}
		n += countWords(t)
	}
	return n
}

// hashtag turns a phrase into a hashtag: letters and digits only, words joined ("meal prep" → #mealprep).
func hashtag(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			sb.WriteRune(r)
		}
	}
	if sb.Len() == 0 {
		return ""
	}
	return "#" + clip(sb.String(), 40)
}

// joinList joins items as a list in the language ("a, b and c").
func (w *writer) joinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + w.L.And + items[len(items)-1]
}

func (w *writer) quote(s string) string { return w.L.QuoteL + s + w.L.QuoteR }

// clock formats seconds as M:SS (or H:MM:SS from an hour), as chapters are written.
func clock(sec int) string {
	if sec >= 3600 {
		return strconv.Itoa(sec/3600) + ":" + two(sec/60%60) + ":" + two(sec%60)
	}
	return strconv.Itoa(sec/60) + ":" + two(sec%60)
}

// hms formats seconds as H:MM:SS, as clips are written.
func hms(sec int) string { return strconv.Itoa(sec/3600) + ":" + two(sec/60%60) + ":" + two(sec%60) }

func two(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
