package textjson

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		why              string // part of the error when want is ""
	}{
		{"object", `{"a":1}`, `{"a":1}`, ""},
		{"spaces", "\n  {\"a\": [1, 2]}\n", `{"a": [1, 2]}`, ""},
		{"array", `[{"a":1}]`, `[{"a":1}]`, ""},
		{"fence with language", "```json\n{\"titles\": [\"x\"]}\n```", `{"titles": ["x"]}`, ""},
		{"fence without language", "```\n{\"a\":true}\n```", `{"a":true}`, ""},
		{"fence on one line", "```{\"a\":true}```", `{"a":true}`, ""},
		{"fence inside prose", "Here you go:\n```json\n{\"titles\": [\"x\"]}\n```\nEnjoy!", ``, "does not start with a JSON object"},
		{"sentence around", `Sure! {"a":"b {c}"} Hope it helps.`, ``, "does not start with a JSON object"},
		{"text after", `{"a":1} and more`, ``, "text after its JSON value"},
		{"two values", `{"a":1}{"b":2}`, ``, "text after its JSON value"},
		{"scalar is not enough", `42`, ``, "does not start with a JSON object"},
		{"string is not enough", `"hello"`, ``, "does not start"},
		{"prose", `I cannot help with that.`, ``, `starts with "I cannot help with t…"`},
		{"truncated", `{"a": [1, 2`, ``, "not valid JSON: unexpected EOF"},
		{"raw line break in a string", "{\"a\": \"line 1\nline 2\tend\", \"b\": \"q\\\"\n\"}", "{\"a\": \"line 1\\u000aline 2\\u0009end\", \"b\": \"q\\\"\\u000a\"}", ""},
		{"line breaks between members stay", "{\n\"a\": 1\n}", "{\n\"a\": 1\n}", ""},
		{"a raw line break cannot mend other faults", "{\"a\": \"x\ny\" oops}", ``, "invalid character '\\n' in string literal"},
		{"empty", ``, ``, "empty"},
		{"empty fence", "```\n```", ``, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text)
			if tc.want != "" {
				if err != nil || string(got) != tc.want {
					t.Fatalf("Parse(%q) = %s, %v; want %s", tc.text, got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Parse(%q) = %s, %v; want an error saying %q", tc.text, got, err, tc.why)
			}
			if _, ok := Extract(tc.text); ok {
				t.Error("Extract accepted it")
			}
		})
	}
}
