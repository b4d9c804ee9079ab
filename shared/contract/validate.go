package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/creatorstrategy/css/shared/apperr"
)

// loc is the place of a value in a request, built on the stack as validation descends and rendered only
// when an error names it: `title`, `keywords[2]`, `dimensions[0].score`.
type loc struct {
	parent  *loc
	name    string
	index   int
	isIndex bool
}

func (l *loc) key(name string) *loc { return &loc{parent: l, name: name} }
func (l *loc) at(i int) *loc        { return &loc{parent: l, index: i, isIndex: true} }

// maxEcho bounds how much of a client-chosen name (an object key) an error message repeats.
const maxEcho = 100

func (l *loc) String() string {
	if l == nil {
		return "body"
	}
	var chain []*loc
	for p := l; p != nil; p = p.parent {
		chain = append(chain, p)
	}
	var b strings.Builder
	for i := len(chain) - 1; i >= 0; i-- {
		p := chain[i]
		if p.isIndex {
			if b.Len() == 0 {
				b.WriteString("body")
			}
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(p.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if p.name == "" {
			b.WriteString(`""`) // a client may send an empty member name
			continue
		}
		b.WriteString(clip(p.name))
	}
	return b.String()
}

func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func invalid(at *loc, format string, args ...any) *apperr.Error {
	return apperr.Invalid(at.String(), format, args...)
}

// validate reports the first way v breaks s. v is a decoded JSON value: map[string]any, []any, string,
// json.Number, bool or nil. It does not change v.
func (s *schema) validate(v any, at *loc) *apperr.Error {
	if v == nil {
		if s.nullable {
			return nil
		}
		if s.composed() {
			// A composition may still accept null through its alternatives.
			return s.validateComposition(v, at)
		}
		return invalid(at, "must not be null")
	}
	if s.unconstrained {
		return nil
	}
	var err *apperr.Error
	switch x := v.(type) {
	case string:
		err = s.validateString(x, at)
	case json.Number:
		err = s.validateNumber(x, at)
	case bool:
		if s.typ != "" && s.typ != "boolean" {
			return s.typeError(at)
		}
		err = s.validateEnum(x, at)
	case []any:
		err = s.validateArray(x, at)
	case map[string]any:
		err = s.validateObject(x, at)
	default:
		return invalid(at, "has an unsupported value")
	}
	if err != nil {
		return err
	}
	return s.validateComposition(v, at)
}

func (s *schema) composed() bool { return len(s.allOf)+len(s.anyOf)+len(s.oneOf) > 0 }

func (s *schema) typeError(at *loc) *apperr.Error {
	switch s.typ {
	case "integer", "object", "array":
		return invalid(at, "must be an %s", s.typ)
	}
	return invalid(at, "must be a %s", s.typ)
}

func (s *schema) validateEnum(v any, at *loc) *apperr.Error {
	if len(s.enum) == 0 {
		return nil
	}
	for _, e := range s.enum {
		if e == v {
			return nil
		}
	}
	parts := make([]string, 0, len(s.enum))
	for _, e := range s.enum {
		switch x := e.(type) {
		case float64:
			parts = append(parts, formatNumber(x))
		case nil:
			parts = append(parts, "null")
		default:
			parts = append(parts, fmt.Sprint(x))
		}
	}
	if str, ok := v.(string); ok {
		// Name the refused value, so a list (webhook events) says which entry is unknown.
		if r := []rune(str); len(r) > maxEchoed {
			str = string(r[:maxEchoed]) + "…"
		}
		return invalid(at, "%q is not one of %s", str, strings.Join(parts, ", "))
	}
	return invalid(at, "must be one of %s", strings.Join(parts, ", "))
}

// maxEchoed bounds how much of a refused value an error message repeats.
const maxEchoed = 64

func (s *schema) validateString(v string, at *loc) *apperr.Error {
	if s.typ != "" && s.typ != "string" {
		return s.typeError(at)
	}
	if err := s.validateEnum(v, at); err != nil {
		return err
	}
	if s.minLength >= 0 || s.maxLength >= 0 {
		// if chains rather than tagless switches here and below: gremlins cannot tell when a case condition
		// runs (go-gremlins/gremlins#298), so it would never test their mutants.
		n := utf8.RuneCountInString(v)
		if s.minLength == 1 && n == 0 {
			return invalid(at, "must not be empty")
		}
		if s.minLength >= 0 && n < s.minLength {
			return invalid(at, "must be at least %d characters", s.minLength)
		}
		if s.maxLength >= 0 && n > s.maxLength {
			return invalid(at, "must be at most %d characters", s.maxLength)
		}
	}
	if s.pattern != nil && !s.pattern.MatchString(v) {
		return invalid(at, "must match the pattern %s", s.pattern)
	}
	if s.format != "" {
		if msg := checkStringFormat(s.format, v); msg != "" {
			return invalid(at, "%s", msg)
		}
	}
	if s.text != "" {
		if msg := checkText(s.text, v); msg != "" {
			return invalid(at, "%s", msg)
		}
	}
	return nil
}

func (s *schema) validateNumber(v json.Number, at *loc) *apperr.Error {
	if s.typ != "" && s.typ != "number" && s.typ != "integer" {
		return s.typeError(at)
	}
	// v is a JSON number, so ParseFloat fails only past float64's range (ErrRange, f infinite).
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return invalid(at, "is out of range")
	}
	// An integer is written as one: 1.0 and 1e0 are refused, so no request number is ever truncated or
	// rounded on its way into a Go int.
	if s.typ == "integer" && (f != math.Trunc(f) || strings.ContainsAny(string(v), ".eE")) {
		return invalid(at, "must be an integer (digits only, no fraction or exponent)")
	}
	if err := s.validateEnum(f, at); err != nil {
		return err
	}
	if s.format == "int32" && (f < math.MinInt32 || f > math.MaxInt32) {
		return invalid(at, "must be a 32-bit integer")
	}
	if s.format == "int64" {
		// Read exactly: float64 cannot tell MaxInt64 from 2^63.
		if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
			return invalid(at, "must be a 64-bit integer")
		}
	}
	if s.hasMin {
		if s.exclMin && f <= s.minimum {
			return invalid(at, "must be greater than %s", formatNumber(s.minimum))
		}
		if f < s.minimum {
			return invalid(at, "must be at least %s", formatNumber(s.minimum))
		}
	}
	if s.hasMax {
		if s.exclMax && f >= s.maximum {
			return invalid(at, "must be less than %s", formatNumber(s.maximum))
		}
		if f > s.maximum {
			return invalid(at, "must be at most %s", formatNumber(s.maximum))
		}
	}
	return nil
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (s *schema) validateArray(v []any, at *loc) *apperr.Error {
	if s.typ != "" && s.typ != "array" {
		return s.typeError(at)
	}
	n := len(v)
	if s.minItems >= 0 && s.minItems == s.maxItems && n != s.minItems {
		return invalid(at, "must have exactly %s", plural(s.minItems, "item", "items"))
	}
	if s.minItems >= 0 && n < s.minItems {
		return invalid(at, "must have at least %s", plural(s.minItems, "item", "items"))
	}
	if s.maxItems >= 0 && n > s.maxItems {
		return invalid(at, "must have at most %s", plural(s.maxItems, "item", "items"))
	}
	if s.items != nil {
		for i, item := range v {
			if err := s.items.validate(item, at.at(i)); err != nil {
				return err
			}
		}
	}
	if s.uniqueItems && n > 1 {
		first := make(map[string]int, n)
		for i, item := range v {
			key := canonical(item)
			if j, dup := first[key]; dup {
				return invalid(at, "must not contain duplicates (items %d and %d are equal)", j, i)
			}
			first[key] = i
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// canonical renders a JSON value so that equal values (by JSON Schema equality: 1 equals 1.0, object
// member order does not matter) render the same.
func canonical(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			b.WriteString(string(x))
		}
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, item)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	}
}

func (s *schema) validateObject(v map[string]any, at *loc) *apperr.Error {
	if s.typ != "" && s.typ != "object" {
		return s.typeError(at)
	}
	for _, name := range s.required {
		if _, ok := v[name]; ok {
			continue
		}
		// A read-only property is never sent in a request, so it cannot be required there.
		if p := s.props[name]; p != nil && p.readOnly {
			continue
		}
		return invalid(at.key(name), "is required")
	}
	n := len(v)
	if s.minProps >= 0 && n < s.minProps {
		return invalid(at, "must have at least %s", plural(s.minProps, "property", "properties"))
	}
	if s.maxProps >= 0 && n > s.maxProps {
		return invalid(at, "must have at most %s", plural(s.maxProps, "property", "properties"))
	}
	for _, name := range s.propNames {
		pv, ok := v[name]
		if !ok {
			continue
		}
		p := s.props[name]
		if p.readOnly && pv != nil {
			return invalid(at.key(name), "is read-only")
		}
		if err := p.validate(pv, at.key(name)); err != nil {
			return err
		}
	}
	if s.noAdditional || s.additional != nil {
		for _, name := range sortedKeys(v) {
			if _, declared := s.props[name]; declared {
				continue
			}
			if s.noAdditional {
				return invalid(at.key(name), "is not allowed")
			}
			if err := s.additional.validate(v[name], at.key(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *schema) validateComposition(v any, at *loc) *apperr.Error {
	for _, sub := range s.allOf {
		if err := sub.validate(v, at); err != nil {
			return err
		}
	}
	if len(s.anyOf) > 0 {
		if i, errs := firstMatch(s.anyOf, v, at); i < 0 {
			return noAlternative(s.anyOf, errs, v, at)
		}
	}
	if len(s.oneOf) > 0 {
		errs := make([]*apperr.Error, len(s.oneOf))
		matched := 0
		for i, alt := range s.oneOf {
			if errs[i] = alt.validate(v, at); errs[i] == nil {
				matched++
			}
		}
		if matched == 0 {
			return noAlternative(s.oneOf, errs, v, at)
		}
		if matched > 1 {
			return invalid(at, "must match exactly one of the allowed shapes, not %d", matched)
		}
	}
	return nil
}

// firstMatch returns the index of the first alternative that accepts v, or -1, with the errors of the
// alternatives tried.
func firstMatch(alts []*schema, v any, at *loc) (int, []*apperr.Error) {
	errs := make([]*apperr.Error, len(alts))
	for i, alt := range alts {
		if errs[i] = alt.validate(v, at); errs[i] == nil {
			return i, errs
		}
	}
	return -1, errs
}

// noAlternative explains why no alternative of an anyOf/oneOf accepted v. When exactly one alternative
// has all its required members present, the client meant that one: its own error is the useful one.
// Otherwise the alternatives are listed by their required members.
func noAlternative(alts []*schema, errs []*apperr.Error, v any, at *loc) *apperr.Error {
	obj, isObject := v.(map[string]any)
	if isObject {
		chosen := -1
		for i, alt := range alts {
			if len(alt.required) == 0 || !hasAll(obj, alt.required) {
				continue
			}
			if chosen >= 0 {
				chosen = -1
				break
			}
			chosen = i
		}
		if chosen >= 0 && errs[chosen] != nil {
			return errs[chosen]
		}
	}
	shapes := make([]string, 0, len(alts))
	for _, alt := range alts {
		if len(alt.required) == 0 {
			return invalid(at, "must match one of the allowed shapes")
		}
		shapes = append(shapes, listing(alt.required))
	}
	return invalid(at, "must include %s", strings.Join(shapes, ", or "))
}

func hasAll(obj map[string]any, names []string) bool {
	for _, n := range names {
		if _, ok := obj[n]; !ok {
			return false
		}
	}
	return true
}

// listing renders names as "a", "a and b", "a, b and c".
func listing(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// normalize fills in the defaults of absent object members and lower-cases UUIDs (RFC 9562: they compare
// case-insensitively, and ids are stored lower-case), at every depth, of a value that s has accepted. Each
// default is a fresh copy, so values never share state.
func (s *schema) normalize(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.propNames {
			p := s.props[name]
			if _, ok := x[name]; !ok && p.hasDefault && !p.readOnly {
				x[name] = deepCopy(p.def)
			}
			if pv, ok := x[name]; ok {
				x[name] = p.normalized(pv)
			}
		}
		if s.additional != nil {
			for name, pv := range x {
				if _, declared := s.props[name]; !declared {
					x[name] = s.additional.normalized(pv)
				}
			}
		}
	case []any:
		if s.items != nil {
			for i, item := range x {
				x[i] = s.items.normalized(item)
			}
		}
	}
	for _, sub := range s.allOf {
		sub.normalize(v)
	}
	// Only the alternative that accepted the value contributes its defaults.
	for _, alts := range [][]*schema{s.anyOf, s.oneOf} {
		if i, _ := firstMatch(alts, v, nil); i >= 0 {
			alts[i].normalize(v)
		}
	}
}

// normalized returns v normalized: strings are values, so a UUID is replaced rather than changed in place.
func (s *schema) normalized(v any) any {
	if str, ok := v.(string); ok {
		if s.format == "uuid" {
			return strings.ToLower(str)
		}
		return v
	}
	s.normalize(v)
	return v
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}
