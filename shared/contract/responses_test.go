package contract

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// responseComponents walks the served document from every operation's responses and returns the
// component schemas they use, directly or inside another: what responses_gen.go must give a Go type.
func responseComponents(t *testing.T) (objects, enums []string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(Document(), &doc); err != nil {
		t.Fatal(err)
	}
	comps := doc["components"].(map[string]any)
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && !seen[ref] {
				seen[ref] = true
				parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
				if len(parts) == 2 {
					if kind, ok := comps[parts[0]].(map[string]any); ok {
						walk(kind[parts[1]])
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method != "parameters" {
				walk(op.(map[string]any)["responses"])
			}
		}
	}
	schemas := comps["schemas"].(map[string]any)
	for ref := range seen {
		name, ok := strings.CutPrefix(ref, "#/components/schemas/")
		if !ok {
			continue
		}
		if s := schemas[name].(map[string]any); s["enum"] != nil {
			enums = append(enums, name)
		} else {
			objects = append(objects, name)
		}
	}
	sort.Strings(objects)
	sort.Strings(enums)
	return objects, enums
}

// Every component a response uses has its Go type, and only those.
func TestEveryResponseComponentHasAType(t *testing.T) {
	objects, enums := responseComponents(t)
	if len(objects) < 60 {
		t.Fatalf("only %d response components found: %v", len(objects), objects)
	}
	for _, name := range objects {
		if NewResponse(name) == nil {
			t.Errorf("%s: no Go type", name)
		}
	}
	for _, name := range enums {
		if NewResponse(name) != nil {
			t.Errorf("%s: an enum is a named string, not a struct to decode into", name)
		}
	}
	for _, name := range []string{"TitlesRequest", "WebhookEvent", "Nope", ""} {
		if NewResponse(name) != nil {
			t.Errorf("%s: a component no response uses has a response type", name)
		}
	}
}

// A value valid against its component decodes into the component's Go type and encodes again to the
// same members: none lost (an empty array, a zero, an empty string, a null, a member of any type) and
// none added (an absent optional member stays absent). Each component is tried with values built from
// its schema: every member set, every nullable member null, only the required members, and every member
// at its smallest (empty arrays and strings, minimums, first enum values).
func TestResponseTypesRoundTrip(t *testing.T) {
	comps, err := loadRawSchemas()
	if err != nil {
		t.Fatal(err)
	}
	objects, _ := responseComponents(t)
	total := 0
	for _, name := range objects {
		for _, variant := range []variant{full, nulls, required, smallest} {
			for alt := range alternatives(comps, name) {
				v := instance(t, comps, ref(name), variant, alt, name)
				raw, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ValidateJSON(name, raw); err != nil {
					t.Fatalf("%s (%s, alternative %d): the test built an invalid value: %v\n%s", name, variant, alt, err, raw)
				}
				roundTrip(t, name, raw)
				total++
			}
		}
	}
	t.Logf("%d values of %d components", total, len(objects))
}

// roundTrip decodes raw into the component's Go type, encodes it again and compares the members.
func roundTrip(t *testing.T, component string, raw []byte) {
	t.Helper()
	typed := NewResponse(component)
	if err := json.Unmarshal(raw, typed); err != nil {
		t.Fatalf("%s: decode: %v\n%s", component, err, raw)
	}
	again, err := json.Marshal(typed)
	if err != nil {
		t.Fatalf("%s: encode: %v", component, err)
	}
	var want, got any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: the Go type changed the value\n in: %s\nout: %s", component, raw, again)
	}
}

// Decoding a value that matches no alternative of a oneOf, or more than one, fails; and a union with
// other than one alternative set does not encode.
func TestUnionNeedsExactlyOneAlternative(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"description", `{"description":"x"}`, true},
		{"playlists", `{"playlists":[{"name":"n","description":"d"}]}`, true},
		{"no playlists", `{"playlists":[]}`, false},
		{"banner", `{"strategy":"s","imageUrl":"https://x.example/b.png"}`, true},
		{"none", `{"other":1}`, false},
		{"two", `{"description":"x","playlists":[{"name":"n","description":"d"}]}`, false},
		{"not an object", `"x"`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var u ChannelOptimizeResult
			err := json.Unmarshal([]byte(tt.body), &u)
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
			if !tt.ok && (u != ChannelOptimizeResult{}) {
				t.Errorf("a failed decode left %+v", u)
			}
		})
	}
	for _, tt := range []struct {
		name string
		u    ChannelOptimizeResult
	}{
		{"none", ChannelOptimizeResult{}},
		{"two", ChannelOptimizeResult{ChannelDescription: &ChannelDescription{}, PlaylistSuggestion: &PlaylistSuggestion{}}},
	} {
		if _, err := json.Marshal(tt.u); err == nil {
			t.Errorf("%s: encoded", tt.name)
		}
	}
	out, err := json.Marshal(ChannelOptimizeResult{PlaylistSuggestion: &PlaylistSuggestion{Playlists: []PlaylistSuggestionPlaylistsItem{}}})
	if err != nil || string(out) != `{"playlists":[]}` {
		t.Errorf("got %s, %v", out, err)
	}
}

type variant int

const (
	full     variant = iota // every member, nullable ones with a value
	nulls                   // every member, nullable ones null
	required                // only the required members
	smallest                // every member at its smallest
)

func (v variant) String() string { return [...]string{"full", "nulls", "required", "smallest"}[v] }

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func resolve(comps map[string]any, s map[string]any) map[string]any {
	for {
		r, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = comps[strings.TrimPrefix(r, "#/components/schemas/")].(map[string]any)
	}
}

// alternatives returns the indexes of the oneOf alternatives of a component (one index, 0, without oneOf).
func alternatives(comps map[string]any, name string) func(func(int) bool) {
	n := 1
	if alts, ok := resolve(comps, ref(name))["oneOf"].([]any); ok {
		n = len(alts)
	}
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// samples are strings matching the document's patterns; a new pattern needs one here.
var samples = map[string][2]string{
	`^[A-Za-z0-9_-]{11}$`:                {"dQw4w9WgXcQ", "a-b_c0123XY"},
	`^[0-9]{1,2}:[0-5][0-9]:[0-5][0-9]$`: {"0:00:15", "12:34:56"},
	`^[0-9]{1,2}:[0-5][0-9]$`:            {"0:30", "14:05"},
	`^[0-9]{4}-(0[1-9]|1[0-2])$`:         {"2026-01", "2026-11"},
	`^whsec_[A-Za-z0-9+/]+={0,2}$`:       {"whsec_A", "whsec_c2VjcmV0c2VjcmV0c2VjcmV0=="},
	`^sk-css-[0-9a-f]{32}$`:              {"sk-css-00000000000000000000000000000000", "sk-css-0123456789abcdef0123456789abcdef"},
	`^([01][0-9]|2[0-3]):[0-5][0-9]$`:    {"00:00", "23:59"},
	`^https?://`:                         {"http://a.example", "https://videos.example/watch?v=1"},
}

// instance builds a value of schema s for the variant; alt picks a oneOf alternative; i tells the items
// of an array apart (uniqueItems).
func instance(t *testing.T, comps map[string]any, s map[string]any, v variant, alt int, at string) any {
	t.Helper()
	if s["nullable"] == true && v == nulls {
		return nil
	}
	s = resolve(comps, s)
	if s["nullable"] == true && v == nulls {
		return nil
	}
	bound := func(key string, def float64) float64 {
		if n, ok := s[key].(float64); ok {
			return n
		}
		return def
	}
	switch {
	case s["oneOf"] != nil:
		return instance(t, comps, s["oneOf"].([]any)[alt].(map[string]any), v, 0, at)
	case s["allOf"] != nil:
		merged := map[string]any{}
		for _, part := range s["allOf"].([]any) {
			x := instance(t, comps, part.(map[string]any), v, 0, at)
			if x == nil {
				return nil // {nullable, allOf: [ref]} in the nulls variant
			}
			m, ok := x.(map[string]any)
			if !ok {
				return x // a single-ref allOf of a scalar
			}
			for k, e := range m {
				merged[k] = e
			}
		}
		return merged
	case s["enum"] != nil:
		values := s["enum"].([]any)
		if v == smallest {
			return values[0]
		}
		return values[len(values)-1]
	}
	switch s["type"] {
	case "string":
		if p, ok := s["pattern"].(string); ok {
			pair, ok := samples[p]
			if !ok {
				t.Fatalf("%s: no sample string for the pattern %s", at, p)
			}
			return pair[min0(v)]
		}
		switch s["format"] {
		case "uuid":
			return [2]string{"00000000-0000-4000-8000-000000000000", "0190a8f2-7b3c-7def-8a12-3456789abcde"}[min0(v)]
		case "date-time":
			return [2]string{"2026-01-01T00:00:00Z", "2026-11-02T10:15:30.123Z"}[min0(v)]
		case "date":
			return "2026-11-02"
		case "uri":
			return "https://images.example/" + at
		case nil:
		default:
			t.Fatalf("%s: no sample for the format %v", at, s["format"])
		}
		if v == smallest && bound("minLength", 0) == 0 {
			return ""
		}
		return "text of " + at
	case "integer":
		if v == smallest {
			return bound("minimum", 0)
		}
		return min(bound("minimum", 0)+3, bound("maximum", 1e9))
	case "number":
		if v == smallest {
			return bound("minimum", 0)
		}
		return min(bound("minimum", 0)+2.5, bound("maximum", 1e9))
	case "boolean":
		return v != smallest
	case "array":
		n := int(bound("minItems", 0))
		if v != smallest {
			n = max(n, 2)
		}
		n = min(n, int(bound("maxItems", 1e9)))
		items := s["items"].(map[string]any)
		out := make([]any, 0, n)
		for i := range n {
			e := instance(t, comps, items, v, 0, fmt.Sprintf("%s/%d", at, i))
			if values, ok := resolve(comps, items)["enum"].([]any); ok {
				e = values[i%len(values)] // distinct items, where uniqueItems asks for them
			}
			out = append(out, e)
		}
		return out
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for name, p := range props {
			if v == required && !slices.Contains(req, any(name)) {
				continue
			}
			out[name] = instance(t, comps, p.(map[string]any), v, 0, at+"/"+name)
		}
		if extra, ok := s["additionalProperties"].(map[string]any); ok && v != required && v != smallest {
			out["one"] = instance(t, comps, extra, v, 0, at+"/one")
			out["two"] = instance(t, comps, extra, v, 0, at+"/two")
		}
		if len(props) == 0 && s["additionalProperties"] == nil && v != smallest {
			out["free"] = []any{1.5, "x", nil, map[string]any{"nested": true}} // a free-form object keeps what it holds
		}
		return out
	case nil: // any value
		if v == smallest {
			return false
		}
		return map[string]any{"any": []any{1.0, "two", nil}}
	}
	t.Fatalf("%s: no sample for %v", at, s)
	return nil
}

func min0(v variant) int {
	if v == smallest {
		return 0
	}
	return 1
}
