package contract

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
)

// The differential tests generate many requests per operation from the document itself, valid and
// subtly broken, and require this package and kin-openapi to judge each one alike. Agreement with an
// independent implementation over the whole document is what shows the validator is derived from it.

// gen builds request values from the raw schemas of a document. It reads the JSON document directly,
// not this package's compiled model, so a misreading of the document cannot hide in both.
type gen struct {
	r       *rand.Rand
	schemas map[string]any
	broken  bool // whether this value may be mutated
}

func newGen(t testing.TB, doc []byte, seed uint64) *gen {
	var d struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return &gen{r: rand.New(rand.NewPCG(seed, 7)), schemas: d.Components.Schemas}
}

func (g *gen) chance(percent int) bool { return g.r.IntN(100) < percent }

func (g *gen) resolve(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = g.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
}

// merge folds allOf, and one randomly chosen anyOf/oneOf alternative, into one schema to generate from.
func (g *gen) merge(s map[string]any) map[string]any {
	s = g.resolve(s)
	var parts []any
	if all, ok := s["allOf"].([]any); ok {
		parts = append(parts, all...)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			parts = append(parts, alts[g.r.IntN(len(alts))])
		}
	}
	if len(parts) == 0 {
		return s
	}
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	props := map[string]any{}
	if p, ok := s["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	required, _ := s["required"].([]any)
	for _, part := range parts {
		ps := g.merge(part.(map[string]any))
		for k, v := range ps {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
		if p, ok := ps["properties"].(map[string]any); ok {
			for k, v := range p {
				props[k] = v
			}
		}
		if r, ok := ps["required"].([]any); ok {
			required = append(required, r...)
		}
	}
	out["properties"], out["required"] = props, required
	return out
}

// value generates a value for schema s: usually one s accepts, sometimes one at or past an edge.
func (g *gen) value(s map[string]any, depth int) any {
	s = g.merge(s)
	if g.broken && g.chance(4) {
		return g.wrongType(s)
	}
	if enum, ok := s["enum"].([]any); ok {
		if g.broken && g.chance(10) {
			return "not-in-the-enum"
		}
		return enum[g.r.IntN(len(enum))]
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "object":
		return g.object(s, depth)
	case "array":
		return g.array(s, depth)
	case "string":
		return g.str(s)
	case "integer":
		return g.number(s, true)
	case "number":
		return g.number(s, false)
	case "boolean":
		return g.chance(50)
	}
	return g.anyValue(depth)
}

func (g *gen) wrongType(s map[string]any) any {
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return "text"
	case 2:
		return json.Number("12")
	case 3:
		return true
	case 4:
		return []any{"a"}
	}
	return map[string]any{"k": "v"}
}

func (g *gen) anyValue(depth int) any {
	if depth > 3 {
		return "leaf"
	}
	switch g.r.IntN(5) {
	case 0:
		return json.Number(strconv.Itoa(g.r.IntN(1000)))
	case 1:
		return map[string]any{"nested": g.anyValue(depth + 1)}
	case 2:
		return []any{g.anyValue(depth + 1), "x"}
	case 3:
		return false
	}
	return "free text"
}

func (g *gen) object(s map[string]any, depth int) any {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, name := range r {
			required[name.(string)] = true
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]any{}
	for _, name := range names {
		include := g.chance(50)
		if required[name] {
			include = !(g.broken && g.chance(8))
		}
		if include && depth < 8 {
			out[name] = g.value(props[name].(map[string]any), depth+1)
		}
	}
	for name := range required {
		if _, declared := props[name]; !declared && !(g.broken && g.chance(8)) {
			out[name] = "x"
		}
	}
	if g.chance(10) {
		out["unknownMember"] = g.anyValue(depth + 1)
	}
	return out
}

func (g *gen) array(s map[string]any, depth int) any {
	minItems, maxItems := intKeyword(s, "minItems", 0), intKeyword(s, "maxItems", -1)
	if maxItems < 0 {
		maxItems = minItems + 3
	}
	n := minItems + g.r.IntN(maxItems-minItems+1)
	if g.broken && g.chance(15) {
		n = []int{minItems - 1, maxItems + 1}[g.r.IntN(2)]
	}
	items, _ := s["items"].(map[string]any)
	out := []any{}
	for i := 0; i < n; i++ {
		if items == nil || depth >= 8 {
			out = append(out, g.anyValue(depth+1))
			continue
		}
		out = append(out, g.value(items, depth+1))
	}
	return out
}

func intKeyword(s map[string]any, k string, dflt int) int {
	if v, ok := s[k].(float64); ok {
		return int(v)
	}
	return dflt
}

// patternSamples are tried, in order, for a schema with a pattern: the first that matches is used.
var patternSamples = []string{"09:30", "23:59", "https://example.com/watch?v=abc", "http://example.org/", "a"}

func (g *gen) str(s map[string]any) any {
	if format, ok := s["format"].(string); ok && !(g.broken && g.chance(15)) {
		return g.formatted(format)
	}
	if p, ok := s["pattern"].(string); ok && !(g.broken && g.chance(15)) {
		re := regexp.MustCompile(p)
		for _, sample := range patternSamples {
			if re.MatchString(sample) {
				return sample
			}
		}
	}
	minLen, maxLen := intKeyword(s, "minLength", 0), intKeyword(s, "maxLength", -1)
	n := minLen + g.r.IntN(20)
	if maxLen >= 0 {
		edges := 4
		if maxLen > 300 {
			edges = 40 // long limits cost time to test: reach their edges less often
		}
		switch g.r.IntN(edges) {
		case 0:
			n = maxLen
		case 1:
			if g.broken {
				n = maxLen + 1
			}
		default:
			n = minLen + g.r.IntN(max(min(maxLen, 300), minLen)-minLen+1)
		}
		if n > maxLen && !g.broken {
			n = maxLen
		}
	}
	if g.broken && minLen > 0 && g.chance(10) {
		n = minLen - 1
	}
	runes := []rune("aZ9 é日🎬<>\"\\")
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(runes[g.r.IntN(len(runes))])
	}
	return b.String()
}

func (g *gen) formatted(format string) string {
	switch format {
	case "uuid":
		u := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", g.r.Uint32(), g.r.IntN(1<<16), g.r.IntN(1<<16), g.r.IntN(1<<16), g.r.Uint64()&(1<<48-1))
		if g.chance(20) {
			u = strings.ToUpper(u)
		}
		if g.broken && g.chance(20) {
			u = u[:35]
		}
		return u
	case "date":
		day := 1 + g.r.IntN(28)
		if g.broken && g.chance(30) {
			day = 29 + g.r.IntN(3) // sometimes past the end of the month
		}
		return fmt.Sprintf("%04d-%02d-%02d", 2000+g.r.IntN(40), 1+g.r.IntN(12), day)
	case "date-time":
		zone := []string{"Z", "+02:00", "-05:30", ".123Z"}[g.r.IntN(4)]
		hour := g.r.IntN(24)
		if g.broken && g.chance(20) {
			hour = 24
		}
		return fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02d%s", 1+g.r.IntN(12), 1+g.r.IntN(28), hour, g.r.IntN(60), g.r.IntN(60), zone)
	case "uri":
		urls := []string{"https://www.example.com/watch?v=abc", "http://example.org/x/y#z", "HTTPS://EXAMPLE.COM"}
		if g.broken {
			urls = append(urls, "ftp://example.com/f", "example.com/x", "https://", "https://a b.com", "mailto:a@b.c")
		}
		return urls[g.r.IntN(len(urls))]
	}
	return "x"
}

func (g *gen) number(s map[string]any, integer bool) any {
	lo, hasLo := s["minimum"].(float64)
	hi, hasHi := s["maximum"].(float64)
	if !hasLo {
		lo = -50
	}
	if !hasHi {
		hi = lo + 1000
	}
	var f float64
	switch g.r.IntN(5) {
	case 0:
		f = lo
	case 1:
		f = hi
	default:
		f = lo + g.r.Float64()*(hi-lo)
		if integer {
			f = float64(int(f))
		}
	}
	if g.broken && g.chance(15) {
		f = []float64{lo - 1, hi + 1, lo - 0.5, hi + 0.25}[g.r.IntN(4)]
	}
	if integer && g.broken && g.chance(10) {
		f += 0.5
	}
	spelled := strconv.FormatFloat(f, 'f', -1, 64)
	if integer && f == float64(int64(f)) && g.chance(10) {
		spelled += ".0" // still an integer
	}
	return json.Number(spelled)
}

// bodyOps lists the operations of s that take a JSON body.
// stricterThanSchema reports whether err is one of the refusals this package makes beyond JSON Schema, on
// purpose: a member name given twice, invalid UTF-8 or an unpaired surrogate escape, an integer written
// with a fraction or an exponent (1.0, 2e1), a date out of range, and a URL that Go's own parsers refuse
// (an invalid percent-escape such as "http://0?#00%", or "http://0#", whose request target would name the
// host "0#"), and free text (x-css-text) that is not plain text: control characters, bidirectional
// controls, noncharacters, nothing visible. kin-openapi accepts those.
func stricterThanSchema(err error, body []byte) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "is given more than once") || strings.Contains(msg, "must be valid UTF-8") ||
		strings.Contains(msg, "no fraction or exponent") || strings.Contains(msg, "must be a date from") ||
		strings.Contains(msg, plainTextPrefix) || unparsableURL(err, body)
}

// unparsableURL reports whether err refuses, as not an http(s) URL, a top-level string member of body that
// url.Parse or url.ParseRequestURI refuses.
func unparsableURL(err error, body []byte) bool {
	e, ok := apperr.As(err)
	if !ok || !strings.HasSuffix(e.Message, "must be an absolute http or https URL") || strings.Contains(e.Field, ".") {
		return false
	}
	var members map[string]json.RawMessage
	var v string
	if json.Unmarshal(body, &members) != nil || json.Unmarshal(members[e.Field], &v) != nil {
		return false
	}
	if _, perr := url.Parse(v); perr != nil {
		return true
	}
	_, perr := url.ParseRequestURI(v)
	return perr != nil
}

// stricterParam reports whether err is a parameter refusal this package makes beyond the schema: an empty
// value (kin-openapi takes it as absent) or a date outside the bounded range.
func stricterParam(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "must not be empty") || strings.Contains(err.Error(), "must be a date from"))
}

func bodyOps(s *suite) []*Operation {
	var ops []*Operation
	for _, op := range s.contract.Operations {
		if op.HasBody {
			ops = append(ops, op)
		}
	}
	return ops
}

func TestBodiesAgreeWithKin(t *testing.T) {
	const perOp = 300
	for _, s := range suites(t) {
		g := newGen(t, s.json, 1)
		for _, op := range bodyOps(s) {
			route := s.route(t, op.ID)
			schema := map[string]any{}
			raw, _ := json.Marshal(route.Operation.RequestBody.Value.Content.Get("application/json").Schema)
			_ = json.Unmarshal(raw, &schema)

			valid, invalid := 0, 0
			for i := 0; i < perOp; i++ {
				g.broken = i%2 == 1
				body, err := json.Marshal(g.value(schema, 0))
				if err != nil {
					t.Fatal(err)
				}
				_, mine := op.ValidateBody(body)
				theirs := s.kinBody(t, op.ID, body)
				if (mine == nil) != (theirs == nil) && !stricterThanSchema(mine, body) {
					t.Errorf("%s %s: disagreement on %.400s\n  this package: %v\n  kin-openapi:  %v", s.name, op.ID, body, mine, theirs)
					continue
				}
				if mine == nil {
					valid++
				} else {
					invalid++
				}
			}
			// Both outcomes must be exercised, or the comparison proves nothing for this operation.
			if valid == 0 || invalid == 0 {
				t.Errorf("%s %s: %d valid, %d invalid bodies generated", s.name, op.ID, valid, invalid)
			}
		}
	}
}

func TestParamsAgreeWithKin(t *testing.T) {
	const perOp = 200
	for _, s := range suites(t) {
		g := newGen(t, s.json, 2)
		for _, op := range s.contract.Operations {
			route := s.route(t, op.ID)
			params := route.Operation.Parameters
			for _, p := range route.PathItem.Parameters {
				if params.GetByInAndName(p.Value.In, p.Value.Name) == nil {
					params = append(params, p)
				}
			}
			if len(params) == 0 {
				continue
			}
			valid, invalid := 0, 0
			for i := 0; i < perOp; i++ {
				g.broken = i%2 == 1
				path, query, header := map[string]string{}, url.Values{}, http.Header{}
				for _, p := range params {
					if !p.Value.Required && g.chance(40) {
						continue
					}
					raw, _ := json.Marshal(p.Value.Schema)
					var schema map[string]any
					_ = json.Unmarshal(raw, &schema)
					for _, v := range g.paramValues(schema) {
						switch p.Value.In {
						case "path":
							path[p.Value.Name] = v
						case "query":
							query.Add(p.Value.Name, v)
						case "header":
							header.Add(p.Value.Name, v)
						}
					}
				}
				_, mine := op.ValidateParams(path, query, header)
				theirs := s.kinParams(t, op.ID, path, query, header)
				if (mine == nil) != (theirs == nil) && !stricterParam(mine) {
					t.Errorf("%s %s: disagreement on path %v query %q header %v\n  this package: %v\n  kin-openapi:  %v",
						s.name, op.ID, path, query.Encode(), header, mine, theirs)
					continue
				}
				if mine == nil {
					valid++
				} else {
					invalid++
				}
			}
			if valid == 0 || invalid == 0 {
				t.Errorf("%s %s: %d valid, %d invalid parameter sets generated", s.name, op.ID, valid, invalid)
			}
		}
	}
}

// paramValues renders a generated value as the strings of a request: one string per value, or one per
// item of an exploded array.
func (g *gen) paramValues(schema map[string]any) []string {
	v := g.value(schema, 0)
	if g.broken && g.chance(5) {
		return []string{""}
	}
	if items, ok := v.([]any); ok && g.resolve(schema)["type"] == "array" {
		out := make([]string, 0, len(items))
		for _, item := range items {
			out = append(out, render(item))
		}
		return out
	}
	return []string{render(v)}
}

func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
