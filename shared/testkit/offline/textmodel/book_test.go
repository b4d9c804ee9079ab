package textmodel

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// slotNames are the slots a frame may use: the writer's own and those a frame's writer passes.
var slotNames = []string{
	"topic", "title", "niche", "aud", "pain", "kw", "kw2", "term", "hot", "n", "slogan", "mission", "profit", "sponsor",
	"rival", "insight", "style", "catch", "context", "guest", "hook", "series", "focus",
	"heading", "i", "expr", "outlier", "views", "score", "feedback", "day", "time", "kwlist", "termlist", "desc",
	"dim", "missing", "detail", "hits", "misses", "note", "word",
	// research patterns (patternSlots)
	"pnum", "pq", "phow", "len", "words", "top", "score", "formulas", "links", "hash", "chap", "taglist", "kwcov", "dur",
	"vpd", "channels",
}

var slotRef = regexp.MustCompile(`\{([^{}]*)\}`)

// emptyAllowed are the frames left empty on purpose: CTA slots with no personal frame, and the quiz
// posts (written from Quiz).
func emptyAllowed(path string) bool {
	return strings.HasPrefix(path, "CTAText[1][0]") || strings.HasPrefix(path, "CTAText[2][0]") || strings.HasPrefix(path, "Comm[quiz]")
}

// TestPhrasebooksAreComplete: every language has every frame english has (the same map keys, no empty
// frame), and frames use only slots the writers fill.
func TestPhrasebooksAreComplete(t *testing.T) {
	en := reflect.ValueOf(english)
	for _, lang := range supported {
		b, fallback := phrasebook(lang)
		if fallback || b.Name != lang {
			t.Fatalf("%s: no phrasebook", lang)
		}
		walkBook(t, lang, "", en, reflect.ValueOf(*b))
	}
	for _, lang := range []string{fallbackLanguage, "hindi", "arabic", "korean", "indonesian", "klingon"} {
		if !Fallback(lang) {
			t.Errorf("%s has a phrasebook", lang)
		}
	}
	for _, lang := range []string{"english", "", "Spanish", " german ", "fr", "pt"} {
		if Fallback(lang) {
			t.Errorf("%q falls back to english", lang)
		}
	}
}

func walkBook(t *testing.T, lang, path string, en, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			walkBook(t, lang, path+v.Type().Field(i).Name, en.Field(i), v.Field(i))
		}
	case reflect.Map:
		if v.Len() != en.Len() {
			t.Errorf("%s: %s has %d entries, english %d", lang, path, v.Len(), en.Len())
		}
		for _, k := range en.MapKeys() {
			e := v.MapIndex(k)
			if !e.IsValid() {
				t.Errorf("%s: %s has no %v", lang, path, k)
				continue
			}
			walkBook(t, lang, path+"["+k.String()+"]", en.MapIndex(k), e)
		}
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 && !emptyAllowed(path) && !strings.HasSuffix(path, "Stop") {
			t.Errorf("%s: %s is empty", lang, path)
		}
		for i := 0; i < v.Len(); i++ {
			var ev reflect.Value
			if i < en.Len() {
				ev = en.Index(i)
			} else {
				ev = en.Index(0)
			}
			walkBook(t, lang, path+"["+itoa(i)+"]", ev, v.Index(i))
		}
	case reflect.String:
		s := v.String()
		if s == "" && !emptyAllowed(path) {
			t.Errorf("%s: %s is empty", lang, path)
		}
		for _, m := range slotRef.FindAllStringSubmatch(s, -1) {
			if !slices.Contains(slotNames, m[1]) {
				t.Errorf("%s: %s uses unknown slot {%s}: %q", lang, path, m[1], s)
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestEveryEnumValueHasFrames: every enum value of the contract's requests and answers has its frames in
// every phrasebook, and the writers' own lists of enum values are the contract's.
func TestEveryEnumValueHasFrames(t *testing.T) {
	for _, lang := range supported {
		L, _ := phrasebook(lang)
		for _, c := range []struct {
			component, prop string
			frames          []map[string]bool
		}{
			{"TitlesRequest", "type", []map[string]bool{keys(L.Titles), keys(L.ShortTitles)}},
			{"LongScriptRequest", "type", []map[string]bool{keys(L.LongHooks), keys(structures)}},
			{"ShortScriptRequest", "type", []map[string]bool{keys(L.ShortHooks), keys(L.ShortBody), keys(L.ShortVisual)}},
			{"ThumbnailRequest", "type", []map[string]bool{keys(L.ThumbStrategy), keys(L.ThumbOverlay), keys(L.Expression), keys(palettes)}},
			{"ThumbnailRequest", "peopleMode", []map[string]bool{keys(L.People)}},
			{"PodcastPrepRequest", "episodeType", []map[string]bool{keys(L.PodTitle), keys(L.PodDesc), keys(L.PodHook), keys(L.PodQuestions)}},
			{"NewsletterRequest", "style", []map[string]bool{keys(L.NewsSubject), keys(L.NewsPre), keys(L.NewsBody)}},
			{"CommunityPostsRequest", "postType", []map[string]bool{keys(L.Comm), keys(L.CommTips)}},
		} {
			for _, v := range enumOf(t, c.component, c.prop) {
				for i, f := range c.frames {
					if !f[v] {
						t.Errorf("%s: %s.%s %q has no frames (set %d)", lang, c.component, c.prop, v, i)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		name       string
		ours, want []string
	}{
		{"title types", titleTypes, enumOf(t, "TitlesRequest", "type")},
		{"thumbnail types", thumbTypes, enumOf(t, "ThumbnailRequest", "type")},
		{"hook approaches", approaches[:], answerEnum(t, "hooks", "hooks", "*", "approach")},
		{"cta slots", slotPositions[:], answerEnum(t, "ctas", "ctas", "*", "slotPosition")},
		{"platforms", platforms, answerEnum(t, "clips", "clips", "*", "platforms", "*")},
		{"niche dimensions", dimensionNames[:], answerEnum(t, "niche_score", "dimensions", "*", "name")},
	} {
		if !slices.Equal(c.ours, c.want) {
			t.Errorf("%s: %v, the contract says %v", c.name, c.ours, c.want)
		}
	}
}

func keys[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}
