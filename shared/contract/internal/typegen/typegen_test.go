package typegen

import (
	"strings"
	"testing"
)

func TestExported(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"dayOfWeek", "DayOfWeek"},
		{"Idempotency-Key", "IdempotencyKey"},
		{"videoId", "VideoID"},
		{"how-to", "HowTo"},
		{"Live Stream", "LiveStream"},
		{"video.status_changed", "VideoStatusChanged"},
		{"NOT_FOUND", "NotFound"},
		{"A+", "APlus"},
		{"A-", "AMinus"},
		{"A", "A"},
		{"extra_1", "Extra1"},
		{"Bold Claim/Contrarian", "BoldClaimContrarian"},
		{"closingCTA", "ClosingCTA"},
		{"ctas", "CTAs"},
		{"first5Seconds", "First5Seconds"},
		{"tv", "TV"},
		{"faqSection", "FAQSection"},
	} {
		if got := exported(tt.in); got != tt.want {
			t.Errorf("exported(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// runtime is a contract with one request body, so the response side has a request type to reuse.
const runtime = `{"paths":{"/p":{"post":{"operationId":"make","requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Shared"}}}}}}},
"components":{"schemas":{"Shared":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"kind":{"$ref":"#/components/schemas/Kind"}}},
"Kind":{"type":"string","enum":["a","b"]}}}}`

// whole is a served document whose response components are given as JSON.
func whole(schemas string) string {
	return `{"paths":{"/p":{"post":{"operationId":"make","responses":{
"201":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Out"}}}},
"204":{},
"400":{"$ref":"#/components/responses/Bad"}}}}},
"components":{"responses":{"Bad":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Err"}}}}},
"schemas":{"Shared":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"kind":{"$ref":"#/components/schemas/Kind"}}},
"Kind":{"type":"string","enum":["a","b"]},"Err":{"type":"object","required":["error"],"properties":{"error":{"type":"string"}}},` + schemas + `}}}`
}

// Each kind of member gets the Go type and tag that keep absence, null and empty values apart.
func TestResponseMemberKinds(t *testing.T) {
	src, err := Responses([]byte(runtime), []byte(whole(`"Out":{"type":"object","required":["req","reqNull","reqList","reqAny","alt"],"properties":{
"req":{"type":"integer"},"opt":{"type":"number"},"reqNull":{"type":"string","nullable":true},
"optNull":{"type":"boolean","nullable":true},"reqList":{"type":"array","items":{"$ref":"#/components/schemas/Kind"}},
"optList":{"type":"array","items":{"type":"string"}},"reqAny":{"nullable":true},"optAny":{},
"free":{"type":"object"},"counts":{"type":"object","additionalProperties":{"type":"integer"}},
"grade":{"type":"string","enum":["A+","A","A-"]},"nested":{"type":"object","properties":{"x":{"type":"string"}}},
"kind":{"nullable":true,"allOf":[{"$ref":"#/components/schemas/Kind"}]},"shared":{"$ref":"#/components/schemas/Shared"},
"both":{"$ref":"#/components/schemas/Both"},"alt":{"$ref":"#/components/schemas/Alt"}}},
"Both":{"allOf":[{"$ref":"#/components/schemas/Shared"},{"type":"object","required":["more"],"properties":{"more":{"type":"string"}}}]},
"Alt":{"oneOf":[{"$ref":"#/components/schemas/Err"},{"$ref":"#/components/schemas/Shared"}]}`)), "p")
	if err != nil {
		t.Fatal(err)
	}
	code := strings.Join(strings.Fields(string(src)), " ")
	for _, want := range []string{
		"Req int `json:\"req\"`",
		"Opt *float64 `json:\"opt,omitempty\"`",
		"ReqNull *string `json:\"reqNull\"`",
		"OptNull Optional[bool] `json:\"optNull,omitzero\"`",
		"ReqList []Kind `json:\"reqList\"`",
		"OptList []string `json:\"optList,omitzero\"`",
		"ReqAny json.RawMessage `json:\"reqAny\"`",
		"OptAny json.RawMessage `json:\"optAny,omitzero\"`",
		"Free json.RawMessage `json:\"free,omitzero\"`",
		"Counts map[string]int `json:\"counts,omitzero\"`",
		"Grade *OutGrade `json:\"grade,omitempty\"`",
		"OutGradeAPlus OutGrade = \"A+\" OutGradeA OutGrade = \"A\" OutGradeAMinus OutGrade = \"A-\"",
		"Nested *OutNested `json:\"nested,omitempty\"`",
		"type OutNested struct { X *string `json:\"x,omitempty\"` }",
		"Kind Optional[Kind] `json:\"kind,omitzero\"`",
		"Shared *Shared `json:\"shared,omitempty\"`",
		"type Both struct { Shared More string `json:\"more\"` }",
		"type Alt struct { Err *Err Shared *Shared }",
		"func (x *Alt) UnmarshalJSON(b []byte) error",
		"type MakeOutput = Out",
		"case \"Shared\": return new(Shared)",
		"case \"Err\": return new(Err)",
	} {
		if !strings.Contains(code, want) {
			t.Errorf("missing %q in\n%s", want, src)
		}
	}
	// Declared once, by the request side.
	for _, not := range []string{"type Shared struct", "type Kind string"} {
		if strings.Contains(code, not) {
			t.Errorf("%q declared again", not)
		}
	}
}

func TestResponsesRefuseWhatTheyCannotType(t *testing.T) {
	for _, tt := range []struct{ name, doc, want string }{
		{"anyOf", whole(`"Out":{"anyOf":[{"type":"string"},{"type":"integer"}]}`), "anyOf"},
		{"inline oneOf", whole(`"Out":{"type":"object","properties":{"x":{"oneOf":[{"$ref":"#/components/schemas/Err"}]}}}`), "inline oneOf"},
		{"oneOf of inline schemas", whole(`"Out":{"oneOf":[{"type":"string"}]}`), "only $refs"},
		{"allOf of a union", whole(`"Out":{"allOf":[{"$ref":"#/components/schemas/Alt"}]},"Alt":{"oneOf":[{"$ref":"#/components/schemas/Err"}]}`), "only plain objects"},
		{"number enum", whole(`"Out":{"type":"integer","enum":[1,2]}`), "only string enums"},
		{"constants collide", whole(`"Out":{"type":"string","enum":["a b","a-b"]}`), "both make the constant"},
		{"request enum with other values", strings.Replace(whole(`"Out":{"$ref":"#/components/schemas/Kind"}`), `"enum":["a","b"]`, `"enum":["a","c"]`, 1), "other values"},
		{"another type of a request type's name", whole(`"Out":{"$ref":"#/components/schemas/shared"},"shared":{"type":"object","properties":{"y":{"type":"string"}}}`), "another type of that name"},
		{"unresolved", whole(`"Out":{"$ref":"#/components/schemas/Gone"}`), "unresolved"},
		{"array without items", whole(`"Out":{"type":"array"}`), "without items"},
		{"unknown type", whole(`"Out":{"type":"file"}`), "not supported"},
		{"not JSON", "{", "typegen"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Responses([]byte(runtime), []byte(tt.doc), "p")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one saying %q", err, tt.want)
			}
		})
	}
}
