package offline

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
