package textmodel

import (
	"strconv"
	"strings"
)

type scriptOut struct {
	Script string `json:"script"`
}

// Script lengths at 150 words a minute: a long script runs 8 to 15 minutes (1,200 to 2,250 words), a short
// one 30 to 60 seconds (75 to 150 words). The targets sit inside with room for one more sentence.
const (
	wordsPerMinute  = 150
	longMinWords    = 1200
	longMaxWords    = 2250
	longTarget      = 1450
	longCap         = 2150 // no sentence is added past this many words, cues included
	shortMinWords   = 75
	shortMaxWords   = 150
	shortTarget     = 80
	shortCueWordCap = 12 // a short script's [TONE] cue is cut to this many words
)

// beat is a section of a long script: its heading key (or its own text, from a series formula) and the
// kind of sentences it holds.
type beat struct {
	key, kind, heading string
}

// structures are the sections of a long script per LongScriptRequest.type; a repeated key is numbered.
var structures = map[string][]beat{
	"how-to":     {{key: "hook", kind: "hook"}, {key: "intro", kind: "intro"}, {key: "why", kind: "point"}, {key: "step", kind: "step"}, {key: "step", kind: "step"}, {key: "step", kind: "step"}, {key: "step", kind: "step"}, {key: "mistakes", kind: "mistake"}, {key: "recap", kind: "recap"}, {key: "cta", kind: "cta"}},
	"listicle":   {{key: "hook", kind: "hook"}, {key: "intro", kind: "intro"}, {key: "item", kind: "point"}, {key: "item", kind: "point"}, {key: "item", kind: "point"}, {key: "item", kind: "point"}, {key: "item", kind: "point"}, {key: "bonus", kind: "step"}, {key: "recap", kind: "recap"}, {key: "cta", kind: "cta"}},
	"story":      {{key: "hook", kind: "hook"}, {key: "setup", kind: "story"}, {key: "conflict", kind: "story"}, {key: "turn", kind: "story"}, {key: "resolution", kind: "story"}, {key: "lesson", kind: "point"}, {key: "cta", kind: "cta"}},
	"deep-dive":  {{key: "hook", kind: "hook"}, {key: "context", kind: "intro"}, {key: "background", kind: "story"}, {key: "mechanism", kind: "point"}, {key: "evidence", kind: "proof"}, {key: "counter", kind: "contrast"}, {key: "takeaway", kind: "recap"}, {key: "cta", kind: "cta"}},
	"review":     {{key: "hook", kind: "hook"}, {key: "impressions", kind: "intro"}, {key: "pros", kind: "point"}, {key: "cons", kind: "mistake"}, {key: "whofor", kind: "point"}, {key: "verdict", kind: "recap"}, {key: "cta", kind: "cta"}},
	"comparison": {{key: "hook", kind: "hook"}, {key: "contenders", kind: "intro"}, {key: "criteria", kind: "point"}, {key: "round", kind: "contrast"}, {key: "round", kind: "contrast"}, {key: "round", kind: "contrast"}, {key: "verdict", kind: "recap"}, {key: "cta", kind: "cta"}},
	"challenge":  {{key: "hook", kind: "hook"}, {key: "rules", kind: "intro"}, {key: "attempt", kind: "story"}, {key: "attempt", kind: "story"}, {key: "attempt", kind: "story"}, {key: "struggle", kind: "mistake"}, {key: "result", kind: "proof"}, {key: "lessons", kind: "recap"}, {key: "cta", kind: "cta"}},
	"vlog":       {{key: "hook", kind: "hook"}, {key: "scene", kind: "intro"}, {key: "moment", kind: "story"}, {key: "moment", kind: "story"}, {key: "moment", kind: "story"}, {key: "reflection", kind: "point"}, {key: "cta", kind: "cta"}},
	"case-study": {{key: "hook", kind: "hook"}, {key: "subject", kind: "intro"}, {key: "problem", kind: "mistake"}, {key: "approach", kind: "step"}, {key: "results", kind: "proof"}, {key: "takeaway", kind: "recap"}, {key: "cta", kind: "cta"}},
	"news":       {{key: "hook", kind: "hook"}, {key: "headline", kind: "intro"}, {key: "happened", kind: "point"}, {key: "matters", kind: "point"}, {key: "reactions", kind: "contrast"}, {key: "next", kind: "step"}, {key: "cta", kind: "cta"}},
}

type section struct {
	heading string
	cues    []string // cue lines, "[B-ROLL] ..." or "[GRAPHIC] ..."
	lines   []string
	kind    string
}

func longScript(w *writer) any {
	beats := w.beats()
	target, ceiling := longTarget, longCap
	switch {
	case w.dir.shorter:
		target = 1280
	case w.dir.longer:
		target = 1800
	}
	var head []string // cue lines before the first section
	if w.fallback {
		head = append(head, Marker)
	}
	if len(w.f.style) > 0 {
		head = append(head, "[TONE] "+w.one(w.L.Tone, 0, "style", w.quote(w.f.style[0])))
	}
	if w.f.series != nil {
		head = append(head, "[SERIES] "+w.one(w.L.SeriesCue, 0))
	}
	if w.dir.feedback != "" {
		head = append(head, "[REVISION] "+w.one(w.L.Revision, 0, "feedback", w.quote(firstWords(w.dir.feedback, 25))))
	}
	total := 0
	for _, h := range head {
		total += countWords(h)
	}
	secs := make([]section, len(beats))
	spokenWords := 0
	counts := map[string]int{}
	// Sections share the target by weight (a hook or an outro is short); section i ends when the script
	// reaches its cumulative share, so overshoot never adds up across sections.
	quota := quotas(beats, target)
	goal := 0
	for i, bt := range beats {
		counts[bt.key]++
		rot := counts[bt.key] - 1 + i
		s := &secs[i]
		s.kind = bt.kind
		s.heading = bt.heading
		if s.heading == "" {
			s.heading = w.one(w.L.Sections[bt.key], rot, "i", strconv.Itoa(counts[bt.key]))
		}
		total += countWords(s.heading) + 2
		// Every section but the call to action opens on a cue, B-roll and graphics in turn, so a script
		// of two sections or more has both.
		if bt.kind != "cta" || i == 0 {
			s.cues = append(s.cues, w.cue(i, s.heading))
		}
		if bt.kind == "proof" && len(w.f.outliers) > 0 {
			o := w.f.outliers[0]
			s.cues = append(s.cues, "[GRAPHIC] "+w.one(w.L.Outlier, 0, "outlier", o.Title,
				"views", strconv.FormatInt(o.Views, 10), "score", strconv.FormatFloat(o.Score, 'f', 1, 64)))
		}
		for _, c := range s.cues {
			total += countWords(c)
		}
		goal += quota[i]
		for k := 0; spokenWords < goal || k < 2; k++ {
			ln := w.sentence(bt.kind, rot+k/3, k)
			n := countWords(ln)
			if total+n > ceiling || k > 120 {
				break
			}
			s.lines = append(s.lines, ln)
			spokenWords += n
			total += n
		}
	}
	// A catchphrase ends the script, as creators who have one end every video on it.
	if last := &secs[len(secs)-1]; w.f.catch != "" && last.kind == "cta" {
		ln := w.one("{catch}!", 0)
		for k, l := range last.lines {
			if strings.Contains(l, w.f.catch) {
				ln = l
				last.lines = append(last.lines[:k], last.lines[k+1:]...)
				break
			}
		}
		last.lines = append(last.lines, ln)
	}
	// A script that came out short (a formula of few beats, say) gets more in its middle section.
	for k := 0; spokenWords < longMinWords+30 && k < 200; k++ {
		i := len(secs) / 2
		ln := w.sentence("any", 1000+k, 3)
		n := countWords(ln)
		if total+n > ceiling {
			break
		}
		secs[i].lines = append(secs[i].lines, ln)
		spokenWords += n
		total += n
	}
	return scriptOut{Script: renderLong(head, secs)}
}

// kindCap bounds the words of the sections that should stay short whatever the formula.
var kindCap = map[string]int{"hook": 70, "intro": 140, "recap": 140, "cta": 60}

// quotas shares target words among the sections by weight, the short kinds capped and their excess
// going to the others.
func quotas(beats []beat, target int) []int {
	q := make([]int, len(beats))
	var free float64 // weight of the uncapped sections
	left := target
	for i, b := range beats {
		if c, ok := kindCap[b.kind]; ok {
			var all float64
			for _, o := range beats {
				all += kindWeight[o.kind]
			}
			q[i] = min(c, int(float64(target)*kindWeight[b.kind]/all))
			left -= q[i]
		} else {
			free += kindWeight[b.kind]
		}
	}
	for i, b := range beats {
		if _, ok := kindCap[b.kind]; !ok {
			q[i] = int(float64(left) * kindWeight[b.kind] / free)
		}
	}
	return q
}

// kindWeight is a section's share of a long script by its kind.
var kindWeight = map[string]float64{
	"hook": 0.5, "intro": 0.7, "point": 1, "step": 1, "proof": 1, "story": 1, "mistake": 1, "contrast": 1,
	"recap": 0.6, "cta": 0.35,
}

// sentence writes the k-th sentence of a section of kind: the kind's own sentences first, then general
// ones.
func (w *writer) sentence(kind string, rot, k int) string {
	if kind == "hook" && k == 0 {
		if s, ok := w.fresh([]string{w.L.LongHooks[w.in.Type]}, rot); ok && w.L.LongHooks[w.in.Type] != "" {
			return s
		}
		return w.mustFresh(w.L.Lines["hook"], rot)
	}
	pools := []string{kind, "any", "point"}
	if k >= 3 && kind != "cta" && kind != "hook" {
		pools = []string{"any", "point", kind}
	}
	for _, p := range pools {
		if s, ok := w.unused(w.pool(p), rot); ok {
			return s
		}
	}
	return w.must(w.pool(pools[0]), rot)
}

// pool returns the sentences of a kind; general sentences ("any") also draw on the lines the phrasebook
// has for short scripts, podcasts and hooks, so a long script repeats itself less.
func (w *writer) pool(kind string) []string {
	if kind != "any" {
		return w.L.Lines[kind]
	}
	if w.anyPool == nil {
		p := append([]string{}, w.L.Lines["any"]...)
		p = append(p, w.L.ShortMore...)
		for _, t := range []string{"quick-tip", "myth-buster", "hack", "fact"} {
			p = append(p, w.L.ShortBody[t]...)
		}
		p = append(p, w.L.PodNuggets...)
		w.anyPool = p
	}
	return w.anyPool
}

// unused is line restricted to templates not used yet.
func (w *writer) unused(pool []string, rot int) (string, bool) {
	start := w.rng.IntN(len(pool) + 1)
	for k := range pool {
		tpl := pool[(start+k)%len(pool)]
		if w.used[tpl] > 0 {
			continue
		}
		if s, ok := w.fill(tpl, rot); ok && !w.avoids(s) {
			w.used[tpl]++
			return upperFirst(s), true
		}
	}
	return "", false
}

func (w *writer) mustFresh(pool []string, rot int) string {
	if s, ok := w.fresh(pool, rot); ok {
		return s
	}
	return w.must(pool, rot)
}

// cue writes the production cue that opens section i.
func (w *writer) cue(i int, heading string) string {
	if i%2 == 0 {
		return "[B-ROLL] " + w.must(w.L.BRoll, i)
	}
	return "[GRAPHIC] " + w.must(w.L.Graphic, i, "heading", heading)
}

// beats are the sections of the long script: the series formula's beats when it has at least three,
// else the type's structure.
func (w *writer) beats() []beat {
	if w.f.series != nil {
		if bs := formulaBeats(w.f.series.ScriptFormula, w.L); len(bs) >= 3 {
			return bs
		}
	}
	if bs, ok := structures[w.in.Type]; ok {
		return bs
	}
	return structures["how-to"]
}

// formulaBeats reads a series' script formula ("Hook → Problem → 3 tips → CTA", or one beat a line,
// numbered or bulleted) as beats, at most 12, their kind told by their words or their place.
func formulaBeats(formula string, L *book) []beat {
	formula = strings.TrimSpace(formula)
	if formula == "" {
		return nil
	}
	var parts []string
	if strings.Contains(formula, "\n") {
		parts = strings.Split(formula, "\n")
	} else {
		parts = []string{formula}
		for _, sep := range []string{"→", "->", "=>", "|", ";", " > ", ","} {
			if strings.Contains(formula, sep) {
				parts = strings.Split(formula, sep)
				break
			}
		}
	}
	var bs []beat
	for _, p := range parts {
		p = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(p), "-*•·0123456789.)( "))
		if p == "" {
			continue
		}
		bs = append(bs, beat{heading: clip(upperFirst(p), 60)})
		if len(bs) == 12 {
			break
		}
	}
	for i := range bs {
		bs[i].kind = beatKind(bs[i].heading, L)
		if bs[i].kind == "" {
			switch i {
			case 0:
				bs[i].kind = "hook"
			case len(bs) - 1:
				bs[i].kind = "cta"
			case 1:
				bs[i].kind = "intro"
			default:
				bs[i].kind = "point"
			}
		}
	}
	return bs
}

func beatKind(text string, L *book) string {
	lt := strings.ToLower(text)
	for _, kind := range []string{"hook", "cta", "intro", "recap", "story", "step", "mistake", "proof", "contrast"} {
		for _, src := range []*book{L, &english} {
			for _, word := range src.KindWords[kind] {
				if containsWord(lt, word) {
					return kind
				}
			}
		}
	}
	return ""
}

// renderLong writes the script: cue lines, then each section as a "## heading (m:ss)" line, its cues and
// its sentences in paragraphs of three; the time is where the section starts at 150 words a minute.
func renderLong(head []string, secs []section) string {
	var sb strings.Builder
	sb.Grow(12000)
	for _, h := range head {
		sb.WriteString(h)
		sb.WriteByte('\n')
	}
	if len(head) > 0 {
		sb.WriteByte('\n')
	}
	said := 0
	for i, s := range secs {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString("## ")
		sb.WriteString(s.heading)
		sb.WriteString(" (")
		sb.WriteString(clock(said * 60 / wordsPerMinute))
		sb.WriteString(")\n")
		for _, c := range s.cues {
			sb.WriteString(c)
			sb.WriteByte('\n')
		}
		for k, ln := range s.lines {
			if k > 0 {
				if k%3 == 0 {
					sb.WriteString("\n")
				} else {
					sb.WriteByte(' ')
				}
			}
			sb.WriteString(ln)
			said += countWords(ln)
		}
		sb.WriteByte('\n')
	}
	return strings.TrimRight(sb.String(), "\n")
}

// ---- short script

func shortScript(w *writer) any {
	typ := w.in.Type
	if _, ok := w.L.ShortHooks[typ]; !ok {
		typ = "quick-tip"
	}
	target := shortTarget
	switch {
	case w.dir.shorter:
		target = 80
	case w.dir.longer:
		target = 125
	}
	type part struct {
		text     string
		cue      bool
		optional bool
	}
	var parts []part
	if w.fallback {
		parts = append(parts, part{Marker, true, false})
	}
	if len(w.f.style) > 0 {
		parts = append(parts, part{"[TONE] " + w.one(w.L.Tone, 0, "style", w.quote(firstWords(w.f.style[0], shortCueWordCap-4))), true, true})
	}
	if w.dir.feedback != "" {
		parts = append(parts, part{"[REVISION] " + w.quote(firstWords(w.dir.feedback, shortCueWordCap-2)), true, true})
	}
	parts = append(parts, part{"[VISUAL] " + w.one(w.L.ShortVisual[typ], 0), true, false})
	parts = append(parts, part{w.mustFresh(w.L.ShortHooks[typ], 0), false, false})
	parts = append(parts, part{"[VISUAL] " + w.must(w.L.Visual, 1), true, false})
	body := w.L.ShortBody[typ]
	for i, tpl := range body {
		parts = append(parts, part{w.one(tpl, i), false, i > 0})
		if i == 0 {
			parts = append(parts, part{"[VISUAL] " + w.must(w.L.Visual, 2), true, true})
		}
	}
	payoff := w.must(w.L.ShortPayoff, 3)
	cta := w.must(w.L.ShortCTA, 4)
	said := func() (n, all int) {
		for _, p := range parts {
			c := countWords(p.text)
			all += c
			if !p.cue {
				n += c
			}
		}
		c := countWords(payoff) + countWords(cta) + 2
		return n + c - 2, all + c
	}
	for k := 0; k < 6; k++ {
		if n, _ := said(); n >= target {
			break
		}
		more, ok := w.unused(w.L.ShortMore, 5+k)
		if !ok {
			more, ok = w.unused(w.L.Lines["point"], 5+k)
		}
		if !ok {
			break
		}
		parts = append(parts, part{more, false, true})
	}
	// Over the limit: optional parts go, last first, until it fits.
	for i := len(parts) - 1; i >= 0; i-- {
		if _, all := said(); all <= shortMaxWords {
			break
		}
		if parts[i].optional {
			parts = append(parts[:i], parts[i+1:]...)
		}
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.text)
		sb.WriteByte('\n')
	}
	sb.WriteString("[VISUAL] ")
	sb.WriteString(w.must(w.L.Visual, 6))
	sb.WriteByte('\n')
	sb.WriteString(payoff)
	sb.WriteByte(' ')
	sb.WriteString(cta)
	script := sb.String()
	// The last cue came after the count: if it tipped the script over, an extra line makes room.
	for countWords(script) > shortMaxWords {
		lines := strings.Split(script, "\n")
		cut := false
		for i := len(lines) - 3; i > 0; i-- {
			if !strings.HasPrefix(lines[i], "[") && spoken(script)-countWords(lines[i]) >= shortMinWords {
				lines = append(lines[:i], lines[i+1:]...)
				cut = true
				break
			}
		}
		script = strings.Join(lines, "\n")
		if !cut {
			script = trimWords(script, shortMaxWords)
			break
		}
	}
	return scriptOut{Script: script}
}

// trimWords keeps the first n words of s, lines kept.
func trimWords(s string, n int) string {
	var sb strings.Builder
	count := 0
	for _, ln := range strings.Split(s, "\n") {
		f := strings.Fields(ln)
		if count+len(f) > n {
			f = f[:n-count]
		}
		count += len(f)
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(strings.Join(f, " "))
		if count >= n {
			break
		}
	}
	return sb.String()
}
