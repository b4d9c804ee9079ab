package queue

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The rules of a message, SQS's, enforced by every adapter so that a message the local stack accepts is
// one SQS accepts too.
const (
	// MaxMessageSize bounds a message: its body plus each attribute's name, type ("String") and value.
	MaxMessageSize = 256 * 1024
	// MaxAttributes is the most attributes a message may carry.
	MaxAttributes = 10
	// MaxAttributeNameLen bounds an attribute's name.
	MaxAttributeNameLen = 256
)

// attributeType is the only SQS data type the port uses; SQS counts it in the message size.
const attributeType = "String"

// ErrInvalidMessage is wrapped by the error of a Send refused because a message breaks a rule; nothing of
// that Send was sent.
var ErrInvalidMessage = errors.New("queue: invalid message")

// Size is the size SQS counts for m against MaxMessageSize.
func Size(m Outgoing) int {
	n := len(m.Body)
	for k, v := range m.Attributes {
		n += len(k) + len(attributeType) + len(v)
	}
	return n
}

// Check returns an error wrapping ErrInvalidMessage that names the first message breaking a rule: an
// empty body or attribute value, text SQS refuses (invalid UTF-8, control characters other than tab, LF
// and CR, U+FFFE and U+FFFF), a delay outside 0..MaxDelay, more than MaxAttributes attributes, a bad
// attribute name, or more than MaxMessageSize in all.
func Check(msgs ...Outgoing) error {
	for i, m := range msgs {
		if why := check(m); why != "" {
			return fmt.Errorf("%w: message %d: %s", ErrInvalidMessage, i, why)
		}
	}
	return nil
}

// check returns why m breaks a rule, or "".
func check(m Outgoing) string {
	if len(m.Body) == 0 {
		return "empty body"
	}
	if !validText(string(m.Body)) {
		return "body is not text SQS accepts (valid UTF-8 without control characters other than tab, LF, CR)"
	}
	if m.Delay < 0 || m.Delay > MaxDelay {
		return fmt.Sprintf("delay %s outside 0..%s", m.Delay, MaxDelay)
	}
	if len(m.Attributes) > MaxAttributes {
		return fmt.Sprintf("%d attributes, at most %d", len(m.Attributes), MaxAttributes)
	}
	for k, v := range m.Attributes {
		if msg := checkAttributeName(k); msg != "" {
			return fmt.Sprintf("attribute name %q: %s", truncate(k), msg)
		}
		if v == "" {
			return fmt.Sprintf("attribute %q: empty value", k)
		}
		if !validText(v) {
			return fmt.Sprintf("attribute %q: value is not text SQS accepts", k)
		}
	}
	if n := Size(m); n > MaxMessageSize {
		return fmt.Sprintf("%d bytes with its attributes, over the %d-byte limit", n, MaxMessageSize)
	}
	return ""
}

func checkAttributeName(k string) string {
	switch {
	case k == "":
		return "empty"
	case len(k) > MaxAttributeNameLen:
		return fmt.Sprintf("longer than %d", MaxAttributeNameLen)
	case strings.HasPrefix(k, ".") || strings.HasSuffix(k, ".") || strings.Contains(k, ".."):
		return "starts or ends with a period, or has two in a row"
	}
	lower := strings.ToLower(k)
	if strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon.") {
		return "the AWS. and Amazon. prefixes are reserved"
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return "only letters, digits, _, - and . are allowed"
		}
	}
	return ""
}

// validText reports whether s holds only the characters SQS allows in a body or attribute value:
// #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func validText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20, r >= 0xD800 && r < 0xE000, r == 0xFFFE, r == 0xFFFF:
			return false
		}
	}
	return true
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
