package textmodel

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
)

// tc is one generation: a brief and the rules its answer must meet beyond the schema.
type tc struct {
	name  string
	brief func(t testing.TB, lang string) *generation.Brief
	check func(t *testing.T, b *generation.Brief, raw []byte)
}

// cases are, for every task, every enum value (and combination) of its request body as the contract
// declares them, with the inputs around them that change the answer's shape.
func cases(t *testing.T) []tc {
	var out []tc
	add := func(name string, brief func(t testing.TB, lang string) *generation.Brief, check func(*testing.T, *generation.Brief, []byte)) {
		out = append(out, tc{name, brief, check})
	}
	const title = "vegan meal prep for the whole work week"

	for _, typ := range enumOf(t, "TitlesRequest", "type") {
		for _, vt := range enumOf(t, "TitlesRequest", "videoType") {
			types := []string{vt}
			if vt == "Both" { // the pipeline asks once per video type
				types = []string{"Long", "Short"}
			}
			for _, one := range types {
				add("titles/"+typ+"/"+vt+"/"+one, func(t testing.TB, lang string) *generation.Brief {
					b := newBrief(t, generation.TaskTitles, lang, contract.TitlesRequest{Title: title, Type: contract.TitlesRequestType(typ),
						VideoType: ptr(contract.TitlesRequestVideoType(vt)), Count: ptr(5)})
					b.VideoType = one
					return b
				}, checkTitles)
			}
		}
	}
	for _, typ := range enumOf(t, "LongScriptRequest", "type") {
		for _, withSeries := range []bool{false, true} {
			add(fmt.Sprintf("long_script/%s/series=%v", typ, withSeries), func(t testing.TB, lang string) *generation.Brief {
				req := contract.LongScriptRequest{Title: title, Type: contract.LongScriptRequestType(typ), Context: ptr("Focus on cheap protein sources.")}
				if withSeries {
					req.SeriesID = ptr("7d1f5a4e-8c1b-4c57-9d0c-2f8a7c0f1e11")
				}
				b := newBrief(t, generation.TaskLongScript, lang, req)
				if withSeries {
					b.Series = series()
				}
				return b
			}, checkLongScript)
		}
	}
	for _, typ := range enumOf(t, "ShortScriptRequest", "type") {
		for _, withSeries := range []bool{false, true} {
			add(fmt.Sprintf("short_script/%s/series=%v", typ, withSeries), func(t testing.TB, lang string) *generation.Brief {
				b := newBrief(t, generation.TaskShortScript, lang, contract.ShortScriptRequest{Title: title + " and a very long tail that goes on to test the limit of the short script word count",
					Type: contract.ShortScriptRequestType(typ)})
				if withSeries {
					b.Series = series()
				}
				return b
			}, checkShortScript)
		}
	}
	transcripts := map[string]string{"none": "", "plain": plainTranscript(1500), "timed": timedTranscript(12*60, 10), "srt": srtTranscript(60), "tiny": plainTranscript(30)}
	for _, name := range []string{"none", "plain", "timed", "srt", "tiny"} {
		tr := transcripts[name]
		add("description/transcript="+name, func(t testing.TB, lang string) *generation.Brief {
			b := newBrief(t, generation.TaskDescription, lang, contract.DescriptionRequest{Title: title, VideoURL: ptr("https://www.youtube.com/watch?v=abc")})
			b.Transcript = tr
			return b
		}, checkDescription)
	}
	for _, typ := range enumOf(t, "ThumbnailRequest", "type") {
		for _, mode := range append(enumOf(t, "ThumbnailRequest", "peopleMode"), "") {
			for _, bg := range []bool{false, true} {
				add(fmt.Sprintf("thumbnail/%s/%s/bg=%v", typ, mode, bg), func(t testing.TB, lang string) *generation.Brief {
					req := contract.ThumbnailRequest{Title: title, Type: contract.ThumbnailRequestType(typ), HasBackground: ptr(bg)}
					if mode != "" {
						req.PeopleMode = ptr(contract.ThumbnailRequestPeopleMode(mode))
					}
					return newBrief(t, generation.TaskThumbnail, lang, req)
				}, checkThumbnail)
			}
		}
	}
	for _, hook := range []string{"", "Hey guys, welcome back, today we are going to prep some food."} {
		add("hooks/current="+strconv.FormatBool(hook != ""), func(t testing.TB, lang string) *generation.Brief {
			req := contract.HooksRequest{Title: title}
			if hook != "" {
				req.CurrentHook = &hook
			}
			return newBrief(t, generation.TaskHooks, lang, req)
		}, checkHooks)
	}
	add("ctas", func(t testing.TB, lang string) *generation.Brief {
		return newBrief(t, generation.TaskCTAs, lang, contract.CTAsRequest{})
	}, checkCTAs)
	for _, typ := range enumOf(t, "PodcastPrepRequest", "episodeType") {
		for _, guest := range []bool{false, true} {
			add(fmt.Sprintf("podcast_prep/%s/guest=%v", typ, guest), func(t testing.TB, lang string) *generation.Brief {
				req := contract.PodcastPrepRequest{EpisodeType: contract.PodcastPrepRequestEpisodeType(typ), Topic: "plant protein myths"}
				if guest {
					req.GuestName, req.GuestBio = ptr("Dr. Jane Green"), ptr("Dietitian and author of Plant Power. Runs a clinic in Leeds.")
				}
				return newBrief(t, generation.TaskPodcastPrep, lang, req)
			}, checkPodcast)
		}
	}
	for _, style := range enumOf(t, "NewsletterRequest", "style") {
		for _, src := range []string{"none", "url", "transcript"} {
			add("newsletter/"+style+"/"+src, func(t testing.TB, lang string) *generation.Brief {
				req := contract.NewsletterRequest{Title: title, Style: contract.NewsletterRequestStyle(style)}
				switch src {
				case "url":
					req.VideoURL = ptr("https://www.youtube.com/watch?v=abc&t=1s")
				case "transcript":
					req.Transcript = ptr(plainTranscript(400))
				}
				b := newBrief(t, generation.TaskNewsletter, lang, req)
				if src == "url" {
					b.Transcript = timedTranscript(300, 15)
				}
				return b
			}, checkNewsletter)
		}
	}
	for _, name := range []string{"none", "plain", "timed", "srt", "tiny"} {
		for _, count := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10} {
			tr := transcripts[name]
			add(fmt.Sprintf("clips/%s/count=%d", name, count), func(t testing.TB, lang string) *generation.Brief {
				req := contract.ClipsRequest{Title: title}
				if count > 0 {
					req.ClipCount = ptr(count)
				}
				b := newBrief(t, generation.TaskClips, lang, req)
				b.Transcript = tr
				return b
			}, checkClips)
		}
	}
	for _, pt := range enumOf(t, "CommunityPostsRequest", "postType") {
		add("community_posts/"+pt, func(t testing.TB, lang string) *generation.Brief {
			return newBrief(t, generation.TaskCommunityPosts, lang, contract.CommunityPostsRequest{PostType: contract.CommunityPostType(pt), Title: ptr(title)})
		}, checkPosts)
	}
	channelTask := map[string]string{"description": generation.TaskChannelDescription, "playlists": generation.TaskChannelPlaylists, "banner": generation.TaskChannelBanner}
	for _, typ := range enumOf(t, "ChannelOptimizeRequest", "type") {
		task, ok := channelTask[typ]
		if !ok {
			t.Fatalf("channel_optimize type %q has no task", typ)
		}
		add("channel_optimize/"+typ, func(t testing.TB, lang string) *generation.Brief {
			b := newBrief(t, task, lang, contract.ChannelOptimizeRequest{Type: contract.ChannelOptimizeRequestType(typ)})
			b.Series = series()
			return b
		}, checkChannel)
	}
	for _, name := range []string{"none", "plain", "timed"} {
		tr := transcripts[name]
		add("reoptimize/transcript="+name, func(t testing.TB, lang string) *generation.Brief {
			b := newBrief(t, generation.TaskReoptimize, lang, contract.ReoptimizeRequest{VideoURL: "https://www.youtube.com/watch?v=abc"})
			b.Transcript = tr
			return b
		}, checkReoptimize)
	}
	add("niche_score", func(t testing.TB, lang string) *generation.Brief {
		return newBrief(t, generation.TaskNicheScore, lang, contract.NicheScoreRequest{Context: ptr("Thinking about adding a podcast.")})
	}, checkNicheScore)
	for _, n := range []int{1, 10, 20} {
		add(fmt.Sprintf("grade_titles/%d", n), func(t testing.TB, lang string) *generation.Brief {
			b := newBrief(t, generation.TaskGradeTitles, lang, contract.TitlesRequest{Title: title, Type: "listicle"})
			for i := 0; i < n; i++ {
				b.Items = append(b.Items, []string{"5 Vegan Meal Prep Mistakes to Avoid", "My lunch", "Why Is Budget Batch Cooking So Hard?", strings.Repeat("long title ", 12)}[i%4])
			}
			b.VideoType = "Long"
			return b
		}, checkGradeTitles)
	}
	for _, tool := range []string{generation.TaskLongScript, generation.TaskShortScript, generation.TaskDescription, generation.TaskThumbnail, generation.TaskNewsletter} {
		add("grade_content/"+tool, func(t testing.TB, lang string) *generation.Brief {
			b := newBrief(t, generation.TaskGradeContent, lang, map[string]any{"title": title})
			b.Items = []string{"Hook: vegan meal prep! [B-ROLL] food. Subscribe. " + plainTranscript(300)}
			b.GradedTool = tool
			return b
		}, checkGradeContent)
	}
	return append(out, researchCases(t)...)
}

// TestEveryTaskAndEnumValue: every answer matches its task's schema and the tool's rules, in every
// supported language and the english fallback, for a rich channel and for one that has written nothing.
func TestEveryTaskAndEnumValue(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			for _, lang := range append(append([]string{}, supported...), fallbackLanguage) {
				b := c.brief(t, lang)
				covered[b.Task] = true
				raw := run(t, b)
				c.check(t, b, raw)
				noEmptyText(t, raw)
				marked := strings.Contains(string(raw), Marker)
				// Every answer with text to mark is marked (titles and ideas aside: a marker would eat into
				// their titles).
				hasText := b.Task != generation.TaskTitles && b.Task != generation.TaskIdeas && !strings.Contains(string(raw), `"clips":[]`)
				if want := lang == fallbackLanguage && hasText; marked != want {
					t.Errorf("%s: marker present %v, want %v", lang, marked, want)
				}
			}
			// A channel with no profile, notes or research still gets a full answer.
			b := c.brief(t, "english")
			b.Profile, b.Notes, b.Patterns, b.Outliers = emptyBrief(t, b.Task, nil).Profile, nil, "", nil
			raw := run(t, b)
			c.check(t, b, raw)
			noEmptyText(t, raw)
		})
	}
	for _, task := range generation.Tasks {
		if !covered[task] {
			t.Errorf("no case for task %s", task)
		}
	}
}

// noEmptyText: an answer has no empty or untrimmed text, and no slot left unfilled.
func noEmptyText(t *testing.T, raw []byte) {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if x == "" || strings.TrimSpace(x) != x || slotRef.MatchString(x) {
				t.Errorf("text %q in %s", x, raw)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(decode[any](t, raw))
}

// ---- the rules of each tool

func checkTitles(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[generation.TitleDraft](t, raw)
	if n := len(out.Titles); n < 1 || n > generation.MaxTitlesPerCall {
		t.Fatalf("%d titles", n)
	}
	seen := map[string]bool{}
	for _, tt := range out.Titles {
		n := utf8.RuneCountInString(tt.Title)
		if n > 100 || n == 0 {
			t.Errorf("title of %d characters: %q", n, tt.Title)
		}
		if seen[strings.ToLower(tt.Title)] {
			t.Errorf("title twice: %q", tt.Title)
		}
		seen[strings.ToLower(tt.Title)] = true
		if strings.Contains(strings.ToLower(tt.Title), "hack") && len(b.Notes) > 0 {
			t.Errorf("title says what a note avoids: %q", tt.Title)
		}
	}
}

func checkLongScript(t *testing.T, b *generation.Brief, raw []byte) {
	s := decode[scriptOut](t, raw).Script
	for _, m := range []string{"[B-ROLL]", "[GRAPHIC]"} {
		if !strings.Contains(s, m) {
			t.Errorf("no %s marker", m)
		}
	}
	all, said := len(strings.Fields(s)), spoken(s)
	if all < 1200 || all > 2250 || said < 1200 || said > 2250 {
		t.Errorf("%d words (%d spoken): want 1,200 to 2,250 (8 to 15 minutes)", all, said)
	}
}

func checkShortScript(t *testing.T, b *generation.Brief, raw []byte) {
	s := decode[scriptOut](t, raw).Script
	if !strings.Contains(s, "[VISUAL]") {
		t.Error("no [VISUAL] marker")
	}
	all, said := len(strings.Fields(s)), spoken(s)
	if all < 75 || all > 150 || said < 75 || said > 150 {
		t.Errorf("%d words (%d spoken): want 75 to 150 (30 to 60 seconds)\n%s", all, said, s)
	}
}

var chapterLine = regexp.MustCompile(`(?m)^(\d+:\d{2}(?::\d{2})?) `)

func checkDescription(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[descriptionOut](t, raw)
	if len(out.Hashtags) > 3 {
		t.Errorf("%d hashtags", len(out.Hashtags))
	}
	for _, h := range out.Hashtags {
		if !strings.HasPrefix(h, "#") || strings.ContainsAny(h[1:], "# ") {
			t.Errorf("hashtag %q", h)
		}
	}
	if strings.Contains(out.Description, "#") {
		t.Error("hashtags in the description text besides the field")
	}
	if !strings.Contains(out.FAQSection, "?") {
		t.Errorf("FAQ without a question: %q", out.FAQSection)
	}
	stamps := chapterLine.FindAllStringSubmatch(out.Description, -1)
	least, dur := transcriptSeconds(b.Transcript)
	if least < 30 {
		if len(stamps) > 0 {
			t.Errorf("chapters for a video of %d s", dur)
		}
		return
	}
	if len(stamps) < 3 || stamps[0][1] != "0:00" {
		t.Fatalf("chapters %v: want at least 3 from 0:00", stamps)
	}
	prev := -10
	for _, m := range stamps {
		sec := seconds(m[1])
		if sec < prev+10 || sec >= dur {
			t.Errorf("chapter at %s after %d s, video of %d s", m[1], prev, dur)
		}
		prev = sec
	}
}

// transcriptSeconds is the test's own estimate of a transcript's length, at least and at most: from its
// last timestamp to a minute later when it has timestamps, else its words at 150 a minute.
func transcriptSeconds(tr string) (least, most int) {
	stamps := regexp.MustCompile(`(?m)^\[?(\d+:\d{2}:\d{2}|\d+:\d{2})`).FindAllStringSubmatch(tr, -1)
	if len(stamps) >= 2 {
		last := seconds(stamps[len(stamps)-1][1])
		return last, last + 60
	}
	n := len(strings.Fields(tr)) * 60 / 150
	return n, n
}

func checkThumbnail(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[thumbnailOut](t, raw)
	if out.Strategy == "" || out.DesignConcept == "" || len(out.ColorPalette) < 2 {
		t.Errorf("incomplete: %+v", out)
	}
	if n := len(strings.Fields(out.TextOverlay)); n == 0 || n > 5 {
		t.Errorf("overlay %q", out.TextOverlay)
	}
	for _, c := range out.ColorPalette {
		if !regexp.MustCompile(`^#[0-9A-F]{6}$`).MatchString(c) {
			t.Errorf("colour %q", c)
		}
	}
}

func checkHooks(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[struct{ Hooks []hookOut }](t, raw)
	want := answerEnum(t, generation.TaskHooks, "hooks", "*", "approach")
	if len(out.Hooks) != 3 || len(want) != 3 {
		t.Fatalf("%d hooks", len(out.Hooks))
	}
	for i, h := range out.Hooks {
		if h.Approach != want[i] {
			t.Errorf("hook %d approach %q, want %q", i, h.Approach, want[i])
		}
		if !strings.HasPrefix(h.First30Seconds, h.First5Seconds) || len(h.First30Seconds) <= len(h.First5Seconds) {
			t.Errorf("the first 30 seconds do not open on the first 5: %+v", h)
		}
	}
}

func checkCTAs(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[struct{ CTAs []ctaOut }](t, raw)
	want := answerEnum(t, generation.TaskCTAs, "ctas", "*", "slotPosition")
	if len(out.CTAs) != 5 || len(want) != 5 {
		t.Fatalf("%d ctas", len(out.CTAs))
	}
	for i, c := range out.CTAs {
		if c.SlotPosition != want[i] || c.Label == "" || c.Text == "" {
			t.Errorf("cta %d: %+v, want slot %s", i, c, want[i])
		}
	}
}

func checkPodcast(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[podcastOut](t, raw)
	if out.EpisodeTitle == "" || out.OpeningHook == "" || out.ClosingCTA == "" || out.ShowNotes == "" || len(out.TalkingPoints) < 3 || len(out.GuestQuestions) < 3 {
		t.Errorf("incomplete: %+v", out)
	}
	in := decode[contract.PodcastPrepRequest](t, b.Input)
	if in.GuestName != nil && (in.EpisodeType == "interview" || in.EpisodeType == "collaboration") && !strings.Contains(out.EpisodeTitle+out.EpisodeDescription, *in.GuestName) {
		t.Errorf("the guest is not named: %q", out.EpisodeTitle)
	}
}

var tag = regexp.MustCompile(`<[^>]+>`)

func checkNewsletter(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[newsletterOut](t, raw)
	if out.Subject == "" || out.Preheader == "" {
		t.Errorf("incomplete: %+v", out)
	}
	// The two bodies say the same: the HTML's text, markup and list markers aside, is the text body.
	fromHTML := strings.Fields(html.UnescapeString(tag.ReplaceAllString(out.BodyHTML, " ")))
	var fromText []string
	for _, w := range strings.Fields(out.BodyText) {
		if w != "-" && w != ">" {
			fromText = append(fromText, w)
		}
	}
	if strings.Join(fromHTML, " ") != strings.Join(fromText, " ") {
		t.Errorf("bodies differ:\n%s\n%s", strings.Join(fromHTML, " "), strings.Join(fromText, " "))
	}
}

var hmsTime = regexp.MustCompile(`^\d{1,2}:[0-5]\d:[0-5]\d$`)

func checkClips(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[struct{ Clips []clipOut }](t, raw)
	in := decode[contract.ClipsRequest](t, b.Input)
	want := 5
	if in.ClipCount != nil {
		want = *in.ClipCount
	}
	least, dur := transcriptSeconds(b.Transcript)
	if b.Transcript == "" {
		least, dur = 600, 600
	}
	// A video too short for the clips asked gets as many clips of 15 s as fit.
	if n := len(out.Clips); n > want || n < min(want, least/15) {
		t.Fatalf("%d clips for %d asked in %d s", n, want, least)
	}
	prevEnd := 0
	for _, c := range out.Clips {
		if !hmsTime.MatchString(c.StartTime) || !hmsTime.MatchString(c.EndTime) {
			t.Fatalf("times %s %s", c.StartTime, c.EndTime)
		}
		start, end := seconds(c.StartTime), seconds(c.EndTime)
		if end-start < 15 || end-start > 60 || start < prevEnd || end > dur {
			t.Errorf("clip %s–%s after %d s in a video of %d s", c.StartTime, c.EndTime, prevEnd, dur)
		}
		prevEnd = end
		if c.Hook == "" || c.ClipScript.Hook == "" || c.ClipScript.Body == "" || len(c.Platforms) == 0 {
			t.Errorf("incomplete clip %+v", c)
		}
	}
}

func checkPosts(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[struct{ Posts []postOut }](t, raw)
	in := decode[contract.CommunityPostsRequest](t, b.Input)
	if len(out.Posts) != 3 {
		t.Fatalf("%d posts", len(out.Posts))
	}
	contents := map[string]bool{}
	for _, p := range out.Posts {
		if p.PostType != string(in.PostType) || p.Content == "" || p.BestPostingTime == "" {
			t.Errorf("post %+v for %s", p, in.PostType)
		}
		contents[p.Content] = true
		if (in.PostType == "poll") != (p.PollOptions != nil) || (in.PostType == "poll" && len(p.PollOptions) < 2) {
			t.Errorf("%s post with poll options %v", in.PostType, p.PollOptions)
		}
		if (in.PostType == "quiz") != (p.QuizOptions != nil) {
			t.Errorf("%s post with quiz options %v", in.PostType, p.QuizOptions)
		}
		if in.PostType == "quiz" {
			correct := 0
			for _, o := range p.QuizOptions {
				if o.IsCorrect {
					correct++
				}
			}
			if correct != 1 || len(p.QuizOptions) < 3 {
				t.Errorf("quiz with %d correct of %d", correct, len(p.QuizOptions))
			}
		}
	}
	if len(contents) != 3 {
		t.Error("the three posts are not distinct")
	}
}

func checkChannel(t *testing.T, b *generation.Brief, raw []byte) {
	switch b.Task {
	case generation.TaskChannelDescription:
		d := decode[channelDescriptionOut](t, raw).Description
		if n := utf8.RuneCountInString(d); n == 0 || n > 1000 {
			t.Errorf("description of %d characters", n)
		}
	case generation.TaskChannelPlaylists:
		p := decode[struct{ Playlists []playlist }](t, raw).Playlists
		if len(p) == 0 || len(p) > 10 {
			t.Errorf("%d playlists", len(p))
		}
		for _, pl := range p {
			if pl.Name == "" || pl.Description == "" || pl.Keyword == "" {
				t.Errorf("incomplete playlist %+v", pl)
			}
		}
	case generation.TaskChannelBanner:
		s := decode[bannerOut](t, raw).Strategy
		if !strings.Contains(s, "1546") {
			t.Errorf("banner strategy without the safe area: %q", s)
		}
	}
}

func checkReoptimize(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[reoptimizeOut](t, raw)
	if len(out.Titles) < 3 || out.Description == "" || out.Thumbnail.Strategy == "" {
		t.Errorf("incomplete: %+v", out)
	}
	for _, tt := range out.Titles {
		if utf8.RuneCountInString(tt.Title) > 100 {
			t.Errorf("title %q", tt.Title)
		}
	}
}

func checkNicheScore(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[nicheScoreOut](t, raw)
	names := answerEnum(t, generation.TaskNicheScore, "dimensions", "*", "name")
	if len(out.Dimensions) != 5 {
		t.Fatalf("%d dimensions", len(out.Dimensions))
	}
	for i, d := range out.Dimensions {
		if d.Name != names[i] || d.Score < 1 || d.Score > 10 || d.Feedback == "" {
			t.Errorf("dimension %d: %+v", i, d)
		}
	}
	kws := nonEmpty(b.Profile.Keywords, 8)
	if len(out.KeywordValidation) != len(kws) {
		t.Fatalf("%d keyword validations for %d keywords", len(out.KeywordValidation), len(kws))
	}
	for i, k := range out.KeywordValidation {
		if k.Keyword != kws[i] || k.Feedback == "" {
			t.Errorf("keyword %d: %+v", i, k)
		}
	}
}

func checkGradeTitles(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[generation.TitleGrades](t, raw)
	if len(out.Grades) != len(b.Items) {
		t.Fatalf("%d grades for %d titles", len(out.Grades), len(b.Items))
	}
	for i, g := range out.Grades {
		if g.Index != i || g.Feedback == "" {
			t.Errorf("grade %d: %+v", i, g)
		}
	}
}

func checkGradeContent(t *testing.T, b *generation.Brief, raw []byte) {
	out := decode[generation.ContentGrade](t, raw)
	if out.Score < 0 || out.Score > 100 || out.Feedback == "" {
		t.Errorf("grade %+v", out)
	}
}
