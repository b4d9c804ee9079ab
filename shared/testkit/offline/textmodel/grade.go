package textmodel

import (
	"math"
	"strconv"
	"strings"

	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/profile"
)

// ---- niche score

type dimensionOut struct {
	Name     string  `json:"name"`
	Score    float64 `json:"score"`
	Feedback string  `json:"feedback"`
}

type keywordOut struct {
	Keyword  string `json:"keyword"`
	Quality  string `json:"quality"`
	Feedback string `json:"feedback"`
}

type nicheScoreOut struct {
	Dimensions        []dimensionOut `json:"dimensions"`
	TopStrength       string         `json:"topStrength"`
	TopImprovement    string         `json:"topImprovement"`
	KeywordValidation []keywordOut   `json:"keywordValidation"`
}

// dimensionNames are the NicheDimension names, in the contract's order.
var dimensionNames = [5]string{"Niche Clarity", "Brand Identity", "Audience Understanding", "Competitive Edge", "Monetization Readiness"}

// profileField is a field of the profile as a dimension weighs it.
type profileField struct {
	name   string
	weight float64
	fill   func(p *profile.NicheProfile) float64 // 0..1: how complete and specific
}

// text scores a free-text field by how specific it is: words, up to full marks at `full` words.
func fieldText(get func(p *profile.NicheProfile) string, full int) func(p *profile.NicheProfile) float64 {
	return func(p *profile.NicheProfile) float64 {
		return math.Min(1, float64(countWords(get(p)))/float64(full))
	}
}

// list scores a list field by its length, full marks at `full` items.
func fieldList(get func(p *profile.NicheProfile) []string, full int) func(p *profile.NicheProfile) float64 {
	return func(p *profile.NicheProfile) float64 {
		return math.Min(1, float64(len(nonEmpty(get(p), 100)))/float64(full))
	}
}

// dimensionFields are the profile fields behind each dimension, with their weights.
var dimensionFields = [5][]profileField{
	{ // Niche Clarity
		{"focusedNiche", 3, fieldText(func(p *profile.NicheProfile) string { return p.FocusedNiche }, 4)},
		{"broadNiche", 1, fieldText(func(p *profile.NicheProfile) string { return p.BroadNiche }, 1)},
		{"nicheStatement", 2, fieldText(func(p *profile.NicheProfile) string { return p.NicheStatement }, 15)},
		{"keywords", 2, fieldList(func(p *profile.NicheProfile) []string { return p.Keywords }, 4)},
	},
	{ // Brand Identity
		{"slogan", 2, fieldText(func(p *profile.NicheProfile) string { return p.Slogan }, 3)},
		{"mission", 2, fieldText(func(p *profile.NicheProfile) string { return p.Mission }, 10)},
		{"purpose", 1, fieldText(func(p *profile.NicheProfile) string { return p.Purpose }, 8)},
		{"passion", 1, fieldText(func(p *profile.NicheProfile) string { return p.Passion }, 8)},
		{"insiderTerms", 1, fieldList(func(p *profile.NicheProfile) []string { return p.InsiderTerms }, 3)},
	},
	{ // Audience Understanding
		{"targetAudience", 3, fieldText(func(p *profile.NicheProfile) string { return p.TargetAudience }, 8)},
		{"painPoints", 3, fieldText(func(p *profile.NicheProfile) string { return p.PainPoints }, 12)},
		{"channelGoals", 1, fieldText(func(p *profile.NicheProfile) string { return p.ChannelGoals }, 8)},
	},
	{ // Competitive Edge
		{"topCompetitors", 3, fieldList(func(p *profile.NicheProfile) []string { return p.TopCompetitors }, 3)},
		{"nicheStatement", 1, fieldText(func(p *profile.NicheProfile) string { return p.NicheStatement }, 15)},
		{"industrySpeakers", 1, fieldList(func(p *profile.NicheProfile) []string { return p.IndustrySpeakers }, 2)},
		{"podcasters", 1, fieldList(func(p *profile.NicheProfile) []string { return p.Podcasters }, 2)},
		{"conferences", 1, fieldList(func(p *profile.NicheProfile) []string { return p.Conferences }, 2)},
	},
	{ // Monetization Readiness
		{"profitModel", 3, fieldText(func(p *profile.NicheProfile) string { return p.ProfitModel }, 6)},
		{"sponsors", 2, fieldList(func(p *profile.NicheProfile) []string { return p.Sponsors }, 2)},
		{"channelGoals", 1, fieldText(func(p *profile.NicheProfile) string { return p.ChannelGoals }, 8)},
	},
}

// nicheScore scores each dimension 1..10 from how complete and specific its profile fields are: an empty
// profile scores 1 everywhere, a full and specific one 10.
func nicheScore(w *writer) any {
	p := &w.b.Profile
	out := nicheScoreOut{KeywordValidation: []keywordOut{}}
	type scored struct {
		i             int
		score         float64
		missing, thin []string
	}
	var all []scored
	for i, fields := range dimensionFields {
		var got, total float64
		var missing, thin []string
		for _, f := range fields {
			v := f.fill(p)
			got += f.weight * v
			total += f.weight
			switch {
			case v == 0 && len(missing) < 3:
				missing = append(missing, w.L.Field[f.name])
			case v > 0 && v < 0.5 && len(thin) < 3:
				thin = append(thin, w.L.Field[f.name])
			}
		}
		score := math.Round((1+9*got/total)*10) / 10
		all = append(all, scored{i, score, missing, thin})
		dim := w.L.DimName[i]
		var fb string
		switch {
		case score >= 8:
			fb = w.one(w.L.DimGood[i], i)
			if len(missing) > 0 {
				fb += " " + w.one(w.L.DimOK, 0, "dim", dim, "missing", w.joinList(missing))
			}
		case len(missing) == 0 && len(thin) > 0:
			fb = w.one(w.L.DimSharpen, 0, "dim", dim, "missing", w.joinList(thin))
		case len(missing) == 0:
			fb = w.one(w.L.DimDone, 0, "dim", dim)
		case score >= 4:
			fb = w.one(w.L.DimOK, 0, "dim", dim, "missing", w.joinList(missing))
		default:
			fb = w.one(w.L.DimWeak, 0, "dim", dim, "missing", w.joinList(missing))
		}
		if i == 0 {
			fb = w.mark(fb)
		}
		out.Dimensions = append(out.Dimensions, dimensionOut{dimensionNames[i], score, fb})
	}
	best, worst := all[0], all[0]
	for _, s := range all[1:] {
		if s.score > best.score {
			best = s
		}
		if s.score < worst.score {
			worst = s
		}
	}
	if best.score >= 5 {
		out.TopStrength = w.one(w.L.Strength, 0, "dim", w.L.DimName[best.i], "detail", lowerFirst(w.one(w.L.DimGood[best.i], best.i)))
	} else {
		out.TopStrength = w.L.NoStrength
	}
	improve := append(worst.missing, worst.thin...)
	if len(improve) == 0 {
		improve = []string{w.L.Field[dimensionFields[worst.i][0].name]}
	}
	out.TopImprovement = w.one(w.L.Improve, 0, "dim", w.L.DimName[worst.i], "missing", w.joinList(improve[:min(len(improve), 3)]))
	if len(nonEmpty(p.Keywords, 8)) == 0 {
		out.TopImprovement += " " + w.L.NoKeywords
	}
	for _, k := range nonEmpty(p.Keywords, 8) {
		q := w.keywordQuality(k)
		out.KeywordValidation = append(out.KeywordValidation, keywordOut{k, q, w.one(w.L.KWQuality[q], 0, "kw", w.quote(k))})
	}
	return out
}

// keywordQuality judges a keyword by observable properties: two to four words is specific enough to rank,
// one word is broad, five or more nobody searches; words shared with the focused niche, the insider terms
// or the research make it better.
func (w *writer) keywordQuality(k string) string {
	p := &w.b.Profile
	n := countWords(k)
	score := 0
	switch {
	case n >= 2 && n <= 4:
		score += 2
	case n == 1:
		score++
	}
	stop := stopwords(w.L)
	related := strings.ToLower(p.FocusedNiche + " " + p.BroadNiche + " " + strings.Join(p.InsiderTerms, " ") + " " + p.NicheStatement)
	for _, word := range contentWords(k, stop, 4) {
		if containsWord(related, word) {
			score++
			break
		}
	}
	for _, r := range w.f.research {
		if containsWord(strings.ToLower(k), r) {
			score++
			break
		}
	}
	switch {
	case score >= 4:
		return "excellent"
	case score == 3:
		return "good"
	case score == 2:
		return "fair"
	}
	return "weak"
}

// ---- grade titles

type titleGradeOut struct {
	Index             int     `json:"index"`
	NicheRelevance    float64 `json:"nicheRelevance"`
	ResearchAlignment float64 `json:"researchAlignment"`
	HookStrength      float64 `json:"hookStrength"`
	BrandVoice        float64 `json:"brandVoice"`
	Feedback          string  `json:"feedback"`
}

// gradeFeedbackMax is TitleGrade.feedback's maxLength.
const gradeFeedbackMax = 300

// gradeTitles scores each of Brief.Items from what can be seen in it: the channel's keywords and niche
// words (nicheRelevance), a question, a number or a contrast (hookStrength), words of the style notes and
// slogan (brandVoice), research words (researchAlignment).
func gradeTitles(w *writer) any {
	out := struct {
		Grades []titleGradeOut `json:"grades"`
	}{Grades: []titleGradeOut{}}
	stop := stopwords(w.L)
	nicheWords := contentWords(w.f.niche+" "+strings.Join(w.b.Profile.InsiderTerms, " "), stop, 12)
	voice := contentWords(strings.Join(w.f.style, " ")+" "+w.f.slogan+" "+w.f.catch+" "+preferenceText(w.b), stop, 30)
	items := w.b.Items
	if len(items) == 0 {
		items = []string{w.f.topic} // the schema asks for at least one grade
	}
	for i, item := range items {
		lt := strings.ToLower(item)
		var hits, misses []string
		kwHits := 0
		var named string
		for _, k := range nonEmpty(w.b.Profile.Keywords, 8) {
			if containsWord(lt, strings.ToLower(k)) {
				kwHits++
				if named == "" {
					named = k
				}
			}
		}
		nHits := countIn(lt, nicheWords)
		niche := clamp10(2 + 3*float64(kwHits) + 1.5*float64(nHits))
		if named != "" {
			hits = append(hits, w.raw(w.L.GradeHit["keyword"], "kw", w.quote(named)))
		} else {
			misses = append(misses, w.raw(w.L.GradeMiss["keyword"], "kw", w.quote(w.f.kws[0])))
		}

		hook := 3.0
		question := strings.ContainsAny(item, "?¿")
		number := strings.ContainsAny(item, "0123456789")
		contrast := mentionsAny(lt, contrastWords)
		for _, b := range []bool{question, number, contrast} {
			if b {
				hook += 2.5
			}
		}
		if l := len([]rune(item)); l >= 20 && l <= 70 {
			hook += 1
		}
		hook = clamp10(hook)
		if question || number || contrast {
			hits = append(hits, w.L.GradeHit["hook"])
		} else {
			misses = append(misses, w.L.GradeMiss["hook"])
		}

		vHits := countIn(lt, voice)
		brand := 5.0
		if len(voice) > 0 {
			brand = clamp10(4 + 2*float64(vHits))
			if vHits > 0 {
				hits = append(hits, w.L.GradeHit["voice"])
			} else {
				misses = append(misses, w.L.GradeMiss["voice"])
			}
		}

		research := 5.0
		if len(w.f.research) > 0 {
			rHits := countIn(lt, w.f.research)
			research = clamp10(3 + 2.5*float64(rHits))
			if rHits > 0 {
				hits = append(hits, w.L.GradeHit["research"])
			} else {
				misses = append(misses, w.raw(w.L.GradeMiss["research"], "word", w.quote(w.f.research[0])))
			}
		}
		if len([]rune(item)) > titleLimit(w.b.VideoType) {
			misses = append(misses, w.raw(w.L.GradeMiss["length"], "n", strconv.Itoa(titleLimit(w.b.VideoType))))
		}
		fb := w.feedback(hits, misses)
		if i == 0 {
			fb = w.mark(fb)
		}
		out.Grades = append(out.Grades, titleGradeOut{
			Index: i, NicheRelevance: niche, ResearchAlignment: research, HookStrength: hook, BrandVoice: brand,
			Feedback: clip(fb, gradeFeedbackMax),
		})
	}
	return out
}

// contrastWords make a title a contrast or a warning, in the five languages.
var contrastWords = []string{
	"vs", "versus", "but", "without", "instead", "never", "stop", "mistake", "mistakes", "wrong", "myth", "lie", "truth",
	"pero", "sin", "nunca", "error", "errores", "mito", "verdad", "mais", "sans", "jamais", "erreur", "erreurs", "mythe", "vérité",
	"aber", "ohne", "nie", "fehler", "mythos", "wahrheit", "mas", "sem", "erro", "erros", "verdade",
}

func titleLimit(videoType string) int {
	if videoType == "Short" {
		return shortTitleSoft
	}
	return longTitleSoft
}

func preferenceText(b *generation.Brief) string {
	var sb strings.Builder
	for _, n := range b.Notes {
		if n.Category == "preference" {
			sb.WriteString(n.Content)
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}

func countIn(lowerText string, ws []string) int {
	n := 0
	for _, w := range ws {
		if containsWord(lowerText, w) {
			n++
		}
	}
	return n
}

func clamp10(v float64) float64 { return math.Round(math.Min(10, math.Max(1, v))*10) / 10 }

// feedback joins what a piece did well and what would improve it.
func (w *writer) feedback(hits, misses []string) string {
	h := strings.Join(hits, "; ")
	m := strings.Join(misses, "; ")
	switch {
	case h == "" && m == "":
		return w.L.GradeHit["none"]
	case m == "":
		return upperFirst(h) + "."
	case h == "":
		return w.one(w.L.GradeJoin, 0, "hits", w.L.GradeHit["none"], "misses", m)
	}
	return w.one(w.L.GradeJoin, 0, "hits", h, "misses", m)
}

// ---- grade content

type contentGradeOut struct {
	Score    float64 `json:"score"`
	Feedback string  `json:"feedback"`
}

// contentFeedbackMax is ContentGrade.feedback's maxLength.
const contentFeedbackMax = 600

// check is one observable property of a piece of content, with its weight in the 0..100 score.
type check struct {
	id     string
	weight float64
	pass   bool
}

// gradeContent scores Items[0], written by GradedTool, on checks that can be seen in it: the tool's
// production cues and length bounds, the channel's keywords, a hook, a call to action, the creator's
// style words; the feedback names what passed and what to fix.
func gradeContent(w *writer) any {
	content := ""
	if len(w.b.Items) > 0 {
		content = w.b.Items[0]
	}
	lc := strings.ToLower(content)
	words := countWords(content)
	said := spoken(content)
	kws := nonEmpty(w.b.Profile.Keywords, 8)
	if len(kws) == 0 {
		kws = w.f.kws
	}
	kwHits := countIn(lc, lowerAll(kws))
	kwPass := kwHits*2 >= len(kws)
	stop := stopwords(w.L)
	voice := contentWords(strings.Join(w.f.style, " ")+" "+w.f.slogan+" "+w.f.catch, stop, 30)
	voicePass := len(voice) == 0 || countIn(lc, voice) > 0
	cta := mentionsAny(lc, w.L.CTAWords) || mentionsAny(lc, english.CTAWords)
	firstLine := firstSpoken(content)
	hook := strings.ContainsAny(firstLine, "?¿0123456789") || mentionsAny(strings.ToLower(firstLine), contrastWords)

	var checks []check
	switch w.b.GradedTool {
	case generation.TaskLongScript, "long-script", "long_scripts":
		checks = []check{
			{"broll", 10, strings.Contains(content, "[B-ROLL")},
			{"graphic", 10, strings.Contains(content, "[GRAPHIC")},
			{"longLength", 20, said >= longMinWords && said <= longMaxWords},
			{"keywords", 20, kwPass}, {"hook", 10, hook}, {"cta", 15, cta}, {"voice", 15, voicePass},
		}
	case generation.TaskShortScript, "short-script", "short_scripts":
		checks = []check{
			{"visual", 15, strings.Contains(content, "[VISUAL")},
			{"shortLength", 25, said >= shortMinWords && words <= shortMaxWords},
			{"keywords", 20, kwPass}, {"hook", 15, hook}, {"cta", 10, cta}, {"voice", 15, voicePass},
		}
	case generation.TaskDescription, "descriptions":
		head := lc
		if len(head) > 200 {
			head = head[:200]
		}
		checks = []check{
			{"keywordsEarly", 20, countIn(head, lowerAll(kws)) > 0},
			{"descLength", 15, len(content) >= 200 && len(content) <= 5000},
			{"hashtags", 10, strings.Count(content, "#") <= maxHashtags},
			{"faq", 15, strings.Count(content, "?") >= 1},
			{"keywords", 15, kwPass}, {"cta", 15, cta}, {"voice", 10, voicePass},
		}
	default:
		checks = []check{
			{"keywords", 40, kwPass}, {"substance", 30, words >= 30}, {"voice", 30, voicePass},
		}
	}
	var score, total float64
	var hits, misses []string
	for _, c := range checks {
		total += c.weight
		if c.pass {
			score += c.weight
			hits = append(hits, w.raw(w.L.GradeHit[c.id], "n", strconv.Itoa(said)))
		} else {
			misses = append(misses, w.raw(w.L.GradeMiss[c.id], "n", strconv.Itoa(said), "kw", w.quote(firstMissing(lc, kws))))
		}
	}
	// Partial keyword coverage earns part of its weight.
	if !kwPass && len(kws) > 0 {
		for _, c := range checks {
			if c.id == "keywords" {
				score += c.weight * float64(kwHits) / float64(len(kws))
			}
		}
	}
	fb := w.feedback(hits, misses)
	for _, note := range w.f.feedback {
		if add := " " + w.one(w.L.GradeHit["noteFeedback"], 0, "note", w.quote(note)); len([]rune(fb+add)) <= contentFeedbackMax {
			fb += add
			break
		}
	}
	return contentGradeOut{
		Score:    math.Round(100*score/total*10) / 10,
		Feedback: clip(w.mark(fb), contentFeedbackMax),
	}
}

func lowerAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ToLower(s)
	}
	return out
}

func firstMissing(lowerText string, kws []string) string {
	for _, k := range kws {
		if !containsWord(lowerText, strings.ToLower(k)) {
			return k
		}
	}
	if len(kws) > 0 {
		return kws[0]
	}
	return ""
}

// firstSpoken is the first line of a text that is not a cue or heading.
func firstSpoken(s string) string {
	for _, ln := range strings.Split(s, "\n") {
		t := strings.TrimSpace(ln)
		if t != "" && !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "#") {
			return t
		}
	}
	return ""
}
