package contract

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract/internal/decode"
	"github.com/creatorstrategy/css/shared/contract/internal/docgen"
	"github.com/creatorstrategy/css/shared/contract/internal/typegen"
)

func TestDocumentUpToDate(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := docgen.Generate(context.Background(), src)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !bytes.Equal(Document(), want) {
		t.Fatal("openapi.json is out of date with openapi.yaml: run `go generate ./shared/contract` and commit openapi.json")
	}
	// The compressed document is checked by what it decompresses to, not byte for byte: another Go
	// release's compress/flate may compress the same document into other bytes.
	zr, err := gzip.NewReader(strings.NewReader(documentGzip))
	if err != nil {
		t.Fatalf("openapi.json.gz: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("openapi.json.gz: %v", err)
	}
	if !bytes.Equal(plain, want) {
		t.Fatal("openapi.json.gz is out of date with openapi.yaml: run `go generate ./shared/contract` and commit openapi.json.gz")
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("openapi.json.gz names %q, time %v: generate it with docgen.Gzip (reproducible)", zr.Name, zr.ModTime)
	}
	if fresh, err := docgen.Gzip(want); err != nil || len(documentGzip) > len(fresh)*21/20 {
		t.Errorf("openapi.json.gz is %d bytes, docgen.Gzip makes %d (%v): run `go generate ./shared/contract`", len(documentGzip), len(fresh), err)
	}
	runtime, err := docgen.Runtime(src)
	if err != nil {
		t.Fatal(err)
	}
	if string(runtime) != contract {
		t.Fatal("contract.json is out of date with openapi.yaml: run `go generate ./shared/contract` and commit contract.json")
	}
	all, err := docgen.Schemas(src)
	if err != nil {
		t.Fatal(err)
	}
	if string(all) != schemasJSON {
		t.Fatal("schemas.json is out of date with openapi.yaml: run `go generate ./shared/contract` and commit it")
	}
	types, err := typegen.Generate(runtime, "contract")
	if err != nil {
		t.Fatal(err)
	}
	if current, err := os.ReadFile("requests_gen.go"); err != nil || !bytes.Equal(current, types) {
		t.Fatalf("requests_gen.go is out of date with openapi.yaml (%v): run `go generate ./shared/contract` and commit it", err)
	}
	responses, err := typegen.Responses(runtime, want, "contract")
	if err != nil {
		t.Fatal(err)
	}
	if current, err := os.ReadFile("responses_gen.go"); err != nil || !bytes.Equal(current, responses) {
		t.Fatalf("responses_gen.go is out of date with openapi.yaml (%v): run `go generate ./shared/contract` and commit it", err)
	}
	decoded, err := decode.Decode(string(runtime))
	if err != nil {
		t.Fatal(err)
	}
	static, err := typegen.Static(decoded, "contract")
	if err != nil {
		t.Fatal(err)
	}
	if current, err := os.ReadFile("static_gen.go"); err != nil || !bytes.Equal(current, static) {
		t.Fatalf("static_gen.go is out of date with openapi.yaml (%v): run `go generate ./shared/contract` and commit it", err)
	}
}

// TestRuntimeContractMatchesDocument checks the cut-down contract Load reads declares the very operations
// of the whole document, and that what it left out was only words and response bodies.
func TestRuntimeContractMatchesDocument(t *testing.T) {
	whole, err := load(document)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(cut.Operations) != len(whole.Operations) {
		t.Fatalf("%d operations in contract.json, %d in the document", len(cut.Operations), len(whole.Operations))
	}
	for i, w := range whole.Operations {
		c := cut.Operations[i]
		if c.ID != w.ID || c.Method != w.Method || c.Path != w.Path || c.Tag != w.Tag || c.Function != w.Function ||
			c.Public != w.Public || c.HasBody != w.HasBody || c.BodyRequired != w.BodyRequired || c.SuccessStatus != w.SuccessStatus {
			t.Errorf("operation %d: contract.json has %+v, the document %+v", i, c, w)
		}
		wv, werr := w.validator()
		cv, cerr := c.validator()
		if werr != nil || cerr != nil {
			t.Fatalf("%s: compile: %v / %v", w.ID, werr, cerr)
		}
		if !reflect.DeepEqual(wv, cv) {
			t.Errorf("%s: the validator compiled from contract.json differs from the document's", w.ID)
		}
	}
	for _, word := range []string{`"description":"`, `"example"`, `"summary"`} {
		if strings.Contains(contract, word) {
			t.Errorf("contract.json still holds %s", word)
		}
	}
	if !strings.Contains(contract, `"description":{`) {
		t.Error("contract.json lost the schema property named description")
	}
}

func TestDocumentIsACopy(t *testing.T) {
	doc := Document()
	if !json.Valid(doc) {
		t.Fatal("the embedded document is not JSON")
	}
	doc[0] = 'x'
	if Document()[0] != '{' {
		t.Fatal("changing a returned document changed the embedded one")
	}
	gz := DocumentGzip()
	gz[0] = 'x'
	if DocumentGzip()[0] != 0x1f {
		t.Fatal("changing a returned compressed document changed the embedded one")
	}
}

// The operations of the service, as the rest of the code base relies on them.
var serviceOperations = map[string]string{
	"getNicheProfile": "GET /api/v1/niche-profile Context", "putNicheProfile": "PUT /api/v1/niche-profile Context",
	"scoreNiche": "POST /api/v1/niche-score Context", "getResearchInsights": "GET /api/v1/research-insights Context",
	"listHistory": "GET /api/v1/history Context", "listMyVideos": "GET /api/v1/my-videos Videos",
	"commitVideo": "POST /api/v1/my-videos Videos", "updateVideoStatus": "POST /api/v1/my-videos/status Videos",
	"updateMyVideo":  "PATCH /api/v1/my-videos/{id} Videos",
	"listVideoIdeas": "GET /api/v1/video-ideas Videos", "deleteVideoIdea": "DELETE /api/v1/video-ideas/{id} Videos",
	"getSchedule": "GET /api/v1/schedule Planning", "upsertScheduleSlot": "POST /api/v1/schedule Planning",
	"deleteScheduleSlot": "DELETE /api/v1/schedule Planning", "listSeries": "GET /api/v1/series Planning",
	"createSeries": "POST /api/v1/series Planning", "updateSeries": "PATCH /api/v1/series/{id} Planning",
	"deleteSeries": "DELETE /api/v1/series/{id} Planning", "listNotes": "GET /api/v1/notes Memory",
	"createNote": "POST /api/v1/notes Memory", "deleteNote": "DELETE /api/v1/notes/{id} Memory",
	"generateTitles": "POST /api/v1/generate/titles Generation", "generateLongScript": "POST /api/v1/generate/long-script Generation",
	"generateShortScript": "POST /api/v1/generate/short-script Generation", "generateDescription": "POST /api/v1/generate/description Generation",
	"generateThumbnail": "POST /api/v1/generate/thumbnail Generation", "generateHooks": "POST /api/v1/generate/hooks Generation",
	"generateCtas": "POST /api/v1/generate/ctas Generation", "generatePodcastPrep": "POST /api/v1/generate/podcast-prep Generation",
	"generateNewsletter": "POST /api/v1/generate/newsletter Generation", "generateClips": "POST /api/v1/generate/clips Generation",
	"generateCommunityPosts": "POST /api/v1/generate/community-posts Generation", "generateChannelOptimize": "POST /api/v1/generate/channel-optimize Generation",
	"generateReoptimize": "POST /api/v1/generate/reoptimize Generation", "getGeneration": "GET /api/v1/generations/{id} Generation",
	"generateIdeas":  "POST /api/v1/generate/ideas Generation",
	"getPerformance": "GET /api/v1/performance Intelligence", "refine": "POST /api/v1/refine Intelligence",
	"startResearch": "POST /api/v1/research Intelligence", "getResearchRun": "GET /api/v1/research/runs/{id} Intelligence",
	"listResearchVideos": "GET /api/v1/research/videos Intelligence",
	"getHealth":          "GET /api/v1/health Utility", "getOpenAPI": "GET /api/v1/openapi.json Utility",
	"getDocs": "GET /api/v1/docs Utility", "getDocsScript": "GET /api/v1/docs/redoc.standalone.js Utility",
	"listKeys": "GET /api/v1/keys Keys", "createKey": "POST /api/v1/keys Keys", "revokeKey": "DELETE /api/v1/keys/{id} Keys",
	"listMcpGrants": "GET /api/v1/mcp/grants Account", "revokeMcpGrant": "DELETE /api/v1/mcp/grants/{id} Account",
	"createWebhook": "POST /api/webhooks Webhooks", "listWebhooks": "GET /api/webhooks Webhooks",
	"getWebhook": "GET /api/webhooks/{id} Webhooks", "updateWebhook": "PATCH /api/webhooks/{id} Webhooks",
	"deleteWebhook": "DELETE /api/webhooks/{id} Webhooks", "testWebhook": "POST /api/webhooks/{id}/test Webhooks",
	"listWebhookDeliveries":    "GET /api/webhooks/{id}/deliveries Webhooks",
	"rotateWebhookSecret":      "POST /api/webhooks/{id}/rotate-secret Webhooks",
	"redeliverWebhookDelivery": "POST /api/webhooks/{id}/deliveries/{deliveryId}/redeliver Webhooks", "listMyVideosLegacy": "GET /api/my-videos Integrations",
	"generateLegacy": "POST /api/generate Integrations", "getMe": "GET /api/v1/me Account",
	"startYouTubeConnection":    "POST /api/v1/youtube/connection YouTube",
	"getYouTubeConnection":      "GET /api/v1/youtube/connection YouTube",
	"deleteYouTubeConnection":   "DELETE /api/v1/youtube/connection YouTube",
	"completeYouTubeConnection": "GET /api/youtube/oauth/callback YouTube",
	"beginYouTubeConnection":    "GET /api/youtube/oauth/start YouTube",
}

// functionOf names the function of the operations served by a function other than their tag's.
var functionOf = map[string]string{
	// The keys function already reads the account partition (accounts, key metadata).
	"getMe": "keys",
	// So do a channel's MCP sign-ins, beside the keys they act as (decision 55).
	"listMcpGrants": "keys", "revokeMcpGrant": "keys",
	// The YouTube connection lives on the integrations function (decision 42).
	"startYouTubeConnection": "integrations", "getYouTubeConnection": "integrations",
	"deleteYouTubeConnection": "integrations", "completeYouTubeConnection": "integrations",
	"beginYouTubeConnection": "integrations",
}

// generation are the operations of the generation rate group (decision 7): /generate/*, /niche-score,
// /refine and the unversioned POST /api/generate.
var generation = map[string]bool{
	"generateTitles": true, "generateLongScript": true, "generateShortScript": true, "generateDescription": true,
	"generateThumbnail": true, "generateHooks": true, "generateCtas": true, "generatePodcastPrep": true,
	"generateNewsletter": true, "generateClips": true, "generateCommunityPosts": true, "generateChannelOptimize": true,
	"generateReoptimize": true, "scoreNiche": true, "refine": true, "generateLegacy": true, "generateIdeas": true,
}

func TestLoad(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Operations) != len(serviceOperations) {
		t.Errorf("%d operations, want %d", len(c.Operations), len(serviceOperations))
	}
	functions := map[string]bool{"context": true, "videos": true, "planning": true, "memory": true, "generation": true,
		"intelligence": true, "utility": true, "webhooks": true, "integrations": true, "keys": true}
	for _, op := range c.Operations {
		if want, got := serviceOperations[op.ID], op.Method+" "+op.Path+" "+op.Tag; got != want {
			t.Errorf("%s: %q, want %q", op.ID, got, want)
		}
		wantFunction := strings.ToLower(op.Tag)
		if f, ok := functionOf[op.ID]; ok {
			wantFunction = f
		}
		if op.Function != wantFunction || !functions[op.Function] {
			t.Errorf("%s: function %q", op.ID, op.Function)
		}
		wantCred, wantGroup := CredentialChannel, RateOther
		switch {
		case op.Public:
			wantCred, wantGroup = CredentialNone, RateGroup("")
		case op.Tag == "Keys":
			wantCred = CredentialSession
		}
		if generation[op.ID] {
			wantGroup = RateGeneration
		}
		if op.Credential != wantCred || op.RateGroup != wantGroup {
			t.Errorf("%s: credential %q, rate group %q; want %q, %q", op.ID, op.Credential, op.RateGroup, wantCred, wantGroup)
		}
		if public := op.Tag == "Utility" || op.ID == "completeYouTubeConnection" || op.ID == "beginYouTubeConnection"; op.Public != public {
			t.Errorf("%s: Public = %v, want %v", op.ID, op.Public, public)
		}
		if c.Operation(op.ID) != op {
			t.Errorf("Operation(%q) does not return the listed operation", op.ID)
		}
		// Every operation's validator compiles: no keyword of the document is left unchecked.
		if _, err := op.validator(); err != nil {
			t.Error(err)
		}
	}
	if c.Operation("nope") != nil {
		t.Error("Operation of an unknown id is not nil")
	}

	status := map[string]int{"createSeries": 201, "createNote": 201, "createKey": 201, "createWebhook": 201,
		"deleteVideoIdea": 204, "deleteScheduleSlot": 204, "deleteSeries": 204, "deleteNote": 204, "revokeKey": 204, "revokeMcpGrant": 204,
		"deleteWebhook": 204, "deleteYouTubeConnection": 204, "testWebhook": 202, "startResearch": 202, "redeliverWebhookDelivery": 202}
	for _, op := range c.Operations {
		want, ok := status[op.ID]
		if !ok {
			want = 200
		}
		if op.SuccessStatus != want {
			t.Errorf("%s: SuccessStatus %d, want %d", op.ID, op.SuccessStatus, want)
		}
	}
	for id, want := range map[string][2]bool{"scoreNiche": {true, false}, "putNicheProfile": {true, true},
		"generateCtas": {true, true}, "testWebhook": {false, false}, "listNotes": {false, false}} {
		if op := c.Operation(id); op.HasBody != want[0] || op.BodyRequired != want[1] {
			t.Errorf("%s: HasBody, BodyRequired = %v, %v, want %v, %v", id, op.HasBody, op.BodyRequired, want[0], want[1])
		}
	}
}

// TestLoadKeepsDocumentOrder compares Operations with the order of the document's own text.
func TestLoadKeepsDocumentOrder(t *testing.T) {
	for _, s := range suites(t) {
		var want []string
		dec := json.NewDecoder(bytes.NewReader(s.json))
		depth := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			case "operationId":
				// paths → path item → operation: the operationId key sits at depth 4.
				if depth == 4 {
					id, _ := dec.Token()
					want = append(want, id.(string))
				}
			}
		}
		var got []string
		for _, op := range s.contract.Operations {
			got = append(got, op.ID)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: order %v, want %v", s.name, got, want)
		}
	}
}

func TestLoadFixture(t *testing.T) {
	s := fixture(t)
	tests := []struct {
		id                    string
		status                int
		public, body, bodyReq bool
	}{
		{"listItems", 200, false, false, false},
		{"createItem", 201, false, true, true},
		{"score", 200, false, true, false}, // 202 and 200 declared: the lowest wins
		{"deleteItem", 204, false, false, false},
		{"health", 200, true, false, false},
	}
	for _, tt := range tests {
		op := s.op(t, tt.id)
		if op.SuccessStatus != tt.status || op.Public != tt.public || op.HasBody != tt.body || op.BodyRequired != tt.bodyReq {
			t.Errorf("%s: status %d public %v body %v required %v", tt.id, op.SuccessStatus, op.Public, op.HasBody, op.BodyRequired)
		}
	}
	// Path-item parameters apply to every operation of the path.
	_, err := s.op(t, "updateItem").ValidateParams(nil, url.Values{}, http.Header{})
	wantError(t, err, "id", "id: is required")
}

// doc builds a minimal document around one path item and a components object.
func doc(pathItem, components string) string {
	return `{"openapi":"3.0.3","paths":{"/x":` + pathItem + `},"components":` + components + `}`
}

func TestLoadRejects(t *testing.T) {
	ok := `{"get":{"operationId":"a","tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other","responses":{"200":{"description":"ok"}}}}`
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"not JSON", `{"paths":`, "decode document"},
		{"not an object", `[]`, "decode document"},
		{"missing colon", `{"paths" {}}`, "decode document"},
		{"missing comma", `{"paths":{} "x":1}`, "decode document"},
		{"unterminated string", `{"paths":{"/x`, "decode document"},
		{"unterminated object", `{"paths":{"/x":{"get":{"responses":[}`, "decode document"},
		{"no operationId", doc(`{"get":{"tags":["T"],"responses":{"200":{}}}}`, `{}`), "no operationId"},
		{"no tag", doc(`{"get":{"operationId":"a","responses":{"200":{}}}}`, `{}`), "no tag"},
		{"no 2xx", doc(`{"get":{"operationId":"a","tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other","responses":{"404":{},"default":{}}}}`, `{}`), "no 2xx response"},
		{"duplicate operationId", `{"paths":{"/x":` + ok + `,"/y":` + ok + `}}`, `operationId "a" is declared twice`},
		{"relative path", `{"paths":{"x":` + ok + `}}`, "does not start with /"},
		{"missing requestBody", doc(`{"post":{"operationId":"a","tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other","requestBody":{"$ref":"#/components/requestBodies/B"},"responses":{"200":{}}}}`, `{}`), "no such component"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(tt.doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("load = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := load(doc(ok, `{}`)); err != nil {
		t.Fatalf("the valid base document: %v", err)
	}
}

// TestCompileRejects: a keyword the validator does not enforce must fail loudly (an internal error, not a
// validation error), so the document never promises a check the service does not make.
func TestCompileRejects(t *testing.T) {
	bodyWith := func(schema, schemas string) string {
		return doc(`{"post":{"operationId":"a","tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other","requestBody":{"content":{"application/json":{"schema":`+schema+`}}},"responses":{"200":{}}}}`,
			`{"schemas":`+schemas+`}`)
	}
	body := func(schema string) string { return bodyWith(schema, `{"S":{"type":"string"}}`) }
	param := func(p string) string {
		return doc(`{"get":{"operationId":"a","tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other","parameters":[`+p+`],"responses":{"200":{}}}}`, `{}`)
	}
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"not", body(`{"not":{"type":"string"}}`), "not: keyword not supported"},
		{"multipleOf", body(`{"type":"object","properties":{"n":{"type":"number","multipleOf":2}}}`), "multipleOf: keyword not supported"},
		{"discriminator", body(`{"oneOf":[{"type":"string"}],"discriminator":{"propertyName":"k"}}`), "discriminator: keyword not supported"},
		{"unknown format", body(`{"type":"string","format":"email"}`), `unsupported format "email"`},
		{"unknown type", body(`{"type":"null"}`), `unsupported type "null"`},
		{"bad pattern", body(`{"type":"string","pattern":"("}`), "pattern"},
		{"dangling schema ref", body(`{"$ref":"#/components/schemas/Nope"}`), "no such component"},
		{"external ref", body(`{"$ref":"other.yaml#/S"}`), "only #/components/schemas/* references"},
		{"enum of objects", body(`{"enum":[{"a":1}]}`), "only scalar values"},
		{"reference cycle", bodyWith(`{"$ref":"#/components/schemas/A"}`, `{"A":{"$ref":"#/components/schemas/B"},"B":{"$ref":"#/components/schemas/A"}}`), "reference cycle"},
		{"composition cycle", bodyWith(`{"$ref":"#/components/schemas/A"}`, `{"A":{"anyOf":[{"type":"string"},{"allOf":[{"$ref":"#/components/schemas/A"}]}]}}`), "includes itself"},
		{"cookie parameter", param(`{"name":"c","in":"cookie","schema":{"type":"string"}}`), "cookie parameters are not supported"},
		{"content parameter", param(`{"name":"c","in":"query","content":{"application/json":{}}}`), "only parameters with a schema"},
		{"object parameter", param(`{"name":"c","in":"query","schema":{"type":"object"}}`), `type "object" is not supported`},
		{"deepObject parameter", param(`{"name":"c","in":"query","style":"deepObject","schema":{"type":"string"}}`), `style "deepObject"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			op := c.Operation("a")
			if op.HasBody {
				_, err = op.ValidateBody([]byte(`"x"`))
			} else {
				_, err = op.ValidateParams(nil, url.Values{}, http.Header{})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if _, isValidation := apperr.As(err); isValidation {
				t.Fatalf("a broken document surfaced as a client error: %v", err)
			}
		})
	}
}

func TestReferencesAndOverrides(t *testing.T) {
	d := doc(`{
		"parameters":[{"name":"n","in":"query","schema":{"type":"integer","maximum":5}}],
		"post":{"operationId":"a","tags":["T"],"x-css-function":"t","x-css-credential":"channel","x-css-rate-group":"other",
			"parameters":[{"name":"n","in":"query","schema":{"type":"integer","maximum":10}}],
			"requestBody":{"$ref":"#/components/requestBodies/B"},
			"responses":{"201":{}}}}`,
		`{"requestBodies":{"B":{"required":true,"content":{"application/json; charset=utf-8":{"schema":{"$ref":"#/components/schemas/Node"}}}}},
		  "schemas":{"Node":{"type":"object","properties":{"name":{"$ref":"#/components/schemas/Name"},"next":{"$ref":"#/components/schemas/Node"}}},
		             "Name":{"$ref":"#/components/schemas/Short"},
		             "Short":{"type":"string","maxLength":3}}}`)
	c, err := load(d)
	if err != nil {
		t.Fatal(err)
	}
	op := c.Operation("a")
	if !op.HasBody || !op.BodyRequired || op.SuccessStatus != 201 {
		t.Fatalf("HasBody %v BodyRequired %v SuccessStatus %d", op.HasBody, op.BodyRequired, op.SuccessStatus)
	}
	// The operation's parameter replaces the path item's one of the same name.
	p, err := op.ValidateParams(nil, url.Values{"n": {"7"}}, http.Header{})
	if err != nil || p.Query["n"] != int64(7) {
		t.Fatalf("ValidateParams = %v, %v", p, err)
	}
	// A recursive schema reached through chained references.
	_, err = op.ValidateBody([]byte(`{"name":"abc","next":{"next":{"name":"abcd"}}}`))
	wantError(t, err, "next.next.name", "next.next.name: must be at most 3 characters")
	if _, err := op.ValidateBody([]byte(`{"next":{"next":{"name":"ab"}}}`)); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentFirstUse lets many goroutines trigger the lazy compilation at once (run with -race).
func TestConcurrentFirstUse(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	op := c.Operation("createSeries")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := op.ValidateBody([]byte(`{"name":"n","description":"d","scriptFormula":"f"}`)); err != nil {
				errs <- err
			}
			if _, err := op.ValidateBody([]byte(`{"name":""}`)); err == nil {
				errs <- errors.New("an invalid body passed")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLoadSecurity(t *testing.T) {
	op := func(id, security, credential string) string {
		ext := `"x-css-function":"f","x-css-credential":"` + credential + `",`
		if credential != "none" {
			ext += `"x-css-rate-group":"other",`
		}
		return `"` + id + `":{"operationId":"` + id + `","tags":["T"],` + ext + security + `"responses":{"200":{}}}`
	}
	tests := []struct {
		name   string
		global string
		public map[string]bool
	}{
		{"global requirement", `"security":[{"b":[]}],`, map[string]bool{"get": false, "put": true, "post": true, "delete": false}},
		// Without a global requirement an operation still needs a credential unless it says security: [].
		{"no global security", ``, map[string]bool{"get": false, "put": true, "post": true, "delete": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths := `{"/x":{` + op("get", "", "channel") + `,` + op("put", `"security":[],`, "none") + `,` +
				op("post", `"security":[{},{"b":[]}],`, "none") + `,` + op("delete", `"security":[{"b":[]}],`, "session") + `}}`
			c, err := load(`{` + tt.global + `"paths":` + paths + `}`)
			if err != nil {
				t.Fatal(err)
			}
			for id, want := range tt.public {
				if got := c.Operation(id).Public; got != want {
					t.Errorf("%s: Public = %v, want %v", id, got, want)
				}
			}
		})
	}
}

// TestLoadChecksExtensions: every operation says which function serves it, what credential it takes and
// which rate group it counts against, and the credential agrees with the document's security.
func TestLoadChecksExtensions(t *testing.T) {
	tests := []struct{ name, ext, security, want string }{
		{"no function", `"x-css-credential":"channel","x-css-rate-group":"other"`, ``, "no x-css-function"},
		{"no credential", `"x-css-function":"f","x-css-rate-group":"other"`, ``, `x-css-credential ""`},
		{"unknown credential", `"x-css-function":"f","x-css-credential":"key","x-css-rate-group":"other"`, ``, `x-css-credential "key"`},
		{"none but secured", `"x-css-function":"f","x-css-credential":"none"`, ``, "asks for a credential"},
		{"channel but public", `"x-css-function":"f","x-css-credential":"channel","x-css-rate-group":"other"`, `"security":[],`, "security is empty"},
		{"no rate group", `"x-css-function":"f","x-css-credential":"session"`, ``, `x-css-rate-group ""`},
		{"unknown rate group", `"x-css-function":"f","x-css-credential":"channel","x-css-rate-group":"fast"`, ``, `x-css-rate-group "fast"`},
		{"rate group on a public operation", `"x-css-function":"f","x-css-credential":"none","x-css-rate-group":"other"`, `"security":[],`, "no credential"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"security":[{"b":[]}],"paths":{"/x":{"get":{"operationId":"get","tags":["T"],` + tt.security +
				tt.ext + `,"responses":{"200":{}}}}}}`
			_, err := load(doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("load: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestLoadScansJSON covers what the document scanner meets beyond the generated layout: escaped strings,
// path-item parameters after the operations, and whitespace.
func TestLoadScansJSON(t *testing.T) {
	c, err := load(` { "paths" : { "/a\/b" : { "get" : { "operationId" : "g\u0065t", "tags" : [ "T\"1", "U" ] ,
		"x-css-function" : "f" , "x-css-credential" : "ch\u0061nnel" , "x-css-rate-group" : "other" ,
		"responses" : { "default" : { } , "201" : { "description" : "}]\"{[" } } } ,
		"parameters" : [ { "name" : "n" , "in" : "query" , "required" : true , "schema" : { "type" : "integer" } } ] } } } `)
	if err != nil {
		t.Fatal(err)
	}
	op := c.Operation("get")
	if op == nil || op.Path != "/a/b" || op.Tag != `T"1` || op.SuccessStatus != 201 {
		t.Fatalf("got %+v", op)
	}
	_, err = op.ValidateParams(nil, url.Values{}, http.Header{})
	wantError(t, err, "n", "n: is required")
}

// TestIntegersAreBounded: every integer a request may carry has both bounds in the document, so no value
// reaches a Go int unchecked and every limit is said as "at most N".
func TestIntegersAreBounded(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(contract), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "integer" {
				_, lo := x["minimum"]
				_, hi := x["maximum"]
				if !lo || !hi {
					t.Errorf("%s: integer without minimum and maximum", at)
				}
			}
			for k, e := range x {
				walk(e, at+"/"+k)
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
}
