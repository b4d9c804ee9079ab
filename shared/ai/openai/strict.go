package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// OpenAI's strict structured outputs accept a subset of JSON Schema: every object lists all its
// properties in required and says additionalProperties: false, so an optional member has to be made
// nullable instead; and only some keywords are allowed. toStrict rewrites a schema into that form and
// returns a pruner that takes the nulls it introduced back out of the answer, so the caller's validator
// sees the shape its own schema describes.

// strictKeywords are the keywords kept in strict form; the others are dropped (the caller validates the
// answer against its own schema afterwards, and repairs it).
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "anyOf": true, "description": true, "title": true,
	"pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true,
}

// strictFormats are the string formats strict mode knows; another format is dropped.
var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true, "hostname": true,
	"ipv4": true, "ipv6": true, "uuid": true,
}

// notStrict names keywords strict mode cannot express: a schema with one is sent as it is, not strict.
var notStrict = []string{"$ref", "$defs", "definitions", "allOf", "not", "if", "then", "else",
	"patternProperties", "dependentSchemas", "dependentRequired", "unevaluatedProperties", "prefixItems"}

// pruner removes, from an answer, the nulls of optional members that toStrict made nullable.
type pruner struct {
	drop  map[string]bool // members made nullable: a null there means "absent"
	props map[string]*pruner
	items *pruner
	anyOf []*pruner
	keys  []map[string]bool // anyOf branches' property names, to pick the branch an object belongs to
}

func (p *pruner) empty() bool {
	if p == nil {
		return true
	}
	if len(p.drop) > 0 || !p.items.empty() {
		return false
	}
	for _, c := range p.props {
		if !c.empty() {
			return false
		}
	}
	for _, c := range p.anyOf {
		if !c.empty() {
			return false
		}
	}
	return true
}

// toStrict returns the strict form of schema and its pruner, or an error naming what strict mode cannot
// express (then the schema is sent as it is, with strict off). The root must be an object.
func toStrict(schema map[string]any) (map[string]any, *pruner, error) {
	if !isObject(schema) {
		return nil, nil, errors.New("the root is not an object")
	}
	return convert(schema)
}

func convert(s map[string]any) (map[string]any, *pruner, error) {
	for _, k := range notStrict {
		if _, has := s[k]; has {
			return nil, nil, fmt.Errorf("%s is not allowed", k)
		}
	}
	out := map[string]any{}
	p := &pruner{}
	var hints []string
	for k, v := range s {
		switch {
		case k == "oneOf": // strict mode has anyOf only; the caller's validator still holds oneOf
			k = "anyOf"
		case k == "minLength":
			hints = append(hints, fmt.Sprintf("at least %v characters", v))
			continue
		case k == "maxLength":
			hints = append(hints, fmt.Sprintf("at most %v characters", v))
			continue
		case k == "format":
			if f, _ := v.(string); !strictFormats[f] {
				hints = append(hints, fmt.Sprintf("format %v", v))
				continue
			}
		case !strictKeywords[k]:
			continue
		}
		out[k] = v
	}
	// A dropped bound still guides the model when it is said in words.
	if len(hints) > 0 {
		slices.Sort(hints)
		d, _ := out["description"].(string)
		out["description"] = strings.TrimSpace(d + " (" + strings.Join(hints, "; ") + ")")
	}
	if branches, has := out["anyOf"]; has {
		list, isList := branches.([]any)
		if !isList {
			return nil, nil, errors.New("anyOf is not a list")
		}
		conv := make([]any, len(list))
		for i, b := range list {
			bm, isMap := b.(map[string]any)
			if !isMap {
				return nil, nil, errors.New("an anyOf branch is not a schema")
			}
			cs, bp, err := convert(bm)
			if err != nil {
				return nil, nil, err
			}
			conv[i] = cs
			p.anyOf = append(p.anyOf, bp)
			p.keys = append(p.keys, keySet(bm))
		}
		out["anyOf"] = conv
	}
	if items, has := out["items"]; has {
		im, isMap := items.(map[string]any)
		if !isMap {
			return nil, nil, errors.New("items is not a schema")
		}
		cs, ip, err := convert(im)
		if err != nil {
			return nil, nil, err
		}
		out["items"], p.items = cs, ip
	}
	if isObject(s) {
		if err := convertObject(s, out, p); err != nil {
			return nil, nil, err
		}
	}
	return out, p, nil
}

// convertObject lists every property as required, making the optional ones nullable (and noting them in
// p), and closes the object.
func convertObject(s, out map[string]any, p *pruner) error {
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		return errors.New("an object without properties (a free-form map)")
	}
	if ap, has := s["additionalProperties"]; has && ap != false {
		return errors.New("additionalProperties other than false")
	}
	required := map[string]bool{}
	if req, isList := s["required"].([]any); isList {
		for _, r := range req {
			if name, isStr := r.(string); isStr {
				required[name] = true
			}
		}
	}
	conv := make(map[string]any, len(props))
	for name, sub := range props {
		sm, isMap := sub.(map[string]any)
		if !isMap {
			return fmt.Errorf("property %q is not a schema", name)
		}
		cs, cp, err := convert(sm)
		if err != nil {
			return err
		}
		if !required[name] && !nullable(sm) {
			cs = withNull(cs)
			if p.drop == nil {
				p.drop = map[string]bool{}
			}
			p.drop[name] = true
		}
		conv[name] = cs
		if !cp.empty() {
			if p.props == nil {
				p.props = map[string]*pruner{}
			}
			p.props[name] = cp
		}
	}
	out["properties"] = conv
	out["required"] = toAny(slices.Sorted(maps.Keys(props)))
	out["additionalProperties"] = false
	return nil
}

func keySet(s map[string]any) map[string]bool {
	props, _ := s["properties"].(map[string]any)
	set := make(map[string]bool, len(props))
	for k := range props {
		set[k] = true
	}
	return set
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// isObject: the schema describes an object.
func isObject(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, has := s["properties"]
	return has
}

// nullable: the schema already admits null.
func nullable(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return true
		}
	case []any:
		if slices.Contains(t, any("null")) {
			return true
		}
	}
	if e, has := s["enum"].([]any); has && slices.Contains(e, nil) {
		return true
	}
	if c, has := s["const"]; has && c == nil {
		return true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if bs, has := s[k].([]any); has {
			for _, b := range bs {
				if bm, isMap := b.(map[string]any); isMap && nullable(bm) {
					return true
				}
			}
		}
	}
	return false
}

// withNull makes a (converted) schema admit null too.
func withNull(s map[string]any) map[string]any {
	t, hasType := s["type"]
	_, hasAnyOf := s["anyOf"]
	_, hasConst := s["const"]
	_, hasEnum := s["enum"]
	if hasAnyOf || hasConst || (!hasType && !hasEnum) {
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	switch t := t.(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		s["type"] = append(slices.Clone(t), "null")
	}
	if e, isList := s["enum"].([]any); isList {
		s["enum"] = append(slices.Clone(e), nil)
	}
	return s
}

// prune removes the nulls p knows of from v (a decoded answer), in place.
func (p *pruner) prune(v any) {
	if p == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for name := range p.drop {
			if val, has := x[name]; has && val == nil {
				delete(x, name)
			}
		}
		for name, c := range p.props {
			if val, has := x[name]; has {
				c.prune(val)
			}
		}
		if len(p.anyOf) > 0 {
			if b := p.branch(x); b != nil {
				b.prune(x)
			}
		}
	case []any:
		for _, item := range x {
			p.items.prune(item)
		}
	}
}

// branch picks the anyOf branch an object belongs to: the first whose properties include all its keys.
func (p *pruner) branch(x map[string]any) *pruner {
	for i, keys := range p.keys {
		if len(keys) == 0 {
			continue
		}
		all := true
		for k := range x {
			if !keys[k] {
				all = false
				break
			}
		}
		if all {
			return p.anyOf[i]
		}
	}
	return nil
}

// pruneJSON applies p to a JSON answer. An answer that does not decode is returned as it is: the caller
// judges it.
func (p *pruner) pruneJSON(raw json.RawMessage) json.RawMessage {
	if p.empty() {
		return raw
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	p.prune(v)
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// grammarDropped are the keywords left out of a schema a server compiles into a decoding grammar
// (json_object_schema: llama-cpp-python). Length bounds become one grammar rule per character, and a
// string of up to 1,000 characters made llama-cpp-python's grammar parser give up and its server exit
// ("number of rules that are going to be repeated ... exceeds sane defaults"); patterns and formats are
// not all expressible. The prompt still shows the whole schema, and the caller validates the answer
// against it.
var grammarDropped = map[string]bool{"minLength": true, "maxLength": true, "pattern": true, "format": true, "maxItems": true}

// maxGrammarItems bounds the minItems kept: each required item is a copy of the item's rules.
const maxGrammarItems = 10

// forGrammar returns a copy of a decoded schema without the keywords a grammar cannot afford.
func forGrammar(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if grammarDropped[k] {
				continue
			}
			if k == "minItems" {
				if n, ok := e.(float64); ok && n > maxGrammarItems {
					continue
				}
			}
			if k == "properties" || k == "$defs" || k == "definitions" {
				// Property names are not keywords: keep every one, whatever it is called.
				props, _ := e.(map[string]any)
				kept := make(map[string]any, len(props))
				for name, s := range props {
					kept[name] = forGrammar(s)
				}
				out[k] = kept
				continue
			}
			out[k] = forGrammar(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = forGrammar(e)
		}
		return out
	}
	return v
}
