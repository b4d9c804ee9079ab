package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
)

// maxDepth bounds the nesting of a request body, so a hostile body cannot make decoding or validation
// recurse deeply. No request schema comes close to it.
const maxDepth = 64

// ValidateBody checks a JSON body against the operation's request body schema. raw is the whole body
// (already size-limited by the caller). Empty raw: ok when the body is optional (returns nil), else error.
// It returns the decoded value with schema defaults applied (objects as map[string]any, numbers as
// json.Number), which callers convert into their structs with Decode. An operation without a request body
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
		v.body.applyDefaults(value)
	}
	return value, nil
}

// decodeBody decodes exactly one JSON value, nested at most maxDepth deep.
func decodeBody(raw []byte) (any, *apperr.Error) {
	if err := checkDepth(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		offset := int64(len(raw))
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			offset = syntax.Offset
		}
		return nil, malformed(offset)
	}
	end := dec.InputOffset()
	rest := bytes.TrimLeft(raw[end:], " \t\r\n")
	if len(rest) > 0 {
		return nil, malformed(int64(len(raw) - len(rest)))
	}
	return value, nil
}

func malformed(offset int64) *apperr.Error {
	return apperr.Invalid("body", "malformed JSON at offset %d", offset)
}

// checkDepth rejects a body whose objects and arrays nest deeper than maxDepth, before any decoding.
func checkDepth(raw []byte) *apperr.Error {
	depth := 0
	inString, escaped := false, false
	for _, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				return apperr.Invalid("body", "must not nest deeper than %d levels", maxDepth)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// Decode converts a validated body value into dst (a pointer to a struct with json tags). A number too
// large for its Go field is a validation error naming the field.
func Decode(v any, dst any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("api: encode body: %w", err)
	}
	if err := json.Unmarshal(data, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			field := typeErr.Field
			if field == "" {
				field = "body"
			}
			if strings.HasPrefix(typeErr.Value, "number") && isNumericKind(typeErr.Type) {
				return apperr.Invalid(field, "is out of range")
			}
			return apperr.Invalid(field, "has the wrong type")
		}
		return fmt.Errorf("api: decode body: %w", err)
	}
	return nil
}

func isNumericKind(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
