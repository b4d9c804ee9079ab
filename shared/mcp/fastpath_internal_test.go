package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString: whatever the text, the fast path's string is JSON that decodes to what
// encoding/json's own encoding decodes to (the text itself when it is valid UTF-8).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `{"a":"b\"c"}`, "tab\tnew\nline\rcr", "\x00\x1f\x7f", "<b>&</b>",
		"\u2028\u2029", "é ü 漢字 🎬", "\xff\xfe bad", `back\slash`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString([]byte("x"), s)
		if got[0] != 'x' {
			t.Fatal("appendString overwrote what b held")
		}
		var decoded string
		if err := json.Unmarshal(got[1:], &decoded); err != nil {
			t.Fatalf("%q: not a JSON string: %s (%v)", s, got[1:], err)
		}
		std, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if decoded != want {
			t.Fatalf("%q decodes to %q, encoding/json's to %q", s, decoded, want)
		}
	})
}
