package generation

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Letter is the letter grade of a 0..100 score (decision 18).
func Letter(score float64) string {
	for _, g := range []struct {
		min    float64
		letter string
	}{{97, "A+"}, {93, "A"}, {90, "A-"}, {87, "B+"}, {83, "B"}, {80, "B-"}, {77, "C+"}, {73, "C"}, {70, "C-"}, {60, "D"}} {
		if score >= g.min {
			return g.letter
		}
	}
	return "F"
}

// Quality filter of titles (decision 18): titles scored below MinTitleScore are dropped, but the best
// MinTitlesKept are always returned.
const (
	MinTitleScore = 70
	MinTitlesKept = 3
)

// Dimensions are a title's five scores, each 1..10 (TitleDimensions in the API).
type Dimensions struct {
	NicheRelevance    float64 `json:"nicheRelevance"`
	ResearchAlignment float64 `json:"researchAlignment"`
	RulesCompliance   float64 `json:"rulesCompliance"`
	HookStrength      float64 `json:"hookStrength"`
	BrandVoice        float64 `json:"brandVoice"`
}

// Score is the 0..100 score of the dimensions: their mean times 10 (decision 18), to one decimal.
func (d Dimensions) Score() float64 {
	mean := (d.NicheRelevance + d.ResearchAlignment + d.RulesCompliance + d.HookStrength + d.BrandVoice) / 5
	return math.Round(mean*100) / 10
}

// GradedTitle is GeneratedTitle in the API.
type GradedTitle struct {
	Title      string     `json:"title"`
	Grade      string     `json:"grade"`
	Score      float64    `json:"score"`
	Feedback   string     `json:"feedback,omitempty"`
	VideoType  string     `json:"videoType,omitempty"`
	Dimensions Dimensions `json:"dimensions"`
}

// FilterTitles applies the quality filter and then the count cap (decision 19; 0: no cap), best first.
// Equal scores keep their generated order, so the result is deterministic.
func FilterTitles(titles []GradedTitle, count int) []GradedTitle {
	sorted := slices.Clone(titles)
	slices.SortStableFunc(sorted, func(a, b GradedTitle) int { return cmp.Compare(b.Score, a.Score) })
	kept := 0
	for kept < len(sorted) && (kept < MinTitlesKept || sorted[kept].Score >= MinTitleScore) {
		kept++
	}
	sorted = sorted[:kept]
	if count > 0 && count < len(sorted) {
		sorted = sorted[:count]
	}
	return sorted
}

// Title length limits per video type: the platform's hard limit, and the length past which a title is cut
// in search results and suggestions.
const (
	TitleHardLimit    = 100
	LongTitleVisible  = 70
	ShortTitleVisible = 50
)

// TitleRules scores a title's compliance with the deterministic rules, 1..10, and says what it broke.
// Computed in code, never asked of a model (issue 8: rulesCompliance).
func TitleRules(title, videoType string) (score float64, broken []string) {
	score = 10
	n := utf8.RuneCountInString(title)
	visible := LongTitleVisible
	if videoType == "Short" {
		visible = ShortTitleVisible
	}
	switch {
	case n > TitleHardLimit:
		score -= 6
		broken = append(broken, "longer than the platform's 100 characters")
	case n > visible:
		score -= 2
		broken = append(broken, "cut off in search results")
	}
	if n < 15 {
		score -= 2
		broken = append(broken, "too short to say what the video is")
	}
	words := strings.Fields(title)
	shouting := 0
	for _, w := range words {
		letters, upper := 0, 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				letters++
				if unicode.IsUpper(r) {
					upper++
				}
			}
		}
		if letters >= 3 && upper == letters {
			shouting++
		}
	}
	if shouting > 1 {
		score -= 2
		broken = append(broken, "more than one word in capitals")
	}
	if strings.Contains(title, "!!") || strings.Contains(title, "??") {
		score -= 1
		broken = append(broken, "repeated punctuation")
	}
	lower := strings.ToLower(title)
	for _, bait := range forbiddenPhrases {
		if strings.Contains(lower, bait) {
			score -= 3
			broken = append(broken, "clickbait phrase \""+bait+"\"")
			break
		}
	}
	emoji := 0
	for _, r := range title {
		if r >= 0x1F000 {
			emoji++
		}
	}
	if emoji > 1 {
		score -= 1
		broken = append(broken, "more than one emoji")
	}
	return max(score, 1), broken
}

// forbiddenPhrases are clickbait phrasings that cost trust and, on the platform, reach.
var forbiddenPhrases = []string{"you won't believe", "you wont believe", "gone wrong", "not clickbait", "shocking", "must watch", "(gone sexual)"}
