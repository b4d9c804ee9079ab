package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/creatorstrategy/css/shared/apperr"
)

// maxDepth bounds the nesting of a request body, so a hostile body cannot make decoding or validation
// recurse deeply. No request schema comes close to it.
const maxDepth = 64

// ValidateBody checks a JSON body against the operation's request body schema. raw is the whole body
// (already size-limited by the caller). Empty raw: ok when the body is optional (returns nil), else error.
// It returns the decoded value with schema defaults applied (objects as map[string]any, numbers as
// json.Number), which Bind fills the operation's input type with. An operation without a request body
// ignores raw.
func (op *Operation) ValidateBody(raw []byte) (any, error) {
	if !op.HasBody {
		return nil, nil
	}
	if len(raw) == 0 {
		if op.BodyRequired {
			return nil, apperr.Invalid("body", "is required")
		}
		return nil, nil
	}
	v, err := op.validator()
	if err != nil {
		return nil, err
	}
	value, verr := decodeBody(raw)
	if verr != nil {
		return nil, verr
	}
	if v.body != nil {
		if verr := v.body.validate(value, nil); verr != nil {
			return nil, verr
		}
		v.body.normalize(value)
	}
	return value, nil
}

// decodeBody decodes exactly one JSON value, nested at most maxDepth deep, strictly: a member name given
// twice in one object, invalid UTF-8 and escapes of unpaired surrogates ("\ud800") are refused, so what is
// validated is exactly what the client sent (a lenient decoder keeps the last duplicate and turns bad
// bytes into U+FFFD).
func decodeBody(raw []byte) (any, *apperr.Error) {
	if err := checkDepth(raw); err != nil {
		return nil, err
	}
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	value, err := readValue(d, nil)
	if err != nil {
		if len(bytes.TrimLeft(raw, " \t\r\n")) == 0 {
			return nil, malformed(int64(len(raw)))
		}
		return nil, err
	}
	rest := bytes.TrimLeft(raw[d.InputOffset():], " \t\r\n")
	if len(rest) > 0 {
		return nil, malformed(int64(len(raw) - len(rest)))
	}
	return value, nil
}

// readValue reads the next value from d as a decoded JSON value (map[string]any, []any, string,
// json.Number, bool or nil). at is where it stands in the body, for errors.
func readValue(d *jsontext.Decoder, at *loc) (any, *apperr.Error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, decodeError(err, at, d.InputOffset())
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '{':
		m := map[string]any{}
		for d.PeekKind() != '}' {
			name, err := d.ReadToken()
			if err != nil {
				return nil, decodeError(err, at, d.InputOffset())
			}
			key := name.String()
			v, verr := readValue(d, at.key(key))
			if verr != nil {
				return nil, verr
			}
			m[key] = v
		}
		if _, err := d.ReadToken(); err != nil {
			return nil, decodeError(err, at, d.InputOffset())
		}
		return m, nil
	case '[':
		list := []any{}
		for i := 0; d.PeekKind() != ']'; i++ {
			v, verr := readValue(d, at.at(i))
			if verr != nil {
				return nil, verr
			}
			list = append(list, v)
		}
		if _, err := d.ReadToken(); err != nil {
			return nil, decodeError(err, at, d.InputOffset())
		}
		return list, nil
	}
	return nil, malformed(d.InputOffset())
}

// decodeError turns a decoder error met at `at` into the error the client gets: a duplicate member and bad
// text name their field; anything else is malformed JSON at an offset.
func decodeError(err error, at *loc, offset int64) *apperr.Error {
	var syntax *jsontext.SyntacticError
	if !errors.As(err, &syntax) {
		return malformed(offset) // io.ErrUnexpectedEOF: the body ends inside a value
	}
	switch {
	case errors.Is(syntax.Err, jsontext.ErrDuplicateName):
		return invalid(at.key(syntax.JSONPointer.LastToken()), "is given more than once")
	case strings.Contains(syntax.Err.Error(), "invalid UTF-8"), strings.Contains(syntax.Err.Error(), "surrogate"):
		return invalid(at, "must be valid UTF-8 text (no invalid bytes, no unpaired surrogate escapes)")
	}
	return malformed(syntax.ByteOffset)
}

func malformed(offset int64) *apperr.Error {
	return apperr.Invalid("body", "malformed JSON at offset %d", offset)
}

// checkDepth rejects a body whose objects and arrays nest deeper than maxDepth, before any decoding.
func checkDepth(raw []byte) *apperr.Error {
	if !WithinDepth(raw, maxDepth) {
		return apperr.Invalid("body", "must not nest deeper than %d levels", maxDepth)
	}
	return nil
}

// WithinDepth reports whether data nests objects and arrays at most max levels deep, reading it once
// without decoding it (the MCP endpoint holds messages to the SDK's bound with it).
func WithinDepth(data []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			// An if chain, not a tagless switch: see validateString.
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}
