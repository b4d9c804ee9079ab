package research

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/creatorstrategy/css/shared/profile"
)

// PatternWriter writes the six ResearchPatterns texts of a niche from its research videos. The model
// writes them in production (one call per content kind); Statistics writes them without a model.
type PatternWriter interface {
	WritePatterns(ctx context.Context, in PatternInput) (Patterns, Usage, error)
}

// IdeaWriter drafts backlog ideas inspired by a niche's strongest outliers, adapted to the channel's
// profile. The model writes them in production (one call); Statistics writes them without a model.
type IdeaWriter interface {
	WriteIdeas(ctx context.Context, in IdeaInput) ([]IdeaDraft, Usage, error)
}

// PatternInput is what pattern analysis reads.
type PatternInput struct {
	Niche   Niche
	Profile profile.NicheProfile
	// Videos are the run's videos, strongest outliers first.
	Videos []Video
}

// IdeaInput is what idea writing reads.
type IdeaInput struct {
	Niche    Niche
	Profile  profile.NicheProfile
	Patterns Patterns
	// Outliers are the strongest outliers, strongest first; each idea is inspired by one of them.
	Outliers []Video
	// Count is the most ideas wanted.
	Count int
	// Taken are the titles already in the backlog or the pipeline: an idea must not repeat one
	// (case-insensitive; the store checks again when it adds them).
	Taken []string
}

// IdeaDraft is an idea before it is added to the backlog.
type IdeaDraft struct {
	Title       string
	ContentType string
	FormulaType string
	// Inspiration is the outlier the idea comes from (its title, URL and views become the idea's
	// inspiredBy and viewCount).
	Inspiration Video
}

// Usage is what a writer spent: model calls and tokens (zero without a model).
type Usage struct {
	ModelCalls   int
	InputTokens  int
	OutputTokens int
}

// Statistics writes patterns and ideas from counts over the videos, deterministically and without a
// model: what the local stack and a deployment without a model get. Its texts are in English whatever
// the content language; the quoted titles are the niche's own.
type Statistics struct{}

// outliersPerKind is how many of the strongest outliers each pattern text quotes or counts over.
const outliersPerKind = 50

// WritePatterns implements PatternWriter.
func (Statistics) WritePatterns(_ context.Context, in PatternInput) (Patterns, Usage, error) {
	vs := in.Videos
	if len(vs) == 0 {
		return Patterns{}, Usage{}, nil
	}
	top := vs[:min(len(vs), outliersPerKind)]
	var long, short []Video
	for _, v := range vs {
		if v.ContentType == Short {
			short = append(short, v)
		} else {
			long = append(long, v)
		}
	}
	return Patterns{
		Titles:       titlePatterns(top),
		Thumbnails:   thumbnailPatterns(top),
		LongScripts:  formatPatterns("Long videos", long[:min(len(long), outliersPerKind)]),
		ShortScripts: formatPatterns("Shorts", short[:min(len(short), outliersPerKind)]),
		Descriptions: descriptionPatterns(top),
		Ideas:        anglePatterns(in.Niche, top),
	}, Usage{}, nil
}

func titlePatterns(vs []Video) string {
	var numbers, questions, howTo, chars int
	for _, v := range vs {
		f := FormulaOf(v.Title)
		numbers += b2i(f == "listicle" || hasDigit(v.Title))
		questions += b2i(strings.Contains(v.Title, "?"))
		howTo += b2i(f == "how-to")
		chars += len([]rune(v.Title))
	}
	n := len(vs)
	return fmt.Sprintf("Across the %d strongest outliers: %d%% of titles carry a number, %d%% ask a question, "+
		"%d%% promise a how-to; they average %d characters. Strongest: %s.",
		n, pct(numbers, n), pct(questions, n), pct(howTo, n), chars/n, quoteTop(vs, 3))
}

func thumbnailPatterns(vs []Video) string {
	words := topWords(vs, nil, 5)
	return fmt.Sprintf("Thumbnail text that echoes the strongest outliers stays under 4 words; the words their "+
		"titles lean on most: %s. Start from the hook of %s.", strings.Join(words, ", "), quoteTop(vs, 2))
}

func formatPatterns(what string, vs []Video) string {
	if len(vs) == 0 {
		return fmt.Sprintf("No %s among the research videos.", what)
	}
	d := make([]int64, len(vs))
	for i, v := range vs {
		d[i] = int64(v.DurationSeconds)
	}
	m := int(Median(d))
	return fmt.Sprintf("%s: the %d strongest outliers run a median %d:%02d and beat their channels' median "+
		"views %.1f× on average. Strongest: %s.", what, len(vs), m/60, m%60, meanScore(vs), quoteTop(vs, 3))
}

// hasChapterLine says whether some line of s starts, after white space, with a chapter mark m:ss or
// mm:ss. A loop rather than a regexp compiled at package init, which every API function linking this
// package paid at cold start (about 0.1 ms) for statistics only the research worker writes.
func hasChapterLine(s string) bool {
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimLeft(line, " \t\n\f\r")
		digits := 0
		for digits < len(line) && digits < 3 && '0' <= line[digits] && line[digits] <= '9' {
			digits++
		}
		if digits < 1 || digits > 2 || len(line) < digits+3 || line[digits] != ':' {
			continue
		}
		if mm := line[digits+1 : digits+3]; '0' <= mm[0] && mm[0] <= '9' && '0' <= mm[1] && mm[1] <= '9' {
			return true
		}
	}
	return false
}

func descriptionPatterns(vs []Video) string {
	var links, hashtags, chapters int
	for _, v := range vs {
		links += b2i(strings.Contains(v.Description, "http"))
		hashtags += b2i(strings.Contains(v.Description, "#"))
		chapters += b2i(hasChapterLine(v.Description))
	}
	n := len(vs)
	tags := topTags(vs, 8)
	return fmt.Sprintf("Of the %d strongest outliers' descriptions, %d%% carry links, %d%% use hashtags and "+
		"%d%% list chapters in their opening lines. Tags they share most: %s.",
		n, pct(links, n), pct(hashtags, n), pct(chapters, n), strings.Join(tags, ", "))
}

func anglePatterns(n Niche, vs []Video) string {
	counts := map[string]int{}
	for _, v := range vs {
		counts[FormulaOf(v.Title)]++
	}
	formulas := topKeys(counts, 3)
	kw := make([]string, 0, len(n.Keywords))
	for _, k := range n.Keywords {
		c := 0
		for _, v := range vs {
			c += b2i(strings.Contains(strings.ToLower(v.Title), k))
		}
		kw = append(kw, fmt.Sprintf("%q in %d", k, c))
	}
	return fmt.Sprintf("The formulas that outperform: %s. Keywords in the %d strongest outlier titles: %s.",
		strings.Join(formulas, ", "), len(vs), strings.Join(kw, ", "))
}

// WriteIdeas implements IdeaWriter: one idea per outlier, strongest first, its title rewritten for the
// channel's focus in the outlier's formula, skipping titles already taken.
func (Statistics) WriteIdeas(_ context.Context, in IdeaInput) ([]IdeaDraft, Usage, error) {
	taken := map[string]bool{}
	for _, t := range in.Taken {
		taken[strings.ToLower(t)] = true
	}
	focus := in.Niche.Focus
	if focus == "" && len(in.Niche.Keywords) > 0 {
		focus = in.Niche.Keywords[0]
	}
	var out []IdeaDraft
	for _, v := range in.Outliers {
		if len(out) == in.Count {
			break
		}
		formula := FormulaOf(v.Title)
		title := truncate(adaptTitle(v.Title, formula, focus), 200)
		if taken[strings.ToLower(title)] {
			continue
		}
		taken[strings.ToLower(title)] = true
		out = append(out, IdeaDraft{Title: title, ContentType: v.ContentType, FormulaType: formula, Inspiration: v})
	}
	return out, Usage{}, nil
}

func adaptTitle(title, formula, focus string) string {
	t := strings.TrimSpace(title)
	switch formula {
	case "question":
		return fmt.Sprintf("%s (I tested it for %s)", t, focus)
	case "how-to":
		return fmt.Sprintf("%s: the %s way", t, focus)
	case "comparison":
		return fmt.Sprintf("%s: which wins for %s?", t, focus)
	case "listicle":
		return fmt.Sprintf("%s for %s", t, focus)
	default:
		return fmt.Sprintf("What %q taught me about %s", t, focus)
	}
}

// FormulaOf names the formula a title follows: listicle, how-to, question, comparison, challenge, story,
// review or other.
func FormulaOf(title string) string {
	t := strings.ToLower(title)
	first := strings.FieldsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	switch {
	case len(first) > 0 && isNumber(first[0]):
		return "listicle"
	case strings.HasPrefix(t, "how ") || strings.Contains(t, "how to"):
		return "how-to"
	case strings.Contains(t, " vs ") || strings.Contains(t, " vs. ") || strings.Contains(t, " versus "):
		return "comparison"
	case strings.Contains(t, "?"):
		return "question"
	case strings.Contains(t, "challenge") || strings.Contains(t, "i tried") || strings.Contains(t, "for 30 days"):
		return "challenge"
	case strings.Contains(t, "review"):
		return "review"
	case strings.HasPrefix(t, "i ") || strings.HasPrefix(t, "my ") || strings.HasPrefix(t, "why i "):
		return "story"
	default:
		return "other"
	}
}

func isNumber(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
}

func hasDigit(s string) bool { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

func quoteTop(vs []Video, n int) string {
	q := make([]string, 0, n)
	for _, v := range vs[:min(len(vs), n)] {
		q = append(q, fmt.Sprintf("%q (%.1f×)", v.Title, v.OutlierScore))
	}
	return strings.Join(q, "; ")
}

func meanScore(vs []Video) float64 {
	var s float64
	for _, v := range vs {
		s += v.OutlierScore
	}
	return s / float64(len(vs))
}

// stopWords are left out of the word counts (English; other languages count every word).
func isStopWord(w string) bool {
	switch w {
	case "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "is", "are", "my", "your",
		"you", "i", "it", "this", "that", "how", "what", "why", "vs", "at", "from", "by", "be", "do", "not":
		return true
	}
	return len([]rune(w)) < 3
}

func topWords(vs []Video, skip []string, n int) []string {
	counts := map[string]int{}
	for _, v := range vs {
		for _, w := range strings.FieldsFunc(strings.ToLower(v.Title), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if !isStopWord(w) && !slices.Contains(skip, w) {
				counts[w]++
			}
		}
	}
	return topKeys(counts, n)
}

func topTags(vs []Video, n int) []string {
	counts := map[string]int{}
	for _, v := range vs {
		for _, t := range v.Tags {
			counts[strings.ToLower(t)]++
		}
	}
	if len(counts) == 0 {
		return []string{"(none)"}
	}
	return topKeys(counts, n)
}

// topKeys returns the n keys with the highest counts (ties in key order, so the result is deterministic).
func topKeys(counts map[string]int, n int) []string {
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	return keys[:min(len(keys), n)]
}

func pct(part, whole int) int {
	if whole == 0 {
		return 0
	}
	return part * 100 / whole
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
