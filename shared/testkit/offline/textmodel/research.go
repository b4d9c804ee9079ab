package textmodel

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/research"
)

// ---- research: pattern texts and backlog ideas

// patterns writes the text of one ResearchPatterns kind from the brief's videos: counts over them
// (numbers and questions in titles, lengths, formulas, description habits, tags, keyword coverage) in the
// kind's sentence frames, marked when the language has no phrasebook.
func patterns(kind string) func(*writer) any {
	return func(w *writer) any {
		return map[string]string{kind: clip(w.mark(w.patternText(kind)), generation.MaxPatternChars)}
	}
}

func (w *writer) patternText(kind string) string {
	vs := w.b.Videos
	if len(vs) == 0 {
		return w.L.NoResearch
	}
	over := w.patternSlots(vs)
	var parts []string
	for i, tpl := range w.L.Patterns[kind] {
		if s, ok := w.fill(tpl, i, over...); ok {
			parts = append(parts, upperFirst(s))
		}
	}
	if len(parts) == 0 {
		return w.L.NoResearch
	}
	return strings.Join(parts, " ")
}

var chapterMark = regexp.MustCompile(`(^|\s)\d{1,2}:\d{2}(\s|$)`)

// patternSlots are the slots of the pattern frames, as name, value pairs; a count the videos cannot give
// (no durations, no descriptions, no tags, no channels) is empty, which leaves its sentence out.
func (w *writer) patternSlots(vs []generation.ResearchVideo) []string {
	n := len(vs)
	var num, question, howTo, chars, links, hashtags, chapters, described int
	var durations []int
	var perDay []float64
	var score float64
	formulas, tags, channels := map[string]int{}, map[string]int{}, map[string]bool{}
	for _, v := range vs {
		num += b2i(strings.IndexFunc(v.Title, isDigit) >= 0)
		question += b2i(strings.ContainsAny(v.Title, "?¿"))
		howTo += b2i(v.Formula == "how-to")
		chars += utf8.RuneCountInString(v.Title)
		score += v.Score
		formulas[cmp.Or(v.Formula, research.FormulaOf(v.Title))]++
		if v.DurationSeconds > 0 {
			durations = append(durations, v.DurationSeconds)
		}
		if v.ViewsPerDay > 0 {
			perDay = append(perDay, v.ViewsPerDay)
		}
		if v.Description != "" {
			described++
			links += b2i(strings.Contains(v.Description, "http"))
			hashtags += b2i(strings.Contains(v.Description, "#"))
			chapters += b2i(chapterMark.MatchString(v.Description))
		}
		for _, t := range v.Tags {
			tags[strings.ToLower(clean(t))]++
		}
		if v.ChannelTitle != "" {
			channels[v.ChannelTitle] = true
		}
	}
	pct := func(part, whole int) string {
		if whole == 0 {
			return ""
		}
		return strconv.Itoa(part * 100 / whole)
	}
	slots := []string{
		"n", strconv.Itoa(n), "pnum", pct(num, n), "pq", pct(question, n), "phow", pct(howTo, n),
		"len", strconv.Itoa(chars / n), "score", w.decimal(score/float64(n), 1),
		"words", strings.Join(w.titleWords(vs, 5), ", "),
		"top", w.topQuotes(vs, 3),
		"formulas", strings.Join(w.formulaNames(formulas, 3), ", "),
		"links", pct(links, described), "hash", pct(hashtags, described), "chap", pct(chapters, described),
		"taglist", strings.Join(topKeys(tags, 8), ", "),
		"kwcov", w.keywordCoverage(vs),
		"dur", "", "vpd", "", "channels", "",
	}
	set := func(name, v string) {
		i := slices.Index(slots, name)
		slots[i+1] = v
	}
	if len(durations) > 0 {
		set("dur", clock(int(median(durations))))
	}
	if len(perDay) > 0 {
		set("vpd", strconv.Itoa(int(median(perDay))))
	}
	if len(channels) > 1 {
		set("channels", strconv.Itoa(len(channels)))
	}
	return slots
}

// titleWords are the words the titles use most, stopwords of the language left out.
func (w *writer) titleWords(vs []generation.ResearchVideo, n int) []string {
	counts := map[string]int{}
	stop := stopwords(w.L)
	for _, v := range vs {
		for _, word := range words(v.Title) {
			if utf8.RuneCountInString(word) >= 4 && !stop[word] {
				counts[word]++
			}
		}
	}
	return topKeys(counts, n)
}

// topQuotes quotes the n strongest outliers' titles with their scores.
func (w *writer) topQuotes(vs []generation.ResearchVideo, n int) string {
	q := make([]string, 0, n)
	for _, v := range vs[:min(len(vs), n)] {
		q = append(q, w.quote(clip(clean(v.Title), 90))+" ("+w.decimal(v.Score, 1)+"×)")
	}
	return strings.Join(q, "; ")
}

// formulaNames names the n formulas that recur most, in the language.
func (w *writer) formulaNames(counts map[string]int, n int) []string {
	var out []string
	for _, f := range topKeys(counts, n) {
		if name := w.L.Formulas[f]; name != "" {
			out = append(out, name)
		}
	}
	return out
}

// keywordCoverage says how many titles carry each of the profile's keywords.
func (w *writer) keywordCoverage(vs []generation.ResearchVideo) string {
	var parts []string
	for _, k := range nonEmpty(w.b.Profile.Keywords, 8) {
		c := 0
		for _, v := range vs {
			c += b2i(containsWordFold(v.Title, k))
		}
		parts = append(parts, w.quote(k)+" ("+strconv.Itoa(c)+")")
	}
	return strings.Join(parts, ", ")
}

func (w *writer) decimal(x float64, places int) string {
	return strings.Replace(strconv.FormatFloat(x, 'f', places, 64), ".", w.L.Decimal, 1)
}

// topKeys returns the n keys with the highest counts (ties in key order, so the result is deterministic).
func topKeys(counts map[string]int, n int) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		if k != "" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return keys[:min(len(keys), n)]
}

func median[T int | float64](xs []T) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return (float64(s[n/2-1]) + float64(s[n/2])) / 2
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ideaOut is one idea of TaskIdeas's answer.
type ideaOut struct {
	Title       string `json:"title"`
	ContentType string `json:"contentType"`
	FormulaType string `json:"formulaType"`
	Outlier     *int   `json:"outlier,omitempty"`
}

// titleTypeOf maps research.FormulaOf's formulas to the title frames' types.
var titleTypeOf = map[string]string{"listicle": "listicle", "how-to": "how-to", "question": "question",
	"comparison": "comparison", "challenge": "challenge", "story": "story", "review": "review"}

// ideas writes Brief.Count ideas (10 when unset): each in turn inspired by the next of the outliers,
// strongest first, in its formula (a title frame of that type, in the language) and its format, unless
// the brief asks for one; never a title taken already or written twice. Without outliers the formulas
// take turns and a third of the ideas are Shorts.
func ideas(w *writer) any {
	count := min(cmp.Or(w.b.Count, 10), generation.MaxIdeas)
	seen := map[string]bool{}
	for _, t := range w.b.Taken {
		seen[strings.ToLower(clean(t))] = true
	}
	outs := w.b.Outliers
	var out []ideaOut
	for i := 0; len(out) < count && i < 4*count; i++ {
		typ, short := titleTypes[i%len(titleTypes)], i%3 == 2
		var from *int
		if len(outs) > 0 {
			k := i % len(outs)
			from = &k
			if t, ok := titleTypeOf[research.FormulaOf(outs[k].Title)]; ok {
				typ = t
			}
			short = outs[k].ContentType == research.Short
		}
		ct := w.b.ContentType
		if ct == "" {
			ct = map[bool]string{true: research.Short, false: research.Long}[short]
		}
		// The outlier's formula first; when its frames are all said, the other formulas in turn.
		types := append([]string{typ}, titleTypes...)
	next:
		for _, ty := range types {
			for _, t := range w.titleList(ty, ct == research.Short, generation.MaxIdeas) {
				key := strings.ToLower(clean(t))
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, ideaOut{Title: t, ContentType: ct, FormulaType: ty, Outlier: from})
				break next
			}
		}
	}
	for n := len(seen) + 1; len(out) == 0; n++ { // everything the frames can say is taken: number the topic
		t := clip(upperFirst(w.f.topic), generation.MaxIdeaTitleChars-6) + " #" + strconv.Itoa(n)
		if !seen[strings.ToLower(t)] {
			out = append(out, ideaOut{Title: t, ContentType: cmp.Or(w.b.ContentType, research.Long), FormulaType: "other"})
		}
	}
	return map[string]any{"ideas": out}
}
