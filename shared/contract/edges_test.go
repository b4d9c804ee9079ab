package contract

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// ext is what every operation of a test document declares about how it is served.
const ext = `"tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other",`

// bodyOp loads a document whose one operation takes a body of schema (with components schemas) and
// returns that operation.
func bodyOp(t *testing.T, schema, schemas string) *Operation {
	t.Helper()
	return bodyOpContent(t, `{"application/json":{"schema":`+schema+`}}`, schemas)
}

func bodyOpContent(t *testing.T, content, schemas string) *Operation {
	t.Helper()
	c, err := load(doc(`{"post":{"operationId":"a",`+ext+`"requestBody":{"required":true,"content":`+content+`},"responses":{"200":{}}}}`,
		`{"schemas":`+schemas+`}`))
	if err != nil {
		t.Fatal(err)
	}
	return c.Operation("a")
}

// edgeCase is one body sent to an operation: accepted (field == "") or refused naming field with msg.
type edgeCase struct {
	name, body, field, msg string
}

func runBodies(t *testing.T, op *Operation, cases []edgeCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := op.ValidateBody([]byte(tt.body))
			if tt.field == "" {
				if err != nil {
					t.Fatalf("ValidateBody(%s) = %v, want ok", tt.body, err)
				}
				return
			}
			wantError(t, err, tt.field, tt.msg)
		})
	}
}

// TestIntegerFormats pins int32 and int64 at their edges: each bound is a value of the type, one past it
// is not (2^63 is not an int64, though float64(MaxInt64) equals it).
func TestIntegerFormats(t *testing.T) {
	op := bodyOp(t, `{"type":"object","properties":{
		"i32":{"type":"integer","format":"int32"},"i64":{"type":"integer","format":"int64"},
		"n32":{"type":"number","format":"int32"}}}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"int32 max", `{"i32":2147483647}`, "", ""},
		{"int32 min", `{"i32":-2147483648}`, "", ""},
		{"int32 max+1", `{"i32":2147483648}`, "i32", "i32: must be a 32-bit integer"},
		{"int32 min-1", `{"i32":-2147483649}`, "i32", "i32: must be a 32-bit integer"},
		{"int64 max", `{"i64":9223372036854775807}`, "", ""},
		{"int64 min", `{"i64":-9223372036854775808}`, "", ""},
		{"int64 max+1", `{"i64":9223372036854775808}`, "i64", "i64: must be a 64-bit integer"},
		{"int64 min-1", `{"i64":-9223372036854775809}`, "i64", "i64: must be a 64-bit integer"},
		{"int32 format on a number", `{"n32":2147483648.5}`, "n32", "n32: must be a 32-bit integer"},
		{"number within int32", `{"n32":-2147483648}`, "", ""},
	})
}

// TestZeroMinimums: minLength, minItems and minProperties of 0 are allowed in a document and constrain
// nothing.
func TestZeroMinimums(t *testing.T) {
	op := bodyOp(t, `{"type":"object","minProperties":0,"properties":{
		"s":{"type":"string","minLength":0,"maxLength":2},"a":{"type":"array","minItems":0,"maxItems":0},
		"o":{"type":"object","minProperties":0},"z":{"type":"string","maxLength":0},"p":{"type":"object","maxProperties":0}}}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"empty values", `{"s":"","a":[],"o":{}}`, "", ""},
		{"empty body object", `{}`, "", ""},
		{"maxItems 0", `{"a":[1]}`, "a", "a: must have at most 0 items"},
		{"maxLength still holds", `{"s":"abc"}`, "s", "s: must be at most 2 characters"},
		// A maximum of 0 is a bound like any other, unlike a minimum of 0.
		{"maxLength 0, empty", `{"z":""}`, "", ""},
		{"maxLength 0", `{"z":"a"}`, "z", "z: must be at most 0 characters"},
		{"maxProperties 0, empty", `{"p":{}}`, "", ""},
		{"maxProperties 0", `{"p":{"a":1}}`, "p", "p: must have at most 0 properties"},
	})
	for _, bad := range []string{`{"type":"string","minLength":-1}`, `{"type":"array","maxItems":-1}`} {
		c, err := load(doc(`{"post":{"operationId":"a",`+ext+`"requestBody":{"content":{"application/json":{"schema":`+bad+`}}},"responses":{"200":{}}}}`, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Operation("a").ValidateBody([]byte(`"x"`)); err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("%s: %v; want the document refused", bad, err)
		}
	}
}

// TestAnnotationsConstrainNothing: a schema of annotations alone (description, title, default, x-*)
// accepts any value but null, a number past float64's range included, as the empty schema does.
func TestAnnotationsConstrainNothing(t *testing.T) {
	op := bodyOp(t, `{"type":"object","properties":{
		"d":{"description":"anything"},"x":{"x-note":"anything"},"f":{"default":1},"e":{},
		"typed":{"type":"number"}}}`, `{}`)
	cases := []edgeCase{{"typed, out of range", `{"typed":1e400}`, "typed", "typed: is out of range"}}
	for _, p := range []string{"d", "x", "f", "e"} {
		cases = append(cases,
			edgeCase{p + " out of range", `{"` + p + `":1e400}`, "", ""},
			edgeCase{p + " object", `{"` + p + `":{"a":[1,"b"]}}`, "", ""},
			edgeCase{p + " null", `{"` + p + `":null}`, p, p + ": must not be null"},
		)
	}
	runBodies(t, op, cases)
}

// TestReadOnlyRequired: a required read-only member is never sent in a request, so its absence is fine
// there; a required member that is not read-only is still required.
func TestReadOnlyRequired(t *testing.T) {
	op := bodyOp(t, `{"type":"object","required":["id","name"],"properties":{
		"id":{"type":"string","readOnly":true},"name":{"type":"string"}}}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"id absent", `{"name":"n"}`, "", ""},
		{"name absent", `{}`, "name", "name: is required"},
		{"id sent", `{"id":"x","name":"n"}`, "id", "id: is read-only"},
	})
}

// TestUniqueItemsOfArraysAndObjects: items compare by value, objects whatever their member order.
func TestUniqueItemsOfArraysAndObjects(t *testing.T) {
	op := bodyOp(t, `{"type":"object","properties":{"l":{"type":"array","uniqueItems":true,"items":{}}}}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"same arrays", `{"l":[[1,2],[1,2]]}`, "l", "l: must not contain duplicates (items 0 and 1 are equal)"},
		{"arrays differing by a separator", `{"l":[[1,2],[12]]}`, "", ""},
		{"arrays in another order", `{"l":[[1,2],[2,1]]}`, "", ""},
		{"same objects, members reordered", `{"l":[{"a":1,"b":2},{"b":2,"a":1}]}`, "l", "l: must not contain duplicates (items 0 and 1 are equal)"},
		{"objects differing in a value", `{"l":[{"a":1,"b":2},{"a":1,"b":3}]}`, "", ""},
		{"objects differing by a separator", `{"l":[{"a":[1,2]},{"a":[12]}]}`, "", ""},
		// Numbers compare at full precision, by value.
		{"numbers differing in the second digit", `{"l":[1.1,1.2,12,13]}`, "", ""},
		{"numbers differing far down", `{"l":[0.30000000000000004,0.3]}`, "", ""},
		{"equal numbers written apart", `{"l":[1.5,15e-1]}`, "l", "l: must not contain duplicates (items 0 and 1 are equal)"},
	})
}

// TestAlternativesExplainThemselves: when no alternative of an anyOf accepts a body, the error is the one
// of the alternative the client evidently meant (the only one whose required members are all there);
// otherwise the alternatives are listed.
func TestAlternativesExplainThemselves(t *testing.T) {
	op := bodyOp(t, `{"type":"object","anyOf":[
		{"required":["radius"],"properties":{"radius":{"type":"number","minimum":0}}},
		{"required":["width","height"],"properties":{"width":{"type":"number","minimum":0},"height":{"type":"number","minimum":0}}},
		{"minProperties":10}]}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"first meant", `{"radius":-1}`, "radius", "radius: must be at least 0"},
		{"second meant", `{"width":-1,"height":1}`, "width", "width: must be at least 0"},
		{"both complete", `{"radius":-1,"width":-1,"height":1}`, "body", "body: must match one of the allowed shapes"},
		{"none complete", `{"depth":1}`, "body", "body: must match one of the allowed shapes"},
		{"first accepts", `{"radius":1}`, "", ""},
		{"second accepts", `{"width":1,"height":2}`, "", ""},
	})
	// Three complete alternatives are no more telling than two.
	three := bodyOp(t, `{"type":"object","anyOf":[
		{"required":["a"],"properties":{"a":{"type":"integer"}}},
		{"required":["a","b"],"properties":{"a":{"type":"boolean"}}},
		{"required":["a","c"],"properties":{"a":{"type":"array"}}}]}`, `{}`)
	runBodies(t, three, []edgeCase{
		{"three complete", `{"a":"x","b":1,"c":1}`, "body", "body: must include a, or a and b, or a and c"},
		{"two complete", `{"a":"x","b":1}`, "body", "body: must include a, or a and b, or a and c"},
		{"one complete", `{"a":"x"}`, "a", "a: must be an integer"},
	})
	listed := bodyOp(t, `{"type":"object","oneOf":[
		{"required":["a"],"properties":{"a":{"type":"string"}}},{"required":["b","c"]}]}`, `{}`)
	runBodies(t, listed, []edgeCase{
		{"none complete", `{"c":1}`, "body", "body: must include a, or b and c"},
		{"the complete one fails", `{"a":1}`, "a", "a: must be a string"},
		{"one", `{"a":"x"}`, "", ""},
		{"both", `{"a":"x","b":1,"c":2}`, "body", "body: must match exactly one of the allowed shapes, not 2"},
	})
}

// TestDefaultsOfTheAcceptingAlternative: only the first alternative that accepts a body adds its
// defaults, for anyOf and oneOf.
func TestDefaultsOfTheAcceptingAlternative(t *testing.T) {
	tests := []struct {
		name, schema, body string
		want               map[string]any
	}{
		{"anyOf: the first of two that accept", `{"type":"object","anyOf":[
			{"properties":{"x":{"type":"integer","default":1}}},{"properties":{"y":{"type":"integer","default":2}}}]}`,
			`{}`, map[string]any{"x": json.Number("1")}},
		{"anyOf: the second, when the first refuses", `{"type":"object","anyOf":[
			{"required":["k"],"properties":{"x":{"type":"integer","default":1}}},{"properties":{"y":{"type":"integer","default":2}}}]}`,
			`{}`, map[string]any{"y": json.Number("2")}},
		{"oneOf: the first", `{"type":"object","oneOf":[
			{"required":["a"],"properties":{"d":{"type":"string","default":"A"}}},{"required":["b"],"properties":{"d":{"type":"string","default":"B"}}}]}`,
			`{"a":1}`, map[string]any{"a": json.Number("1"), "d": "A"}},
		{"oneOf: the second", `{"type":"object","oneOf":[
			{"required":["a"],"properties":{"d":{"type":"string","default":"A"}}},{"required":["b"],"properties":{"d":{"type":"string","default":"B"}}}]}`,
			`{"b":1}`, map[string]any{"b": json.Number("1"), "d": "B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bodyOp(t, tt.schema, `{}`).ValidateBody([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestBodyMediaTypes: the body's schema is application/json's, whatever other JSON types the operation
// lists; without it, the first +json type in name order.
func TestBodyMediaTypes(t *testing.T) {
	str, num := `{"schema":{"type":"string"}}`, `{"schema":{"type":"number"}}`
	tests := []struct {
		name, content, ok, bad string
	}{
		{"application/json before its variants", `{"application/json":` + str + `,"application/json; charset=utf-8":` + num + `}`, `"s"`, `1`},
		{"a variant of application/json", `{"text/plain":` + num + `,"Application/JSON; charset=utf-8":` + str + `}`, `"s"`, `1`},
		{"a +json type", `{"text/plain":` + num + `,"application/vnd.x+json":` + str + `}`, `"s"`, `1`},
		{"the first +json type", `{"application/problem+json":` + str + `,"application/vnd.x+json":` + num + `}`, `"s"`, `1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := bodyOpContent(t, tt.content, `{}`)
			if _, err := op.ValidateBody([]byte(tt.ok)); err != nil {
				t.Errorf("%s: %v", tt.ok, err)
			}
			_, err := op.ValidateBody([]byte(tt.bad))
			wantError(t, err, "body", "body: must be a string")
		})
	}
}

// TestDecodeErrorsNameTheirElement: an error found while decoding an array names the element it is in.
func TestDecodeErrorsNameTheirElement(t *testing.T) {
	op := bodyOp(t, `{"type":"object","properties":{"a":{"type":"array"}}}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"second element", `{"a":[{"b":1},{"b":1,"b":2}]}`, "a[1].b", "a[1].b: is given more than once"},
		{"third element, nested", `{"a":[0,1,[{},{"c":"\udc00"}]]}`, "a[2][1].c", "a[2][1].c: must be valid UTF-8 text (no invalid bytes, no unpaired surrogate escapes)"},
	})
}

// TestDates pins the date format at the edges of its calendar and of its digits.
func TestDates(t *testing.T) {
	for date, ok := range map[string]bool{
		"2024-02-29": true, "2023-02-28": true, "2023-02-29": false, "2024-12-31": true, "2024-12-32": false,
		"2024-01-00": false, "2024-00-10": false, "2024-13-01": false, "20a4-01-01": false, "2024-0a-01": false,
		"2024-01-0a": false, "2024/01/01": false, "2024-01-1": false, "1900-01-01": true, "9999-12-24": true,
	} {
		if isDate(date) != ok {
			t.Errorf("isDate(%q) = %t, want %t", date, !ok, ok)
		}
	}
}

// TestParameterDeclarations: the parameter forms the validator does not enforce are refused when the
// document is compiled.
func TestParameterDeclarations(t *testing.T) {
	param := func(p string) string {
		return doc(`{"get":{"operationId":"a",`+ext+`"parameters":[`+p+`],"responses":{"200":{}}}}`, `{}`)
	}
	tests := []struct{ name, doc, want string }{
		{"unknown location", param(`{"name":"c","in":"body","schema":{"type":"string"}}`), `unknown location "body"`},
		{"schema and content", param(`{"name":"c","in":"query","schema":{"type":"string"},"content":{"application/json":{}}}`), "only parameters with a schema"},
		{"neither schema nor content", param(`{"name":"c","in":"query"}`), "only parameters with a schema"},
		{"allowEmptyValue", param(`{"name":"c","in":"query","allowEmptyValue":true,"schema":{"type":"string"}}`), "allowEmptyValue is not supported"},
		{"an array in a header", param(`{"name":"c","in":"header","schema":{"type":"array","items":{"type":"string"}}}`), "only query arrays of scalars"},
		{"an array in the path", param(`{"name":"c","in":"path","schema":{"type":"array","items":{"type":"integer"}}}`), "only query arrays of scalars"},
		{"a query array of objects", param(`{"name":"c","in":"query","schema":{"type":"array","items":{"type":"object"}}}`), "only query arrays of scalars"},
		{"a query array of arrays", param(`{"name":"c","in":"query","schema":{"type":"array","items":{"type":"array","items":{"type":"string"}}}}`), "only query arrays of scalars"},
		{"a query array without items", param(`{"name":"c","in":"query","schema":{"type":"array"}}`), "only query arrays of scalars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Operation("a").ValidateParams(nil, url.Values{}, http.Header{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	for _, in := range []string{"path", "query", "header"} {
		c, err := load(doc(`{"get":{"operationId":"a",`+ext+`"parameters":[{"name":"c","in":"`+in+`","schema":{"type":"string"}}],"responses":{"200":{}}}}`, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Operation("a").ValidateParams(map[string]string{"c": "v"}, url.Values{"c": {"v"}}, http.Header{"C": {"v"}}); err != nil {
			t.Errorf("a %s parameter: %v", in, err)
		}
	}
}

// TestUnexplodedArrays: a query array with explode: false is one comma-separated value, given once.
func TestUnexplodedArrays(t *testing.T) {
	c, err := load(doc(`{"get":{"operationId":"a",`+ext+`"parameters":[{"name":"ids","in":"query","explode":false,
		"schema":{"type":"array","items":{"type":"string"}}}],"responses":{"200":{}}}}`, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	op := c.Operation("a")
	p, err := op.ValidateParams(nil, url.Values{"ids": {"a,b"}}, http.Header{})
	if err != nil || !reflect.DeepEqual(p.Query["ids"], []any{"a", "b"}) {
		t.Fatalf("ids=a,b: %#v, %v", p.Query["ids"], err)
	}
	_, err = op.ValidateParams(nil, url.Values{"ids": {"a,b", "c"}}, http.Header{})
	wantError(t, err, "ids", "ids: must be given once")
}

// TestResponsesGiveTheSuccessStatus: the smallest 2xx code (2XX counting as 200) is the success status;
// other codes, however small, are not.
func TestResponsesGiveTheSuccessStatus(t *testing.T) {
	for responses, want := range map[string]int{
		`{"204":{},"200":{}}`:                           200,
		`{"100":{},"202":{},"default":{}}`:              202,
		`{"2XX":{},"201":{}}`:                           200,
		`{"299":{},"300":{}}`:                           299,
		`{"199":{},"201":{},"99999999999999999999":{}}`: 201,
	} {
		c, err := load(doc(`{"get":{"operationId":"a",`+ext+`"responses":`+responses+`}}`, `{}`))
		if err != nil {
			t.Fatalf("%s: %v", responses, err)
		}
		if got := c.Operation("a").SuccessStatus; got != want {
			t.Errorf("%s: success status %d, want %d", responses, got, want)
		}
	}
	for _, responses := range []string{`{"199":{},"300":{}}`, `{"99999999999999999999":{}}`} {
		if _, err := load(doc(`{"get":{"operationId":"a",`+ext+`"responses":`+responses+`}}`, `{}`)); err == nil || !strings.Contains(err.Error(), "no 2xx response") {
			t.Errorf("%s: %v; want no 2xx response", responses, err)
		}
	}
}

// TestScannerStrings: the document scanner reads strings with escapes wherever they stand, runs of
// backslashes before a quote, empty strings, and reports a document cut short as such.
func TestScannerStrings(t *testing.T) {
	c, err := load(`{"openapi":"3.1.0","info":{"title":"","description":"\\"},"paths":{"/x":{"get":{"operationId":"\u0061b\\",` +
		`"tags":["\"T\"","\\\"U"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other",` +
		`"responses":{"200":{"description":""}}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Operation(`ab\`) == nil {
		t.Fatalf("operations: %v", c.Operations[0].ID)
	}
	if op := c.Operation(`ab\`); op.Tag != `"T"` {
		t.Fatalf("tag %q, want %q", op.Tag, `"T"`)
	}
	for _, tt := range []struct{ name, doc, want string }{
		{"cut short in a top-level string", `{"openapi":"3.1`, "unexpected end"},
		{"cut short in a skipped object", `{"info":{"a":[1,{"b":"c"}]`, "unexpected end"},
		{"cut short in a skipped string", `{"info":{"a":"b`, "unexpected end"},
		// A number or literal runs to the end of what is there: the scan stops at the document's end.
		{"cut short after a skipped number", `{"info":{"a":12`, "unexpected end"},
		{"cut short after a skipped literal", `{"info":true`, "unexpected end"},
		{"no separator", `{"info":{} "paths":{}}`, `offset 11: expected , or } after`},
	} {
		_, err := load(tt.doc)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestOptionalAndValue(t *testing.T) {
	for _, tt := range []struct {
		o    Optional[string]
		want string
	}{{Optional[string]{}, "null"}, {Optional[string]{Set: true}, "null"}, {Some("x"), `"x"`}} {
		b, err := json.Marshal(tt.o)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.o, b, err, tt.want)
		}
	}
	if got := Value[string](nil); got != "" {
		t.Errorf("Value(nil) = %q", got)
	}
	if got := Value(Ptr(7)); got != 7 {
		t.Errorf("Value(&7) = %d", got)
	}
}

// TestNullThroughAlternatives: a schema that is not nullable itself still takes null when one of its
// alternatives does, whichever keyword composes them.
func TestNullThroughAlternatives(t *testing.T) {
	op := bodyOp(t, `{"type":"object","properties":{
		"any":{"anyOf":[{"type":"integer"},{"type":"string","nullable":true}]},
		"one":{"oneOf":[{"type":"integer"},{"type":"string","nullable":true}]},
		"all":{"allOf":[{"type":"string","nullable":true}]},
		"none":{"anyOf":[{"type":"integer"},{"type":"string"}]},
		"plain":{"type":"string"}}}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"anyOf", `{"any":null}`, "", ""},
		{"oneOf", `{"one":null}`, "", ""},
		{"allOf", `{"all":null}`, "", ""},
		{"no alternative takes null", `{"none":null}`, "none", "none: must match one of the allowed shapes"},
		{"no alternatives", `{"plain":null}`, "plain", "plain: must not be null"},
		{"anyOf, a value", `{"any":"x"}`, "", ""},
	})
}

// TestPlacesUnderAnEmptyName: a member a client named "" is shown as "" in an error's field, and what lies
// beneath it still follows.
func TestPlacesUnderAnEmptyName(t *testing.T) {
	op := bodyOp(t, `{"type":"object","additionalProperties":{"type":"object","properties":{"b":{"type":"array","items":{"type":"integer"}}}}}`, `{}`)
	runBodies(t, op, []edgeCase{
		{"beneath", `{"":{"b":[1,"x"]}}`, `"".b[1]`, `"".b[1]: must be an integer`},
		{"at it", `{"":1}`, `""`, `"": must be an object`},
		{"fine", `{"":{"b":[1]}}`, "", ""},
	})
}

// TestEnumEcho: a refused enum value is quoted whole up to maxEchoed characters, and clipped past them.
func TestEnumEcho(t *testing.T) {
	op := bodyOp(t, `{"type":"object","properties":{"e":{"type":"string","enum":["a","b"]}}}`, `{}`)
	at, over := strings.Repeat("é", maxEchoed), strings.Repeat("é", maxEchoed+1)
	runBodies(t, op, []edgeCase{
		{"at the limit", `{"e":"` + at + `"}`, "e", `e: "` + at + `" is not one of a, b`},
		{"one over", `{"e":"` + over + `"}`, "e", `e: "` + at + `…" is not one of a, b`},
	})
}

// TestClip: a name is echoed whole up to maxEcho bytes, else cut at a character boundary at or before
// it; bytes that start no character anywhere (which no decoded body holds) still never make it panic.
func TestClip(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"at the limit", strings.Repeat("k", maxEcho), strings.Repeat("k", maxEcho)},
		{"one over", strings.Repeat("k", maxEcho+1), strings.Repeat("k", maxEcho) + "…"},
		{"a character across the limit", strings.Repeat("k", maxEcho-1) + "é", strings.Repeat("k", maxEcho-1) + "…"},
		{"no character starts", strings.Repeat("\x80", maxEcho+50), "…"},
	} {
		if got := clip(tt.in); got != tt.want {
			t.Errorf("%s: clip = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestParameterOrderAndOverrides: errors come path first, then query, then header, whatever order the
// document declares them in; an operation's parameter replaces the path item's of the same name and
// location, and the operation's parameters after it still apply.
func TestParameterOrderAndOverrides(t *testing.T) {
	c, err := load(`{"openapi":"3.0.3","paths":{"/x/{id}":{
		"parameters":[{"name":"q","in":"query","schema":{"type":"integer","maximum":5}}],
		"get":{"operationId":"a",` + ext + `"parameters":[
			{"name":"h","in":"header","schema":{"type":"integer"}},
			{"name":"q","in":"query","schema":{"type":"integer","maximum":10}},
			{"name":"r","in":"query","required":true,"schema":{"type":"integer"}},
			{"name":"id","in":"path","schema":{"type":"integer"}}],
		"responses":{"200":{}}}}},"components":{}}`)
	if err != nil {
		t.Fatal(err)
	}
	op := c.Operation("a")
	for _, tt := range []struct {
		name   string
		path   map[string]string
		query  url.Values
		header http.Header
		field  string // "" when accepted
		msg    string
	}{
		{"all wrong: the path's first", map[string]string{"id": "x"}, url.Values{"q": {"x"}}, http.Header{"H": {"x"}}, "id", "id: must be an integer"},
		{"then the query's", map[string]string{"id": "1"}, url.Values{"q": {"x"}}, http.Header{"H": {"x"}}, "q", "q: must be an integer"},
		{"then the header's", map[string]string{"id": "1"}, url.Values{"q": {"1"}, "r": {"1"}}, http.Header{"H": {"x"}}, "h", "h: must be an integer"},
		{"the operation's bound, not the path item's", map[string]string{"id": "1"}, url.Values{"q": {"7"}, "r": {"1"}}, http.Header{}, "", ""},
		{"over the operation's bound", map[string]string{"id": "1"}, url.Values{"q": {"11"}, "r": {"1"}}, http.Header{}, "q", "q: must be at most 10"},
		{"a parameter after the override", map[string]string{"id": "1"}, url.Values{"q": {"7"}}, http.Header{}, "r", "r: is required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := op.ValidateParams(tt.path, tt.query, tt.header)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, tt.field, tt.msg)
		})
	}
}
