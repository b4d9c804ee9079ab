package contract

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const (
	uuidLower = "3f2b8c1e-9d4a-4e7b-8c6f-1a2b3c4d5e6f"
	uuidUpper = "3F2B8C1E-9D4A-4E7B-8C6F-1A2B3C4D5E6F"
)

// bodyCase is one request body for one fixture operation. An empty msg means the body is valid.
type bodyCase struct {
	name  string
	op    string
	body  string
	field string
	msg   string
	// kinDiffers explains why kin-openapi judges this body differently; empty when it must agree.
	kinDiffers string
}

// item builds a createItem body: the two required members plus extra members (raw JSON).
func item(extra ...string) string {
	return `{"title":"t","status":"planned"` + strings.Join(append([]string{""}, extra...), ",") + `}`
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func nest(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

var bodyCases = []bodyCase{
	// required, type, null
	{name: "minimal", op: "createItem", body: item()},
	{name: "required missing", op: "createItem", body: `{"status":"planned"}`, field: "title", msg: "title: is required"},
	{name: "required before properties", op: "createItem", body: `{"status":"nope"}`, field: "title", msg: "title: is required"},
	{name: "required in declared order", op: "createItem", body: `{}`, field: "title", msg: "title: is required"},
	{name: "string wrong type", op: "createItem", body: `{"title":12,"status":"planned"}`, field: "title", msg: "title: must be a string"},
	{name: "null not nullable", op: "createItem", body: `{"title":null,"status":"planned"}`, field: "title", msg: "title: must not be null"},
	{name: "body not an object", op: "createItem", body: `[]`, field: "body", msg: "body: must be an object"},
	{name: "body null", op: "createItem", body: `null`, field: "body", msg: "body: must not be null"},
	{name: "body a string", op: "createItem", body: `"x"`, field: "body", msg: "body: must be an object"},
	{name: "unknown properties ignored", op: "createItem", body: item(`"zzz":{"a":[1,2]}`)},
	{name: "properties in sorted order", op: "createItem", body: item(`"weight":5`, `"count":0`), field: "count", msg: "count: must be at least 1"},

	// minLength / maxLength count runes
	{name: "maxLength 200 ascii", op: "createItem", body: `{"title":` + q(strings.Repeat("a", 200)) + `,"status":"planned"}`},
	{name: "maxLength 200 multi-byte", op: "createItem", body: `{"title":` + q(strings.Repeat("日", 200)) + `,"status":"planned"}`},
	{name: "maxLength 200 emoji", op: "createItem", body: `{"title":` + q(strings.Repeat("🎬", 200)) + `,"status":"planned"}`},
	{name: "maxLength 201", op: "createItem", body: `{"title":` + q(strings.Repeat("é", 201)) + `,"status":"planned"}`, field: "title", msg: "title: must be at most 200 characters"},
	{name: "minLength 1 empty", op: "createItem", body: `{"title":"","status":"planned"}`, field: "title", msg: "title: must not be empty"},
	{name: "minLength 1 one rune", op: "createItem", body: `{"title":"é","status":"planned"}`},
	{name: "minLength 2", op: "strict", body: `{"kind":"a","note":"é"}`, field: "note", msg: "note: must be at least 2 characters"},

	// enum
	{name: "enum ok", op: "createItem", body: `{"title":"t","status":"published"}`},
	{name: "enum unknown", op: "createItem", body: `{"title":"t","status":"done"}`, field: "status", msg: "status: \"done\" is not one of planned, scripted, filmed, edited, published"},
	{name: "enum case matters", op: "createItem", body: `{"title":"t","status":"Planned"}`, field: "status", msg: "status: \"Planned\" is not one of planned, scripted, filmed, edited, published"},
	{name: "enum integer", op: "updateItem", body: `{"level":2}`},
	{name: "enum integer spelled 2.0", op: "updateItem", body: `{"level":2.0}`, field: "level", msg: "level: must be an integer (digits only, no fraction or exponent)", kinDiffers: "an integer is written without a fraction or exponent here"},
	{name: "enum integer unknown", op: "updateItem", body: `{"level":4}`, field: "level", msg: "level: must be one of 1, 2, 3"},
	{name: "enum with spaces", op: "createItem", body: item(`"dimensions":[{"name":"Brand Identity","score":5,"feedback":""}]`)},

	// integer vs number
	{name: "integer", op: "createItem", body: item(`"count":20`)},
	{name: "integer spelled 1.0", op: "createItem", body: item(`"count":1.0`), field: "count", msg: "count: must be an integer (digits only, no fraction or exponent)", kinDiffers: "an integer is written without a fraction or exponent here"},
	{name: "integer spelled 2e1", op: "createItem", body: item(`"count":2e1`), field: "count", msg: "count: must be an integer (digits only, no fraction or exponent)", kinDiffers: "an integer is written without a fraction or exponent here"},
	{name: "integer fractional", op: "createItem", body: item(`"count":1.5`), field: "count", msg: "count: must be an integer (digits only, no fraction or exponent)"},
	{name: "integer as string", op: "createItem", body: item(`"count":"3"`), field: "count", msg: "count: must be an integer"},
	{name: "integer above maximum", op: "createItem", body: item(`"count":21`), field: "count", msg: "count: must be at most 20"},
	{name: "integer below minimum", op: "createItem", body: item(`"count":0`), field: "count", msg: "count: must be at least 1"},
	{name: "number out of range", op: "createItem", body: item(`"count":1e400`), field: "count", msg: "count: is out of range"},
	{name: "boolean wrong type", op: "createItem", body: item(`"isActive":"true"`), field: "isActive", msg: "isActive: must be a boolean"},
	{name: "boolean", op: "createItem", body: item(`"isActive":false`)},

	// minimum / maximum, inclusive and exclusive
	{name: "minimum inclusive", op: "createItem", body: item(`"dimensions":[{"name":"Niche Clarity","score":1,"feedback":"f"}]`)},
	{name: "maximum inclusive", op: "createItem", body: item(`"dimensions":[{"name":"Niche Clarity","score":10,"feedback":"f"}]`)},
	{name: "maximum nested", op: "createItem", body: item(`"dimensions":[{"name":"Niche Clarity","score":10.5,"feedback":"f"}]`), field: "dimensions[0].score", msg: "dimensions[0].score: must be at most 10"},
	{name: "minimum nested", op: "createItem", body: item(`"dimensions":[{"name":"Niche Clarity","score":5,"feedback":"f"},{"name":"Niche Clarity","score":0.99,"feedback":"f"}]`), field: "dimensions[1].score", msg: "dimensions[1].score: must be at least 1"},
	{name: "exclusiveMinimum bound", op: "createItem", body: item(`"weight":0`), field: "weight", msg: "weight: must be greater than 0"},
	{name: "exclusiveMaximum bound", op: "createItem", body: item(`"weight":1`), field: "weight", msg: "weight: must be less than 1"},
	{name: "exclusive inside", op: "createItem", body: item(`"weight":0.000001`)},
	{name: "nested required", op: "createItem", body: item(`"dimensions":[{"name":"Niche Clarity","score":5}]`), field: "dimensions[0].feedback", msg: "dimensions[0].feedback: is required"},

	// minItems / maxItems / uniqueItems / items
	{name: "exactly 4 items", op: "createItem", body: item(`"keywords":["a","b","c","d"]`)},
	{name: "3 of exactly 4 items", op: "createItem", body: item(`"keywords":["a","b","c"]`), field: "keywords", msg: "keywords: must have exactly 4 items"},
	{name: "5 of exactly 4 items", op: "createItem", body: item(`"keywords":["a","b","c","d","e"]`), field: "keywords", msg: "keywords: must have exactly 4 items"},
	{name: "maxItems", op: "createItem", body: item(`"dimensions":[` + strings.Repeat(`{"name":"Niche Clarity","score":5,"feedback":"f"},`, 5) + `{"name":"Niche Clarity","score":5,"feedback":"f"}]`), field: "dimensions", msg: "dimensions: must have at most 5 items"},
	{name: "uniqueItems", op: "createItem", body: item(`"keywords":["a","b","a","d"]`), field: "keywords", msg: "keywords: must not contain duplicates (items 0 and 2 are equal)"},
	{name: "uniqueItems numbers by value", op: "createItem", body: item(`"scores":[1,2,1.0]`), field: "scores", msg: "scores: must not contain duplicates (items 0 and 2 are equal)"},
	{name: "uniqueItems distinct", op: "createItem", body: item(`"scores":[1,2,3.5]`)},
	{name: "item wrong type", op: "createItem", body: item(`"keywords":["a",5,"c","d"]`), field: "keywords[1]", msg: "keywords[1]: must be a string"},
	{name: "item too short", op: "createItem", body: item(`"keywords":["a","b","","d"]`), field: "keywords[2]", msg: "keywords[2]: must not be empty"},
	{name: "array wrong type", op: "createItem", body: item(`"keywords":"a,b,c,d"`), field: "keywords", msg: "keywords: must be an array"},

	// pattern
	{name: "pattern", op: "createItem", body: item(`"publishTime":"23:59"`)},
	{name: "pattern mismatch", op: "createItem", body: item(`"publishTime":"24:00"`), field: "publishTime", msg: "publishTime: must match the pattern ^([01][0-9]|2[0-3]):[0-5][0-9]$"},
	{name: "pattern nullable", op: "createItem", body: item(`"publishTime":null`)},

	// formats
	{name: "uuid", op: "createItem", body: item(`"seriesId":"` + uuidLower + `"`)},
	{name: "uuid upper case", op: "createItem", body: item(`"seriesId":"` + uuidUpper + `"`)},
	{name: "uuid null", op: "createItem", body: item(`"seriesId":null`)},
	{name: "uuid without dashes", op: "createItem", body: item(`"seriesId":"3f2b8c1e9d4a4e7b8c6f1a2b3c4d5e6f"`), field: "seriesId", msg: "seriesId: must be a UUID"},
	{name: "uuid in braces", op: "createItem", body: item(`"seriesId":"{` + uuidLower + `}"`), field: "seriesId", msg: "seriesId: must be a UUID"},
	{name: "uuid not hex", op: "createItem", body: item(`"seriesId":"3f2b8c1e-9d4a-4e7b-8c6f-1a2b3c4d5e6g"`), field: "seriesId", msg: "seriesId: must be a UUID"},
	{name: "date", op: "createItem", body: item(`"due":"2024-02-29"`)},
	{name: "date not in calendar", op: "createItem", body: item(`"due":"2023-02-29"`), field: "due", msg: "due: must be a date (YYYY-MM-DD)"},
	{name: "date april 31", op: "createItem", body: item(`"due":"2024-04-31"`), field: "due", msg: "due: must be a date (YYYY-MM-DD)"},
	{name: "date month 13", op: "createItem", body: item(`"due":"2024-13-01"`), field: "due", msg: "due: must be a date (YYYY-MM-DD)"},
	{name: "date one-digit month", op: "createItem", body: item(`"due":"2024-1-01"`), field: "due", msg: "due: must be a date (YYYY-MM-DD)"},
	{name: "date with time", op: "createItem", body: item(`"due":"2024-01-01T00:00:00Z"`), field: "due", msg: "due: must be a date (YYYY-MM-DD)"},
	{name: "date-time Z", op: "createItem", body: item(`"at":"2025-03-09T14:00:00Z"`)},
	{name: "date-time offset and fraction", op: "createItem", body: item(`"at":"2025-03-09T14:00:00.123+02:00"`)},
	{name: "date-time space", op: "createItem", body: item(`"at":"2025-03-09 14:00:00Z"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time hour 25", op: "createItem", body: item(`"at":"2025-03-09T25:00:00Z"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time offset 23:59", op: "createItem", body: item(`"at":"2025-03-09T14:00:00-23:59"`)},
	{name: "date-time offset minute 60", op: "createItem", body: item(`"at":"2025-03-09T14:00:00+05:60"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time offset 24", op: "createItem", body: item(`"at":"2025-03-09T14:00:00+24:00"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time no zone", op: "createItem", body: item(`"at":"2025-03-09T14:00:00"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time one-digit hour", op: "createItem", body: item(`"at":"2025-03-09T1:00:00Z"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time one-digit minute", op: "createItem", body: item(`"at":"2025-03-09T14:0:00Z"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time one-digit month", op: "createItem", body: item(`"at":"2025-3-09T14:00:00Z"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time empty fraction", op: "createItem", body: item(`"at":"2025-03-09T14:00:00.Z"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time one-digit offset hour", op: "createItem", body: item(`"at":"2025-03-09T14:00:00+1:00"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time offset without colon", op: "createItem", body: item(`"at":"2025-03-09T14:00:00+0100"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time lowercase t", op: "createItem", body: item(`"at":"2025-03-09t14:00:00Z"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time trailing space", op: "createItem", body: item(`"at":"2025-03-09T14:00:00Z "`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time two zones", op: "createItem", body: item(`"at":"2025-03-09T14:00:00Z+01:00"`), field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time long fraction and offset", op: "createItem", body: item(`"at":"2025-03-09T14:00:00.123456789-01:30"`)},
	{name: "uri", op: "createItem", body: item(`"videoUrl":"https://www.example.com/watch?v=abc#t=1"`)},
	{name: "uri upper-case scheme", op: "createItem", body: item(`"videoUrl":"HTTP://EXAMPLE.COM"`)},
	{name: "uri ftp", op: "createItem", body: item(`"videoUrl":"ftp://example.com/x"`), field: "videoUrl", msg: "videoUrl: must be an absolute http or https URL"},
	{name: "uri relative", op: "createItem", body: item(`"videoUrl":"example.com/x"`), field: "videoUrl", msg: "videoUrl: must be an absolute http or https URL"},
	// A fragment straight after the host: url.Parse takes it, but an HTTP client sends the request target
	// as ParseRequestURI reads it, where '#' is part of the host.
	{name: "uri fragment after the host", op: "createItem", body: item(`"videoUrl":"http://0#"`), field: "videoUrl", msg: "videoUrl: must be an absolute http or https URL"},
	{name: "uri no host", op: "createItem", body: item(`"videoUrl":"https://"`), field: "videoUrl", msg: "videoUrl: must be an absolute http or https URL"},
	{name: "uri port only", op: "createItem", body: item(`"videoUrl":"https://:8080/x"`), field: "videoUrl", msg: "videoUrl: must be an absolute http or https URL"},
	{name: "uri space", op: "createItem", body: item(`"videoUrl":"https://example.com/a b"`), field: "videoUrl", msg: "videoUrl: must be an absolute http or https URL"},

	// readOnly, additionalProperties, min/maxProperties
	{name: "readOnly sent", op: "createItem", body: item(`"id":"` + uuidLower + `"`), field: "id", msg: "id: is read-only"},
	{name: "additionalProperties false", op: "strict", body: `{"kind":"a","zz":1}`, field: "zz", msg: "zz: is not allowed"},
	{name: "additionalProperties schema", op: "free", body: `{"input":1,"labels":{"a":1,"b":-1}}`, field: "labels.b", msg: "labels.b: must be at least 0"},
	{name: "client key clipped", op: "free", body: `{"input":1,"labels":{"` + strings.Repeat("k", 150) + `":-1}}`, field: "labels." + strings.Repeat("k", 100) + "…", msg: "labels." + strings.Repeat("k", 100) + "…: must be at least 0"},
	// Exactly maxEcho bytes are echoed whole; one more is clipped (at a character boundary).
	{name: "client key of exactly the echo limit", op: "free", body: `{"input":1,"labels":{"` + strings.Repeat("k", 100) + `":-1}}`, field: "labels." + strings.Repeat("k", 100), msg: "labels." + strings.Repeat("k", 100) + ": must be at least 0"},
	{name: "client key one over the echo limit", op: "free", body: `{"input":1,"labels":{"` + strings.Repeat("k", 101) + `":-1}}`, field: "labels." + strings.Repeat("k", 100) + "…", msg: "labels." + strings.Repeat("k", 100) + "…: must be at least 0"},
	{name: "client key clipped inside a character", op: "free", body: `{"input":1,"labels":{"` + strings.Repeat("k", 99) + `é":-1}}`, field: "labels." + strings.Repeat("k", 99) + "…", msg: "labels." + strings.Repeat("k", 99) + "…: must be at least 0"},
	{name: "minProperties", op: "updateItem", body: `{}`, field: "body", msg: "body: must have at least 1 property"},
	{name: "minProperties unknown counts", op: "updateItem", body: `{"other":1}`},
	{name: "maxProperties", op: "updateItem", body: `{"name":"n","isActive":true,"level":1,"x":0}`, field: "body", msg: "body: must have at most 3 properties"},

	// anyOf, allOf, oneOf
	{name: "anyOf first", op: "commit", body: `{"ideaId":"` + uuidLower + `"}`},
	{name: "anyOf second", op: "commit", body: `{"title":"t","contentType":"Long","formulaType":"f"}`},
	{name: "anyOf none", op: "commit", body: `{}`, field: "body", msg: "body: must include ideaId, or title, contentType and formulaType"},
	{name: "anyOf partial", op: "commit", body: `{"title":"t","contentType":"Long"}`, field: "body", msg: "body: must include ideaId, or title, contentType and formulaType"},
	{name: "anyOf member invalid", op: "commit", body: `{"ideaId":"nope"}`, field: "ideaId", msg: "ideaId: must be a UUID"},
	{name: "allOf", op: "strict", body: `{"kind":"a","note":"abcd"}`},
	{name: "allOf second fails", op: "strict", body: `{"kind":"a","note":"abcde"}`, field: "note", msg: "note: must be at most 4 characters"},
	{name: "oneOf one", op: "strict", body: `{"kind":"a","pick":"abcd"}`},
	{name: "oneOf both", op: "strict", body: `{"kind":"a","pick":"ab"}`, field: "pick", msg: "pick: must match exactly one of the allowed shapes, not 2"},
	{name: "oneOf none", op: "strict", body: `{"kind":"a","pick":5}`, field: "pick", msg: "pick: must match one of the allowed shapes"},

	// empty schema: anything but null
	{name: "empty schema object", op: "free", body: `{"input":{"x":[1,"a",true]}}`},
	{name: "empty schema null", op: "free", body: `{"input":null}`, field: "input", msg: "input: must not be null"},

	// JSON syntax, size of the value, depth
	{name: "malformed", op: "createItem", body: `{"title": x}`, field: "body", msg: "body: malformed JSON at offset 10"},
	{name: "truncated", op: "createItem", body: `{"title":"t"`, field: "body", msg: "body: malformed JSON at offset 12"},
	{name: "trailing data", op: "createItem", body: item() + ` x`, field: "body", msg: "body: malformed JSON at offset 33", kinDiffers: "kin-openapi decodes the first JSON value and ignores the rest"},
	{name: "two values", op: "createItem", body: item() + item(), field: "body", msg: "body: malformed JSON at offset 32", kinDiffers: "kin-openapi decodes the first JSON value and ignores the rest"},
	{name: "trailing whitespace", op: "createItem", body: item() + " \n\t\r\n"},
	{name: "whitespace only", op: "createItem", body: "  ", field: "body", msg: "body: malformed JSON at offset 2"},
	{name: "depth 64", op: "free", body: `{"input":` + nest(63, "1") + `}`},
	{name: "depth 65", op: "free", body: `{"input":` + nest(64, "1") + `}`, field: "body", msg: "body: must not nest deeper than 64 levels", kinDiffers: "kin-openapi has no depth limit"},
	{name: "brackets in strings do not nest", op: "free", body: `{"input":"` + strings.Repeat("[{", 100) + `"}`},
	// Depth counts nesting, not siblings: closing a value gives its level back.
	{name: "wide, not deep", op: "free", body: `{"input":[` + strings.TrimSuffix(strings.Repeat("{},", 100), ",") + `]}`},
	{name: "wide siblings at depth 64", op: "free", body: `{"input":` + nest(61, "["+strings.TrimSuffix(strings.Repeat("[],", 100), ",")+"]") + `}`},
	{name: "escaped quote in a string", op: "free", body: `{"input":"\\\"[[[[` + strings.Repeat("[", 70) + `"}`},
	// A duplicate member could hide a bad value behind a good one (or the reverse): it is refused.
	{name: "duplicate member, bad value first", op: "createItem", body: `{"title":` + q(strings.Repeat("a", 300)) + `,"title":"ok","status":"planned"}`, field: "title", msg: "title: is given more than once", kinDiffers: "kin-openapi keeps the last duplicate"},
	{name: "duplicate member, bad value last", op: "createItem", body: `{"title":"ok","title":` + q(strings.Repeat("a", 300)) + `,"status":"planned"}`, field: "title", msg: "title: is given more than once"},
	{name: "duplicate member, same value", op: "createItem", body: `{"title":"ok","status":"planned","status":"planned"}`, field: "status", msg: "status: is given more than once", kinDiffers: "kin-openapi keeps the last duplicate"},
	{name: "duplicate member nested", op: "free", body: `{"input":{"a":[{"b":1,"b":2}]}}`, field: "input.a[0].b", msg: "input.a[0].b: is given more than once", kinDiffers: "kin-openapi keeps the last duplicate"},
	{name: "same name in sibling objects", op: "free", body: `{"input":[{"b":1},{"b":2}]}`},
	// Text must be UTF-8: a lenient decoder would store U+FFFD instead.
	{name: "invalid UTF-8", op: "createItem", body: "{\"title\":\"a\xffb\",\"status\":\"planned\"}", field: "title", msg: "title: must be valid UTF-8 text (no invalid bytes, no unpaired surrogate escapes)", kinDiffers: "kin-openapi replaces invalid bytes"},
	{name: "invalid UTF-8 in a name", op: "createItem", body: "{\"ti\xfftle\":\"a\",\"status\":\"planned\"}", field: "body", msg: "body: must be valid UTF-8 text (no invalid bytes, no unpaired surrogate escapes)"},
	{name: "lone high surrogate", op: "createItem", body: `{"title":"a\ud800","status":"planned"}`, field: "title", msg: "title: must be valid UTF-8 text (no invalid bytes, no unpaired surrogate escapes)", kinDiffers: "kin-openapi replaces it"},
	{name: "lone low surrogate", op: "free", body: `{"input":["\udc00x"]}`, field: "input[0]", msg: "input[0]: must be valid UTF-8 text (no invalid bytes, no unpaired surrogate escapes)", kinDiffers: "kin-openapi replaces it"},
	{name: "surrogate pair", op: "createItem", body: `{"title":"\ud83c\udfac","status":"planned"}`},

	// optional body
	{name: "optional body given", op: "score", body: `{"context":"abc"}`},
	{name: "optional body too long", op: "score", body: `{"context":"abcdef"}`, field: "context", msg: "context: must be at most 5 characters"},
}

func TestValidateBody(t *testing.T) {
	s := fixture(t)
	for _, tc := range bodyCases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := s.op(t, tc.op).ValidateBody([]byte(tc.body))
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("ValidateBody(%s) = %v, want ok", tc.body, err)
				}
				if v == nil {
					t.Fatal("no value returned for a valid body")
				}
				return
			}
			if v != nil {
				t.Errorf("value %v returned with an error", v)
			}
			wantError(t, err, tc.field, tc.msg)
		})
	}
}

// TestValidateBodyAgreesWithKin runs the hand-written cases through kin-openapi: both must judge every
// body alike, except where the case names a deliberate difference.
func TestValidateBodyAgreesWithKin(t *testing.T) {
	s := fixture(t)
	for _, tc := range bodyCases {
		t.Run(tc.name, func(t *testing.T) {
			kinErr := s.kinBody(t, tc.op, []byte(tc.body))
			mine := tc.msg == ""
			if tc.kinDiffers != "" {
				if (kinErr == nil) == mine {
					t.Fatalf("kin-openapi now agrees (%v); drop kinDiffers %q", kinErr, tc.kinDiffers)
				}
				return
			}
			if (kinErr == nil) != mine {
				t.Fatalf("kin-openapi: %v; this package: valid=%v", kinErr, mine)
			}
		})
	}
}

func TestValidateBodyEmpty(t *testing.T) {
	s := fixture(t)
	_, err := s.op(t, "createItem").ValidateBody(nil)
	wantError(t, err, "body", "body: is required")

	v, err := s.op(t, "score").ValidateBody(nil)
	if v != nil || err != nil {
		t.Fatalf("optional body, empty: (%v, %v), want (nil, nil)", v, err)
	}
	// An operation without a request body ignores whatever was sent.
	v, err = s.op(t, "deleteItem").ValidateBody([]byte("not json"))
	if v != nil || err != nil {
		t.Fatalf("no requestBody: (%v, %v), want (nil, nil)", v, err)
	}
}

func TestValidateBodyDefaults(t *testing.T) {
	s := fixture(t)
	tests := []struct {
		name, body string
		want       map[string]any
	}{
		{
			name: "top level and through $ref",
			body: item(),
			want: map[string]any{"title": "t", "status": "planned", "isActive": true, "language": "english"},
		},
		{
			name: "given values are kept",
			body: item(`"isActive":false`, `"language":"spanish"`),
			want: map[string]any{"title": "t", "status": "planned", "isActive": false, "language": "spanish"},
		},
		{
			name: "nested objects, and defaults inside an inserted default",
			body: item(`"settings":{}`),
			want: map[string]any{"title": "t", "status": "planned", "isActive": true, "language": "english",
				"settings": map[string]any{"depth": json.Number("3"), "options": map[string]any{"tone": "calm"}}},
		},
		{
			name: "nested given",
			body: item(`"settings":{"depth":7,"options":{"tone":"loud"}}`),
			want: map[string]any{"title": "t", "status": "planned", "isActive": true, "language": "english",
				"settings": map[string]any{"depth": json.Number("7"), "options": map[string]any{"tone": "loud"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.op(t, "createItem").ValidateBody([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}

	// Defaults are copied: changing one result must not leak into the next.
	op := s.op(t, "createItem")
	first, _ := op.ValidateBody([]byte(item(`"settings":{}`)))
	first.(map[string]any)["settings"].(map[string]any)["options"].(map[string]any)["tone"] = "changed"
	second, _ := op.ValidateBody([]byte(item(`"settings":{}`)))
	if tone := second.(map[string]any)["settings"].(map[string]any)["options"].(map[string]any)["tone"]; tone != "calm" {
		t.Fatalf("second default tone = %v, want calm", tone)
	}
}

// TestMessagesDoNotEchoInput sends long hostile values everywhere and checks no message repeats more
// than maxEcho characters of them.
func TestMessagesDoNotEchoInput(t *testing.T) {
	s := fixture(t)
	long := strings.Repeat("<script>", 100)
	bodies := []struct{ op, body string }{
		{"createItem", `{"title":` + q(long) + `,"status":"planned"}`},
		{"createItem", `{"title":"t","status":` + q(long) + `}`},
		{"createItem", item(`"seriesId":` + q(long))},
		{"createItem", item(`"videoUrl":` + q(long))},
		{"createItem", item(`"publishTime":` + q(long))},
		{"strict", `{"kind":"a",` + q(long) + `:1}`},
		{"free", `{"input":1,"labels":{` + q(long) + `:"x"}}`},
		{"createItem", `{"title":` + q(long)},
	}
	for _, b := range bodies {
		_, err := s.op(t, b.op).ValidateBody([]byte(b.body))
		if err == nil {
			t.Fatalf("%s accepted", b.body)
		}
		if strings.Contains(err.Error(), long[:maxEcho+1]) {
			t.Errorf("message echoes the input: %.300s", err.Error())
		}
	}
}
