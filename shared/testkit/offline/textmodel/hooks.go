package textmodel

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/research"
)

// hook completes a task's answer (filled from its schema s) where a check of the pipeline asks for content
// the schema cannot express.
type hook func(w *writer, s, out map[string]any)

var hooks = map[string]hook{
	generation.TaskTitles:         titles,
	generation.TaskLongScript:     func(w *writer, _, out map[string]any) { out["script"] = w.script(true) },
	generation.TaskShortScript:    func(w *writer, _, out map[string]any) { out["script"] = w.script(false) },
	generation.TaskDescription:    description,
	generation.TaskHooks:          openings,
	generation.TaskPodcastPrep:    podcast,
	generation.TaskNewsletter:     newsletter,
	generation.TaskClips:          clips,
	generation.TaskCommunityPosts: posts,
	generation.TaskNicheScore:     nicheScore,
	generation.TaskGradeTitles:    gradeTitles,
	generation.TaskGradeContent:   gradeContent,
	generation.TaskIdeas:          ideas,
	// research's pattern texts, one task per content kind (generation.PatternKinds)
	generation.TaskPatternTitles:       patterns("titles"),
	generation.TaskPatternThumbnails:   patterns("thumbnails"),
	generation.TaskPatternLongScripts:  patterns("longScripts"),
	generation.TaskPatternShortScripts: patterns("shortScripts"),
	generation.TaskPatternDescriptions: patterns("descriptions"),
	generation.TaskPatternIdeas:        patterns("ideas"),
}

// answer fills the schema, completes it with the task's hook and marks it.
func (w *writer) answer(s map[string]any) any {
	v := w.fill(s, "", 0)
	if out, ok := v.(map[string]any); ok && hooks[w.task] != nil {
		hooks[w.task](w, s, out)
	}
	return w.markFirst(s, v)
}

// items fills n items of the array property name of the object schema s.
func (w *writer) items(s map[string]any, name string, n int) []any {
	props, _ := s["properties"].(map[string]any)
	arr, _ := props[name].(map[string]any)
	item, _ := arr["items"].(map[string]any)
	out := make([]any, n)
	for i := range out {
		out[i] = w.fill(item, name, i)
	}
	return out
}

// objects are the objects of the list out[name].
func objects(out map[string]any, name string) []map[string]any {
	list, _ := out[name].([]any)
	var objs []map[string]any
	for _, v := range list {
		if o, ok := v.(map[string]any); ok {
			objs = append(objs, o)
		}
	}
	return objs
}

// titles: distinct titles in the visible length of the format asked (Long or Short), the request's type
// first.
func titles(w *writer, _, out map[string]any) {
	frames, limit := longTitles, generation.LongTitleVisible
	if w.b.VideoType == string(contract.GeneratedTitleVideoTypeShort) {
		frames, limit = shortTitles, generation.ShortTitleVisible
	} else if f, ok := typeTitles[w.in.Type]; ok {
		frames = append([]string{f}, frames...)
	}
	var list []any
	seen := map[string]bool{}
	for _, f := range frames {
		if t := clip(w.say(f), limit); !seen[strings.ToLower(t)] && len(list) < 6 {
			seen[strings.ToLower(t)] = true
			list = append(list, map[string]any{"title": t})
		}
	}
	out["titles"] = list
}

var typeTitles = map[string]string{
	"question": "Is {topic} worth it?", "how-to": "How to master {topic}", "listicle": "{n} ways to get better at {topic}",
	"challenge": "I tried {topic} for {n} days", "story": "How {topic} changed my routine",
	"myth-buster": "{n} myths about {topic}, busted", "comparison": "{topic} vs the usual way",
	"review": "An honest review of {topic}", "behind-the-scenes": "Behind the scenes of {topic}",
	"news": "What is new in {topic} this month",
}

var longTitles = []string{
	"{topic} — the complete guide for {aud}", "{n} {kw} mistakes that hold you back",
	"How to get started with {kw}, step by step", "Why {topic} is easier than you think",
	"The {kw} routine that changed everything", "Everything you need to know about {topic}",
}

var shortTitles = []string{
	"{kw} in {n} seconds", "One {kw} tip you need", "Stop doing {kw} like this", "The fastest {kw} trick",
	"Try this {kw} idea today", "{kw} — quick win",
}

// script writes a script of 1,500 spoken words (a long video, about 10 minutes) or 110 (a Short, about
// 45 seconds), in sections marked with the cues the checks look for; cues are not spoken words.
func (w *writer) script(long bool) string {
	target, open := 110, "VISUAL"
	sections := []string{"Hook", "The tip", "The payoff", "Call to action"}
	if long {
		target, open = 1500, "GRAPHIC"
		sections = []string{"Hook", "The problem", "The first step", "The second step", "The third step",
			"Common mistakes", "Recap", "Next steps"}
	}
	if w.b.Series != nil { // the series' formula gives the sections
		var own []string
		for line := range strings.Lines(w.b.Series.ScriptFormula) {
			if s := safe(line, 6); s != "" {
				own = append(own, s)
			}
		}
		if len(own) >= 2 {
			sections = own[:min(len(own), 10)]
		}
	}
	var sb strings.Builder
	words := 0
	for k, sec := range sections {
		fmt.Fprintf(&sb, "[%s: %s]\n", open, sec)
		for said := 0; words < target*(k+1)/len(sections); said++ {
			frames := prose // the first section opens on a hook, the last ends on calls to action
			if k == 0 && said < 2 {
				frames = openers
			} else if k == len(sections)-1 && words >= target-30 {
				frames = ctas
			}
			if long && said%6 == 5 || long && k == 0 && said == 1 {
				fmt.Fprintf(&sb, "\n[B-ROLL: %s]\n", w.kw(said))
			}
			s := w.sentences(frames, 1)
			sb.WriteString(s + " ")
			words += generation.SpokenWords(s)
		}
		sb.WriteString("\n\n")
	}
	return strings.TrimSpace(sb.String())
}

// description: an FAQ of questions and answers.
func description(w *writer, _, out map[string]any) {
	out["faqSection"] = "Q: " + w.pick(questions) + "\nA: " + w.sentences(prose, 2) +
		"\n\nQ: " + w.pick(questions) + "\nA: " + w.sentences(prose, 2)
}

// openings: the first 30 seconds open on the first 5.
func openings(w *writer, _, out map[string]any) {
	for _, h := range objects(out, "hooks") {
		h["first30Seconds"] = fmt.Sprint(h["first5Seconds"], " ", h["first30Seconds"])
	}
}

// podcast: an episode with a guest names them.
func podcast(w *writer, _, out map[string]any) {
	if g := safe(w.in.GuestName, 4); g != "" && w.in.EpisodeType != "solo" {
		out["episodeTitle"] = clip(upperFirst(w.topic)+" with "+g, 100)
	}
}

// newsletter: the HTML body says what the text body says.
func newsletter(w *writer, _, out map[string]any) {
	paras := []string{"Hi there,", w.sentences(prose, 3), w.sentences(prose, 3), w.pick(ctas)}
	if !w.english {
		paras[0] = Marker + " " + paras[0]
	}
	var sb strings.Builder
	for _, p := range paras {
		sb.WriteString("<p>" + html.EscapeString(p) + "</p>")
	}
	out["bodyText"], out["bodyHtml"] = strings.Join(paras, "\n\n"), sb.String()
}

// clips: as many as asked (fewer when the video is too short for clips of MinClipSeconds), inside the
// transcript's length, as the clips check reads both; each starts on a line of the transcript when it has
// enough stamped lines, and says what is said in it.
func clips(w *writer, s, out map[string]any) {
	var in contract.ClipsRequest
	_ = json.Unmarshal(w.b.Input, &in)
	want := contract.Value(in.ClipCount)
	if want <= 0 {
		want = 5
	}
	length := generation.TranscriptSeconds(w.b.Transcript)
	if length > 0 && length/generation.MinClipSeconds < want {
		want = max(length/generation.MinClipSeconds, 1)
	}
	want = min(want, 10)
	// No transcript to measure (length 0): a ten-minute video. The times' pattern allows two digits of hours.
	span := min(cmp.Or(length, 600), 99*3600+59*60+59)
	cues := stamped(w.b.Transcript, span)
	starts := make([]int, want)
	for i := range starts {
		starts[i] = i * (span / want)
		if len(cues) >= want {
			starts[i] = cues[i*len(cues)/want].at
		}
	}
	list := w.items(s, "clips", want)
	for i, c := range list {
		c := c.(map[string]any)
		end := min(starts[i]+45, span)
		if i+1 < want {
			end = min(end, starts[i+1])
		}
		c["startTime"], c["endTime"] = hms(starts[i]), hms(end)
		if words := w.said(cues, starts[i], end); words != "" {
			if script, ok := c["clipScript"].(map[string]any); ok {
				script["body"] = upperFirst(words) + "."
			}
		}
	}
	out["clips"] = list
}

// cue is a stamped line of a transcript.
type cue struct {
	at   int
	text string
}

// stamped are the transcript's lines stamped before end (H:MM:SS or MM:SS, maybe in brackets), one per
// second, in order; none when fewer than two are, as the clips check reads a transcript.
func stamped(transcript string, end int) []cue {
	var cues []cue
	seen := map[int]bool{}
	for line := range strings.Lines(transcript) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if at, ok := stamp(f[0]); ok && at < end && !seen[at] {
			seen[at] = true
			cues = append(cues, cue{at, strings.Join(f[1:], " ")})
		}
	}
	if len(cues) < 2 {
		return nil
	}
	slices.SortFunc(cues, func(a, b cue) int { return a.at - b.at })
	return cues
}

// said is what the transcript says from start to end seconds, as words only (at most 40): its lines
// stamped in that span or, without stamps, its words at the speaking rate.
func (w *writer) said(cues []cue, start, end int) string {
	if w.neutral {
		return ""
	}
	var lines []string
	for _, c := range cues {
		if c.at >= start && c.at < end {
			lines = append(lines, c.text)
		}
	}
	if len(cues) == 0 {
		words := strings.Fields(w.b.Transcript)
		rate := generation.SpokenWordsPerMinute
		lines = words[min(start*rate/60, len(words)):min(end*rate/60, len(words))]
	}
	return safe(strings.Join(lines, " "), 40)
}

// stamp reads a line's timestamp, H:MM:SS or MM:SS, maybe in brackets, as seconds.
func stamp(f string) (int, bool) {
	parts := strings.Split(strings.Trim(f, "[]()"), ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	secs := 0
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 2 {
			return 0, false
		}
		secs = secs*60 + n
	}
	return secs, true
}

// posts: of the type asked; a poll has options, a quiz options with exactly one correct, no other post
// either.
func posts(w *writer, s, out map[string]any) {
	var in contract.CommunityPostsRequest
	_ = json.Unmarshal(w.b.Input, &in)
	props, _ := s["properties"].(map[string]any)
	arr, _ := props["posts"].(map[string]any)
	item, _ := arr["items"].(map[string]any)
	for _, p := range objects(out, "posts") {
		if in.PostType != "" {
			p["postType"] = string(in.PostType)
		}
		opts := w.items(item, "pollOptions", 3)
		quiz := w.items(item, "quizOptions", 3)
		delete(p, "pollOptions")
		delete(p, "quizOptions")
		switch p["postType"] {
		case "poll":
			p["pollOptions"], p["content"] = opts, w.pick(questions)
		case "quiz":
			quiz[w.rng.IntN(len(quiz))].(map[string]any)["isCorrect"] = true
			p["quizOptions"], p["content"] = quiz, w.pick(questions)
		case "question":
			p["content"] = w.pick(questions)
		}
	}
}

// nicheScore: each dimension scores how much of the profile it rests on is filled in, and says what is
// missing; each keyword is rated by its length.
func nicheScore(w *writer, _, out map[string]any) {
	p := &w.b.Profile
	some := func(l []string) bool { return len(l) > 0 }
	on := map[string][]struct {
		what   string
		filled bool
	}{
		"Niche Clarity": {{"a broad niche", p.BroadNiche != ""}, {"a focused niche", p.FocusedNiche != ""},
			{"a niche statement", p.NicheStatement != ""}, {"keywords", some(p.Keywords)}},
		"Brand Identity": {{"a slogan", p.Slogan != ""}, {"a mission", p.Mission != ""}, {"a purpose", p.Purpose != ""},
			{"a passion", p.Passion != ""}},
		"Audience Understanding": {{"a target audience", p.TargetAudience != ""}, {"pain points", p.PainPoints != ""},
			{"channel goals", p.ChannelGoals != ""}},
		"Competitive Edge": {{"competitors", some(p.TopCompetitors)}, {"insider terms", some(p.InsiderTerms)},
			{"a niche statement", p.NicheStatement != ""}},
		"Monetization Readiness": {{"a profit model", p.ProfitModel != ""}, {"sponsors", some(p.Sponsors)},
			{"channel goals", p.ChannelGoals != ""}},
	}
	for _, d := range objects(out, "dimensions") {
		facts, _ := d["name"].(string)
		var missing []string
		for _, f := range on[facts] {
			if !f.filled {
				missing = append(missing, f.what)
			}
		}
		if n := len(on[facts]); n > 0 {
			d["score"] = math.Round((1+9*float64(n-len(missing))/float64(n))*2) / 2
		}
		if len(missing) > 0 {
			d["feedback"] = "Add " + strings.Join(missing, ", ") + " to the profile to raise this score."
		} else {
			d["feedback"] = "The profile covers this well; keep it current as " + w.niche + " changes."
		}
	}
	kv := []any{}
	for _, k := range p.Keywords[:min(len(p.Keywords), 8)] {
		if k = strings.TrimSpace(k); k == "" || research.AddressesAssistant(k) {
			continue
		}
		quality, why := "weak", "too long to be searched as it stands"
		switch n := len(strings.Fields(k)); {
		case n == 1:
			quality, why = "fair", "one word is broad and crowded"
		case n <= 3:
			quality, why = "excellent", "specific enough to rank and short enough to be searched"
		case n <= 5:
			quality, why = "good", "specific, a little long for search"
		}
		kv = append(kv, map[string]any{"keyword": k, "quality": quality, "feedback": upperFirst(why) + "."})
	}
	out["keywordValidation"] = kv
}

// gradeTitles: one grade per title, by index, from what a title shows: the niche's words, a number, a
// question or a contrast, a known formula.
func gradeTitles(w *writer, s, out map[string]any) {
	if len(w.b.Items) == 0 {
		return
	}
	list := w.items(s, "grades", len(w.b.Items))
	for i, g := range list {
		g := g.(map[string]any)
		t := strings.ToLower(w.b.Items[i])
		rel, hookS, res := 6.0, 6.0, 6.0
		for _, k := range append([]string{strings.ToLower(w.niche)}, w.kws...) {
			if strings.Contains(t, strings.ToLower(k)) {
				rel = 9
			}
		}
		if strings.ContainsFunc(t, unicode.IsDigit) {
			hookS++
		}
		if strings.Contains(t, "?") {
			hookS++
		}
		if strings.Contains(t, " vs") {
			hookS++
		}
		if research.FormulaOf(t) != "other" {
			res = 8
		}
		g["index"], g["nicheRelevance"], g["hookStrength"], g["researchAlignment"] = i, rel, hookS, res
		feedback := "Names the niche and promises something concrete."
		if rel < 9 {
			feedback = "Work a keyword of the niche in, such as " + strconv.Quote(w.kw(i)) + "."
		} else if hookS < 7 {
			feedback = "Add a number, a question or a contrast to sharpen the hook."
		}
		g["feedback"] = feedback
	}
	out["grades"] = list
}

// gradeContent: a text scores 50 to 90 as it reaches the length its tool asks for.
func gradeContent(w *writer, _, out map[string]any) {
	words := 0
	if len(w.b.Items) > 0 {
		words = len(strings.Fields(w.b.Items[0]))
	}
	enough := cmp.Or(map[string]int{"long scripts": 1200, "short scripts": 75}[w.b.GradedTool], 40)
	out["score"] = float64(50 + 40*min(words, enough)/enough)
	out["feedback"] = w.say("Clear and on topic for {aud}; open faster and end on one call to action.")
	if words < enough {
		out["feedback"] = fmt.Sprintf("At %d words it is thin: give it at least %d, with one concrete example.", words, enough)
	}
}

// ideas: as many as asked, none a taken title, each from a listed outlier of the format asked (its
// number, its format, its formula) when there is one.
func ideas(w *writer, s, out map[string]any) {
	count := w.b.Count
	if count <= 0 {
		count = 10
	}
	var from []int
	for i, o := range w.b.Outliers {
		if w.b.ContentType == "" || o.ContentType == w.b.ContentType {
			from = append(from, i)
		}
	}
	seen := map[string]bool{}
	for _, t := range w.b.Taken {
		seen[strings.ToLower(strings.TrimSpace(t))] = true
	}
	list := w.items(s, "ideas", min(count, generation.MaxIdeas))
	for i, idea := range list {
		idea := idea.(map[string]any)
		delete(idea, "outlier")
		delete(idea, "demand") // the service attaches the channel's own search demand, not the model
		ct, formula := w.b.ContentType, ideaFormulas[i%len(ideaFormulas)]
		if len(from) > 0 {
			o := w.b.Outliers[from[i%len(from)]]
			idea["outlier"] = from[i%len(from)]
			ct = cmp.Or(ct, o.ContentType)
			if f := research.FormulaOf(o.Title); ideaTitles[f] != "" {
				formula = f
			}
		}
		if ct != "Long" && ct != "Short" {
			ct = []string{"Long", "Short"}[i%2]
		}
		title := clip(w.say(ideaTitles[formula]), 88)
		for k := 2; seen[strings.ToLower(title)]; k++ {
			title = clip(w.say(ideaTitles[formula]), 88) + ", take " + strconv.Itoa(k)
		}
		seen[strings.ToLower(title)] = true
		idea["title"], idea["contentType"], idea["formulaType"] = title, ct, formula
	}
	out["ideas"] = list
}

var ideaFormulas = []string{"listicle", "how-to", "question", "challenge", "comparison", "story", "review"}

var ideaTitles = map[string]string{
	"listicle": "{n} {kw} ideas for {aud}", "how-to": "How to start {kw} this week",
	"comparison": "{kw} vs the usual way", "question": "Is {kw} worth it for {aud}?",
	"challenge": "I tried {kw} for {n} days", "review": "An honest {kw} review",
	"story": "How {kw} changed my week", "other": "The {kw} guide for {aud}",
}

// patterns: research's statistics over the brief's videos, the kind's text, guarded as research stores
// pattern texts (no sentence addressed to an assistant, no URL but the videos').
func patterns(kind string) hook {
	return func(w *writer, _, out map[string]any) {
		vs := make([]research.Video, len(w.b.Videos))
		sources := map[string]bool{}
		for i, v := range w.b.Videos {
			vs[i] = research.Video{Title: v.Title, URL: v.URL, ChannelTitle: v.ChannelTitle, Views: v.Views, OutlierScore: v.Score,
				ViewsPerDay: v.ViewsPerDay, ContentType: v.ContentType, DurationSeconds: v.DurationSeconds, Description: v.Description, Tags: v.Tags}
			sources[strings.ToLower(v.URL)] = true
		}
		niche, _ := research.NicheOf(w.b.Profile)
		p, _, _ := research.Statistics{}.WritePatterns(context.Background(), research.PatternInput{Niche: niche, Profile: w.b.Profile, Videos: vs})
		text := strings.TrimSpace(research.GuardPattern(map[string]string{"titles": p.Titles, "thumbnails": p.Thumbnails,
			"longScripts": p.LongScripts, "shortScripts": p.ShortScripts, "descriptions": p.Descriptions, "ideas": p.Ideas}[kind], sources))
		if text == "" || research.AddressesAssistant(text) {
			text = "No research videos of this kind to learn from yet."
		}
		out[kind] = clip(text, generation.MaxPatternChars-len(Marker)-1)
	}
}
