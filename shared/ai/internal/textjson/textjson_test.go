package textjson

import "testing"

func TestExtract(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		ok               bool
	}{
		{"object", `{"a":1}`, `{"a":1}`, true},
		{"spaces", "\n  {\"a\": [1, 2]}\n", `{"a": [1, 2]}`, true},
		{"array", `[{"a":1}]`, `[{"a":1}]`, true},
		{"fence with language", "Here you go:\n```json\n{\"titles\": [\"x\"]}\n```\nEnjoy!", `{"titles": ["x"]}`, true},
		{"fence without language", "```\n{\"a\":true}\n```", `{"a":true}`, true},
		{"fence on one line", "```{\"a\":true}```", `{"a":true}`, true},
		{"sentence around", `Sure! {"a":"b {c}"} Hope it helps.`, `{"a":"b {c}"}`, true},
		{"stray brace first", `Use {braces} like this: {"a":1}`, `{"a":1}`, true},
		{"broken fence falls back to scan", "```json\n{\"a\":1} trailing\n```", `{"a":1}`, true},
		{"scalar is not enough", `42`, ``, false},
		{"string is not enough", `"hello"`, ``, false},
		{"prose", `I cannot help with that.`, ``, false},
		{"truncated", `{"a": [1, 2`, ``, false},
		{"empty", ``, ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Extract(tc.text)
			if ok != tc.ok || string(got) != tc.want {
				t.Fatalf("Extract(%q) = %s, %v; want %s, %v", tc.text, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// A long answer full of unmatched braces gives up after maxStarts tries instead of scanning each.
func TestExtractBounded(t *testing.T) {
	text := ""
	for range maxStarts {
		text += "{ "
	}
	text += `{"a":1}`
	if _, ok := Extract(text); ok {
		t.Fatal("found a value past maxStarts opening brackets")
	}
}
