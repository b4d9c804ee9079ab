package textmodel

import "strings"

// book is a language's phrasebook: the sentence frames the writers fill with the creator's words. Slots are
// written {name}: topic (the request's title, first words), title (whole), niche, aud, pain, kw and kw2
// (keywords, rotating), term (insider terms), hot (research words, else keywords), n (a number), slogan,
// mission, profit, sponsor, rival, insight, style, catch (the creator's catchphrase), context, guest, hook,
// series, focus; some frames get their own (heading, i, quote, ...). A frame whose slot has no value is
// skipped, so frames about competitors or sponsors appear only for channels that name some.
//
// Production cues ([B-ROLL], [GRAPHIC], [VISUAL], [TONE], ...) stay in english in every language: they are
// instructions to an editor that tools look for, not text an audience reads.
type book struct {
	Name      string // the contentLanguage value
	TitleCase bool   // titles capitalise their words (english)

	// Fallbacks for empty profile fields, and small grammar.
	Niche, Audience, Pain, Guest string
	Basics                       string   // what a second keyword falls back to ("the basics")
	And                          string   // list joiner before the last item, spaces included
	QuoteL, QuoteR               string   // quotation marks
	ClauseCut                    []string // relative pronouns a target audience is cut at (" who ")
	Clause                       []string // how a topic that is a clause starts ("how to ", "why ")
	Stop                         []string // stopwords (english's always apply too)
	Avoid                        []string // words of a note asking to avoid something
	AvoidNext                    []string // "avoid"-verbs whose next word is what to avoid
	Shorter, Longer              []string // refinement feedback asking for shorter / longer
	MoreQuestion, MoreNumbers    []string // ... for questions / numbers

	// titles: frames per TitlesRequest.type, for Long and for Shorts (punchier).
	Titles, ShortTitles map[string][]string

	// long_script
	LongHooks map[string]string   // the opening line, per LongScriptRequest.type
	Sections  map[string]string   // section headings by key
	Lines     map[string][]string // sentences by kind: hook intro point step proof story mistake contrast recap cta any
	BRoll     []string            // what a [B-ROLL] cue shows
	Graphic   []string            // what a [GRAPHIC] cue shows ({heading})
	Outlier   string              // a [GRAPHIC] about a research outlier ({outlier}, {views}, {score})
	Tone      string              // the [TONE] cue quoting a style note ({style})
	SeriesCue string              // the [SERIES] cue ({series})
	Revision  string              // the [REVISION] cue of a refinement ({feedback})
	KindWords map[string][]string // words of a series formula's beat that say its kind

	// short_script, per ShortScriptRequest.type
	ShortHooks  map[string][]string
	ShortBody   map[string][]string
	ShortVisual map[string]string
	ShortMore   []string // extra body lines of any type
	ShortPayoff []string
	ShortCTA    []string
	Visual      []string // what a [VISUAL] cue shows

	// description
	DescOpen     []string
	DescLearn    string
	DescBullets  []string
	DescContext  string
	DescChapters string
	ChapterIntro string
	DescAbout    []string
	DescCTA      string
	FAQ          [][2]string // question, answer
	Q, A         string      // FAQ prefixes

	// thumbnail, per ThumbnailRequest.type and peopleMode
	ThumbStrategy map[string]string
	ThumbExtra    []string // personal additions to a strategy (audience, research, style)
	ThumbOverlay  map[string][]string
	Expression    map[string]string // the face a type asks for
	People        map[string]string // by peopleMode ({expr})
	Background    [2]string         // the uploaded background, a generated one
	Composition   []string

	// hooks, by approach in the contract's order (Curiosity, Bold Claim/Contrarian, Story/Pattern Interrupt)
	Hook5       [3][]string
	Hook30      [3][]string
	HookWhy     [3]string
	HookImprove string // {hook}
	HookStyle   string // {style}

	// ctas, by slotPosition in the contract's order (early, middle, end, extra_1, extra_2)
	CTALabel [5]string
	CTAText  [5][]string // personal frames (profit model, sponsor, catchphrase) come first

	// podcast_prep, per PodcastPrepRequest.episodeType
	PodTitle, PodDesc, PodHook       map[string]string
	PodQuestions                     map[string][]string
	PodClose                         string
	PodNotes, PodGuest, PodMentioned string
	PodTopics, PodPoints, PodNuggets []string
	PodClipHooks                     []string

	// newsletter, per NewsletterRequest.style
	NewsSubject map[string][]string
	NewsPre     map[string]string
	NewsBody    map[string][]string
	Hello       string
	NewsPoints  string
	FromVideo   string
	NewsWatch   string // followed by the video's URL
	NewsWatchOn string // when there is no URL
	SignOff     string

	// clips
	ClipOverlay, ClipBody, ClipCTA []string

	// community_posts, per CommunityPostType: three posts each
	Comm       map[string][3]string
	CommTips   map[string]string
	PollOther  string
	PollFreq   [4]string
	PollTopic  string // a poll option about the video's topic
	Quiz       [3]QuizFrame
	Days       [7]string // Monday first
	PostTime   string    // {day}, {time}
	CommAngles [3]string // why each of the three posts (before, launch, evergreen)

	// channel
	ChanDesc     []string // {kwlist}, {termlist}
	PlStart      [2]string
	PlKeyword    [2]string
	PlTerm       [2]string
	PlPain       [2]string
	PlShorts     [2]string
	PlSeries     [2]string
	Banner       []string
	BannerNoSlug string

	// niche_score
	DimName    [5]string // the dimensions in the contract's order, for text
	DimGood    [5]string // feedback of a strong dimension
	DimOK      string    // "{dim} is taking shape; add {missing}."
	DimWeak    string    // "{dim} is not defined yet: add {missing}."
	DimDone    string    // "{dim} is complete; keep it current."
	DimSharpen string    // "{dim} is filled in; make {missing} more specific."
	NoStrength string    // the top strength of a profile with none
	Field      map[string]string
	KWQuality  map[string]string // excellent, good, fair, weak: {kw}
	Strength   string            // {dim}, {detail}
	Improve    string            // {dim}, {missing}
	NoKeywords string            // the improvement when the profile has no keywords

	// grade_titles / grade_content feedback pieces
	GradeHit, GradeMiss map[string]string // by check
	GradeJoin           string            // joins the passed and missed parts: "{hits}. To improve: {misses}."
	CTAWords            []string          // words of a call to action

	// research: the pattern texts by ResearchPatterns kind (each a list of sentences, written in order; a
	// sentence with a slot the videos give no value is left out), the text when there are no videos, the
	// names of research.FormulaOf's formulas, and the decimal separator of the numbers quoted.
	Patterns   map[string][]string
	NoResearch string
	Formulas   map[string]string
	Decimal    string

	stop map[string]bool // Stop and english's, built once at registration
}

// QuizFrame is a quiz post: the question, the correct option, three wrong ones.
type QuizFrame struct {
	Q, Right string
	Wrong    [3]string
}

var books = map[string]*book{}

func register(b *book, aliases ...string) {
	b.stop = make(map[string]bool, len(b.Stop)+len(english.Stop))
	for _, list := range [][]string{english.Stop, b.Stop} {
		for _, s := range list {
			b.stop[s] = true
		}
	}
	books[b.Name] = b
	for _, a := range aliases {
		books[a] = b
	}
}

func init() {
	register(&english, "en", "eng", "")
	register(&spanish, "es", "spa", "español", "espanol")
	register(&french, "fr", "fra", "français", "francais")
	register(&german, "de", "deu", "deutsch")
	register(&portuguese, "pt", "por", "português", "portugues")
}

// phrasebook returns the book of a language and whether it fell back to english.
func phrasebook(lang string) (*book, bool) {
	if b, ok := books[strings.ToLower(strings.TrimSpace(lang))]; ok {
		return b, false
	}
	return &english, true
}

// Fallback reports whether the offline model writes the language in english (no phrasebook), marking its
// answers with Marker.
func Fallback(language string) bool {
	_, fb := phrasebook(language)
	return fb
}
