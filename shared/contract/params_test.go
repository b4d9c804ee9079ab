package contract

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

type paramCase struct {
	name   string
	op     string
	path   map[string]string
	query  string // raw query
	header http.Header
	want   Params // checked when msg is empty
	field  string
	msg    string
	// kinDiffers explains why kin-openapi judges this request differently; empty when it must agree.
	kinDiffers string
}

func paramsOf(path, query, header map[string]any) Params {
	if path == nil {
		path = map[string]any{}
	}
	if query == nil {
		query = map[string]any{}
	}
	if header == nil {
		header = map[string]any{}
	}
	return Params{Path: path, Query: query, Header: header}
}

var listDefaults = map[string]any{"limit": int64(20), "offset": int64(0)}

func withDefaults(extra map[string]any) map[string]any {
	m := map[string]any{"limit": int64(20), "offset": int64(0)}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

var paramCases = []paramCase{
	{name: "defaults", op: "listItems", want: paramsOf(nil, listDefaults, nil)},
	{name: "typed values", op: "listItems",
		query:  "limit=100&offset=7&status=filmed&since=2024-02-29&at=2025-03-09T14:00:00Z&ratio=0.25&flag=true&search=abc&time=09:30",
		header: http.Header{"X-Channel-Id": {uuidUpper}, "Idempotency-Key": {"k1"}},
		want: paramsOf(nil, map[string]any{"limit": int64(100), "offset": int64(7), "status": "filmed", "since": "2024-02-29",
			"at": "2025-03-09T14:00:00Z", "ratio": 0.25, "flag": true, "search": "abc", "time": "09:30"},
			map[string]any{"X-Channel-Id": strings.ToLower(uuidUpper), "Idempotency-Key": "k1"})},
	{name: "unknown query ignored", op: "listItems", query: "zzz=1&LIMIT=abc", want: paramsOf(nil, listDefaults, nil)},
	{name: "integer not a number", op: "listItems", query: "limit=abc", field: "limit", msg: "limit: must be an integer"},
	{name: "integer fractional", op: "listItems", query: "limit=1.5", field: "limit", msg: "limit: must be an integer"},
	{name: "integer spelled 1.0", op: "listItems", query: "limit=1.0", field: "limit", msg: "limit: must be an integer"},
	{name: "integer above maximum", op: "listItems", query: "limit=101", field: "limit", msg: "limit: must be at most 100"},
	{name: "integer below minimum", op: "listItems", query: "limit=0", field: "limit", msg: "limit: must be at least 1"},
	{name: "integer minimum", op: "listItems", query: "limit=1", want: paramsOf(nil, withDefaults(map[string]any{"limit": int64(1)}), nil)},
	{name: "integer past 64 bits, no maximum", op: "listItems", query: "offset=99999999999999999999", field: "offset", msg: "offset: is out of range"},
	{name: "integer past 64 bits, over maximum", op: "listItems", query: "limit=99999999999999999999", field: "limit", msg: "limit: must be at most 100"},
	{name: "integer past 64 bits, under minimum", op: "listItems", query: "limit=-99999999999999999999", field: "limit", msg: "limit: must be at least 1"},
	{name: "empty integer with default", op: "listItems", query: "limit=", field: "limit", msg: "limit: must not be empty", kinDiffers: "kin-openapi takes an empty value as absent"},
	{name: "empty boolean", op: "listItems", query: "flag=", field: "flag", msg: "flag: must not be empty"},
	{name: "date before the range", op: "listItems", query: "since=1899-12-31", field: "since", msg: "since: must be a date from 1900-01-01 to 9999-12-24"},
	{name: "date at the start of the range", op: "listItems", query: "since=1900-01-01", want: paramsOf(nil, withDefaults(map[string]any{"since": "1900-01-01"}), nil)},
	{name: "date at the end of the range", op: "listItems", query: "since=9999-12-24", want: paramsOf(nil, withDefaults(map[string]any{"since": "9999-12-24"}), nil)},
	{name: "date after the range", op: "listItems", query: "since=9999-12-25", field: "since", msg: "since: must be a date from 1900-01-01 to 9999-12-24"},
	{name: "empty integer without default", op: "score", query: "dayOfWeek=", field: "dayOfWeek", msg: "dayOfWeek: must not be empty"},
	{name: "required missing", op: "score", field: "dayOfWeek", msg: "dayOfWeek: is required"},
	{name: "required given", op: "score", query: "dayOfWeek=0", want: paramsOf(nil, map[string]any{"dayOfWeek": int64(0)}, nil)},
	{name: "repeated scalar", op: "listItems", query: "limit=5&limit=6", field: "limit", msg: "limit: must be given once",
		kinDiffers: "kin-openapi takes the first value"},
	{name: "enum", op: "listItems", query: "status=done", field: "status", msg: "status: \"done\" is not one of planned, scripted, filmed, edited, published"},
	{name: "date", op: "listItems", query: "since=2023-02-29", field: "since", msg: "since: must be a date (YYYY-MM-DD)"},
	{name: "date-time", op: "listItems", query: "at=2025-03-09", field: "at", msg: "at: must be a date-time (RFC 3339, e.g. 2025-03-09T14:00:00Z)"},
	{name: "date-time with offset", op: "listItems", query: "at=" + url.QueryEscape("2025-03-09T14:00:00+05:30"),
		want: paramsOf(nil, withDefaults(map[string]any{"at": "2025-03-09T14:00:00+05:30"}), nil)},
	{name: "number exclusive minimum", op: "listItems", query: "ratio=0", field: "ratio", msg: "ratio: must be greater than 0"},
	{name: "number maximum", op: "listItems", query: "ratio=1", want: paramsOf(nil, withDefaults(map[string]any{"ratio": 1.0}), nil)},
	// Checked at full precision: 1.04 is not 1.
	{name: "number just over the maximum", op: "listItems", query: "ratio=1.04", field: "ratio", msg: "ratio: must be at most 1"},
	{name: "number just under the maximum", op: "listItems", query: "ratio=0.96", want: paramsOf(nil, withDefaults(map[string]any{"ratio": 0.96}), nil)},
	{name: "number not a number", op: "listItems", query: "ratio=x", field: "ratio", msg: "ratio: must be a number"},
	{name: "number NaN", op: "listItems", query: "ratio=NaN", field: "ratio", msg: "ratio: must be a number"},
	{name: "boolean", op: "listItems", query: "flag=yes", field: "flag", msg: "flag: must be true or false"},
	{name: "maxLength", op: "listItems", query: "search=" + strings.Repeat("é", 11), field: "search", msg: "search: must be at most 10 characters"},
	{name: "maxLength runes", op: "listItems", query: "search=" + strings.Repeat("é", 10),
		want: paramsOf(nil, withDefaults(map[string]any{"search": strings.Repeat("é", 10)}), nil)},
	{name: "empty string", op: "listItems", query: "search=", want: paramsOf(nil, withDefaults(map[string]any{"search": ""}), nil)},
	{name: "pattern", op: "listItems", query: "time=9:30", field: "time", msg: "time: must match the pattern ^([01][0-9]|2[0-3]):[0-5][0-9]$"},
	{name: "array", op: "listItems", query: "tag=a&tag=c", want: paramsOf(nil, withDefaults(map[string]any{"tag": []any{"a", "c"}}), nil)},
	{name: "array item enum", op: "listItems", query: "tag=a&tag=z", field: "tag[1]", msg: "tag[1]: \"z\" is not one of a, b, c"},
	{name: "array maxItems", op: "listItems", query: "tag=a&tag=b&tag=c&tag=a", field: "tag", msg: "tag: must have at most 3 items"},
	{name: "header format", op: "listItems", header: http.Header{"X-Channel-Id": {"abc"}}, field: "X-Channel-Id", msg: "X-Channel-Id: must be a UUID"},
	{name: "header empty", op: "listItems", header: http.Header{"Idempotency-Key": {""}}, field: "Idempotency-Key", msg: "Idempotency-Key: must not be empty"},
	{name: "header too long", op: "listItems", header: http.Header{"Idempotency-Key": {strings.Repeat("k", 21)}}, field: "Idempotency-Key", msg: "Idempotency-Key: must be at most 20 characters"},
	{name: "repeated header: first counts", op: "listItems", header: http.Header{"Idempotency-Key": {"a", strings.Repeat("k", 21)}},
		want: paramsOf(nil, listDefaults, map[string]any{"Idempotency-Key": "a"})},
	{name: "path uuid", op: "deleteItem", path: map[string]string{"id": uuidLower}, want: paramsOf(map[string]any{"id": uuidLower}, nil, nil)},
	{name: "path not uuid", op: "deleteItem", path: map[string]string{"id": "42"}, field: "id", msg: "id: must be a UUID"},
	{name: "path missing", op: "deleteItem", field: "id", msg: "id: is required"},
	{name: "path before query", op: "updateItem", path: map[string]string{"id": "x"}, query: "limit=abc", field: "id", msg: "id: must be a UUID"},
	{name: "query before header", op: "listItems", query: "limit=abc", header: http.Header{"X-Channel-Id": {"abc"}}, field: "limit", msg: "limit: must be an integer"},
}

func TestValidateParams(t *testing.T) {
	s := fixture(t)
	for _, tc := range paramCases {
		t.Run(tc.name, func(t *testing.T) {
			query, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			header := tc.header
			if header == nil {
				header = http.Header{}
			}
			got, err := s.op(t, tc.op).ValidateParams(tc.path, query, header)
			if tc.msg != "" {
				wantError(t, err, tc.field, tc.msg)
				return
			}
			if err != nil {
				t.Fatalf("ValidateParams = %v, want ok", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestValidateParamsAgreesWithKin(t *testing.T) {
	s := fixture(t)
	for _, tc := range paramCases {
		t.Run(tc.name, func(t *testing.T) {
			query, _ := url.ParseQuery(tc.query)
			kinErr := s.kinParams(t, tc.op, tc.path, query, tc.header)
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
