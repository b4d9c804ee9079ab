// Package textjson reads the JSON value of a model's text answer: models asked for JSON without a
// constrained format (Bedrock answering text instead of using the tool, json_object or prompt mode on a
// local server) sometimes wrap it in a Markdown fence. Only an answer that is one JSON object or array,
// or one fence holding one, is accepted: a value picked out of prose (the first "{…}" that parses) was
// as often a fragment of the answer as the answer, and passed checks as an empty or partial success.
package textjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Parse returns the JSON object or array text holds: the whole text, or the body of a Markdown fence
// that is the whole text. Otherwise the error says why it does not parse, for the model's repair turn.
func Parse(text string) (json.RawMessage, error) {
	t := strings.TrimSpace(text)
	if inner, ok := fenced(t); ok {
		t = strings.TrimSpace(inner)
	}
	if t == "" {
		return nil, errors.New("the answer is empty")
	}
	if t[0] != '{' && t[0] != '[' {
		return nil, fmt.Errorf("the answer does not start with a JSON object: it starts with %q", firstRunes(t, 20))
	}
	v, err := decodeOne(t)
	if err != nil {
		// Raw line breaks and tabs inside strings: JSON forbids them, but grammar-constrained servers
		// (llama-cpp-python's JSON grammar) let a model write them. Escaped, the value is what it meant.
		if fixed, changed := escapeControls(t); changed {
			if v, ferr := decodeOne(fixed); ferr == nil {
				return v, nil
			}
		}
		return nil, err
	}
	return v, nil
}

func decodeOne(t string) (json.RawMessage, error) {
	var v json.RawMessage
	dec := json.NewDecoder(strings.NewReader(t))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the answer is not valid JSON: %w", err)
	}
	if dec.InputOffset() != int64(len(t)) {
		return nil, fmt.Errorf("the answer has text after its JSON value, at byte %d", dec.InputOffset())
	}
	return json.RawMessage(bytes.TrimSpace([]byte(t))), nil
}

// escapeControls escapes the control characters inside the string literals of t, and says whether
// there were any.
func escapeControls(t string) (string, bool) {
	var b strings.Builder
	inString, escaped, changed := false, false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case !inString:
			inString = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
			changed = true
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), changed
}

// Extract is Parse without the reason.
func Extract(text string) (json.RawMessage, bool) {
	v, err := Parse(text)
	return v, err == nil
}

// fenced returns the body of a Markdown code fence (```json … ``` or ``` … ```) that is all of t.
func fenced(t string) (string, bool) {
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return "", false
	}
	rest := t[3 : len(t)-3]
	if strings.Contains(rest, "```") {
		return "", false
	}
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[") {
		rest = rest[nl+1:] // the info string ("json")
	}
	return rest, true
}

func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}
