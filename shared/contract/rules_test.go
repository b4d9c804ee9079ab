package contract

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/creatorstrategy/css/shared/contract/internal/docgen"
)

// Generated clients read the served document, not text.go: every x-css-text string and every date there
// carries the pattern that says what the validator refuses.
func TestServedDocumentCarriesRulePatterns(t *testing.T) {
	var doc any
	if err := json.Unmarshal(Document(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"line": docgen.TextLinePattern, "long": docgen.TextLongPattern}
	counts := map[string]int{}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if kind, ok := v["x-css-text"].(string); ok {
				counts[kind]++
				if v["pattern"] != want[kind] {
					t.Errorf("%s: x-css-text %q has pattern %q", at, kind, v["pattern"])
				}
			}
			if v["format"] == "date" {
				counts["date"]++
				if v["pattern"] != docgen.DatePattern {
					t.Errorf("%s: format date has pattern %q", at, v["pattern"])
				}
			}
			for k, c := range v {
				walk(at+"/"+k, c)
			}
		case []any:
			for _, c := range v {
				walk(at+"/[]", c)
			}
		}
	}
	walk("", doc)
	if counts["line"] == 0 || counts["long"] == 0 || counts["date"] == 0 {
		t.Fatalf("found %v: the walk missed the rules", counts)
	}
}

// The patterns and checkText agree on every edge, except where checkText is stricter (stricter: the schema
// accepts what the validator refuses; shared/contract/README.md lists these).
func TestTextPatternsAgreeWithCheckText(t *testing.T) {
	patterns := map[string]*regexp.Regexp{
		textLine: regexp.MustCompile(docgen.TextLinePattern),
		textLong: regexp.MustCompile(docgen.TextLongPattern),
	}
	cases := []struct {
		name, value string
		stricter    bool
	}{
		{name: "empty", value: ""},
		{name: "plain", value: "Cheap lunches, 5 ways"},
		{name: "U+FFFD", value: "a\ufffdb"},
		{name: "NUL", value: "a\x00b"},
		{name: "C0 U+001F", value: "a\x1fb"},
		{name: "vertical tab", value: "a\vb"},
		{name: "form feed", value: "a\fb"},
		{name: "DEL", value: "a\x7fb"},
		{name: "C1 U+0080", value: "a\u0080b"},
		{name: "C1 NEL U+0085", value: "a\u0085b"},
		{name: "C1 U+009F", value: "a\u009fb"},
		{name: "U+00A0 after C1", value: "a\u00a0b"},
		{name: "bidi U+202A", value: "a\u202ab"},
		{name: "bidi U+202E", value: "a\u202eb"},
		{name: "bidi U+2066", value: "a\u2066b"},
		{name: "bidi U+2069", value: "a\u2069b"},
		{name: "U+2029 beside the bidi controls", value: "a\u2029b"},
		{name: "U+206A after the isolates", value: "a\u206ab"},
		{name: "noncharacter U+FDD0", value: "a\ufdd0b"},
		{name: "noncharacter U+FDEF", value: "a\ufdefb"},
		{name: "U+FDF0 after them", value: "a\ufdf0b"},
		{name: "noncharacter U+FFFE", value: "a\ufffeb"},
		{name: "noncharacter U+FFFF", value: "a\uffffb"},
		{name: "tab", value: "a\tb"},
		{name: "newline", value: "a\nb"},
		{name: "trailing newline", value: "ab\n"},
		{name: "CRLF", value: "a\r\nb"},
		{name: "lone CR", value: "a\rb"},
		{name: "CR at the end", value: "ab\r"},
		{name: "CR CR LF", value: "a\r\r\nb"},
		{name: "astral noncharacter U+1FFFE", value: "a\U0001fffeb", stricter: true},
		{name: "astral noncharacter U+10FFFF", value: "a\U0010ffffb", stricter: true},
		{name: "only a zero-width space", value: "\u200b", stricter: true},
		{name: "only spaces", value: "   ", stricter: true},
		{name: "only a byte order mark", value: "\ufeff", stricter: true},
	}
	for _, c := range cases {
		for kind, re := range patterns {
			schemaOK, validatorOK := re.MatchString(c.value), checkText(kind, c.value) == ""
			if c.stricter {
				if !schemaOK || validatorOK {
					t.Errorf("%s (%s): pattern %v, checkText %v; want only checkText to refuse", c.name, kind, schemaOK, validatorOK)
				}
			} else if schemaOK != validatorOK {
				t.Errorf("%s (%s): pattern accepts %v, checkText accepts %v", c.name, kind, schemaOK, validatorOK)
			}
		}
	}
}

// DatePattern says the range the validator holds dates to; the calendar (2023-02-29) stays the format's.
func TestDatePatternAgreesWithTheRange(t *testing.T) {
	re := regexp.MustCompile(docgen.DatePattern)
	cases := []struct {
		value    string
		stricter bool
	}{
		{value: "0000-01-01"}, {value: "0999-12-31"}, {value: "1899-12-31"}, {value: "1900-01-01"},
		{value: "1999-12-31"}, {value: "2000-01-01"}, {value: "2024-02-29"}, {value: "8999-06-30"},
		{value: "9000-01-01"}, {value: "9899-01-01"}, {value: "9989-01-01"}, {value: "9998-12-31"},
		{value: "9999-01-31"}, {value: "9999-11-30"}, {value: "9999-12-01"}, {value: "9999-12-19"},
		{value: "9999-12-24"}, {value: "9999-12-25"}, {value: "9999-12-31"}, {value: "2024-13-01"},
		{value: "2024-00-10"}, {value: "2024-01-00"}, {value: "2024-01-32"}, {value: "20240-01-01"},
		{value: "2024-1-01"}, {value: "2024-01-01\n"},
		{value: "2023-02-29", stricter: true}, {value: "2024-04-31", stricter: true},
	}
	for _, c := range cases {
		schemaOK, validatorOK := re.MatchString(c.value), checkStringFormat("date", c.value) == ""
		if c.stricter {
			if !schemaOK || validatorOK {
				t.Errorf("%q: pattern %v, format %v; want only the format to refuse", c.value, schemaOK, validatorOK)
			}
		} else if schemaOK != validatorOK {
			t.Errorf("%q: pattern accepts %v, the validator accepts %v", c.value, schemaOK, validatorOK)
		}
	}
}
