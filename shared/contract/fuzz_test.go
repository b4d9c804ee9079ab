package contract

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
)

type target struct {
	s  *suite
	op *Operation
}

func targets(tb testing.TB, keep func(*Operation) bool) []target {
	var out []target
	for _, s := range suites(tb) {
		for _, op := range s.contract.Operations {
			if keep(op) {
				out = append(out, target{s, op})
			}
		}
	}
	return out
}

func indexOf(tb testing.TB, ts []target, suiteName, id string) uint16 {
	for i, t := range ts {
		if t.s.name == suiteName && t.op.ID == id {
			return uint16(i)
		}
	}
	tb.Fatalf("no target %s %s", suiteName, id)
	return 0
}

// mustBeValidation fails unless err is a VALIDATION_ERROR: a request must never surface as another kind of
// failure.
func mustBeValidation(t *testing.T, err error) {
	t.Helper()
	if e, ok := apperr.As(err); !ok || e.Code != apperr.Validation || e.Field == "" {
		t.Fatalf("not a validation error naming a field: %#v", err)
	}
}

// FuzzValidateBody: for every operation with a body (of the fixture and of the service's document), no
// input panics, every rejection is a validation error, and the verdict matches kin-openapi's wherever
// the two are meant to agree.
func FuzzValidateBody(f *testing.F) {
	ts := targets(f, func(op *Operation) bool { return op.HasBody })
	for _, tc := range bodyCases {
		f.Add(indexOf(f, ts, "fixture", tc.op), []byte(tc.body))
	}
	g := newGen(f, service(f).json, 3)
	for i, t := range ts {
		if t.s.name != "openapi" {
			continue
		}
		schema := map[string]any{}
		raw, _ := json.Marshal(t.s.route(f, t.op.ID).Operation.RequestBody.Value.Content.Get("application/json").Schema)
		_ = json.Unmarshal(raw, &schema)
		for _, broken := range []bool{false, true} {
			g.broken = broken
			body, _ := json.Marshal(g.value(schema, 0))
			f.Add(uint16(i), body)
		}
	}

	f.Fuzz(func(t *testing.T, which uint16, body []byte) {
		tg := ts[int(which)%len(ts)]
		v, err := tg.op.ValidateBody(body)
		if err != nil {
			mustBeValidation(t, err)
		}
		switch {
		case len(body) > 0 && !json.Valid(body):
			if err == nil {
				t.Fatalf("%s accepted a body that is not one JSON value: %q", tg.op.ID, body)
			}
			return
		case checkDepth(body) != nil:
			if err == nil {
				t.Fatalf("%s accepted a body nested too deep", tg.op.ID)
			}
			return
		}
		kinErr := tg.s.kinBody(t, tg.op.ID, body)
		if (err == nil) != (kinErr == nil) && !stricterThanSchema(err, body) {
			t.Fatalf("%s %s: disagreement on %q\n  this package: %v\n  kin-openapi:  %v", tg.s.name, tg.op.ID, body, err, kinErr)
		}
		// Applying defaults keeps a valid body valid.
		if err == nil && v != nil {
			again, merr := json.Marshal(v)
			if merr != nil {
				t.Fatal(merr)
			}
			if _, err := tg.op.ValidateBody(again); err != nil {
				t.Fatalf("%s: %q with defaults applied (%s) is invalid: %v", tg.op.ID, body, again, err)
			}
		}
	})
}

var pathParamName = regexp.MustCompile(`\{([^}]+)\}`)

// FuzzValidateParams: for every operation with parameters, no input panics, every rejection is a
// validation error, and the verdict matches kin-openapi's except for repeated query parameters, which
// this package rejects and kin-openapi resolves by taking one.
func FuzzValidateParams(f *testing.F) {
	ts := targets(f, func(op *Operation) bool {
		v, err := op.validator()
		return err == nil && len(v.params) > 0
	})
	for _, tc := range paramCases {
		pathValue := tc.path["id"]
		f.Add(indexOf(f, ts, "fixture", tc.op), tc.query, pathValue, tc.header.Get("X-Channel-Id"))
	}
	for _, seed := range []struct{ id, query, path, header string }{
		{"listHistory", "tool=titles&search=abc&limit=5&offset=10", "", uuidLower},
		{"listHistory", "limit=0", "", ""},
		{"getSchedule", "weekStart=2024-02-30", "", ""},
		{"deleteScheduleSlot", "dayOfWeek=6&slotType=publish&publishTime=07:05", "", ""},
		{"listMyVideosLegacy", "projectId=" + uuidUpper, "", ""},
		{"getGeneration", "", uuidLower, "not-a-uuid"},
	} {
		f.Add(indexOf(f, ts, "openapi", seed.id), seed.query, seed.path, seed.header)
	}

	f.Fuzz(func(t *testing.T, which uint16, rawQuery, pathValue, headerValue string) {
		tg := ts[int(which)%len(ts)]
		query, _ := url.ParseQuery(rawQuery)
		path := map[string]string{}
		for _, m := range pathParamName.FindAllStringSubmatch(tg.op.Path, -1) {
			path[m[1]] = pathValue
		}
		header := http.Header{}
		v, _ := tg.op.validator()
		for _, p := range v.params {
			if p.in == "header" && headerValue != "" {
				header.Set(p.name, headerValue)
			}
		}
		_, err := tg.op.ValidateParams(path, query, header)
		if err != nil {
			mustBeValidation(t, err)
		}
		for _, p := range v.params {
			if p.in == "query" && p.schema.typ != "array" && len(query[p.name]) > 1 {
				if err == nil {
					t.Fatalf("repeated %s accepted", p.name)
				}
				return
			}
		}
		kinErr := tg.s.kinParams(t, tg.op.ID, path, query, header)
		if (err == nil) != (kinErr == nil) && !stricterParam(err) {
			t.Fatalf("%s %s: disagreement on path %q query %q header %q\n  this package: %v\n  kin-openapi:  %v",
				tg.s.name, tg.op.ID, pathValue, rawQuery, headerValue, err, kinErr)
		}
	})
}

// FuzzLoad: the document scanner and the schema compiler never panic, whatever the document, and an
// operation that loads either compiles or reports why.
func FuzzLoad(f *testing.F) {
	f.Add(string(fixture(f).json))
	f.Add(`{"paths":{"/x":{"parameters":[{"$ref":"#/components/parameters/P"}],"post":{"operationId":"a","tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other",` +
		`"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S"}}}},"responses":{"200":{}}}}},` +
		`"components":{"parameters":{"P":{"name":"p","in":"query","schema":{"type":"integer"}}},` +
		`"schemas":{"S":{"type":"object","properties":{"s":{"$ref":"#/components/schemas/S"}},"anyOf":[{"required":["s"]}]}}}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := load(doc)
		if err != nil {
			return
		}
		for _, op := range c.Operations {
			if _, err := op.validator(); err != nil {
				continue
			}
			_, _ = op.ValidateBody([]byte(`{"s":{"s":{}},"x":[1,"a",null]}`))
			_, _ = op.ValidateParams(map[string]string{}, url.Values{"p": {"1"}}, http.Header{})
		}
	})
}
