package textmodel

import (
	"slices"
	"strings"

	"github.com/creatorstrategy/css/shared/generation"
)

// facts are the channel's data and the request as the frames use them: short, cleaned, with fallbacks in
// the language where a frame needs a value.
type facts struct {
	topic, short string // the request's title (or topic), and its first words
	niche        string
	kws          []string // the profile's keywords, those the research or a refinement names first
	ownTerms     bool     // the terms are the profile's insider terms
	clause       bool     // the topic is a clause ("how to start a podcast"), not a noun phrase
	second       string   // what {kw2} says when there is a single keyword
	terms        []string // insider terms (keywords when none)
	hot          []string // research words the titles lean on (keywords when there is no research)
	aud, pain    string
	slogan       string
	mission      string
	profit       string
	rivals       []string
	sponsors     []string
	style        []string // style notes
	catch        string   // the creator's catchphrase: a quoted phrase of a style or preference note
	banned       []string // words the notes (or a refinement) ask to avoid
	insights     []string // insight, decision and general notes
	feedback     []string // feedback notes
	research     []string // words the research patterns and outlier titles share, most frequent first
	outliers     []generation.Outlier
	context      string
	series       *generation.BriefSeries
	guest, hook  string
	focus        string // a phrase a refinement asks to include
}

func gather(w *writer) facts {
	b, L, in := w.b, w.L, &w.in
	p := &b.Profile
	var f facts

	f.niche = firstNonEmpty(clean(p.FocusedNiche), clean(p.BroadNiche), L.Niche)
	f.context = firstSentence(in.Context, 30)
	f.topic = clip(firstNonEmpty(clean(in.Title), clean(in.Topic), w.dir.topic, f.context, f.niche), 200)
	f.short = firstWords(f.topic, 8)
	f.aud = cutClause(p.TargetAudience, append(append([]string{}, L.ClauseCut...), english.ClauseCut...), 8)
	if f.aud == "" {
		f.aud = L.Audience
	}
	f.niche = withoutAudience(f.niche, f.aud, stopwords(L))
	f.pain = cutClause(p.PainPoints, nil, 10)
	if f.pain == "" {
		f.pain = L.Pain
	}
	f.slogan = clip(clean(p.Slogan), 120)
	f.mission = firstSentence(firstNonEmpty(p.Mission, p.Purpose, p.NicheStatement), 25)
	f.profit = firstSentence(p.ProfitModel, 12)
	f.rivals = nonEmpty(p.TopCompetitors, 5)
	f.sponsors = nonEmpty(p.Sponsors, 3)
	f.guest = firstWords(clean(in.GuestName), 6)
	f.hook = firstSentence(in.CurrentHook, 25)
	f.series = b.Series
	f.focus = w.dir.include

	stop := stopwords(L)
	f.research = researchWords(b, stop)

	// Without keywords, the topic's subject stands in ("how to start a podcast" → "start a podcast"),
	// then the niche.
	f.kws = nonEmpty(p.Keywords, 8)
	if len(f.kws) == 0 {
		if s := subject(f.topic, L, stop); s != "" && f.topic != f.niche {
			f.kws = append(f.kws, s)
		}
		if f.niche != L.Niche && !slices.Contains(f.kws, f.niche) {
			f.kws = append(f.kws, f.niche)
		}
	}
	if len(f.kws) == 0 {
		f.kws = []string{f.niche}
	}
	f.clause = startsWithAny(strings.ToLower(f.topic), L.Clause) || startsWithAny(strings.ToLower(f.topic), english.Clause)
	// Keywords the refinement or the research names come first.
	lead := append(append([]string{}, w.dir.emphasis...), f.research...)
	slices.SortStableFunc(f.kws, func(a, c string) int { return rank(a, lead) - rank(c, lead) })
	f.terms = nonEmpty(p.InsiderTerms, 8)
	f.ownTerms = len(f.terms) > 0
	if len(f.terms) == 0 {
		f.terms = f.kws
	}
	f.hot = f.kws
	f.second = L.Basics
	for _, c := range []string{firstOf(f.terms), f.niche} {
		if c != "" && c != f.kws[0] && c != L.Niche {
			f.second = c
			break
		}
	}
	for _, r := range f.research {
		if !containsWord(strings.ToLower(f.topic), r) && len(f.hot) < 6 && !slices.Contains(f.hot, r) {
			f.hot = append([]string{r}, f.hot...)
			break
		}
	}

	for _, n := range b.Notes {
		c := clean(n.Content)
		if c == "" {
			continue
		}
		switch n.Category {
		case "style":
			f.style = append(f.style, firstWords(c, 25))
		case "feedback":
			f.feedback = append(f.feedback, firstWords(c, 25))
		case "insight", "general", "decision":
			f.insights = append(f.insights, firstSentence(c, 25))
		}
		if n.Category == "style" || n.Category == "preference" {
			if f.catch == "" {
				if q := quoted(c); len(q) > 0 && countWords(q[0]) <= 8 && !mentionsAny(c, L.Avoid) && !mentionsAny(c, english.Avoid) {
					f.catch = q[0]
				}
			}
		}
		if mentionsAny(c, L.Avoid) || mentionsAny(c, english.Avoid) {
			f.banned = append(f.banned, avoided(c, L)...)
		}
	}
	f.banned = append(f.banned, w.dir.avoid...)
	f.outliers = slices.Clone(b.Outliers)
	slices.SortStableFunc(f.outliers, func(a, c generation.Outlier) int {
		switch {
		case a.Score > c.Score:
			return -1
		case a.Score < c.Score:
			return 1
		}
		return 0
	})
	if len(f.outliers) > 3 {
		f.outliers = f.outliers[:3]
	}
	return f
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func nonEmpty(list []string, max int) []string {
	var out []string
	for _, s := range list {
		if s = clean(s); s != "" && len(out) < max {
			out = append(out, clip(s, 80))
		}
	}
	return out
}

// rank is the position of the first of lead that s contains or is contained in, len(lead) if none.
func rank(s string, lead []string) int {
	ls := strings.ToLower(s)
	for i, l := range lead {
		if containsWord(ls, l) || containsWord(strings.ToLower(l), ls) {
			return i
		}
	}
	return len(lead)
}

// cutClause returns the first clause of s (cut at punctuation or at a relative pronoun of cuts), at most
// n words.
func cutClause(s string, cuts []string, n int) string {
	s = clean(s)
	if i := strings.IndexAny(s, ".;,:\n(—–"); i > 0 {
		s = s[:i]
	}
	ls := strings.ToLower(s)
	for _, c := range cuts {
		if i := strings.Index(ls, c); i > 0 {
			s, ls = s[:i], ls[:i]
		}
	}
	return firstWords(s, n)
}

// stopwords are the words of a language (and english) that say nothing about a topic.
func stopwords(L *book) map[string]bool { return L.stop }

// contentWords returns up to n distinct words of s that are not stopwords and have at least 4 letters.
func contentWords(s string, stop map[string]bool, n int) []string {
	var out []string
	for _, w := range words(s) {
		if len([]rune(w)) >= 4 && !stop[w] && !slices.Contains(out, w) {
			out = append(out, w)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// researchWords are the words the research patterns and the outliers' titles use most (at least twice,
// or the outliers' when there are few), most frequent first.
func researchWords(b *generation.Brief, stop map[string]bool) []string {
	if b.Patterns == "" && len(b.Outliers) == 0 {
		return nil
	}
	count := map[string]int{}
	var order []string
	add := func(s string, weight int) {
		for _, w := range words(s) {
			if len([]rune(w)) < 4 || stop[w] {
				continue
			}
			if count[w] == 0 {
				order = append(order, w)
			}
			count[w] += weight
		}
	}
	for _, o := range b.Outliers {
		add(o.Title, 2)
	}
	add(b.Patterns, 1)
	slices.SortStableFunc(order, func(a, c string) int { return count[c] - count[a] })
	var out []string
	for _, w := range order {
		if count[w] >= 2 && len(out) < 8 {
			out = append(out, w)
		}
	}
	return out
}

// quoted returns the phrases between double quotes of s (straight, curly, guillemets, low-high).
func quoted(s string) []string {
	var out []string
	pairs := [][2]string{{`"`, `"`}, {"“", "”"}, {"«", "»"}, {"„", "“"}, {"‘", "’"}}
	for _, p := range pairs {
		rest := s
		for {
			i := strings.Index(rest, p[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(p[0]):]
			j := strings.Index(rest, p[1])
			if j < 0 {
				break
			}
			if q := strings.Trim(clean(rest[:j]), " «»"); q != "" {
				out = append(out, q)
			}
			rest = rest[j+len(p[1]):]
		}
	}
	return out
}

func mentionsAny(s string, triggers []string) bool {
	ls := strings.ToLower(s)
	for _, t := range triggers {
		if containsWord(ls, t) {
			return true
		}
	}
	return false
}

// avoided returns what a note asks to avoid: its quoted phrases, else the word after "avoid" (in the
// language or in english).
func avoided(note string, L *book) []string {
	if q := quoted(note); len(q) > 0 {
		out := make([]string, 0, len(q))
		for _, s := range q {
			out = append(out, strings.ToLower(s))
		}
		return out
	}
	ws := words(note)
	for i, w := range ws {
		if (slices.Contains(L.AvoidNext, w) || slices.Contains(english.AvoidNext, w)) && i+1 < len(ws) {
			next := ws[i+1]
			if (next == "the" || next == "using" || next == "el" || next == "la" || next == "le" || next == "les" || next == "los" || next == "die" || next == "der" || next == "das" || next == "o" || next == "a") && i+2 < len(ws) {
				next = ws[i+2]
			}
			if len([]rune(next)) >= 3 {
				return []string{next}
			}
		}
	}
	return nil
}

// withoutAudience drops the audience from a niche that names it ("vegan meal prep for busy professionals"
// → "vegan meal prep"), since the frames say both ("{niche} for {aud}").
func withoutAudience(niche, aud string, stop map[string]bool) string {
	i := strings.Index(strings.ToLower(niche), strings.ToLower(aud))
	if i <= 0 || aud == "" {
		return niche
	}
	cut := trimStop(strings.TrimSpace(niche[:i]), stop)
	if cut == "" {
		return niche
	}
	return cut
}

func startsWithAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// subject is what a topic is about, for a keyword: its first words less a leading question or "how to"
// and stopwords at either end.
func subject(topic string, L *book, stop map[string]bool) string {
	lt := strings.ToLower(topic)
	for _, list := range [][]string{L.Clause, english.Clause} {
		for _, p := range list {
			if strings.HasPrefix(lt, p) {
				topic, lt = topic[len(p):], lt[len(p):]
			}
		}
	}
	f := strings.Fields(firstWords(topic, 4))
	for len(f) > 0 && stop[strings.ToLower(f[0])] {
		f = f[1:]
	}
	return trimStop(strings.Trim(strings.Join(f, " "), "?!.¿¡"), stop)
}

func firstOf(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}
