package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

func TestToStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{
			name: "optional members become required and nullable",
			in: `{"type":"object","required":["a"],"properties":{
				"a":{"type":"string"},"b":{"type":"integer","minimum":0},"c":{"type":["string","null"]}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["a","b","c"],"properties":{
				"a":{"type":"string"},"b":{"type":["integer","null"],"minimum":0},"c":{"type":["string","null"]}}}`,
		},
		{
			name: "enum gains null with its type",
			in:   `{"type":"object","properties":{"kind":{"type":"string","enum":["Long","Short"]},"mode":{"enum":["a","b"]}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["kind","mode"],"properties":{
				"kind":{"type":["string","null"],"enum":["Long","Short",null]},"mode":{"enum":["a","b",null]}}}`,
		},
		{
			name: "nested objects and arrays",
			in: `{"type":"object","required":["items"],"properties":{"items":{"type":"array","minItems":1,"maxItems":10,
				"items":{"type":"object","required":["t"],"properties":{"t":{"type":"string"},"n":{"type":"number"}}}}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["items"],"properties":{"items":{"type":"array","minItems":1,"maxItems":10,
				"items":{"type":"object","additionalProperties":false,"required":["n","t"],"properties":{"t":{"type":"string"},"n":{"type":["number","null"]}}}}}}`,
		},
		{
			name: "length bounds and unknown formats move into the description",
			in: `{"type":"object","required":["u","d","s"],"properties":{"u":{"type":"string","format":"uri","maxLength":2048},
				"d":{"type":"string","format":"date"},"s":{"type":"string","description":"A title.","minLength":1,"maxLength":100}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["d","s","u"],"properties":{
				"u":{"type":"string","description":"(at most 2048 characters; format uri)"},
				"d":{"type":"string","format":"date"},
				"s":{"type":"string","description":"A title. (at least 1 characters; at most 100 characters)"}}}`,
		},
		{
			name: "unsupported keywords dropped, supported kept",
			in: `{"type":"object","title":"T","required":["x"],"properties":{"x":{"type":"string","pattern":"^[a-z]+$",
				"default":"a","examples":["b"],"uniqueItems":true}},"minProperties":1}`,
			want: `{"type":"object","title":"T","additionalProperties":false,"required":["x"],"properties":{"x":{"type":"string","pattern":"^[a-z]+$"}}}`,
		},
		{
			name: "oneOf becomes anyOf, branches converted",
			in: `{"type":"object","required":["v"],"properties":{"v":{"oneOf":[
				{"type":"object","required":["a"],"properties":{"a":{"type":"string"},"b":{"type":"string"}}},
				{"type":"object","required":["c"],"properties":{"c":{"type":"integer"}}}]}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["v"],"properties":{"v":{"anyOf":[
				{"type":"object","additionalProperties":false,"required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":["string","null"]}}},
				{"type":"object","additionalProperties":false,"required":["c"],"properties":{"c":{"type":"integer"}}}]}}}`,
		},
		{
			name: "an optional anyOf member is wrapped with null",
			in:   `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["v"],"properties":{"v":{"anyOf":[
				{"anyOf":[{"type":"string"},{"type":"integer"}]},{"type":"null"}]}}}`,
		},
		{
			name: "an optional const is wrapped with null",
			in:   `{"type":"object","properties":{"v":{"const":"x"}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["v"],"properties":{"v":{"anyOf":[{"const":"x"},{"type":"null"}]}}}`,
		},
		{
			name: "additionalProperties false kept",
			in:   `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"boolean"}}}`,
			want: `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"boolean"}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := toStrict(decode(t, tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := decode(t, tc.want); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("got  %s\nwant %s", g, tc.want)
			}
		})
	}
}

func TestToStrictRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"root not an object":         `{"type":"array","items":{"type":"string"}}`,
		"ref":                        `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}`,
		"allOf":                      `{"type":"object","properties":{"a":{"allOf":[{"type":"string"}]}}}`,
		"free-form map":              `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`,
		"object without properties":  `{"type":"object","properties":{"m":{"type":"object"}}}`,
		"additional properties true": `{"type":"object","additionalProperties":true,"properties":{"a":{"type":"string"}}}`,
		"items not a schema":         `{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`,
		"anyOf not a list":           `{"type":"object","properties":{"a":{"anyOf":{"type":"string"}}}}`,
		"anyOf branch not a schema":  `{"type":"object","properties":{"a":{"anyOf":[true]}}}`,
		"property not a schema":      `{"type":"object","properties":{"a":true}}`,
		"deep ref":                   `{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/x"}}}}`,
	} {
		if got, _, err := toStrict(decode(t, in)); err == nil {
			g, _ := json.Marshal(got)
			t.Errorf("%s: converted to %s", name, g)
		}
	}
}

func TestPrune(t *testing.T) {
	schema := `{"type":"object","required":["titles"],"properties":{
		"titles":{"type":"array","items":{"type":"object","required":["title"],"properties":{
			"title":{"type":"string"},"note":{"type":"string"},"was":{"type":["string","null"]}}}},
		"summary":{"type":"string"},
		"meta":{"type":"object","required":["k"],"properties":{"k":{"type":"string"},"opt":{"type":"integer"}}},
		"pick":{"anyOf":[
			{"type":"object","required":["a"],"properties":{"a":{"type":"string"},"x":{"type":"string"}}},
			{"type":"object","required":["b"],"properties":{"b":{"type":"string"},"y":{"type":"string"}}}]}}}`
	_, p, err := toStrict(decode(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	// A pruned answer is re-encoded: its keys come out sorted.
	for _, tc := range []struct{ name, in, want string }{
		{"introduced nulls go, original nulls stay",
			`{"titles":[{"title":"A","note":null,"was":null},{"title":"B","note":"n","was":"w"}],"summary":null,"meta":null,"pick":null}`,
			`{"titles":[{"title":"A","was":null},{"note":"n","title":"B","was":"w"}]}`},
		{"nested object", `{"titles":[],"meta":{"k":"v","opt":null}}`, `{"meta":{"k":"v"},"titles":[]}`},
		{"anyOf branch picked by its keys", `{"titles":[],"pick":{"b":"1","y":null}}`, `{"pick":{"b":"1"},"titles":[]}`},
		{"anyOf first branch", `{"titles":[],"pick":{"a":"1","x":null}}`, `{"pick":{"a":"1"},"titles":[]}`},
		{"anyOf no branch fits: left alone", `{"titles":[],"pick":{"a":"1","b":null}}`, `{"pick":{"a":"1","b":null},"titles":[]}`},
		{"wrong shapes are left to the validator", `{"titles":"x","meta":[1],"summary":3}`, `{"meta":[1],"summary":3,"titles":"x"}`},
		{"numbers keep their digits", `{"titles":[],"n":12345678901234567890.5,"summary":null}`, `{"n":12345678901234567890.5,"titles":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(p.pruneJSON(json.RawMessage(tc.in))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("not JSON: as is", func(t *testing.T) {
		if got := string(p.pruneJSON(json.RawMessage(`{"titles":`))); got != `{"titles":` {
			t.Errorf("got %s", got)
		}
	})
	t.Run("nothing to prune: byte for byte", func(t *testing.T) {
		_, p, err := toStrict(decode(t, `{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		in := `{ "a" : "x" }`
		if got := string(p.pruneJSON(json.RawMessage(in))); got != in {
			t.Errorf("got %s", got)
		}
	})
}

// The descriptions of dropped bounds are stable whatever the map order.
func TestToStrictDeterministic(t *testing.T) {
	in := `{"type":"object","properties":{"s":{"type":"string","minLength":1,"maxLength":9,"format":"uri"}}}`
	first, _, _ := toStrict(decode(t, in))
	a, _ := json.Marshal(first)
	for range 20 {
		again, _, _ := toStrict(decode(t, in))
		if b, _ := json.Marshal(again); string(b) != string(a) {
			t.Fatalf("%s != %s", b, a)
		}
	}
	if !strings.Contains(string(a), "at least 1 characters; at most 9 characters; format uri") {
		t.Errorf("description %s", a)
	}
}

func TestForGrammar(t *testing.T) {
	var in any
	if err := json.Unmarshal([]byte(`{"type":"object","required":["maxLength"],"properties":{
		"maxLength":{"type":"string","minLength":1,"maxLength":1000,"pattern":"^a","format":"uri"},
		"list":{"type":"array","minItems":5,"maxItems":5,"items":{"type":"integer","minimum":1,"maximum":10}},
		"many":{"type":"array","minItems":50,"items":{"type":"string"}}}}`), &in); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(forGrammar(in))
	want := `{"properties":{"list":{"items":{"maximum":10,"minimum":1,"type":"integer"},"minItems":5,"type":"array"},"many":{"items":{"type":"string"},"type":"array"},"maxLength":{"type":"string"}},"required":["maxLength"],"type":"object"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
