package textmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
)

const topic = "vegan meal prep for the whole work week"

func titlesOf(t testing.TB, raw []byte) []string {
	var out []string
	for _, tt := range decode[generation.TitleDraft](t, raw).Titles {
		out = append(out, tt.Title)
	}
	return out
}

func titlesBrief(t testing.TB, lang, typ string) *generation.Brief {
	b := newBrief(t, generation.TaskTitles, lang, contract.TitlesRequest{Title: topic, Type: contract.TitlesRequestType(typ)})
	b.VideoType = "Long"
	return b
}

func longBrief(t testing.TB, lang, typ string) *generation.Brief {
	return newBrief(t, generation.TaskLongScript, lang, contract.LongScriptRequest{Title: topic, Type: contract.LongScriptRequestType(typ),
		Context: ptr("Focus on cheap protein sources.")})
}

func anyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(strings.ToLower(s), strings.ToLower(sub)) {
			return true
		}
	}
	return false
}

func TestDeterministic(t *testing.T) {
	for _, c := range cases(t) {
		b := c.brief(t, "english")
		first := run(t, b)
		// A fresh model and a brief decoded from JSON (nothing shared) write the same bytes.
		var copied generation.Brief
		if err := json.Unmarshal(mustJSON(t, b), &copied); err != nil {
			t.Fatal(err)
		}
		res, err := New().Generate(context.Background(), ai.Request{Task: b.Task, Brief: &copied})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, res.JSON) {
			t.Fatalf("%s: two answers to the same brief differ", c.name)
		}
	}
	// Another request gives another answer.
	a := run(t, titlesBrief(t, "english", "listicle"))
	b := titlesBrief(t, "english", "listicle")
	b.Input = mustJSON(t, contract.TitlesRequest{Title: "sourdough bread for beginners", Type: "listicle"})
	if bytes.Equal(a, run(t, b)) {
		t.Error("another topic gives the same titles")
	}
}

// TestPersonalised: each fact of the channel changes the answer where it should.
func TestPersonalised(t *testing.T) {
	t.Run("keywords", func(t *testing.T) {
		kws := []string{"sourdough starter", "rye flour", "oven spring", "crumb structure"}
		tb := titlesBrief(t, "english", "how-to")
		tb.Profile.Keywords, tb.Patterns, tb.Outliers = kws, "", nil
		tl := titlesOf(t, run(t, tb))
		if !anyContains(tl, "sourdough starter") && !anyContains(tl, "rye flour") {
			t.Errorf("titles do not use the new keywords: %v", tl)
		}
		if anyContains(tl, "batch cooking") || anyContains(tl, "high protein") {
			t.Errorf("titles still use the old keywords: %v", tl)
		}
		lb := longBrief(t, "english", "how-to")
		lb.Profile.Keywords = kws
		s := decode[scriptOut](t, run(t, lb)).Script
		for _, k := range kws {
			if !strings.Contains(strings.ToLower(s), k) {
				t.Errorf("the script never says %q", k)
			}
		}
		db := newBrief(t, generation.TaskDescription, "english", contract.DescriptionRequest{Title: topic})
		db.Profile.Keywords = kws
		if h := decode[descriptionOut](t, run(t, db)).Hashtags; len(h) == 0 || h[0] != "#sourdoughstarter" && h[0] != "#ryeflour" && h[0] != "#ovenspring" && h[0] != "#crumbstructure" {
			t.Errorf("hashtags %v", h)
		}
	})
	t.Run("style note", func(t *testing.T) {
		b := longBrief(t, "english", "story")
		s := decode[scriptOut](t, run(t, b)).Script
		if !strings.HasPrefix(s, "[TONE] ") || !strings.Contains(strings.SplitN(s, "\n", 2)[0], "Casual and upbeat, short sentences") {
			t.Errorf("the style note is not followed: %q", strings.SplitN(s, "\n", 2)[0])
		}
		// The quoted phrase of the style note is the creator's sign-off: the script ends on it.
		if !strings.HasSuffix(strings.TrimSpace(s), "Stay saucy!") && !strings.HasSuffix(strings.TrimSpace(s), "See you in the next one.") {
			t.Errorf("the script does not end on the catchphrase: %q", s[len(s)-80:])
		}
		if !strings.Contains(s[len(s)-200:], "Stay saucy") {
			t.Errorf("no catchphrase at the end: %q", s[len(s)-200:])
		}
		hb := newBrief(t, generation.TaskHooks, "english", contract.HooksRequest{Title: topic})
		if !strings.Contains(string(run(t, hb)), "Casual and upbeat") {
			t.Error("hooks do not say how they follow the style note")
		}
		cb := newBrief(t, generation.TaskCTAs, "english", contract.CTAsRequest{})
		if c := decode[struct{ CTAs []ctaOut }](t, run(t, cb)).CTAs; !strings.Contains(c[0].Text, "Stay saucy") {
			t.Errorf("the early CTA does not use the catchphrase: %q", c[0].Text)
		}
		b.Notes = nil
		if s := decode[scriptOut](t, run(t, b)).Script; strings.Contains(s, "[TONE]") || strings.Contains(s, "Stay saucy") {
			t.Error("a channel without notes gets a style cue")
		}
	})
	t.Run("avoided word", func(t *testing.T) {
		// The question frames say "Secret"; a note asking to avoid it keeps every title clear of it.
		b := titlesBrief(t, "english", "question")
		b.Notes = nil
		b.Patterns, b.Outliers = "", nil
		if !anyContains(titlesOf(t, run(t, b)), "secret") {
			t.Fatal("precondition: without the note a question frame says secret")
		}
		b.Notes = []generation.BriefNote{{Category: "preference", Content: `Avoid "secret" in titles, it sounds like clickbait`}}
		if tl := titlesOf(t, run(t, b)); anyContains(tl, "secret") {
			t.Errorf("titles say an avoided word: %v", tl)
		}
	})
	t.Run("series", func(t *testing.T) {
		b := longBrief(t, "english", "listicle")
		b.Series = series()
		s := decode[scriptOut](t, run(t, b)).Script
		for _, h := range []string{"[SERIES] Prep Sunday", "## Shopping list and costs", "## Storage and reheating", "## Taste test"} {
			if !strings.Contains(s, h) {
				t.Errorf("the script does not follow the series formula: no %q", h)
			}
		}
		if strings.Contains(s, "## Number 1") {
			t.Error("the listicle structure replaced the series formula")
		}
		b.Series = nil
		if s := decode[scriptOut](t, run(t, b)).Script; !strings.Contains(s, "## Number 1") || strings.Contains(s, "[SERIES]") {
			t.Error("without a series the listicle structure is not used")
		}
	})
	t.Run("research", func(t *testing.T) {
		b := titlesBrief(t, "english", "question")
		tl := titlesOf(t, run(t, b))
		if !anyContains(tl, "budget") {
			t.Errorf("titles ignore the research's words (budget): %v", tl)
		}
		sb := longBrief(t, "english", "deep-dive")
		if s := decode[scriptOut](t, run(t, sb)).Script; !strings.Contains(s, "5 budget vegan meals for the whole week") {
			t.Error("the deep dive's evidence does not cite the strongest outlier")
		}
		sb.Outliers, sb.Patterns = nil, ""
		if s := decode[scriptOut](t, run(t, sb)).Script; strings.Contains(s, "Research reference") {
			t.Error("a channel without research gets an outlier cue")
		}
	})
	t.Run("recent outputs", func(t *testing.T) {
		b := titlesBrief(t, "english", "listicle")
		first := titlesOf(t, run(t, b))
		b.Recent = first
		second := titlesOf(t, run(t, b))
		for _, s := range second {
			for _, f := range first {
				if strings.EqualFold(s, f) {
					t.Errorf("title repeated from a recent output: %q", s)
				}
			}
		}
	})
	t.Run("request context and profile", func(t *testing.T) {
		s := decode[scriptOut](t, run(t, longBrief(t, "english", "how-to"))).Script
		if !strings.Contains(s, "Focus on cheap protein sources") {
			t.Error("the script ignores the request's context")
		}
		cd := decode[channelDescriptionOut](t, run(t, newBrief(t, generation.TaskChannelDescription, "english", contract.ChannelOptimizeRequest{Type: "description"}))).Description
		for _, want := range []string{"Eat plants, save time", "busy professionals aged 25 to 40", "macros", "vegan meal prep"} {
			if !strings.Contains(cd, want) {
				t.Errorf("channel description without %q: %s", want, cd)
			}
		}
		pb := newBrief(t, generation.TaskPodcastPrep, "english", contract.PodcastPrepRequest{EpisodeType: "q_and_a", Topic: "protein"})
		if qa := string(run(t, pb)); !strings.Contains(qa, "Pick Up Limes") && !strings.Contains(qa, "Rainbow Plant Life") && !strings.Contains(qa, "Avant-Garde Vegan") {
			t.Error("the Q&A does not ask about a competitor")
		}
		ctas := decode[struct{ CTAs []ctaOut }](t, run(t, newBrief(t, generation.TaskCTAs, "english", contract.CTAsRequest{}))).CTAs
		if !strings.Contains(ctas[3].Text, "paid weekly meal plan") || !strings.Contains(ctas[4].Text, "Oatly") {
			t.Errorf("extra CTAs ignore the profit model and sponsors: %+v", ctas[3:])
		}
	})
}

// TestLanguages: each phrasebook's frames appear in its language's answers, not english's; other
// languages are written in english and marked.
func TestLanguages(t *testing.T) {
	for _, lang := range append(append([]string{}, supported...), fallbackLanguage) {
		t.Run(lang, func(t *testing.T) {
			L, fallback := phrasebook(lang)
			db := newBrief(t, generation.TaskDescription, lang, contract.DescriptionRequest{Title: topic})
			db.Transcript = plainTranscript(1200)
			d := decode[descriptionOut](t, run(t, db))
			for _, want := range []string{L.DescLearn, L.DescChapters, L.ChapterIntro, L.Q, L.A} {
				if !strings.Contains(d.Description+d.FAQSection, want) {
					t.Errorf("no %q in the description", want)
				}
			}
			if lang != "english" && !fallback && strings.Contains(d.Description, english.DescLearn) {
				t.Error("english frames in the answer")
			}
			if fallback != strings.HasPrefix(d.Description, Marker) {
				t.Errorf("marker %v for a fallback %v", strings.HasPrefix(d.Description, Marker), fallback)
			}
			s := decode[scriptOut](t, run(t, longBrief(t, lang, "how-to"))).Script
			if !strings.Contains("\n"+s, "\n## "+L.Sections["hook"]+" (0:00)\n") || !strings.Contains(s, "\n## "+L.Sections["mistakes"]) {
				t.Errorf("the script's headings are not in %s", lang)
			}
			n := decode[newsletterOut](t, run(t, newBrief(t, generation.TaskNewsletter, lang, contract.NewsletterRequest{Title: topic, Style: "recap"})))
			if !strings.Contains(n.BodyText, L.Hello) || !strings.Contains(n.BodyText, L.NewsPoints) {
				t.Errorf("the newsletter is not in %s", lang)
			}
			// The creator's own words stay as given.
			if !strings.Contains(s, "vegan meal prep") {
				t.Error("the keywords were changed")
			}
		})
	}
}

// TestEnumValuesDiffer: every enum value of a request gives its own answer.
func TestEnumValuesDiffer(t *testing.T) {
	distinct := func(t *testing.T, name string, values []string, answer func(v string) string) {
		seen := map[string]string{}
		for _, v := range values {
			a := answer(v)
			if prev, ok := seen[a]; ok {
				t.Errorf("%s %q and %q give the same answer", name, prev, v)
			}
			seen[a] = v
		}
	}
	distinct(t, "titles type", enumOf(t, "TitlesRequest", "type"), func(v string) string {
		return strings.Join(titlesOf(t, run(t, titlesBrief(t, "english", v))), "|")
	})
	distinct(t, "long script type", enumOf(t, "LongScriptRequest", "type"), func(v string) string {
		var heads []string
		for _, ln := range strings.Split(decode[scriptOut](t, run(t, longBrief(t, "english", v))).Script, "\n") {
			if strings.HasPrefix(ln, "## ") {
				heads = append(heads, ln[:strings.LastIndex(ln, " (")])
			}
		}
		return strings.Join(heads, "|")
	})
	distinct(t, "short script type", enumOf(t, "ShortScriptRequest", "type"), func(v string) string {
		s := decode[scriptOut](t, run(t, newBrief(t, generation.TaskShortScript, "english", contract.ShortScriptRequest{Title: topic, Type: contract.ShortScriptRequestType(v)}))).Script
		return strings.Split(s, "\n")[2] // the hook line, after the tone and first visual cues
	})
	for _, mode := range enumOf(t, "ThumbnailRequest", "peopleMode") {
		distinct(t, "thumbnail type", enumOf(t, "ThumbnailRequest", "type"), func(v string) string {
			o := decode[thumbnailOut](t, run(t, newBrief(t, generation.TaskThumbnail, "english", contract.ThumbnailRequest{Title: topic, Type: contract.ThumbnailRequestType(v), PeopleMode: ptr(contract.ThumbnailRequestPeopleMode(mode))})))
			return strings.SplitN(o.Strategy, ".", 2)[0] + "|" + o.DesignConcept
		})
	}
	distinct(t, "people mode", enumOf(t, "ThumbnailRequest", "peopleMode"), func(v string) string {
		return decode[thumbnailOut](t, run(t, newBrief(t, generation.TaskThumbnail, "english", contract.ThumbnailRequest{Title: topic, Type: "focus", PeopleMode: ptr(contract.ThumbnailRequestPeopleMode(v))}))).DesignConcept
	})
	distinct(t, "newsletter style", enumOf(t, "NewsletterRequest", "style"), func(v string) string {
		n := decode[newsletterOut](t, run(t, newBrief(t, generation.TaskNewsletter, "english", contract.NewsletterRequest{Title: topic, Style: contract.NewsletterRequestStyle(v)})))
		return n.Preheader
	})
	distinct(t, "post type", enumOf(t, "CommunityPostsRequest", "postType"), func(v string) string {
		p := decode[struct{ Posts []postOut }](t, run(t, newBrief(t, generation.TaskCommunityPosts, "english", contract.CommunityPostsRequest{PostType: contract.CommunityPostType(v)})))
		return p.Posts[1].Content
	})
	distinct(t, "episode type", enumOf(t, "PodcastPrepRequest", "episodeType"), func(v string) string {
		p := decode[podcastOut](t, run(t, newBrief(t, generation.TaskPodcastPrep, "english", contract.PodcastPrepRequest{EpisodeType: contract.PodcastPrepRequestEpisodeType(v), Topic: "protein"})))
		return p.EpisodeTitle + "|" + p.GuestQuestions[0].Question
	})
}

func TestNicheScoreFollowsTheProfile(t *testing.T) {
	empty := decode[nicheScoreOut](t, run(t, emptyBrief(t, generation.TaskNicheScore, contract.NicheScoreRequest{})))
	rich := decode[nicheScoreOut](t, run(t, newBrief(t, generation.TaskNicheScore, "english", contract.NicheScoreRequest{})))
	partial := newBrief(t, generation.TaskNicheScore, "english", contract.NicheScoreRequest{})
	partial.Profile.Slogan, partial.Profile.Mission, partial.Profile.Sponsors, partial.Profile.ProfitModel = "", "", nil, ""
	part := decode[nicheScoreOut](t, run(t, partial))
	for i := range 5 {
		if empty.Dimensions[i].Score > 2 || rich.Dimensions[i].Score < 8 {
			t.Errorf("%s: empty %v, rich %v", dimensionNames[i], empty.Dimensions[i].Score, rich.Dimensions[i].Score)
		}
		if part.Dimensions[i].Score > rich.Dimensions[i].Score {
			t.Errorf("%s: a thinner profile scores higher", dimensionNames[i])
		}
	}
	if part.Dimensions[1].Score >= rich.Dimensions[1].Score || part.Dimensions[4].Score >= rich.Dimensions[4].Score {
		t.Error("removing the slogan, mission, sponsors and profit model does not lower brand and monetization")
	}
	if !strings.Contains(part.Dimensions[4].Feedback, "a profit model") {
		t.Errorf("the feedback does not name what is missing: %q", part.Dimensions[4].Feedback)
	}
	if len(empty.KeywordValidation) != 0 {
		t.Error("keyword validation without keywords")
	}
	kb := newBrief(t, generation.TaskNicheScore, "english", contract.NicheScoreRequest{})
	kb.Profile.Keywords = []string{"vegan meal prep", "food", "the best and cheapest vegan meal prep for people with jobs", "prep day recipes"}
	kv := decode[nicheScoreOut](t, run(t, kb)).KeywordValidation
	rank := map[string]int{"excellent": 3, "good": 2, "fair": 1, "weak": 0}
	if rank[kv[0].Quality] < rank["good"] || rank[kv[3].Quality] < rank["good"] || rank[kv[1].Quality] > rank["fair"] || rank[kv[2].Quality] > rank["fair"] {
		t.Errorf("keyword qualities %+v", kv)
	}
}

func TestGradeTitlesFromObservableProperties(t *testing.T) {
	grade := func(items ...string) []generation.TitleGrade {
		b := newBrief(t, generation.TaskGradeTitles, "english", nil)
		b.Items, b.VideoType = items, "Long"
		return decode[generation.TitleGrades](t, run(t, b)).Grades
	}
	for _, c := range []struct {
		name          string
		better, worse string
		dim           func(generation.TitleGrade) float64
	}{
		{"keyword → nicheRelevance", "Batch Cooking for Lazy Sundays", "Cooking for Lazy Sundays", func(g generation.TitleGrade) float64 { return g.NicheRelevance }},
		{"question → hookStrength", "Is Batch Cooking Worth It?", "Batch Cooking Is Worth It", func(g generation.TitleGrade) float64 { return g.HookStrength }},
		{"number → hookStrength", "7 Batch Cooking Rules", "Some Batch Cooking Rules", func(g generation.TitleGrade) float64 { return g.HookStrength }},
		{"contrast → hookStrength", "Batch Cooking vs Takeout", "Batch Cooking and Takeout", func(g generation.TitleGrade) float64 { return g.HookStrength }},
		{"style words → brandVoice", "Upbeat Batch Cooking, Stay Saucy", "Batch Cooking Today", func(g generation.TitleGrade) float64 { return g.BrandVoice }},
		{"research words → researchAlignment", "Budget Batch Cooking", "Batch Cooking Today", func(g generation.TitleGrade) float64 { return g.ResearchAlignment }},
	} {
		g := grade(c.better, c.worse)
		if c.dim(g[0]) <= c.dim(g[1]) {
			t.Errorf("%s: %q %v, %q %v", c.name, c.better, c.dim(g[0]), c.worse, c.dim(g[1]))
		}
	}
}

func TestGradeContent(t *testing.T) {
	script := decode[scriptOut](t, run(t, longBrief(t, "english", "how-to"))).Script
	grade := func(tool, content string) generation.ContentGrade {
		b := newBrief(t, generation.TaskGradeContent, "english", nil)
		b.Items, b.GradedTool = []string{content}, tool
		return decode[generation.ContentGrade](t, run(t, b))
	}
	good, thin := grade(generation.TaskLongScript, script), grade(generation.TaskLongScript, "Today we cook rice.")
	if good.Score < 80 || thin.Score > 40 {
		t.Errorf("our own script scores %v, a line %v", good.Score, thin.Score)
	}
	if !strings.Contains(thin.Feedback, "[B-ROLL]") || !strings.Contains(thin.Feedback, "1,200") {
		t.Errorf("the feedback does not say what to fix: %q", thin.Feedback)
	}
}

func TestRefusals(t *testing.T) {
	m := New()
	ctx := context.Background()
	b := titlesBrief(t, "english", "listicle")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	// A brief of another type (a value, a string) no longer compiles: the port carries a *brief.Brief.
	for name, c := range map[string]struct {
		ctx context.Context
		req ai.Request
	}{
		"no brief":       {ctx, ai.Request{Task: generation.TaskTitles}},
		"nil brief":      {ctx, ai.Request{Task: generation.TaskTitles, Brief: (*generation.Brief)(nil)}},
		"unknown task":   {ctx, ai.Request{Task: "haiku", Brief: b}},
		"refine nothing": {ctx, ai.Request{Task: generation.TaskRefine, Brief: &generation.Brief{Task: generation.TaskRefine, OriginalTask: "haiku"}}},
		"canceled":       {canceled, ai.Request{Task: generation.TaskTitles, Brief: b}},
	} {
		_, err := m.Generate(c.ctx, c.req)
		var ae *ai.Error
		if !errors.Is(err, ai.ErrFailed) || !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an ai.Error of kind ErrFailed", name, err)
		}
	}
}

func TestTokensEstimated(t *testing.T) {
	b := titlesBrief(t, "english", "listicle")
	prompt := strings.Repeat("a", 400)
	res, err := New().Generate(context.Background(), ai.Request{Task: b.Task, Brief: b, System: prompt, Messages: []ai.Message{{Role: "user", Text: prompt}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.InputTokens != 200 || res.OutputTokens != (len([]rune(string(res.JSON)))+3)/4 || res.Model != Name {
		t.Errorf("tokens %d/%d model %q", res.InputTokens, res.OutputTokens, res.Model)
	}
}

// TestShortTitlesArePunchier: for every type and language, Shorts' titles are shorter than Long ones.
func TestShortTitlesArePunchier(t *testing.T) {
	for _, lang := range supported {
		for _, typ := range enumOf(t, "TitlesRequest", "type") {
			b := titlesBrief(t, lang, typ)
			long := titlesOf(t, run(t, b))
			b.VideoType = "Short"
			short := titlesOf(t, run(t, b))
			if mean(short) >= mean(long) {
				t.Errorf("%s %s: Shorts' titles average %.0f characters, Long ones %.0f", lang, typ, mean(short), mean(long))
			}
		}
	}
}
