package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/creatorstrategy/css/shared/contract/internal/decode"
)

// schema is the compiled form of one Schema Object of the request side: only the keywords the validator
// enforces. A keyword outside the supported subset fails compilation, so the document cannot promise a
// check the service does not make.
type schema struct {
	typ           string // "" accepts every type
	unconstrained bool   // no keyword constrains the value: everything but null passes
	nullable      bool
	readOnly      bool

	enum       []any // string, float64 or bool
	hasDefault bool
	def        any // decoded like a body: objects map[string]any, numbers json.Number

	minLength, maxLength int // -1: no bound
	pattern              *regexp.Regexp
	format               string
	text                 string // x-css-text: "line", "long" or "" (see text.go)

	hasMin, hasMax   bool
	minimum, maximum float64
	exclMin, exclMax bool

	minItems, maxItems int // -1: no bound
	uniqueItems        bool
	items              *schema

	required           []string
	props              map[string]*schema
	propNames          []string // sorted, so errors come in a stable order
	minProps, maxProps int      // -1: no bound
	additional         *schema
	noAdditional       bool

	allOf, anyOf, oneOf []*schema
}

// The sets below are switches, not maps: a package-level map is built by code at init, in every cold
// start of every function.

// isSchemaType: the types a schema may name.
func isSchemaType(v string) bool {
	switch v {
	case "object", "array", "string", "integer", "number", "boolean":
		return true
	}
	return false
}

// isCheckedFormat: the formats the validator checks.
func isCheckedFormat(v string) bool {
	switch v {
	case "uuid", "date", "date-time", "uri", "int32", "int64":
		return true
	}
	return false
}

// isAnnotationFormat: the formats that are annotations only.
func isAnnotationFormat(v string) bool {
	switch v {
	case "float", "double", "password":
		return true
	}
	return false
}

// isIgnoredKeyword: the keywords that carry no request-side validation.
func isIgnoredKeyword(v string) bool {
	switch v {
	case "title", "description", "example", "externalDocs", "deprecated", "xml", "writeOnly":
		return true
	}
	return false
}

type compiler struct {
	comps *components
	refs  map[string]*schema
}

func newCompiler(comps *components) *compiler {
	return &compiler{comps: comps, refs: make(map[string]*schema)}
}

// schema compiles one schema; at names its place for error messages.
func (c *compiler) schema(data json.RawMessage, at string) (*schema, error) {
	var kw map[string]json.RawMessage
	if err := json.Unmarshal(data, &kw); err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	if raw, ok := kw["$ref"]; ok {
		// OpenAPI 3.0: the siblings of a $ref are ignored.
		var ref string
		if err := json.Unmarshal(raw, &ref); err != nil {
			return nil, fmt.Errorf("%s: $ref: %w", at, err)
		}
		return c.ref(ref, at)
	}
	s := newSchema()
	return s, c.fill(s, kw, at)
}

// ref compiles a referenced component schema once; later references (and cycles) reuse it.
func (c *compiler) ref(ref, at string) (*schema, error) {
	var chain []string // components that only refer on, e.g. Name: {$ref: Short}
	for {
		if s, ok := c.refs[ref]; ok {
			return s, nil
		}
		if slices.Contains(chain, ref) {
			return nil, fmt.Errorf("%s: reference cycle through %s", at, ref)
		}
		chain = append(chain, ref)
		raw, err := decode.Lookup(ref, "#/components/schemas/", c.comps.Schemas)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		var kw map[string]json.RawMessage
		if err := json.Unmarshal(json.RawMessage(raw), &kw); err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		if next, ok := kw["$ref"]; ok {
			if err := json.Unmarshal(next, &ref); err != nil {
				return nil, fmt.Errorf("%s: $ref: %w", ref, err)
			}
			continue
		}
		s := newSchema()
		for _, r := range chain {
			c.refs[r] = s
		}
		return s, c.fill(s, kw, ref)
	}
}

func newSchema() *schema {
	return &schema{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
}

func (c *compiler) fill(s *schema, kw map[string]json.RawMessage, at string) error {
	// The served document repeats x-css-text's refusals and the date range as a pattern for clients
	// (internal/docgen/rules.go): checkText and checkStringFormat hold them already, more strictly and in
	// their own words, and no regexp is compiled for them.
	if _, ok := kw["x-css-text"]; ok || string(kw["format"]) == `"date"` {
		delete(kw, "pattern")
	}
	keys := make([]string, 0, len(kw))
	s.unconstrained = true
	for k := range kw {
		keys = append(keys, k)
		if !isIgnoredKeyword(k) && k != "default" && !strings.HasPrefix(k, "x-") {
			s.unconstrained = false
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := c.keyword(s, k, kw[k], at); err != nil {
			return fmt.Errorf("%s: %s: %w", at, k, err)
		}
	}
	if s.minLength == 0 {
		s.minLength = -1
	}
	if s.minItems == 0 {
		s.minItems = -1
	}
	if s.minProps == 0 {
		s.minProps = -1
	}
	return nil
}

func (c *compiler) keyword(s *schema, k string, raw json.RawMessage, at string) error {
	switch k {
	case "type":
		if err := json.Unmarshal(raw, &s.typ); err != nil {
			return err
		}
		if !isSchemaType(s.typ) {
			return fmt.Errorf("unsupported type %q", s.typ)
		}
	case "nullable":
		return json.Unmarshal(raw, &s.nullable)
	case "readOnly":
		return json.Unmarshal(raw, &s.readOnly)
	case "uniqueItems":
		return json.Unmarshal(raw, &s.uniqueItems)
	case "exclusiveMinimum":
		return json.Unmarshal(raw, &s.exclMin)
	case "exclusiveMaximum":
		return json.Unmarshal(raw, &s.exclMax)
	case "minimum":
		s.hasMin = true
		return json.Unmarshal(raw, &s.minimum)
	case "maximum":
		s.hasMax = true
		return json.Unmarshal(raw, &s.maximum)
	case "minLength":
		return unmarshalCount(raw, &s.minLength)
	case "maxLength":
		return unmarshalCount(raw, &s.maxLength)
	case "minItems":
		return unmarshalCount(raw, &s.minItems)
	case "maxItems":
		return unmarshalCount(raw, &s.maxItems)
	case "minProperties":
		return unmarshalCount(raw, &s.minProps)
	case "maxProperties":
		return unmarshalCount(raw, &s.maxProps)
	case "pattern":
		var p string
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return err
		}
		s.pattern = re
	case "format":
		if err := json.Unmarshal(raw, &s.format); err != nil {
			return err
		}
		if !isCheckedFormat(s.format) && !isAnnotationFormat(s.format) {
			return fmt.Errorf("unsupported format %q", s.format)
		}
		if isAnnotationFormat(s.format) {
			s.format = ""
		}
	case "enum":
		values, err := decodeEnum(raw)
		if err != nil {
			return err
		}
		s.enum = values
	case "default":
		v, err := decodeValue(raw)
		if err != nil {
			return err
		}
		s.hasDefault, s.def = true, v
	case "required":
		return json.Unmarshal(raw, &s.required)
	case "properties":
		var props map[string]json.RawMessage
		if err := json.Unmarshal(raw, &props); err != nil {
			return err
		}
		s.props = make(map[string]*schema, len(props))
		for name, p := range props {
			ps, err := c.schema(p, at+".properties."+name)
			if err != nil {
				return err
			}
			s.props[name] = ps
			s.propNames = append(s.propNames, name)
		}
		sort.Strings(s.propNames)
	case "items":
		items, err := c.schema(raw, at+".items")
		if err != nil {
			return err
		}
		s.items = items
	case "additionalProperties":
		if t := bytes.TrimSpace(raw); bytes.Equal(t, []byte("true")) || bytes.Equal(t, []byte("false")) {
			s.noAdditional = t[0] == 'f'
			return nil
		}
		ap, err := c.schema(raw, at+".additionalProperties")
		if err != nil {
			return err
		}
		s.additional = ap
	case "allOf", "anyOf", "oneOf":
		var subs []json.RawMessage
		if err := json.Unmarshal(raw, &subs); err != nil {
			return err
		}
		if len(subs) == 0 {
			return fmt.Errorf("must not be empty")
		}
		list := make([]*schema, len(subs))
		for i, sub := range subs {
			ss, err := c.schema(sub, fmt.Sprintf("%s.%s[%d]", at, k, i))
			if err != nil {
				return err
			}
			list[i] = ss
		}
		switch k {
		case "allOf":
			s.allOf = list
		case "anyOf":
			s.anyOf = list
		default:
			s.oneOf = list
		}
	case "x-css-text":
		if err := json.Unmarshal(raw, &s.text); err != nil {
			return err
		}
		if s.text != textLine && s.text != textLong {
			return fmt.Errorf("must be %q or %q, not %q", textLine, textLong, s.text)
		}
	default:
		if isIgnoredKeyword(k) || strings.HasPrefix(k, "x-") {
			return nil
		}
		return fmt.Errorf("keyword not supported by the request validator")
	}
	return nil
}

func unmarshalCount(raw json.RawMessage, dst *int) error {
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("must not be negative")
	}
	*dst = n
	return nil
}

func decodeEnum(raw json.RawMessage) ([]any, error) {
	var values []any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&values); err != nil {
		return nil, err
	}
	for i, v := range values {
		switch x := v.(type) {
		case string, bool, nil:
		case json.Number:
			// A JSON number fails to convert only past float64's range (ErrRange, f infinite).
			f, err := x.Float64()
			if err != nil {
				return nil, fmt.Errorf("value %s is out of range", x)
			}
			values[i] = f
		default:
			return nil, fmt.Errorf("only scalar values are supported")
		}
	}
	return values, nil
}

func decodeValue(raw json.RawMessage) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// validator holds the compiled checks of one operation.
type validator struct {
	params []*param // path parameters first, then query, then header; declared order within each
	body   *schema  // nil when the body has no JSON schema
}

type param struct {
	name     string
	in       string // "path", "query" or "header"
	required bool
	explode  bool
	schema   *schema
}

func compileOperation(src *opSource) (*validator, error) {
	c := newCompiler(src.comps)
	v := &validator{}

	// Operation parameters override path-item parameters of the same name and location.
	var declared []*param
	seen := make(map[string]int)
	for _, list := range [][]string{src.pathParams, src.opParams} {
		for _, raw := range list {
			p, err := c.param(json.RawMessage(raw))
			if err != nil {
				return nil, err
			}
			key := p.in + " " + strings.ToLower(p.name)
			if i, ok := seen[key]; ok {
				declared[i] = p
				continue
			}
			seen[key] = len(declared)
			declared = append(declared, p)
		}
	}
	for _, in := range []string{"path", "query", "header"} {
		for _, p := range declared {
			if p.in == in {
				v.params = append(v.params, p)
			}
		}
	}

	if src.bodySchema != "" {
		body, err := c.schema(json.RawMessage(src.bodySchema), "requestBody")
		if err != nil {
			return nil, err
		}
		v.body = body
	}
	for _, s := range c.refs {
		if composesItself(s, s, map[*schema]bool{}) {
			return nil, fmt.Errorf("a schema includes itself through allOf, anyOf or oneOf: validation would not end")
		}
	}
	return v, nil
}

// composesItself reports whether target is reachable from s through composition alone, which applies
// schemas to the same value: a cycle there never reaches a smaller value.
func composesItself(s, target *schema, seen map[*schema]bool) bool {
	for _, list := range [][]*schema{s.allOf, s.anyOf, s.oneOf} {
		for _, sub := range list {
			if sub == target {
				return true
			}
			if !seen[sub] {
				seen[sub] = true
				if composesItself(sub, target, seen) {
					return true
				}
			}
		}
	}
	return false
}

func (c *compiler) param(raw json.RawMessage) (*param, error) {
	var ref struct {
		Ref string `json:"$ref"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		return nil, err
	}
	if ref.Ref != "" {
		target, err := decode.Lookup(ref.Ref, "#/components/parameters/", c.comps.Parameters)
		if err != nil {
			return nil, err
		}
		raw = json.RawMessage(target)
	}
	var p struct {
		Name            string          `json:"name"`
		In              string          `json:"in"`
		Required        bool            `json:"required"`
		Style           string          `json:"style"`
		Explode         *bool           `json:"explode"`
		AllowEmptyValue bool            `json:"allowEmptyValue"`
		Schema          json.RawMessage `json:"schema"`
		Content         json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	at := "parameter " + p.Name
	switch p.In {
	case "path", "query", "header":
	case "cookie":
		return nil, fmt.Errorf("%s: cookie parameters are not supported", at)
	default:
		return nil, fmt.Errorf("%s: unknown location %q", at, p.In)
	}
	if len(p.Content) > 0 || len(p.Schema) == 0 {
		return nil, fmt.Errorf("%s: only parameters with a schema are supported", at)
	}
	if p.AllowEmptyValue {
		return nil, fmt.Errorf("%s: allowEmptyValue is not supported", at)
	}
	style := map[string]string{"path": "simple", "query": "form", "header": "simple"}[p.In]
	if p.Style != "" && p.Style != style {
		return nil, fmt.Errorf("%s: style %q is not supported", at, p.Style)
	}
	s, err := c.schema(p.Schema, at)
	if err != nil {
		return nil, err
	}
	switch s.typ {
	case "string", "integer", "number", "boolean":
	case "array":
		if p.In != "query" || s.items == nil || !isScalarType(s.items.typ) {
			return nil, fmt.Errorf("%s: only query arrays of scalars are supported", at)
		}
	default:
		return nil, fmt.Errorf("%s: type %q is not supported for parameters", at, s.typ)
	}
	return &param{
		name:     p.Name,
		in:       p.In,
		required: p.Required || p.In == "path",
		explode:  p.Explode == nil || *p.Explode,
		schema:   s,
	}, nil
}

// isScalarType: the types a query array's items may have.
func isScalarType(v string) bool {
	switch v {
	case "string", "integer", "number", "boolean":
		return true
	}
	return false
}
