package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

// Arguments turn a tool's arguments into the request its operation validates: parameters by location,
// the rest as the body; the schema says the same, made on first use.
func TestArgumentsRequest(t *testing.T) {
	svc := service(t)
	ideas := svc.op(t, "listVideoIdeas").Arguments("X-Channel-Id", "Prefer")
	titles := svc.op(t, "generateTitles").Arguments("X-Channel-Id", "Prefer")
	series := svc.op(t, "updateSeries").Arguments("X-Channel-Id", "Prefer")

	raw, err := ideas.Request(json.RawMessage(`{"limit":5,"offset":0,"contentType":"Long"}`))
	if err != nil || raw.Query.Get("limit") != "5" || raw.Query.Get("offset") != "0" || raw.Query.Get("contentType") != "Long" || raw.Body != nil {
		t.Fatalf("listVideoIdeas: %+v %v", raw, err)
	}
	for _, args := range []string{``, `null`, `{}`, ` {} `} {
		if raw, err := ideas.Request(json.RawMessage(args)); err != nil || len(raw.Query) != 0 {
			t.Errorf("%q: %+v %v", args, raw, err)
		}
	}
	if raw, err := ideas.Request(json.RawMessage(`{"limit":null}`)); err != nil || raw.Query.Has("limit") {
		t.Errorf("null limit: %+v %v", raw, err)
	}
	raw, err = series.Request(json.RawMessage(`{"id":"7d1f1e4e-3c9a-4f0e-9a57-0c4f3b1e2d10","name":"Weekly"}`))
	if err != nil || raw.Path["id"] != "7d1f1e4e-3c9a-4f0e-9a57-0c4f3b1e2d10" || string(raw.Body) != `{"name":"Weekly"}` {
		t.Fatalf("updateSeries: %+v %s %v", raw, raw.Body, err)
	}
	raw, err = titles.Request(json.RawMessage(`{"title":"T","type":"how-to","idempotencyKey":"k-1"}`))
	if err != nil || raw.Header.Get("Idempotency-Key") != "k-1" || strings.Contains(string(raw.Body), "idempotencyKey") {
		t.Fatalf("generateTitles: %+v %s %v", raw, raw.Body, err)
	}
	if raw, err := titles.Request(nil); err != nil || string(raw.Body) != `{}` {
		t.Errorf("a body operation without arguments sends {}: %s %v", raw.Body, err)
	}
	if titles.ArgumentName("idempotency-key") != "idempotencyKey" || titles.ArgumentName("title") != "" {
		t.Error("ArgumentName")
	}

	for _, c := range []struct {
		args        *Arguments
		in          string
		field, want string
	}{
		{ideas, `[1]`, "arguments", "must be a JSON object"},
		{ideas, `"x"`, "arguments", "must be a JSON object"},
		{ideas, `{"bogus":1,"alpha":2}`, "alpha", "is not an argument of this operation"},
		{ideas, `{"limit":{"a":1}}`, "limit", "must be a string, a number or a boolean"},
		{ideas, `{"limit":[5]}`, "limit", "must be a string, a number or a boolean"},
		{ideas, `{"limit":[[1]]}`, "limit", "must be a string, a number or a boolean"},
		{series, `{"id":["a","b"],"name":"Weekly"}`, "id", "must be a string, a number or a boolean"},
		{titles, `{"idempotencyKey":["a","b"],"title":"T","type":"how-to"}`, "idempotencyKey", "must be a string, a number or a boolean"},
	} {
		_, err := c.args.Request(json.RawMessage(c.in))
		wantError(t, err, c.field, c.field+": "+c.want)
	}

	_, err = ideas.Request(json.RawMessage(`{"contentType":["Long","Short"]}`))
	wantError(t, err, "contentType", "contentType: must be a string, a number or a boolean")
}

func TestArgumentsSchema(t *testing.T) {
	svc := service(t)
	schema, err := svc.op(t, "listVideoIdeas").Arguments("X-Channel-Id", "Prefer").Schema()
	if err != nil {
		t.Fatal(err)
	}
	props := schema["properties"].(map[string]any)
	if schema["additionalProperties"] != false || props["limit"].(map[string]any)["maximum"] != float64(100) {
		t.Errorf("listVideoIdeas: %v", schema)
	}
	if _, hidden := props["X-Channel-Id"]; hidden {
		t.Error("a hidden header is an argument")
	}
	schema, err = svc.op(t, "generateTitles").Arguments("X-Channel-Id", "Prefer").Schema()
	if err != nil {
		t.Fatal(err)
	}
	props = schema["properties"].(map[string]any)
	for _, name := range []string{"title", "type", "videoType", "context", "count", "idempotencyKey"} {
		if props[name] == nil {
			t.Errorf("generateTitles: no argument %s in %v", name, props)
		}
	}
	if _, ok := props["prefer"]; ok {
		t.Error("Prefer is hidden")
	}
	if withPrefer, _ := svc.op(t, "generateTitles").Arguments("X-Channel-Id").Schema(); withPrefer["properties"].(map[string]any)["prefer"] == nil {
		t.Error("a header not hidden takes its lower camel case name")
	}
}

// A body field with the name of a parameter's argument would make the two ambiguous: the schema says so.
func TestArgumentsSchemaRefusesShadowing(t *testing.T) {
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/x":{"post":{"operationId":"op","tags":["t"],"x-css-function":"f","x-css-credential":"none","security":[],
"parameters":[{"name":"limit","in":"query","schema":{"type":"integer"}}],
"requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{"limit":{"type":"string"}}}}}},
"responses":{"200":{"description":"ok"}}}}}}`
	c, err := load(doc)
	if err != nil {
		t.Fatal(err)
	}
	args := c.Operation("op").Arguments()
	if _, err := args.Schema(); err == nil || !strings.Contains(err.Error(), `body field "limit" has the name of a parameter`) {
		t.Fatalf("shadowing: %v", err)
	}
}

// An array parameter takes a JSON array, sent as repeated values; nested arrays and objects are refused.
func TestArgumentsArrayParameter(t *testing.T) {
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/x":{"get":{"operationId":"op","tags":["t"],"x-css-function":"f","x-css-credential":"none","security":[],
"parameters":[{"name":"tag","in":"query","schema":{"$ref":"#/components/schemas/Tags"}},{"name":"n","in":"query","schema":{"type":"integer"}}],
"responses":{"200":{"description":"ok"}}}}},"components":{"schemas":{"Tags":{"type":"array","items":{"type":"string"}}}}}`
	c, err := load(doc)
	if err != nil {
		t.Fatal(err)
	}
	args := c.Operation("op").Arguments()
	raw, err := args.Request(json.RawMessage(`{"tag":["a",1,true],"n":2}`))
	if err != nil || strings.Join(raw.Query["tag"], ",") != "a,1,true" || raw.Query.Get("n") != "2" {
		t.Fatalf("%+v %v", raw, err)
	}
	if raw, err := args.Request(json.RawMessage(`{"tag":[]}`)); err != nil || raw.Query.Has("tag") {
		t.Errorf("an empty array is no value: %+v %v", raw, err)
	}
	for _, bad := range []string{`{"tag":[["a"]]}`, `{"tag":[{"a":1}]}`} {
		_, err := args.Request(json.RawMessage(bad))
		wantError(t, err, "tag", "tag: must be an array of strings, numbers or booleans")
	}
	_, err = args.Request(json.RawMessage(`{"n":[2]}`))
	wantError(t, err, "n", "n: must be a string, a number or a boolean")
}
