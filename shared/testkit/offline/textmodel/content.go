package textmodel

import (
	"html"
	"strings"
	"unicode/utf8"
)

// ---- description

type descriptionOut struct {
	Description string   `json:"description"`
	Hashtags    []string `json:"hashtags"`
	FAQSection  string   `json:"faqSection"`
}

// maxHashtags is the most hashtags a description carries (YouTube ignores all of them past 15 and shows
// three above the title; the contract allows three).
const maxHashtags = 3

func description(w *writer) any {
	return descriptionOut{
		Description: w.mark(w.descriptionText(true)),
		Hashtags:    w.hashtags(maxHashtags),
		FAQSection:  w.faq(),
	}
}

// descriptionText writes a video description: an opening with the keywords, what the viewer learns,
// the request's angle, chapters from the transcript, the channel and a call to action. No hashtags: they
// are their own field.
func (w *writer) descriptionText(learn bool) string {
	var parts []string
	parts = append(parts, w.mustFresh(w.L.DescOpen, 0))
	if learn {
		var bl strings.Builder
		bl.WriteString(w.L.DescLearn)
		for i := 0; i < 3; i++ {
			bl.WriteString("\n- ")
			bl.WriteString(w.must(w.L.DescBullets, i))
		}
		parts = append(parts, bl.String())
	}
	if s := w.one(w.L.DescContext, 0); s != "" {
		parts = append(parts, s)
	}
	if ch := w.chapters(readTranscript(w.transcriptText())); len(ch) > 0 {
		parts = append(parts, w.L.DescChapters+"\n"+strings.Join(ch, "\n"))
	}
	var about []string
	for i, tpl := range w.L.DescAbout {
		if s := w.one(tpl, i); s != "" {
			about = append(about, s)
		}
	}
	if len(about) > 0 {
		parts = append(parts, strings.Join(about, " "))
	}
	parts = append(parts, w.one(w.L.DescCTA, 1))
	return strings.Join(parts, "\n\n")
}

func (w *writer) transcriptText() string {
	if w.b.Transcript != "" {
		return w.b.Transcript
	}
	return w.in.Transcript
}

// hashtags are up to n hashtags from the keywords, then the niche (not the phrasebook's stand-in for one).
func (w *writer) hashtags(n int) []string {
	out := []string{}
	from := append([]string{}, w.f.kws...)
	if w.f.niche != w.L.Niche {
		from = append(from, w.f.niche)
	}
	for _, s := range from {
		if s == w.L.Niche {
			continue
		}
		h := hashtag(s)
		if h == "" || w.avoids(s) {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == h
		}
		if !dup {
			out = append(out, h)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

func (w *writer) faq() string {
	var sb strings.Builder
	for i, qa := range w.L.FAQ {
		q, a := w.one(qa[0], i), w.one(qa[1], i)
		if q == "" || a == "" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(w.L.Q + " " + q + "\n" + w.L.A + " " + a)
	}
	return sb.String()
}

// ---- thumbnail

type thumbnailOut struct {
	Strategy      string   `json:"strategy"`
	DesignConcept string   `json:"designConcept"`
	ColorPalette  []string `json:"colorPalette"`
	TextOverlay   string   `json:"textOverlay"`
}

// thumbTypes are the ThumbnailRequest types, in the contract's order.
var thumbTypes = []string{"question", "facts-stats", "compare", "emotions", "focus", "scale"}

// palettes are colour sets that suit each thumbnail type's mood (high contrast first).
var palettes = map[string][][]string{
	"question":    {{"#FFD400", "#111111", "#FFFFFF"}, {"#00B4FF", "#0A0A23", "#FFE600"}},
	"facts-stats": {{"#00C853", "#0B0B0B", "#FFFFFF"}, {"#FF3D00", "#1A1A1A", "#FFD600"}},
	"compare":     {{"#E53935", "#1E88E5", "#FFFFFF"}, {"#FF6D00", "#2962FF", "#111111"}},
	"emotions":    {{"#FF1744", "#FFEA00", "#121212"}, {"#D500F9", "#FFFFFF", "#1B1B1B"}},
	"focus":       {{"#FFFFFF", "#111111", "#FF3D00"}, {"#F5F5F5", "#263238", "#00E5FF"}},
	"scale":       {{"#FFC400", "#6200EA", "#FFFFFF"}, {"#00E676", "#212121", "#FF1744"}},
}

func thumbnail(w *writer) any {
	typ := w.in.Type
	if _, ok := w.L.ThumbStrategy[typ]; !ok {
		typ = "focus"
	}
	mode := w.in.PeopleMode
	if _, ok := w.L.People[mode]; !ok {
		mode = "you" // the contract's default
	}
	return w.thumbnailFor(typ, mode, w.in.HasBackground)
}

func (w *writer) thumbnailFor(typ, mode string, background bool) thumbnailOut {
	strategy := []string{w.one(w.L.ThumbStrategy[typ], 0)}
	for i, tpl := range w.L.ThumbExtra {
		over := []string{}
		if len(w.f.outliers) > 0 {
			over = append(over, "outlier", w.f.outliers[0].Title)
		}
		if len(w.f.style) > 0 {
			over = append(over, "style", w.quote(w.f.style[0]))
		}
		if s := w.one(tpl, i, over...); s != "" {
			strategy = append(strategy, s)
		}
	}
	concept := []string{w.one(w.L.People[mode], 0, "expr", w.L.Expression[typ])}
	if background {
		concept = append(concept, w.L.Background[0])
	} else {
		concept = append(concept, w.L.Background[1])
	}
	concept = append(concept, w.must(w.L.Composition, 0))
	overlay := strings.ToUpper(w.overlay(w.L.ThumbOverlay[typ]))
	return thumbnailOut{
		Strategy:      w.mark(strings.Join(strategy, " ")),
		DesignConcept: strings.Join(concept, " "),
		ColorPalette:  pick(w, palettes[typ]),
		TextOverlay:   overlay,
	}
}

// overlay picks a thumbnail text of at most four words and 24 characters (read in a glance), the frames
// with the creator's keywords first.
func (w *writer) overlay(pool []string) string {
	var fallback string
	for rot := 0; rot < len(w.f.kws); rot++ {
		for _, tpl := range pool {
			s, ok := w.fill(tpl, rot)
			if !ok || w.avoids(s) {
				continue
			}
			if fallback == "" || countWords(s) < countWords(fallback) {
				fallback = s
			}
			if countWords(s) <= 4 && utf8.RuneCountInString(s) <= 24 {
				return s
			}
		}
	}
	return clip(fallback, 24)
}

// ---- hooks

type hookOut struct {
	Approach       string `json:"approach"`
	First5Seconds  string `json:"first5Seconds"`
	First30Seconds string `json:"first30Seconds"`
	WhyItWorks     string `json:"whyItWorks"`
}

// approaches are the Hook approaches, in the contract's order.
var approaches = [3]string{"Curiosity", "Bold Claim/Contrarian", "Story/Pattern Interrupt"}

func hooks(w *writer) any {
	out := struct {
		Hooks []hookOut `json:"hooks"`
	}{}
	for i, a := range approaches {
		first := w.mustFresh(w.L.Hook5[i], i)
		if w.dir.question && !strings.Contains(first, "?") {
			if q, ok := w.firstWith(w.L.Hook5[i], "?", i); ok {
				first = q
			}
		}
		thirty := first + " " + w.must(w.L.Hook30[i], i)
		why := []string{w.L.HookWhy[i]}
		if i == 0 && w.f.hook != "" {
			why = append(why, w.one(w.L.HookImprove, 0))
		}
		if len(w.f.style) > 0 && i == 1%3 {
			why = append(why, w.one(w.L.HookStyle, 0, "style", w.quote(w.f.style[0])))
		}
		if i == 0 {
			why[0] = w.mark(why[0])
		}
		out.Hooks = append(out.Hooks, hookOut{a, first, thirty, strings.Join(why, " ")})
	}
	return out
}

// firstWith renders the first frame of pool that contains sub.
func (w *writer) firstWith(pool []string, sub string, rot int) (string, bool) {
	for _, tpl := range pool {
		if strings.Contains(tpl, sub) {
			if s, ok := w.fill(tpl, rot); ok {
				return upperFirst(s), true
			}
		}
	}
	return "", false
}

// ---- ctas

type ctaOut struct {
	SlotPosition string `json:"slotPosition"`
	Label        string `json:"label"`
	Text         string `json:"text"`
}

// slotPositions are the CTA slot positions, in the contract's order.
var slotPositions = [5]string{"early", "middle", "end", "extra_1", "extra_2"}

func ctas(w *writer) any {
	out := struct {
		CTAs []ctaOut `json:"ctas"`
	}{}
	for i, pos := range slotPositions {
		// A slot's personal frame (profit model, sponsor, catchphrase) wins when the channel has the
		// fact; otherwise one of the general frames.
		text := ""
		pool := w.L.CTAText[i]
		if len(pool) > 0 {
			text = w.one(pool[0], i)
		}
		if text == "" {
			text = w.mustFresh(pool[1:], i)
		}
		if i == 0 {
			text = w.mark(text)
		}
		out.CTAs = append(out.CTAs, ctaOut{pos, w.L.CTALabel[i], text})
	}
	return out
}

// ---- podcast prep

type talkingPoint struct {
	Topic        string   `json:"topic"`
	KeyPoints    []string `json:"keyPoints"`
	GoldenNugget string   `json:"goldenNugget"`
}

type guestQuestion struct {
	Question      string `json:"question"`
	ClipPotential int    `json:"clipPotential"`
	ClipHook      string `json:"clipHook"`
}

type podcastOut struct {
	EpisodeTitle       string          `json:"episodeTitle"`
	EpisodeDescription string          `json:"episodeDescription"`
	OpeningHook        string          `json:"openingHook"`
	ClosingCTA         string          `json:"closingCTA"`
	ShowNotes          string          `json:"showNotes"`
	TalkingPoints      []talkingPoint  `json:"talkingPoints"`
	GuestQuestions     []guestQuestion `json:"guestQuestions"`
}

func podcastPrep(w *writer) any {
	typ := w.in.EpisodeType
	if _, ok := w.L.PodTitle[typ]; !ok {
		typ = "solo"
	}
	guest := firstNonEmpty(w.f.guest, w.L.Guest)
	g := []string{"guest", guest}
	out := podcastOut{
		EpisodeTitle:       clip(w.one(w.L.PodTitle[typ], 0, g...), 100),
		EpisodeDescription: w.mark(w.one(w.L.PodDesc[typ], 0, g...)),
		OpeningHook:        w.one(w.L.PodHook[typ], 0, g...),
		ClosingCTA:         w.one(w.L.PodClose, 1),
		GuestQuestions:     []guestQuestion{},
	}
	if s := w.f.slogan; s != "" {
		out.ClosingCTA += " " + s
	}
	nTopics := 3
	if typ == "deep_dive" || typ == "solo" {
		nTopics = 4
	}
	for i := 0; i < nTopics; i++ {
		tp := talkingPoint{Topic: w.must(w.L.PodTopics, i, g...)}
		for k := 0; k < 3; k++ {
			tp.KeyPoints = append(tp.KeyPoints, w.must(w.L.PodPoints, i+k, g...))
		}
		tp.GoldenNugget = w.must(w.L.PodNuggets, i, g...)
		out.TalkingPoints = append(out.TalkingPoints, tp)
	}
	for i, tpl := range w.L.PodQuestions[typ] {
		q := w.one(tpl, i, g...)
		if q == "" {
			continue
		}
		out.GuestQuestions = append(out.GuestQuestions, guestQuestion{
			Question:      q,
			ClipPotential: 2 + w.rng.IntN(4), // 2..5
			ClipHook:      w.must(w.L.PodClipHooks, i, g...),
		})
	}
	var notes []string
	notes = append(notes, w.L.PodNotes)
	for _, tp := range out.TalkingPoints {
		notes = append(notes, "- "+tp.Topic)
	}
	if w.f.guest != "" {
		line := w.L.PodGuest + ": " + w.f.guest
		if bio := firstSentence(w.in.GuestBio, 30); bio != "" {
			line += " — " + bio
		}
		notes = append(notes, "", line)
	}
	p := &w.b.Profile
	var mentioned []string
	for _, list := range [][]string{p.Podcasters, p.IndustrySpeakers, p.Conferences} {
		mentioned = append(mentioned, nonEmpty(list, 2)...)
	}
	if len(mentioned) > 0 {
		notes = append(notes, "", w.L.PodMentioned+": "+w.joinList(mentioned))
	}
	out.ShowNotes = strings.Join(notes, "\n")
	return out
}

// ---- newsletter

type newsletterOut struct {
	Subject   string `json:"subject"`
	Preheader string `json:"preheader"`
	BodyHTML  string `json:"bodyHtml"`
	BodyText  string `json:"bodyText"`
}

// block is a part of a newsletter body, rendered once as HTML and once as text so both say the same.
type block struct {
	kind  string // p, list, quote, link
	text  string
	items []string
	url   string
}

func newsletter(w *writer) any {
	style := w.in.Style
	if _, ok := w.L.NewsSubject[style]; !ok {
		style = "value-first"
	}
	blocks := []block{{kind: "p", text: w.mark(w.L.Hello)}}
	for i, tpl := range w.L.NewsBody[style] {
		if s := w.one(tpl, i); s != "" {
			blocks = append(blocks, block{kind: "p", text: s})
		}
	}
	var pts []string
	for i := 0; i < 3; i++ {
		pts = append(pts, w.must(w.L.DescBullets, i))
	}
	blocks = append(blocks, block{kind: "p", text: w.L.NewsPoints}, block{kind: "list", items: pts})
	if seg := firstSentence(w.transcriptText(), 30); seg != "" && !stamp.MatchString(seg) {
		blocks = append(blocks, block{kind: "p", text: w.L.FromVideo}, block{kind: "quote", text: seg})
	} else if t := readTranscript(w.transcriptText()); len(t.segments) > 0 {
		blocks = append(blocks, block{kind: "p", text: w.L.FromVideo}, block{kind: "quote", text: firstWords(t.segments[0].text, 30)})
	}
	if w.in.VideoURL != "" {
		blocks = append(blocks, block{kind: "link", text: w.L.NewsWatch, url: w.in.VideoURL})
	} else {
		blocks = append(blocks, block{kind: "p", text: w.one(w.L.NewsWatchOn, 0)})
	}
	sign := w.L.SignOff
	if w.f.slogan != "" {
		sign += " " + w.f.slogan
	}
	blocks = append(blocks, block{kind: "p", text: sign})
	return newsletterOut{
		Subject:   clip(w.mustFresh(w.L.NewsSubject[style], 0), 120),
		Preheader: w.one(w.L.NewsPre[style], 0),
		BodyHTML:  renderHTML(blocks),
		BodyText:  renderText(blocks),
	}
}

func renderHTML(blocks []block) string {
	var sb strings.Builder
	for _, b := range blocks {
		switch b.kind {
		case "p":
			sb.WriteString("<p>" + html.EscapeString(b.text) + "</p>\n")
		case "list":
			sb.WriteString("<ul>\n")
			for _, it := range b.items {
				sb.WriteString("<li>" + html.EscapeString(it) + "</li>\n")
			}
			sb.WriteString("</ul>\n")
		case "quote":
			sb.WriteString("<blockquote>" + html.EscapeString(b.text) + "</blockquote>\n")
		case "link":
			u := html.EscapeString(b.url)
			sb.WriteString("<p>" + html.EscapeString(b.text) + ` <a href="` + u + `">` + u + "</a></p>\n")
		}
	}
	return strings.TrimRight(sb.String(), "\n")
}

func renderText(blocks []block) string {
	var parts []string
	for _, b := range blocks {
		switch b.kind {
		case "p":
			parts = append(parts, b.text)
		case "list":
			parts = append(parts, "- "+strings.Join(b.items, "\n- "))
		case "quote":
			parts = append(parts, "> "+b.text)
		case "link":
			parts = append(parts, b.text+" "+b.url)
		}
	}
	return strings.Join(parts, "\n\n")
}

// ---- community posts

type quizOption struct {
	Option    string `json:"option"`
	IsCorrect bool   `json:"isCorrect"`
}

type postOut struct {
	PostType        string       `json:"postType"`
	Content         string       `json:"content"`
	Hashtags        []string     `json:"hashtags"`
	BestPostingTime string       `json:"bestPostingTime"`
	EngagementTips  string       `json:"engagementTips"`
	PollOptions     []string     `json:"pollOptions,omitempty"`
	QuizOptions     []quizOption `json:"quizOptions,omitempty"`
}

func communityPosts(w *writer) any {
	typ := w.in.PostType
	if _, ok := w.L.Comm[typ]; !ok {
		typ = "question"
	}
	out := struct {
		Posts []postOut `json:"posts"`
	}{}
	day := w.rng.IntN(7)
	for i := 0; i < 3; i++ {
		p := postOut{PostType: typ, Hashtags: w.hashtags(2)}
		if typ == "quiz" {
			q := w.L.Quiz[i]
			p.Content = w.one(q.Q, i)
			right := w.rng.IntN(4)
			for k, j := 0, 0; k < 4; k++ {
				if k == right {
					p.QuizOptions = append(p.QuizOptions, quizOption{w.one(q.Right, i), true})
					continue
				}
				p.QuizOptions = append(p.QuizOptions, quizOption{w.one(q.Wrong[j], i), false})
				j++
			}
		} else {
			p.Content = w.one(w.L.Comm[typ][i], i)
		}
		if p.Content == "" { // a frame needing a fact the channel lacks: the first post's frame
			p.Content = w.one(w.L.Comm[typ][0], i+1)
		}
		if typ == "poll" {
			p.PollOptions = w.pollOptions(i)
		}
		if i == 0 {
			p.Content = w.mark(p.Content)
		}
		t := []string{"17:00", "18:00", "12:00"}[i]
		p.BestPostingTime = w.one(w.L.PostTime, 0, "day", w.L.Days[(day+2*i)%7], "time", t)
		p.EngagementTips = w.L.CommTips[typ] + " " + w.L.CommAngles[i]
		out.Posts = append(out.Posts, p)
	}
	return out
}

// pollOptions are the options of the i-th poll: what the viewer struggles with (keywords and terms),
// what to cover next, or how often.
func (w *writer) pollOptions(i int) []string {
	var opts []string
	add := func(s string) {
		s = clip(upperFirst(s), 65)
		for _, o := range opts {
			if strings.EqualFold(o, s) {
				return
			}
		}
		if s != "" {
			opts = append(opts, s)
		}
	}
	switch i {
	case 2:
		for _, f := range w.L.PollFreq {
			add(f)
		}
		return opts
	case 1:
		add(w.one(w.L.PollTopic, 0))
	}
	for _, k := range w.f.kws {
		add(k)
	}
	for _, t := range w.f.terms {
		add(t)
	}
	if len(opts) > 3 {
		opts = opts[:3]
	}
	add(w.L.PollOther)
	if len(opts) < 2 {
		add(w.L.PollFreq[0])
	}
	return opts
}

// ---- channel optimisation

type channelDescriptionOut struct {
	Description string `json:"description"`
}

// channelDescriptionMax is ChannelDescription.description's maxLength in the contract.
const channelDescriptionMax = 1000

func channelDescription(w *writer) any {
	over := []string{"kwlist", w.joinList(w.f.kws), "termlist", ""}
	if w.f.ownTerms {
		over[3] = strings.Join(w.f.terms, ", ")
	}
	var sb strings.Builder
	if w.fallback {
		sb.WriteString(Marker)
	}
	for i, tpl := range w.L.ChanDesc {
		s := w.one(tpl, i, over...)
		if s == "" {
			continue
		}
		sep := " "
		if i == 1 || i == len(w.L.ChanDesc)-1 {
			sep = "\n\n"
		}
		if sb.Len() == 0 {
			sep = ""
		}
		if utf8.RuneCountInString(sb.String())+utf8.RuneCountInString(sep+s) > channelDescriptionMax {
			continue
		}
		sb.WriteString(sep + s)
	}
	return channelDescriptionOut{clip(sb.String(), channelDescriptionMax)}
}

type playlist struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Keyword     string `json:"keyword"`
}

// maxPlaylists is PlaylistSuggestion.playlists' maxItems in the contract.
const maxPlaylists = 10

func channelPlaylists(w *writer) any {
	out := struct {
		Playlists []playlist `json:"playlists"`
	}{}
	seen := map[string]bool{}
	add := func(frame [2]string, keyword string, rot int, over ...string) {
		name := clip(w.one(frame[0], rot, over...), 150)
		if name == "" || seen[strings.ToLower(name)] || len(out.Playlists) == maxPlaylists || w.avoids(name) {
			return
		}
		seen[strings.ToLower(name)] = true
		out.Playlists = append(out.Playlists, playlist{name, w.one(frame[1], rot, over...), keyword})
	}
	add(w.L.PlStart, w.f.niche, 0)
	if w.f.series != nil {
		// A playlist needs a description (the contract's minLength): a series without one is described
		// by its name.
		desc := firstNonEmpty(firstSentence(w.f.series.Description, 30), w.f.series.Name)
		add(w.L.PlSeries, w.f.series.Name, 0, "desc", desc)
	}
	for i, k := range w.f.kws {
		add(w.L.PlKeyword, k, i)
	}
	if len(w.b.Profile.InsiderTerms) > 0 {
		add(w.L.PlTerm, w.f.terms[0], 0)
	}
	if w.b.Profile.PainPoints != "" {
		add(w.L.PlPain, w.f.kws[0], 0)
	}
	add(w.L.PlShorts, w.f.kws[0], 0)
	if len(out.Playlists) > 0 {
		out.Playlists[0].Description = w.mark(out.Playlists[0].Description)
	}
	return out
}

type bannerOut struct {
	Strategy string `json:"strategy"`
}

func channelBanner(w *writer) any {
	var parts []string
	for i, tpl := range w.L.Banner {
		if s := w.one(tpl, i); s != "" {
			parts = append(parts, s)
		}
	}
	if w.f.slogan == "" {
		parts = append(parts[:1], append([]string{w.one(w.L.BannerNoSlug, 0)}, parts[1:]...)...)
	}
	return bannerOut{w.mark(strings.Join(parts, " "))}
}

// ---- reoptimize

type reoptimizeOut struct {
	Titles      []titleItem  `json:"titles"`
	Thumbnail   thumbnailOut `json:"thumbnail"`
	Description string       `json:"description"`
}

// reoptimize rewrites a published video's packaging: titles of two fitting types, a thumbnail strategy and
// a description, from what its transcript (or the context) says it is about.
func reoptimize(w *writer) any {
	if w.in.Title == "" {
		topic := firstNonEmpty(w.f.context, w.transcriptTopic(), w.f.niche)
		w.f.topic, w.f.short = clip(topic, 200), firstWords(topic, 8)
		w.slots["topic"], w.slots["title"] = w.f.short, w.f.topic
	}
	typ := titleTypes[w.rng.IntN(len(titleTypes))]
	var out reoptimizeOut
	seen := map[string]bool{}
	for _, t := range append(w.titleList(typ, false, 3), w.titleList("question", false, 3)...) {
		if !seen[strings.ToLower(t)] && len(out.Titles) < 5 {
			seen[strings.ToLower(t)] = true
			out.Titles = append(out.Titles, titleItem{t})
		}
	}
	out.Thumbnail = w.thumbnailFor(thumbTypes[w.rng.IntN(len(thumbTypes))], "you", false)
	out.Description = w.descriptionText(true)
	return out
}

// transcriptTopic names what a transcript is about: the keyword it says most, else its most frequent
// pair of content words; "" when neither (a single word says too little: the niche does better).
func (w *writer) transcriptTopic() string {
	text := w.transcriptText()
	if text == "" {
		return ""
	}
	lt := strings.ToLower(text)
	best, bestN := "", 0
	for _, k := range nonEmpty(w.b.Profile.Keywords, 8) {
		if n := strings.Count(lt, strings.ToLower(k)); n > bestN {
			best, bestN = k, n
		}
	}
	if best != "" {
		return best
	}
	stop := stopwords(w.L)
	count := map[string]int{}
	var order []string
	prev := ""
	for _, wd := range words(text) {
		if len([]rune(wd)) < 4 || stop[wd] {
			prev = ""
			continue
		}
		keys := []string{wd}
		if prev != "" {
			keys = append(keys, prev+" "+wd)
		}
		for _, k := range keys {
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
		prev = wd
	}
	for _, k := range order {
		if strings.Contains(k, " ") && count[k] >= 2 && count[k] > bestN {
			best, bestN = k, count[k]
		}
	}
	if best != "" {
		return best
	}
	return best
}
