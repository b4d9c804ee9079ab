// Package textjson finds the JSON value in a model's text answer: models asked for JSON without a
// constrained format (Bedrock answering text instead of using the tool, json_object mode on a local
// server) often wrap it in a Markdown fence or a sentence.
package textjson

import (
	"bytes"
	"encoding/json"
	"strings"
)

// maxStarts bounds how many opening brackets Extract tries, so a long answer full of braces costs little.
const maxStarts = 32

// Extract returns the first JSON object or array in text: the whole text when it is one, else the
// content of the first ``` fence when that is one, else the first object or array that decodes, starting
// at a '{' or '['. ok is false when there is none.
func Extract(text string) (v json.RawMessage, ok bool) {
	if v, ok := whole(text); ok {
		return v, true
	}
	if inner, found := fenced(text); found {
		if v, ok := whole(inner); ok {
			return v, true
		}
	}
	tries := 0
	for i := 0; i < len(text) && tries < maxStarts; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var raw json.RawMessage
		if dec.Decode(&raw) == nil {
			return raw, true
		}
	}
	return nil, false
}

// whole reports text, trimmed, when it is exactly one JSON object or array.
func whole(text string) (json.RawMessage, bool) {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') || !json.Valid(t) {
		return nil, false
	}
	return json.RawMessage(t), true
}

// fenced returns the body of the first Markdown code fence (```json … ``` or ``` … ```).
func fenced(text string) (string, bool) {
	start := strings.Index(text, "```")
	if start < 0 {
		return "", false
	}
	rest := text[start+3:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[") {
		rest = rest[nl+1:] // the info string ("json")
	}
	end := strings.Index(rest, "```")
	if end < 0 {
		return "", false
	}
	return rest[:end], true
}
