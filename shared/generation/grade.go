package generation

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/research"
)

// Letter is the letter grade of a 0..100 score (decision 18).
func Letter(score float64) contract.Grade {
	for _, g := range []struct {
		min    float64
		letter contract.Grade
	}{
		{97, contract.GradeAPlus}, {93, contract.GradeA}, {90, contract.GradeAMinus},
		{87, contract.GradeBPlus}, {83, contract.GradeB}, {80, contract.GradeBMinus},
		{77, contract.GradeCPlus}, {73, contract.GradeC}, {70, contract.GradeCMinus}, {60, contract.GradeD},
	} {
		if score >= g.min {
			return g.letter
		}
	}
	return contract.GradeF
}

// Quality filter of titles (decision 18): titles scored below MinTitleScore are dropped, but the best
// MinTitlesKept are always returned.
const (
	MinTitleScore = 70
	MinTitlesKept = 3
)

// TitleScore is the 0..100 score of a title's five dimensions, each 1..10: their mean times 10 (decision
// 18), to one decimal.
func TitleScore(d contract.TitleDimensions) float64 {
	v := contract.Value[float64]
	mean := (v(d.NicheRelevance) + v(d.ResearchAlignment) + v(d.RulesCompliance) + v(d.HookStrength) + v(d.BrandVoice)) / 5
	return math.Round(mean*100) / 10
}

// FilterTitles applies the quality filter and then the count cap (decision 19; 0: no cap), best first.
// Equal scores keep their generated order, so the result is deterministic.
func FilterTitles(titles []contract.GeneratedTitle, count int) []contract.GeneratedTitle {
	sorted := slices.Clone(titles)
	score := func(t contract.GeneratedTitle) float64 { return contract.Value(t.Score) }
	slices.SortStableFunc(sorted, func(a, b contract.GeneratedTitle) int { return cmp.Compare(score(b), score(a)) })
	kept := 0
	for kept < len(sorted) && (kept < MinTitlesKept || score(sorted[kept]) >= MinTitleScore) {
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
func TitleRules(title string, videoType contract.GeneratedTitleVideoType) (score float64, broken []string) {
	score = 10
	n := utf8.RuneCountInString(title)
	visible := LongTitleVisible
	if videoType == contract.GeneratedTitleVideoTypeShort {
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

// GradeTitle grades a published title that no title run proposed, as the title tool grades its own, so the
// calibration of decision 52 also counts the creator's own titles: the grading model on the channel's brief,
// plus the rules of its format (a Short when short). The call counts against no generation quota: the
// service makes it once per video, at its first review.
func (g *Generator) GradeTitle(ctx context.Context, channelID, title string, short bool) (float64, error) {
	tool, _ := ToolNamed(ToolTitles)
	videoType := contract.GeneratedTitleVideoTypeLong
	if short {
		videoType = contract.GeneratedTitleVideoTypeShort
	}
	// The title's formula is the request's type; every formula but "other" is one of the type's values.
	in := &contract.TitlesRequest{Title: title, Context: new("the channel's published title, graded after publishing")}
	if formula := research.FormulaOf(title); formula != "other" {
		in.Type = contract.TitlesRequestType(formula)
	}
	r := &run{channelID: channelID, tool: tool, in: in, usage: &Usage{}}
	graded, err := g.gradeTitles(ctx, r, []string{title}, []contract.GeneratedTitleVideoType{videoType})
	if err != nil {
		return 0, err
	}
	return *graded[0].Score, nil
}
