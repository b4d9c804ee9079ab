package contract

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
)

// Issue 19 item 3: stored free text refuses control characters, bidirectional controls, noncharacters and
// values with nothing visible, naming the field; the same values stay acceptable to kin-openapi, so these are
// refusals beyond the schema (stricterThanSchema).
func TestStoredTextIsPlain(t *testing.T) {
	bad := []struct{ name, value string }{
		{"NUL", "a\u0000b"},
		{"escape sequence", "\u001b[31mred"},
		{"C1 control", "a\u0085b"},
		{"DEL", "a\u007fb"},
		{"right-to-left override", "abc\u202egnp.exe"},
		{"isolate", "a\u2067b"},
		{"lone zero-width space", "\u200b"},
		{"only spaces", "   "},
		{"spaces and a BOM", " \ufeff "},
		{"noncharacter FFFF", "a\uffff"},
		{"noncharacter FDD0", "a\ufdd0"},
		{"plane 1 noncharacter", "a\U0001FFFE"},
		{"lone CR", "a\rb"},
	}
	cases := []struct {
		op, field string
		long      bool
		body      func(v string) map[string]any
	}{
		{"commitVideo", "title", false, func(v string) map[string]any {
			return map[string]any{"title": v, "contentType": "Long", "formulaType": "listicle"}
		}},
		{"createNote", "content", true, func(v string) map[string]any { return map[string]any{"category": "general", "content": v} }},
		{"createSeries", "name", false, func(v string) map[string]any {
			return map[string]any{"name": v, "description": "d", "scriptFormula": "f"}
		}},
		{"putNicheProfile", "broadNiche", false, func(v string) map[string]any { return map[string]any{"broadNiche": v} }},
		{"putNicheProfile", "mission", true, func(v string) map[string]any { return map[string]any{"broadNiche": "cooking", "mission": v} }},
		{"putNicheProfile", "keywords[0]", false, func(v string) map[string]any {
			return map[string]any{"broadNiche": "cooking", "keywords": []string{v, "b", "c", "d"}}
		}},
		{"generateTitles", "context", true, func(v string) map[string]any {
			return map[string]any{"title": "vegan lunches", "type": "listicle", "videoType": "Both", "context": v}
		}},
		{"createKey", "name", false, func(v string) map[string]any {
			return map[string]any{"channelId": "6f1c2b9e-3c1a-4e7b-9a55-0c7f3f2d8a10", "name": v}
		}},
	}
	s := service(t)
	for _, c := range cases {
		op := s.op(t, c.op)
		ok, _ := json.Marshal(c.body("vegan meal prep"))
		if _, err := op.ValidateBody(ok); err != nil {
			t.Fatalf("%s: clean text refused: %v (%s)", c.op, err, ok)
		}
		for _, b := range bad {
			body, _ := json.Marshal(c.body(b.value))
			_, err := op.ValidateBody(body)
			e, isApp := apperr.As(err)
			if err == nil || !isApp || e.Code != apperr.Validation || e.Field != c.field || !strings.Contains(e.Message, plainTextPrefix) {
				t.Errorf("%s %s with %s: error = %v, want a VALIDATION_ERROR naming %s", c.op, c.field, b.name, err, c.field)
				continue
			}
			if !stricterThanSchema(err, body) {
				t.Errorf("%s: %v is not recognised as a refusal beyond the schema", c.op, err)
			}
		}
		multi := "line one\n\tline two\r\nline three"
		body, _ := json.Marshal(c.body(multi))
		_, err := op.ValidateBody(body)
		if c.long && err != nil {
			t.Errorf("%s %s: long text with tab, LF and CRLF refused: %v", c.op, c.field, err)
		}
		if !c.long && err == nil {
			t.Errorf("%s %s: a line field accepted a line break", c.op, c.field)
		}
	}
}

func TestCheckTextKeepsOrdinaryText(t *testing.T) {
	for _, v := range []string{"", "Café ☕ 5 vegan lunches under $3", "עברית\u200fabc", "emoji 👩‍🍳 joiner", "日本語", "a\u200bb", "\ufffd"} {
		if msg := checkText(textLine, v); msg != "" {
			t.Errorf("checkText(%q) = %q, want clean", v, msg)
		}
	}
}
