package contract

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
)

// Params are the validated parameters of a request, with defaults applied and values typed:
// integer -> int64, number -> float64, boolean -> bool, string -> string (a query array is a []any of
// those). Absent optional params without default are absent from the maps.
type Params struct{ Path, Query, Header map[string]any }

// ValidateParams checks path values, query values and headers against the operation's parameters:
// required, type (query "abc" for an integer is invalid), enum, bounds, pattern, format (uuid, date,
// date-time, uri). Unknown query params are ignored. Repeated scalar query params: invalid. An empty
// value of a non-string parameter is invalid. UUIDs come back lower-cased.
// Errors name the parameter (or header) and come in a fixed order: path, query, header.
func (op *Operation) ValidateParams(path map[string]string, query url.Values, header http.Header) (Params, error) {
	v, err := op.validator()
	if err != nil {
		return Params{}, err
	}
	out := Params{Path: map[string]any{}, Query: map[string]any{}, Header: map[string]any{}}
	for _, p := range v.params {
		var raws []string
		dst := out.Query
		switch p.in {
		case "path":
			if s, ok := path[p.name]; ok {
				raws = []string{s}
			}
			dst = out.Path
		case "query":
			raws = query[p.name]
		case "header":
			// Like Header.Get: the first of repeated header lines counts.
			if s := header.Values(p.name); len(s) > 0 {
				raws = s[:1]
			}
			dst = out.Header
		}
		value, present, verr := p.parse(raws)
		if verr != nil {
			return Params{}, verr
		}
		if present {
			dst[p.name] = value
		}
	}
	return out, nil
}

// parse converts and validates the raw values of one parameter.
func (p *param) parse(raws []string) (any, bool, *apperr.Error) {
	at := &loc{name: p.name}
	if len(raws) == 0 {
		if p.required {
			return nil, false, invalid(at, "is required")
		}
		if p.schema.hasDefault {
			return typedDefault(p.schema), true, nil
		}
		return nil, false, nil
	}
	if p.schema.typ == "array" {
		return p.parseArray(raws, at)
	}
	if len(raws) > 1 {
		return nil, false, invalid(at, "must be given once")
	}
	raw := raws[0]
	// `limit=` is not `limit` left out: a client that sent it meant something, so it is refused like any
	// other value that is not of the parameter's type.
	if raw == "" && p.schema.typ != "string" {
		return nil, false, invalid(at, "must not be empty")
	}
	typed, jsonValue, err := convert(p.schema.typ, raw, at)
	if err != nil {
		return nil, false, err
	}
	if err := p.schema.validate(jsonValue, at); err != nil {
		return nil, false, err
	}
	if typed == nil {
		return nil, false, invalid(at, "is out of range")
	}
	if p.schema.format == "uuid" {
		typed = strings.ToLower(raw) // RFC 9562: UUIDs compare case-insensitively; ids are stored lower-case
	}
	return typed, true, nil
}

func (p *param) parseArray(raws []string, at *loc) (any, bool, *apperr.Error) {
	items := raws
	if !p.explode {
		if len(raws) > 1 {
			return nil, false, invalid(at, "must be given once")
		}
		items = strings.Split(raws[0], ",")
	}
	typed := make([]any, len(items))
	values := make([]any, len(items))
	for i, raw := range items {
		t, v, err := convert(p.schema.items.typ, raw, at.at(i))
		if err != nil {
			return nil, false, err
		}
		typed[i], values[i] = t, v
	}
	if err := p.schema.validate(values, at); err != nil {
		return nil, false, err
	}
	return typed, true, nil
}

// convert parses a raw parameter value as typ. It returns the typed Go value and the same value as a
// decoded JSON body would hold it, for the schema checks.
func convert(typ, raw string, at *loc) (typed, jsonValue any, err *apperr.Error) {
	switch typ {
	case "integer":
		n, perr := strconv.ParseInt(raw, 10, 64)
		if errors.Is(perr, strconv.ErrRange) {
			// Digits past 64 bits: the schema's bounds say why ("at most N"); the typed value cannot hold it.
			return nil, json.Number(raw), nil
		}
		if perr != nil {
			return nil, nil, invalid(at, "must be an integer")
		}
		return n, json.Number(strconv.FormatInt(n, 10)), nil
	case "number":
		f, perr := strconv.ParseFloat(raw, 64)
		if perr != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, nil, invalid(at, "must be a number")
		}
		return f, json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "boolean":
		b, perr := strconv.ParseBool(raw)
		if perr != nil {
			return nil, nil, invalid(at, "must be true or false")
		}
		return b, b, nil
	}
	return raw, raw, nil
}

// typedDefault converts a parameter schema's default to the Go type of its values.
func typedDefault(s *schema) any {
	return typedValue(s.typ, s.items, s.def)
}

func typedValue(typ string, items *schema, v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64)
		if typ == "integer" {
			return int64(f)
		}
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = typedValue(items.typ, nil, e)
		}
		return out
	}
	return v
}
