package textmodel

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/generation"
)

type titleItem struct {
	Title string `json:"title"`
}

type titlesOut struct {
	Titles []titleItem `json:"titles"`
}

// Title lengths: YouTube cuts a title at 100 characters; the soft limits keep a Long title readable in
// search (70) and a Short's on the player (50), so Shorts come out punchier.
const (
	titleMax       = 100
	longTitleSoft  = 70
	shortTitleSoft = 50
)

func titles(w *writer) any {
	short := w.b.VideoType == "Short" || (w.b.VideoType == "" && w.in.VideoType == "Short")
	var out titlesOut
	for _, t := range w.titleList(w.in.Type, short, generation.MaxTitlesPerCall) {
		out.Titles = append(out.Titles, titleItem{t})
	}
	return out
}

// titleList writes up to max distinct titles of a type: the type's frames in a seeded order, each with the
// keywords in turn, fitted to the length limits, leaving out what the creator avoids and what recent
// outputs already said. It always returns at least one title.
func (w *writer) titleList(typ string, short bool, limit int) []string {
	frames := w.titleFrames(typ, short)
	soft := longTitleSoft
	if short {
		soft = shortTitleSoft
	}
	if w.dir.shorter {
		soft = soft * 3 / 4
	}
	order := w.rng.Perm(len(frames))
	if w.dir.question || w.dir.numbers {
		// A refinement asking for questions or numbers puts the frames that have them first.
		slices.SortStableFunc(order, func(a, b int) int { return w.dirRank(frames[a]) - w.dirRank(frames[b]) })
	}
	rounds := max(len(w.f.kws), len(w.f.hot), 2)
	var list, spare []string
	seen := map[string]bool{}
	take := func(frames []string, order []int) {
		for r := 0; r < rounds && len(list) < limit; r++ {
			for _, k := range order {
				t, ok := w.fitTitle(frames[k], r, soft)
				if !ok || seen[strings.ToLower(t)] {
					continue
				}
				seen[strings.ToLower(t)] = true
				if w.avoids(t) || w.isRecent(t) {
					spare = append(spare, t)
					continue
				}
				list = append(list, t)
				if len(list) == limit {
					break
				}
			}
		}
	}
	take(frames, order)
	// Too few new titles (a type with few frames, most said recently): the other types' frames help out.
	if len(list) < min(limit, 5) {
		var more []string
		for _, k := range titleTypes {
			if k != typ {
				more = append(more, w.titleFrames(k, short)...)
			}
		}
		take(more, w.rng.Perm(len(more)))
	}
	// A phrase the refinement asks for leads the first titles (not all: ten titles ending alike read badly).
	if f := w.f.focus; f != "" {
		for i := 0; i < len(list) && i < 3; i++ {
			if t := list[i] + " | " + f; !strings.Contains(strings.ToLower(list[i]), strings.ToLower(f)) && utf8.RuneCountInString(t) <= titleMax {
				list[i] = t
			}
		}
	}
	if len(list) == 0 && len(spare) > 0 {
		list = spare[:1]
	}
	if len(list) == 0 {
		list = []string{clip(upperFirst(w.f.topic), titleMax)}
	}
	return list
}

func (w *writer) titleFrames(typ string, short bool) []string {
	src := w.L.Titles
	if short {
		src = w.L.ShortTitles
	}
	frames := src[typ]
	if len(frames) == 0 { // a type the phrasebook does not know: every type's frames, in a fixed order
		for _, k := range titleTypes {
			frames = append(frames, src[k]...)
		}
	}
	if w.dir.question && typ != "question" {
		frames = append(slices.Clone(src["question"]), frames...)
	}
	if w.f.clause {
		// A topic that is a clause ("how to start a podcast") reads only at the head of a title.
		var keep []string
		for _, f := range frames {
			if !strings.Contains(f, "{topic}") || strings.HasPrefix(f, "{topic}") {
				keep = append(keep, f)
			}
		}
		frames = keep
	}
	return frames
}

// titleTypes are the TitlesRequest types, in the contract's order.
var titleTypes = []string{"question", "how-to", "listicle", "challenge", "story", "myth-buster", "comparison", "review", "behind-the-scenes", "news"}

func (w *writer) dirRank(frame string) int {
	r := 2
	if w.dir.question && strings.Contains(frame, "?") {
		r--
	}
	if w.dir.numbers && strings.Contains(frame, "{n}") {
		r--
	}
	return r
}

// fitTitle renders a title frame with the whole topic, else shorter forms of it, until it fits the soft
// limit; a frame that cannot fit the hard limit is cut at a word.
func (w *writer) fitTitle(frame string, rot, soft int) (string, bool) {
	var t string
	stop := stopwords(w.L)
	for _, n := range []int{0, 8, 5, 3} {
		topic := w.f.topic
		if n > 0 {
			topic = trimStop(firstWords(topic, n), stop)
		}
		s, ok := w.fill(frame, rot, "topic", topic)
		if !ok {
			return "", false
		}
		t = upperFirst(clean(s))
		if w.L.TitleCase {
			t = titleCase(t)
		}
		if w.repeatsKeyword(t) {
			return "", false
		}
		if utf8.RuneCountInString(t) <= soft {
			return t, true
		}
	}
	return clip(t, titleMax), true
}

// repeatsKeyword reports whether a title says one of the keywords twice (a keyword that is also in the
// topic, say).
func (w *writer) repeatsKeyword(t string) bool {
	lt := strings.ToLower(t)
	for _, k := range append(append([]string{}, w.f.kws...), w.f.hot...) {
		lk := strings.ToLower(k)
		if i := strings.Index(lt, lk); i >= 0 && strings.Contains(lt[i+len(lk):], lk) {
			return true
		}
	}
	return false
}

// trimStop drops the stopwords a shortened topic ends on ("meal prep for the" → "meal prep").
func trimStop(s string, stop map[string]bool) string {
	f := strings.Fields(s)
	for len(f) > 1 && stop[strings.ToLower(f[len(f)-1])] {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// small are the words an english title leaves in lower case (but first).
var small = map[string]bool{"a": true, "an": true, "the": true, "and": true, "or": true, "but": true, "for": true, "of": true,
	"to": true, "in": true, "on": true, "at": true, "by": true, "vs": true, "with": true, "from": true, "as": true}

// titleCase capitalises an english title's words but the small ones; words with a capital already
// (acronyms, brands) stay as written.
func titleCase(s string) string {
	f := strings.Fields(s)
	for i, word := range f {
		if strings.ToLower(word) != word {
			continue
		}
		if i > 0 && small[word] && !strings.HasSuffix(f[i-1], ":") {
			continue
		}
		f[i] = upperFirst(word)
	}
	return strings.Join(f, " ")
}
