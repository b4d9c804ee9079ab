package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract/internal/decode"
)

// Arguments presents an operation as a flat object of named arguments, its parameters and its body's
// fields side by side (decision 36: how an MCP tool mirrors a REST operation). The same value gives the
// arguments' JSON Schema and turns a call's arguments back into the request the operation validates, so
// the two cannot drift.
type Arguments struct {
	op     *Operation
	params []argParam
	// schema is made on first use: it inlines component schemas (all of schemas.json is read for the
	// first), a millisecond a cold start answering a tool call through Request does not need.
	schema func() (map[string]any, error)
}

type argParam struct {
	arg   string
	array bool // the parameter's schema is an array: the argument may be a JSON array
	raw   rawParam
}

// Arguments maps op's parameters and body fields to arguments. Path and query parameters keep their
// names; header parameters are hidden when listed in hide (case-insensitive), and otherwise take their
// name in lower camel case (Idempotency-Key becomes idempotencyKey). A body field that a parameter's
// argument name would shadow is an error of Schema.
func (op *Operation) Arguments(hide ...string) *Arguments {
	a := &Arguments{op: op}
	for _, p := range op.rawParams() {
		if p.In == "header" && slices.ContainsFunc(hide, func(h string) bool { return strings.EqualFold(h, p.Name) }) {
			continue
		}
		arg := p.Name
		if p.In == "header" {
			arg = lowerCamel(p.Name)
		}
		a.params = append(a.params, argParam{arg: arg, array: op.isArray(p.Schema), raw: p})
	}
	a.schema = sync.OnceValues(a.makeSchema)
	return a
}

// isArray reports whether a parameter's schema (given inline or as a component) is an array.
func (op *Operation) isArray(schema json.RawMessage) bool {
	var s struct {
		Ref  string `json:"$ref"`
		Type string `json:"type"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	if s.Ref != "" {
		target, err := decode.Lookup(s.Ref, "#/components/schemas/", op.src.comps.Schemas)
		if err != nil || json.Unmarshal([]byte(target), &s) != nil {
			return false
		}
	}
	return s.Type == "array"
}

// makeSchema is the arguments' JSON Schema: the parameters' schemas and the body's fields as properties.
func (a *Arguments) makeSchema() (map[string]any, error) {
	op := a.op
	props := map[string]any{}
	var required []any
	for _, ap := range a.params {
		p := ap.raw
		s, err := inlineSchema(p.Schema)
		if err != nil {
			return nil, fmt.Errorf("contract: %s parameter %s: %w", op.ID, p.Name, err)
		}
		if p.Description != "" {
			s["description"] = strings.TrimSpace(p.Description)
		}
		// The served document's rule patterns (internal/docgen/rules.go) are for REST clients; arguments
		// follow the runtime contract, which leaves those rules to the validator.
		if _, text := s["x-css-text"]; text || s["format"] == "date" {
			delete(s, "pattern")
		}
		props[ap.arg] = s
		if p.Required {
			required = append(required, ap.arg)
		}
	}
	out := map[string]any{"type": "object"}
	if op.HasBody {
		body, err := inlineSchema(json.RawMessage(op.src.bodySchema))
		if err != nil {
			return nil, fmt.Errorf("contract: %s body: %w", op.ID, err)
		}
		bodyProps, _ := body["properties"].(map[string]any)
		for name, s := range bodyProps {
			if _, taken := props[name]; taken {
				return nil, fmt.Errorf("contract: %s: body field %q has the name of a parameter", op.ID, name)
			}
			props[name] = s
		}
		if r, ok := body["required"].([]any); ok {
			required = append(required, r...)
		}
		// The body's own rules over its fields (anyOf of required sets, additionalProperties) hold for the
		// arguments as they are.
		for _, k := range []string{"anyOf", "oneOf", "allOf", "additionalProperties", "description"} {
			if v, ok := body[k]; ok {
				out[k] = v
			}
		}
	}
	out["properties"] = props
	if len(required) > 0 {
		out["required"] = required
	}
	if _, ok := out["additionalProperties"]; !ok && !op.HasBody {
		out["additionalProperties"] = false
	}
	return out, nil
}

// Schema returns the arguments' JSON Schema (draft 2020-12, every $ref inlined), made on first use. The
// caller may not change it.
func (a *Arguments) Schema() (map[string]any, error) { return a.schema() }

// Request turns a call's arguments (a JSON object) into the raw request of the operation: parameters as
// the strings they would be in a URL or a header, the remaining members as the JSON body. What it
// returns goes through the operation's own validation (Decode or ValidateParams and ValidateBody), so an
// argument is checked exactly as the REST field is. Arguments of an operation without a body that name
// no parameter are refused, naming the argument.
func (a *Arguments) Request(args json.RawMessage) (RawRequest, error) {
	raw := RawRequest{Path: map[string]string{}, Query: url.Values{}, Header: http.Header{}}
	var members map[string]json.RawMessage
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if err := json.Unmarshal(trimmed, &members); err != nil {
			return RawRequest{}, apperr.Invalid("arguments", "must be a JSON object")
		}
	}
	for _, p := range a.params {
		v, ok := members[p.arg]
		if !ok {
			continue
		}
		delete(members, p.arg)
		if trimmed := bytes.TrimSpace(v); !p.array && len(trimmed) > 0 && trimmed[0] == '[' {
			// A URL carries an array as repeated values; an argument that is not one must not become one.
			return RawRequest{}, apperr.Invalid(p.arg, "must be a string, a number or a boolean")
		}
		values, err := paramStrings(v)
		if err != nil {
			return RawRequest{}, apperr.Invalid(p.arg, "%s", err)
		}
		if values == nil { // null: as if not given
			continue
		}
		switch p.raw.In {
		case "path":
			raw.Path[p.raw.Name] = values[0]
			if len(values) > 1 {
				return RawRequest{}, apperr.Invalid(p.arg, "must be a single value")
			}
		case "query":
			raw.Query[p.raw.Name] = values
		case "header":
			if len(values) > 1 {
				return RawRequest{}, apperr.Invalid(p.arg, "must be a single value")
			}
			raw.Header.Set(p.raw.Name, values[0])
		}
	}
	if !a.op.HasBody {
		if len(members) > 0 {
			names := slices.Sorted(maps.Keys(members))
			return RawRequest{}, apperr.Invalid(names[0], "is not an argument of this operation")
		}
		return raw, nil
	}
	if members == nil {
		members = map[string]json.RawMessage{}
	}
	body, err := json.Marshal(members)
	if err != nil {
		return RawRequest{}, apperr.Invalid("arguments", "%v", err)
	}
	raw.Body = body
	return raw, nil
}

// ArgumentName is the argument a parameter or field named in an error of the operation goes by ("" when
// name is not one of the renamed header parameters).
func (a *Arguments) ArgumentName(name string) string {
	for _, p := range a.params {
		if p.raw.In == "header" && strings.EqualFold(p.raw.Name, name) {
			return p.arg
		}
	}
	return ""
}

// paramStrings renders a JSON argument as the text of a URL or header value: a string as it is, a number
// or a boolean as written, an array as one value per element; nil for null.
func paramStrings(v json.RawMessage) ([]string, error) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || bytes.Equal(v, []byte("null")):
		return nil, nil
	case v[0] == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		return []string{s}, nil
	case v[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil, err
		}
		out := make([]string, 0, len(items))
		for _, item := range items {
			if t := bytes.TrimSpace(item); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
				return nil, fmt.Errorf("must be an array of strings, numbers or booleans")
			}
			s, err := paramStrings(item)
			if err != nil || len(s) != 1 {
				return nil, fmt.Errorf("must be an array of strings, numbers or booleans")
			}
			out = append(out, s[0])
		}
		if len(out) == 0 {
			return nil, nil
		}
		return out, nil
	case v[0] == '{':
		return nil, fmt.Errorf("must be a string, a number or a boolean")
	default: // a number, true or false: its JSON text is its URL text
		if _, err := strconv.ParseFloat(string(v), 64); err != nil && string(v) != "true" && string(v) != "false" {
			return nil, fmt.Errorf("is not a JSON value")
		}
		return []string{string(v)}, nil
	}
}

// rawParam is a parameter as the document declares it, references resolved.
type rawParam struct {
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Required    bool            `json:"required"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// rawParams lists the operation's parameters in validation order (path, query, header), operation
// parameters overriding path-item ones of the same name and location.
func (op *Operation) rawParams() []rawParam {
	var declared []rawParam
	seen := map[string]int{}
	for _, list := range [][]string{op.src.pathParams, op.src.opParams} {
		for _, raw := range list {
			var p rawParam
			var ref struct {
				Ref string `json:"$ref"`
			}
			if json.Unmarshal([]byte(raw), &ref) == nil && ref.Ref != "" {
				target, err := decode.Lookup(ref.Ref, "#/components/parameters/", op.src.comps.Parameters)
				if err != nil {
					continue // the validator refuses the document at its first use
				}
				raw = target
			}
			if json.Unmarshal([]byte(raw), &p) != nil {
				continue
			}
			key := p.In + " " + strings.ToLower(p.Name)
			if i, ok := seen[key]; ok {
				declared[i] = p
				continue
			}
			seen[key] = len(declared)
			declared = append(declared, p)
		}
	}
	var out []rawParam
	for _, in := range []string{"path", "query", "header"} {
		for _, p := range declared {
			if p.In == in {
				out = append(out, p)
			}
		}
	}
	return out
}

// inlineSchema returns a schema of the document with its references inlined (as JSONSchema does).
func inlineSchema(raw json.RawMessage) (map[string]any, error) {
	comps, err := loadRawSchemas()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	out, err := inline(comps, v, nil)
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	return m, nil
}

// lowerCamel turns a header name (Idempotency-Key) into an argument name (idempotencyKey).
func lowerCamel(header string) string {
	var b strings.Builder
	for i, part := range strings.FieldsFunc(header, func(r rune) bool { return r == '-' || r == '_' }) {
		rs := []rune(strings.ToLower(part))
		if i > 0 && len(rs) > 0 {
			rs[0] = unicode.ToUpper(rs[0])
		}
		b.WriteString(string(rs))
	}
	return b.String()
}
