package research

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Research patterns are written (by a model or by Statistics) from other creators' titles, descriptions,
// tags and channel names, so they are untrusted text (issue 19): before a run stores them, GuardPatterns
// bounds each text, removes every URL that is not one of its source videos' addresses and every sentence
// addressed to an assistant (AddressesAssistant), and drops control and bidi characters. Generation
// prompts show the stored text as data, never as instructions.

// MaxPatternChars bounds one pattern text: a few paragraphs that a generation prompt quotes whole.
const MaxPatternChars = 2000

var (
	// assistantCues are the shapes of text addressed to a model rather than to a creator: instruction
	// overrides, fake turns and role markers, chat-template tokens, mode switches.
	assistantCues = sync.OnceValue(func() []*regexp.Regexp {
		return []*regexp.Regexp{
			regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|of|everything|what(?:ever)?)\s+)*(?:previous|prior|above|earlier|preceding|former|system|original)\b`),
			regexp.MustCompile(`(?i)\b(?:ignore|disregard|override|bypass)\s+(?:the\s+|your\s+|this\s+)?(?:instructions|schema|brief|system\s+prompt|guardrails)\b`),
			regexp.MustCompile(`(?i)\b(?:system|developer|hidden)\s+(?:prompt|instructions?)\b|\bsystem\s+message\b`),
			regexp.MustCompile(`(?im)^\s*(?:system|assistant|developer)\s*:|["'>\]]\s*(?:system|assistant|developer)\s*:`),
			regexp.MustCompile(`(?i)<\|?\s*/?\s*(?:im_start|im_end|im_sep|endoftext|system|assistant|user)\s*\|?>|\[/?INST\]|<</?SYS>>|#{2,}\s*(?:instruction|system|response|assistant)`),
			regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(?:an?\s+|the\s+|in\s+)?(?:dan|ai|assistant|unrestricted|jailbroken|developer|admin|system|god)\b|\b(?:developer|god|jailbreak|dan)\s+mode\b|\bjailbreak`),
			regexp.MustCompile(`(?i)\b(?:new|updated|real)\s+instructions?\b|\binstructions?\s+instead\b`),
			regexp.MustCompile(`(?i)\b(?:system|admin|developer|safety)\s+override\b`),
			regexp.MustCompile(`(?i)\bas\s+(?:an?|the)\s+(?:ai|assistant|language\s+model|llm|chatbot)\s+(?:reading|processing|that|who|you)\b`),
			regexp.MustCompile(`(?i)\b(?:act|pretend|behave)\s+(?:as|like|to\s+be)\s+(?:an?\s+|the\s+)?(?:ai|assistant|system|admin|administrator|developer|dan|chatbot|unrestricted|jailbroken)\b`),
			regexp.MustCompile(`(?i)\bobey\s+(?:it|this|these|me|them|every|all|the\s+following)\b`),
			regexp.MustCompile(`(?i)\b(?:reveal|print|repeat|output)\s+(?:your|the)\s+(?:system|prompt|instructions|secret)`),
		}
	})
	patternURL = lazyRegexp(`(?i)\b(?:(?:https?|ftp|file|wss?)://|www\.)[^\s<>"'\x60\[\]{}|\\^]+`)
	// sentenceEnd splits a text into the sentences a guard keeps or drops.
	sentenceEnd = lazyRegexp(`[.!?;]+(?:\s+|$)|\n+`)
)

// lazyRegexp compiles expr on first use, not at package init: research is linked into every API
// function, whose cold start would pay for the compilation.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// fold is the text a detector reads: format characters (zero-width, soft hyphen, bidi) removed and
// fullwidth ASCII made ASCII, so "ig\u00adnore" and "ｉｇｎｏｒｅ" read as "ignore".
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Cf, r):
			return -1
		case r >= 0xff01 && r <= 0xff5e:
			return r - 0xfee0
		}
		return r
	}, s)
}

// AddressesAssistant reports whether s holds text addressed to an AI assistant (an instruction override,
// a fake system or assistant turn, a chat-template token): a small deterministic detector.
func AddressesAssistant(s string) bool {
	f := fold(s)
	return slices.ContainsFunc(assistantCues(), func(re *regexp.Regexp) bool { return re.MatchString(f) })
}

// GuardPattern returns text as a stored pattern may hold it: sentences addressed to an assistant dropped,
// URLs other than sources' removed, control and bidi characters dropped, at most MaxPatternChars.
func GuardPattern(text string, sources map[string]bool) string {
	return guard(text, func(u string) bool { return sources[strings.ToLower(u)] })
}

// youTubeVideo is a research video's address as the sources write it: YouTube's, or the offline
// sample's on a reserved .invalid host.
var youTubeVideo = lazyRegexp(`^https://(?:(?:www\.|m\.)?youtube\.com|[a-z0-9-]+\.invalid)/watch\?v=[A-Za-z0-9_-]{6,20}$`)

// GuardStored is GuardPatterns for texts read back without their run's videos (stored before patterns
// were guarded): the URLs kept are YouTube video addresses, the form of every research video's.
func GuardStored(p Patterns) Patterns {
	for _, t := range []*string{&p.Titles, &p.Thumbnails, &p.LongScripts, &p.ShortScripts, &p.Descriptions, &p.Ideas} {
		*t = guard(*t, youTubeVideo().MatchString)
	}
	return p
}

var patternTag = lazyRegexp(`(?s)<!--.*?(?:-->|$)|</?[A-Za-z][^<>]*>`)

func guard(text string, source func(url string) bool) string {
	text = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || (r >= 0x7f && r <= 0x9f), r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r == 0x200e, r == 0x200f, r == 0x061c, r == utf8.RuneError:
			return -1
		}
		return r
	}, strings.ToValidUTF8(text, ""))
	text = patternTag().ReplaceAllString(text, "")
	var sb strings.Builder
	last := 0
	flush := func(end int) {
		seg := text[last:end]
		if !AddressesAssistant(seg) {
			sb.WriteString(seg)
		}
		last = end
	}
	for _, m := range sentenceEnd().FindAllStringIndex(text, -1) {
		flush(m[1])
	}
	flush(len(text))
	out := patternURL().ReplaceAllStringFunc(sb.String(), func(u string) string {
		trimmed := strings.TrimRight(u, ".,;:!?)'\"…")
		if source(trimmed) {
			return u
		}
		return u[len(trimmed):]
	})
	out = strings.TrimSpace(out)
	if utf8.RuneCountInString(out) > MaxPatternChars {
		r := []rune(out)
		out = strings.TrimSpace(string(r[:MaxPatternChars-1])) + "…"
	}
	return out
}

// GuardPatterns applies GuardPattern to each text, with the run's videos as the sources.
func GuardPatterns(p Patterns, videos []Video) Patterns {
	sources := map[string]bool{}
	for _, v := range videos {
		if v.URL != "" {
			sources[strings.ToLower(v.URL)] = true
		}
	}
	for _, t := range []*string{&p.Titles, &p.Thumbnails, &p.LongScripts, &p.ShortScripts, &p.Descriptions, &p.Ideas} {
		*t = GuardPattern(*t, sources)
	}
	return p
}
