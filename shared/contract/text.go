package contract

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The x-css-text extension marks a string schema as free text the service stores and shows again (a title,
// a note, a profile field): "line" for one line, "long" for text that may hold tabs and line breaks. The
// validator refuses, beyond the schema, what would let stored text deceive a reader or a terminal: C0 and
// C1 control characters (a long text keeps tab, newline and the CR of a CRLF line break), the bidirectional
// overrides and isolates (U+202A-U+202E, U+2066-U+2069), noncharacters (U+FDD0-U+FDEF and every U+xFFFE,
// U+xFFFF), and a value that holds nothing but spaces and invisible characters (a lone U+200B). The empty
// string is left to minLength: where the schema allows it, it means "none".
const (
	textLine = "line"
	textLong = "long"
)

// plainTextPrefix begins every refusal of the x-css-text rule.
const plainTextPrefix = "must be plain text"

// checkText returns what is wrong with v as free text of the given kind, or "" when v is clean.
func checkText(kind, v string) string {
	visible := false
	for i, r := range v {
		switch {
		case r == '\t' || r == '\n':
			if kind != textLong {
				return fmt.Sprintf("%s on one line, without the control character %s", plainTextPrefix, codePoint(r))
			}
		case r == '\r':
			if kind != textLong {
				return fmt.Sprintf("%s on one line, without the control character %s", plainTextPrefix, codePoint(r))
			}
			if !strings.HasPrefix(v[i+1:], "\n") {
				return fmt.Sprintf("%s, without the control character %s outside a CRLF line break", plainTextPrefix, codePoint(r))
			}
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			return fmt.Sprintf("%s, without the control character %s", plainTextPrefix, codePoint(r))
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("%s, without the bidirectional control %s", plainTextPrefix, codePoint(r))
		case r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe:
			return fmt.Sprintf("%s, without the noncharacter %s", plainTextPrefix, codePoint(r))
		case r == utf8.RuneError:
			// Invalid UTF-8 is refused by the decoder; a literal U+FFFD is a visible character.
			visible = true
		case !invisible(r):
			visible = true
		}
	}
	if v != "" && !visible {
		return plainTextPrefix + ", not only spaces or invisible characters"
	}
	return ""
}

// invisible reports whether r shows nothing on its own: white space, the zero-width characters, the word
// joiner, the byte order mark and the other format characters.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || r == 0x2800 || r == 0x3164 || r == 0x115f || r == 0x1160 || r == 0xffa0
}

func codePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }
