package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

const docFile = "openapi.yaml"

// operation is one row of the contract's operation table: the routes, ids and tags others code against.
type operation struct {
	method, path, id, tag string
}

var operations = []operation{
	{http.MethodGet, "/api/v1/niche-profile", "getNicheProfile", "Context"},
	{http.MethodPut, "/api/v1/niche-profile", "putNicheProfile", "Context"},
	{http.MethodPost, "/api/v1/niche-score", "scoreNiche", "Context"},
	{http.MethodGet, "/api/v1/research-insights", "getResearchInsights", "Context"},
	{http.MethodGet, "/api/v1/history", "listHistory", "Context"},
	{http.MethodGet, "/api/v1/my-videos", "listMyVideos", "Videos"},
	{http.MethodPost, "/api/v1/my-videos", "commitVideo", "Videos"},
	{http.MethodPost, "/api/v1/my-videos/status", "updateVideoStatus", "Videos"},
	{http.MethodPatch, "/api/v1/my-videos/{id}", "updateMyVideo", "Videos"},
	{http.MethodGet, "/api/v1/video-ideas", "listVideoIdeas", "Videos"},
	{http.MethodDelete, "/api/v1/video-ideas/{id}", "deleteVideoIdea", "Videos"},
	{http.MethodGet, "/api/v1/schedule", "getSchedule", "Planning"},
	{http.MethodPost, "/api/v1/schedule", "upsertScheduleSlot", "Planning"},
	{http.MethodDelete, "/api/v1/schedule", "deleteScheduleSlot", "Planning"},
	{http.MethodGet, "/api/v1/series", "listSeries", "Planning"},
	{http.MethodPost, "/api/v1/series", "createSeries", "Planning"},
	{http.MethodPatch, "/api/v1/series/{id}", "updateSeries", "Planning"},
	{http.MethodDelete, "/api/v1/series/{id}", "deleteSeries", "Planning"},
	{http.MethodGet, "/api/v1/notes", "listNotes", "Memory"},
	{http.MethodPost, "/api/v1/notes", "createNote", "Memory"},
	{http.MethodDelete, "/api/v1/notes/{id}", "deleteNote", "Memory"},
	{http.MethodPost, "/api/v1/generate/titles", "generateTitles", "Generation"},
	{http.MethodPost, "/api/v1/generate/long-script", "generateLongScript", "Generation"},
	{http.MethodPost, "/api/v1/generate/short-script", "generateShortScript", "Generation"},
	{http.MethodPost, "/api/v1/generate/description", "generateDescription", "Generation"},
	{http.MethodPost, "/api/v1/generate/thumbnail", "generateThumbnail", "Generation"},
	{http.MethodPost, "/api/v1/generate/hooks", "generateHooks", "Generation"},
	{http.MethodPost, "/api/v1/generate/ctas", "generateCtas", "Generation"},
	{http.MethodPost, "/api/v1/generate/podcast-prep", "generatePodcastPrep", "Generation"},
	{http.MethodPost, "/api/v1/generate/newsletter", "generateNewsletter", "Generation"},
	{http.MethodPost, "/api/v1/generate/clips", "generateClips", "Generation"},
	{http.MethodPost, "/api/v1/generate/community-posts", "generateCommunityPosts", "Generation"},
	{http.MethodPost, "/api/v1/generate/channel-optimize", "generateChannelOptimize", "Generation"},
	{http.MethodPost, "/api/v1/generate/reoptimize", "generateReoptimize", "Generation"},
	{http.MethodPost, "/api/v1/generate/ideas", "generateIdeas", "Generation"},
	{http.MethodGet, "/api/v1/generations/{id}", "getGeneration", "Generation"},
	{http.MethodGet, "/api/v1/performance", "getPerformance", "Intelligence"},
	{http.MethodPost, "/api/v1/refine", "refine", "Intelligence"},
	{http.MethodPost, "/api/v1/research", "startResearch", "Intelligence"},
	{http.MethodGet, "/api/v1/research/runs/{id}", "getResearchRun", "Intelligence"},
	{http.MethodGet, "/api/v1/research/videos", "listResearchVideos", "Intelligence"},
	{http.MethodGet, "/api/v1/health", "getHealth", "Utility"},
	{http.MethodGet, "/api/v1/openapi.json", "getOpenAPI", "Utility"},
	{http.MethodGet, "/api/v1/docs", "getDocs", "Utility"},
	{http.MethodGet, "/api/v1/docs/redoc.standalone.js", "getDocsScript", "Utility"},
	{http.MethodGet, "/api/v1/keys", "listKeys", "Keys"},
	{http.MethodPost, "/api/v1/keys", "createKey", "Keys"},
	{http.MethodDelete, "/api/v1/keys/{id}", "revokeKey", "Keys"},
	{http.MethodGet, "/api/v1/me", "getMe", "Account"},
	{http.MethodGet, "/api/v1/mcp/grants", "listMcpGrants", "Account"},
	{http.MethodDelete, "/api/v1/mcp/grants/{id}", "revokeMcpGrant", "Account"},
	{http.MethodPost, "/api/webhooks", "createWebhook", "Webhooks"},
	{http.MethodGet, "/api/webhooks", "listWebhooks", "Webhooks"},
	{http.MethodGet, "/api/webhooks/{id}", "getWebhook", "Webhooks"},
	{http.MethodPatch, "/api/webhooks/{id}", "updateWebhook", "Webhooks"},
	{http.MethodDelete, "/api/webhooks/{id}", "deleteWebhook", "Webhooks"},
	{http.MethodPost, "/api/webhooks/{id}/test", "testWebhook", "Webhooks"},
	{http.MethodGet, "/api/webhooks/{id}/deliveries", "listWebhookDeliveries", "Webhooks"},
	{http.MethodPost, "/api/webhooks/{id}/rotate-secret", "rotateWebhookSecret", "Webhooks"},
	{http.MethodPost, "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver", "redeliverWebhookDelivery", "Webhooks"},
	{http.MethodGet, "/api/my-videos", "listMyVideosLegacy", "Integrations"},
	{http.MethodPost, "/api/generate", "generateLegacy", "Integrations"},
	{http.MethodPost, "/api/v1/youtube/connection", "startYouTubeConnection", "YouTube"},
	{http.MethodGet, "/api/v1/youtube/connection", "getYouTubeConnection", "YouTube"},
	{http.MethodDelete, "/api/v1/youtube/connection", "deleteYouTubeConnection", "YouTube"},
	{http.MethodGet, "/api/youtube/oauth/start", "beginYouTubeConnection", "YouTube"},
	{http.MethodGet, "/api/youtube/oauth/callback", "completeYouTubeConnection", "YouTube"},
}

// publicOps take no credential; the OAuth start step and callback are authenticated by their single-use
// state (decisions 42 and 47).
var publicOps = []string{"getHealth", "getOpenAPI", "getDocs", "getDocsScript", "beginYouTubeConnection", "completeYouTubeConnection"}

// pageOps answer a browser with HTML pages, their refusals (400, 409) included, instead of the Error shape.
var pageOps = []string{"beginYouTubeConnection", "completeYouTubeConnection"}

// generationOps run as jobs: they take Idempotency-Key and Prefer and may answer 202.
var generationOps = []string{
	"scoreNiche", "generateTitles", "generateLongScript", "generateShortScript", "generateDescription",
	"generateThumbnail", "generateHooks", "generateCtas", "generatePodcastPrep", "generateNewsletter",
	"generateClips", "generateCommunityPosts", "generateChannelOptimize", "generateReoptimize", "generateIdeas",
	"generateLegacy", "refine",
}

var pagedOps = []string{"listVideoIdeas", "listHistory", "listWebhookDeliveries", "listResearchVideos"}

// errorResponses names the reusable response every error status must reference.
var errorResponses = map[int]string{
	http.StatusBadRequest:            "BadRequest",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "AccessExpired",
	http.StatusNotFound:              "NotFound",
	http.StatusConflict:              "Conflict",
	http.StatusRequestEntityTooLarge: "PayloadTooLarge",
	http.StatusTooManyRequests:       "TooManyRequests",
	http.StatusInternalServerError:   "ServerError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
}

type located struct {
	method, path string
	pathItem     *openapi3.PathItem
	op           *openapi3.Operation
}

func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(docFile)
	if err != nil {
		t.Fatalf("load %s: %v", docFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate %s: %v", docFile, err)
	}
	return doc
}

// operationsByID indexes the document's operations, failing on a missing or duplicated operationId.
func operationsByID(t *testing.T, doc *openapi3.T) map[string]located {
	t.Helper()
	ops := map[string]located{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
				continue
			}
			if prev, dup := ops[op.OperationID]; dup {
				t.Errorf("operationId %s on %s %s and %s %s", op.OperationID, prev.method, prev.path, method, path)
			}
			ops[op.OperationID] = located{method: method, path: path, pathItem: item, op: op}
		}
	}
	return ops
}

func parameters(l located) openapi3.Parameters {
	return append(slices.Clone(l.pathItem.Parameters), l.op.Parameters...)
}

func hasParamRef(l located, name string) bool {
	return slices.ContainsFunc(parameters(l), func(p *openapi3.ParameterRef) bool {
		return p.Ref == "#/components/parameters/"+name
	})
}

func isPublic(id string) bool { return slices.Contains(publicOps, id) }

func TestDocumentHeader(t *testing.T) {
	doc := loadDoc(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	if doc.Info.Version != "1.0.0" || doc.Info.Title != "Creator Strategy Service API" {
		t.Errorf("info = %q %q", doc.Info.Title, doc.Info.Version)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		t.Errorf("servers must be [{url: /}]")
	}
	scheme := doc.Components.SecuritySchemes["bearerAuth"]
	if scheme == nil || scheme.Value.Type != "http" || scheme.Value.Scheme != "bearer" {
		t.Errorf("bearerAuth must be {type: http, scheme: bearer}")
	}
	if len(doc.Security) != 1 || len(doc.Security[0]) != 1 || doc.Security[0]["bearerAuth"] == nil {
		t.Errorf("global security must be [{bearerAuth: []}], got %v", doc.Security)
	}
}

func TestOperationsMatchTheTable(t *testing.T) {
	doc := loadDoc(t)
	ops := operationsByID(t, doc)
	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		if tag.Description == "" {
			t.Errorf("tag %s has no description", tag.Name)
		}
		declared[tag.Name] = true
	}
	for _, want := range operations {
		got, ok := ops[want.id]
		if !ok {
			t.Errorf("operation %s (%s %s) is missing", want.id, want.method, want.path)
			continue
		}
		if got.method != want.method || got.path != want.path {
			t.Errorf("%s is %s %s, want %s %s", want.id, got.method, got.path, want.method, want.path)
		}
		if len(got.op.Tags) != 1 || got.op.Tags[0] != want.tag {
			t.Errorf("%s tags = %v, want [%s]", want.id, got.op.Tags, want.tag)
		}
		if !declared[want.tag] {
			t.Errorf("tag %s of %s is not declared in the top-level tags", want.tag, want.id)
		}
	}
	if len(ops) != len(operations) {
		var extra []string
		for id := range ops {
			if !slices.ContainsFunc(operations, func(o operation) bool { return o.id == id }) {
				extra = append(extra, id)
			}
		}
		sort.Strings(extra)
		t.Errorf("document has %d operations, table %d; not in the table: %v", len(ops), len(operations), extra)
	}
}

func TestSecurity(t *testing.T) {
	doc := loadDoc(t)
	for id, l := range operationsByID(t, doc) {
		open := l.op.Security != nil && len(*l.op.Security) == 0
		if open != isPublic(id) {
			t.Errorf("%s: public = %v, want %v (only %v are public)", id, open, isPublic(id), publicOps)
		}
		if !open && l.op.Security != nil {
			t.Errorf("%s overrides the global security; it must inherit it", id)
		}
	}
}

func TestResponses(t *testing.T) {
	doc := loadDoc(t)
	for id, l := range operationsByID(t, doc) {
		resp := l.op.Responses
		if resp.Default() == nil {
			t.Errorf("%s has no default response", id)
		}
		for status, name := range errorResponses {
			if slices.Contains(pageOps, id) && (status == http.StatusBadRequest || status == http.StatusConflict) {
				continue
			}
			if status == http.StatusTooManyRequests && isPublic(id) {
				// No rate group: only API Gateway's route throttling answers 429 (in its own body).
				name = "Throttled"
			}
			if r := resp.Status(status); r != nil && r.Ref != "#/components/responses/"+name {
				t.Errorf("%s %d response is %q, want a $ref to %s", id, status, r.Ref, name)
			}
		}
		var want []int
		if !isPublic(id) {
			want = append(want, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests)
		}
		if l.op.RequestBody != nil {
			want = append(want, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
		}
		if strings.Contains(l.path, "{id}") {
			want = append(want, http.StatusBadRequest, http.StatusNotFound)
		}
		for _, status := range want {
			if resp.Status(status) == nil {
				t.Errorf("%s lacks a %d response", id, status)
			}
		}
		if !has2xx(resp) {
			t.Errorf("%s has no 2xx response", id)
		}
	}
	tooMany := doc.Components.Responses["TooManyRequests"]
	if tooMany == nil || tooMany.Value.Headers["Retry-After"] == nil {
		t.Fatalf("TooManyRequests must carry a Retry-After header")
	}
	if h := tooMany.Value.Headers["Retry-After"].Value; !h.Required || !h.Schema.Value.Type.Is("integer") {
		t.Errorf("Retry-After must be a required integer header")
	}
}

// A page operation's parameters are validated by the one request model before its handler runs, which
// answers the Error shape in JSON: its 400 documents that beside the page (Schemathesis found the start
// step's 400 undocumented as JSON).
func TestPageOperationsDocumentTheirValidationErrors(t *testing.T) {
	doc := loadDoc(t)
	for id, l := range operationsByID(t, doc) {
		if !slices.Contains(pageOps, id) || len(l.op.Parameters) == 0 {
			continue
		}
		r := l.op.Responses.Status(http.StatusBadRequest)
		if r == nil || r.Value.Content.Get("application/json") == nil ||
			r.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/Error" {
			t.Errorf("%s: its 400 does not document the Error shape as application/json", id)
		}
	}
}

func has2xx(r *openapi3.Responses) bool {
	for code := range r.Map() {
		if strings.HasPrefix(code, "2") {
			return true
		}
	}
	return false
}

func TestParameters(t *testing.T) {
	doc := loadDoc(t)
	for id, l := range operationsByID(t, doc) {
		isKeys := slices.Contains(l.op.Tags, "Keys")
		wantChannel := !isPublic(id) && !isKeys
		if got := hasParamRef(l, "ChannelHeader"); got != wantChannel {
			t.Errorf("%s: ChannelHeader present = %v, want %v", id, got, wantChannel)
		}
		if isKeys && !strings.Contains(strings.ToLower(l.op.Description), "session token only") {
			t.Errorf("%s: a Keys operation must say \"session token only\"", id)
		}
		if got, want := hasParamRef(l, "Id"), strings.Contains(l.path, "{id}"); got != want {
			t.Errorf("%s: Id parameter present = %v, want %v", id, got, want)
		}
		paged := slices.Contains(pagedOps, id)
		if hasParamRef(l, "Limit") != paged || hasParamRef(l, "Offset") != paged {
			t.Errorf("%s: Limit/Offset present must be %v", id, paged)
		}
		gen := slices.Contains(generationOps, id)
		if hasParamRef(l, "IdempotencyKey") != gen || hasParamRef(l, "Prefer") != gen {
			t.Errorf("%s: Idempotency-Key/Prefer present must be %v", id, gen)
		}
		if gen {
			accepted := l.op.Responses.Status(http.StatusAccepted)
			if accepted == nil || accepted.Ref != "#/components/responses/GenerationAccepted" {
				t.Errorf("%s: a generation must answer 202 GenerationAccepted", id)
			}
			for _, status := range []int{400, 409, 413, 429, 500} {
				if l.op.Responses.Status(status) == nil {
					t.Errorf("%s: a generation lacks %d", id, status)
				}
			}
		}
	}
	accepted := doc.Components.Responses["GenerationAccepted"].Value
	if accepted.Headers["Location"] == nil {
		t.Errorf("GenerationAccepted must carry a Location header")
	}
	params := doc.Components.Parameters
	limit, offset := params["Limit"].Value, params["Offset"].Value
	if s := limit.Schema.Value; limit.In != "query" || limit.Name != "limit" || !s.Type.Is("integer") ||
		s.Min == nil || *s.Min != 1 || s.Max == nil || *s.Max != 100 || s.Default != 20.0 {
		t.Errorf("Limit must be the integer query parameter limit, 1..100, default 20")
	}
	if s := offset.Schema.Value; offset.In != "query" || offset.Name != "offset" || !s.Type.Is("integer") ||
		s.Min == nil || *s.Min != 0 || s.Default != 0.0 {
		t.Errorf("Offset must be the integer query parameter offset, minimum 0, default 0")
	}
	if ch := params["ChannelHeader"].Value; ch.In != "header" || ch.Name != "X-Channel-Id" || ch.Required ||
		ch.Schema.Value.Format != "uuid" {
		t.Errorf("ChannelHeader must be an optional uuid header X-Channel-Id")
	}
	if id := params["Id"].Value; id.In != "path" || id.Name != "id" || !id.Required || id.Schema.Value.Format != "uuid" {
		t.Errorf("Id must be a required uuid path parameter id")
	}
}

// namedSchemas are the component names other packages and the MCP tools refer to.
var namedSchemas = []string{
	"NicheProfile", "NicheScore", "MyVideo", "VideoIdea", "ScheduleSlot", "ContentSeries", "ResearchPatterns",
	"ToolRun", "CreatorNote", "GeneratedTitle", "GeneratedScript", "ThumbnailStrategy", "Hook", "CTA",
	"PodcastPrep", "Newsletter", "Clip", "CommunityPost", "ChannelDescription", "PlaylistSuggestion",
	"BannerStrategy", "PerformanceData", "HealthStatus", "Error", "Grade", "ContentType", "VideoStatus",
	"CommitVideoRequest", "NoteCreate", "SeriesCreate", "SeriesUpdate", "ScheduleSlotInput", "ApiKey",
	"ApiKeyCreated", "KeyCreate", "Webhook", "WebhookCreate", "WebhookCreated", "WebhookUpdate",
	"WebhookDelivery", "EventName", "GenerationAccepted",
}

func TestNamedSchemasAndEnums(t *testing.T) {
	doc := loadDoc(t)
	schemas := doc.Components.Schemas
	for _, name := range namedSchemas {
		if schemas[name] == nil {
			t.Errorf("schema %s is missing", name)
		}
	}
	enums := map[string][]any{
		"Error.code": {"VALIDATION_ERROR", "UNAUTHORIZED", "ACCESS_EXPIRED", "RATE_LIMIT", "USAGE_LIMIT",
			"GENERATION_FAILED", "NOT_FOUND", "CONFLICT", "NOT_IMPLEMENTED", "SERVICE_UNAVAILABLE", "INTERNAL"},
		"Grade":       {"A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F"},
		"ContentType": {"Long", "Short", "Live Stream", "Podcast", "Community Post", "Film"},
		"VideoStatus": {"planned", "scripted", "filmed", "edited", "published"},
		"EventName": {"titles.generated", "script.generated", "description.generated", "thumbnail.strategy",
			"research.completed", "research.step", "video.committed", "schedule.updated",
			"video.status_changed", "content.generated", "video.reviewed", "youtube.connected", "youtube.disconnected",
			"video.underperforming", "video.outperforming"},
	}
	for name, want := range enums {
		s := schemas[strings.Split(name, ".")[0]]
		if s == nil {
			continue // reported above
		}
		got := s.Value.Enum
		if field, ok := strings.CutPrefix(name, "Error."); ok {
			got = s.Value.Properties[field].Value.Enum
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s enum = %v, want %v", name, got, want)
		}
	}
	if req := schemas["Error"].Value.Required; !slices.Equal(req, []string{"error", "code"}) {
		t.Errorf("Error.required = %v, want [error code]", req)
	}
}

// allowedRequestKeywords are the schema keywords the request validator supports (see the conventions).
var allowedRequestKeywords = map[string]bool{
	"type": true, "nullable": true, "enum": true, "default": true, "minLength": true, "maxLength": true,
	"minimum": true, "maximum": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"pattern": true, "format": true, "required": true, "properties": true, "items": true, "$ref": true,
	"description": true, "example": true, "anyOf": true, "minProperties": true,
	"x-css-text": true, // free text the validator checks is plain text (text.go)
}

var allowedRequestFormats = map[string]bool{"uuid": true, "date": true, "date-time": true, "uri": true}

// requestWalker checks request schemas in the raw YAML, where every keyword written is visible.
type requestWalker struct {
	t       *testing.T
	schemas map[string]any
	params  map[string]any
}

func (w *requestWalker) resolve(ref, prefix string, from map[string]any) any {
	name, ok := strings.CutPrefix(ref, prefix)
	if !ok {
		w.t.Errorf("unexpected $ref %q", ref)
		return nil
	}
	v, ok := from[name]
	if !ok {
		w.t.Errorf("dangling $ref %q", ref)
	}
	return v
}

// schema walks one request schema. anyOf is allowed only at the root of commitVideo's body.
func (w *requestWalker) schema(where string, node any, allowAnyOf bool, seen map[string]bool) {
	m, ok := node.(map[string]any)
	if !ok {
		w.t.Errorf("%s: schema is %T, not a mapping", where, node)
		return
	}
	for key, val := range m {
		if !allowedRequestKeywords[key] {
			w.t.Errorf("%s: keyword %q is not allowed in a request schema", where, key)
		}
		switch key {
		case "$ref":
			ref := val.(string)
			if len(m) > 1 {
				w.t.Errorf("%s: $ref %s has siblings, which OpenAPI 3.0 ignores", where, ref)
			}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			if target := w.resolve(ref, "#/components/schemas/", w.schemas); target != nil {
				w.schema(ref, target, allowAnyOf, seen)
			}
		case "anyOf":
			if !allowAnyOf {
				w.t.Errorf("%s: anyOf is allowed only on commitVideo's body", where)
			}
			for i, sub := range val.([]any) {
				w.schema(fmt.Sprintf("%s.anyOf[%d]", where, i), sub, false, seen)
			}
		case "properties":
			for name, sub := range val.(map[string]any) {
				w.schema(where+"."+name, sub, false, seen)
			}
		case "items":
			w.schema(where+"[]", val, false, seen)
		case "format":
			if !allowedRequestFormats[val.(string)] {
				w.t.Errorf("%s: format %q is not allowed in a request schema", where, val)
			}
		}
	}
}

// parameters walks the schemas of a parameter list and returns how many it walked.
func (w *requestWalker) parameters(where string, params []any) int {
	for _, p := range params {
		pm, _ := p.(map[string]any)
		if ref, ok := pm["$ref"].(string); ok {
			pm, _ = w.resolve(ref, "#/components/parameters/", w.params).(map[string]any)
		}
		w.schema(fmt.Sprintf("%s parameter %v", where, pm["name"]), pm["schema"], false, map[string]bool{})
	}
	return len(params)
}

func TestRequestSchemasUseOnlyAllowedKeywords(t *testing.T) {
	raw, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]any `yaml:"paths"`
		Components struct {
			Schemas    map[string]any `yaml:"schemas"`
			Parameters map[string]any `yaml:"parameters"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	w := &requestWalker{t: t, schemas: doc.Components.Schemas, params: doc.Components.Parameters}
	walked := 0
	for path, item := range doc.Paths {
		for key, v := range item {
			if key == "parameters" {
				walked += w.parameters(path, v.([]any))
				continue
			}
			op, ok := v.(map[string]any)
			if !ok {
				continue // summary, description
			}
			params, _ := op["parameters"].([]any)
			walked += w.parameters(key+" "+path, params)
			body, ok := op["requestBody"].(map[string]any)
			if !ok {
				continue
			}
			for mediaType, mt := range body["content"].(map[string]any) {
				if mediaType != "application/json" {
					t.Errorf("%s %s: request media type %s, want application/json", key, path, mediaType)
				}
				where := fmt.Sprintf("%s %s body", key, path)
				w.schema(where, mt.(map[string]any)["schema"], op["operationId"] == "commitVideo", map[string]bool{})
				walked++
			}
		}
	}
	if walked < len(operations) {
		t.Fatalf("walked only %d request schemas; the walk is broken", walked)
	}
}

// TestRequestSchemasBehave pins the bounds others rely on, by validating sample bodies against the
// operations' request schemas.
func TestRequestSchemasBehave(t *testing.T) {
	doc := loadDoc(t)
	ops := operationsByID(t, doc)
	cases := []struct {
		op, name, body string
		valid          bool
	}{
		{"commitVideo", "an idea", `{"ideaId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d"}`, true},
		{"commitVideo", "a new video", `{"title":"T","contentType":"Long","formulaType":"how-to"}`, true},
		{"commitVideo", "a new video in no series", `{"title":"T","contentType":"Long","formulaType":"f","seriesId":null}`, true},
		{"commitVideo", "nothing", `{}`, false},
		{"commitVideo", "a new video without formula", `{"title":"T","contentType":"Long"}`, false},
		{"commitVideo", "an unknown content type", `{"title":"T","contentType":"Reel","formulaType":"f"}`, false},
		{"commitVideo", "a title of 201 characters", `{"title":"` + strings.Repeat("a", 201) + `","contentType":"Long","formulaType":"f"}`, false},
		{"commitVideo", "an unknown field", `{"ideaId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d","extra":1}`, true},
		// With ideaId the other members are ignored, but still checked when given (issue 35 item 7: the
		// alternatives became named schemas, the top level's bounds still apply).
		{"commitVideo", "an idea with a title", `{"ideaId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d","title":"T"}`, true},
		{"commitVideo", "an idea with a title of 201 characters", `{"ideaId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d","title":"` + strings.Repeat("a", 201) + `"}`, false},
		{"commitVideo", "an idea with an unknown content type", `{"ideaId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d","contentType":"Reel"}`, false},
		{"putNicheProfile", "an empty profile", `{}`, true},
		{"putNicheProfile", "4 keywords", `{"keywords":["a","b","c","d"],"contentLanguage":"german"}`, true},
		{"putNicheProfile", "3 keywords", `{"keywords":["a","b","c"]}`, false},
		{"putNicheProfile", "an unknown language", `{"contentLanguage":"klingon"}`, false},
		{"upsertScheduleSlot", "a publish slot", `{"dayOfWeek":2,"slotType":"publish","contentType":"Short","publishTime":"23:59"}`, true},
		{"upsertScheduleSlot", "a clearing assignment", `{"dayOfWeek":2,"slotType":"publish","publishTime":"09:00","assignedVideoId":null,"weekStart":"2025-03-09"}`, true},
		{"upsertScheduleSlot", "hour 24", `{"dayOfWeek":2,"slotType":"publish","publishTime":"24:00"}`, false},
		{"upsertScheduleSlot", "day 7", `{"dayOfWeek":7,"slotType":"rest"}`, false},
		{"upsertScheduleSlot", "a fractional day", `{"dayOfWeek":1.5,"slotType":"rest"}`, false},
		{"createSeries", "a series", `{"name":"N","description":"","scriptFormula":""}`, true},
		{"createSeries", "an empty name", `{"name":"","description":"","scriptFormula":""}`, false},
		{"updateSeries", "no field", `{}`, false},
		{"updateSeries", "one field", `{"isActive":false}`, true},
		{"createNote", "2000 two-byte characters", `{"category":"style","content":"` + strings.Repeat("é", 2000) + `"}`, true},
		{"createNote", "2001 characters", `{"category":"style","content":"` + strings.Repeat("a", 2001) + `"}`, false},
		{"generateTitles", "count 20", `{"title":"T","type":"news","count":20}`, true},
		{"generateTitles", "count 21", `{"title":"T","type":"news","count":21}`, false},
		{"generateTitles", "a long-script type", `{"title":"T","type":"vlog"}`, false},
		{"generateClips", "11 clips", `{"title":"T","clipCount":11}`, false},
		{"generateCtas", "an empty object", `{}`, true},
		{"refine", "empty feedback", `{"generationId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d","feedback":""}`, false},
		{"createKey", "a key", `{"channelId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d","name":"zapier"}`, true},
		{"createKey", "a 101-character name", `{"channelId":"8a0f4c8e-2f7e-4c1a-9d6b-6f3c2a1b0e9d","name":"` + strings.Repeat("n", 101) + `"}`, false},
		{"createWebhook", "a registration", `{"url":"https://hooks.example.com/x","events":["titles.generated","content.generated"]}`, true},
		{"createWebhook", "an ftp url", `{"url":"ftp://example.com/x","events":["titles.generated"]}`, false},
		{"createWebhook", "no events", `{"url":"https://example.com/x","events":[]}`, false},
		{"createWebhook", "a repeated event", `{"url":"https://example.com/x","events":["research.step","research.step"]}`, false},
		{"createWebhook", "an unknown event", `{"url":"https://example.com/x","events":["video.deleted"]}`, false},
		{"updateWebhook", "no field", `{}`, false},
		{"generateLegacy", "the guide's example", `{"tool":"titles","videoTitle":"T","titleType":"how-to"}`, true},
		{"generateLegacy", "an unknown tool", `{"tool":"ideas"}`, false},
	}
	for _, c := range cases {
		t.Run(c.op+"/"+c.name, func(t *testing.T) {
			l, ok := ops[c.op]
			if !ok || l.op.RequestBody == nil {
				t.Fatalf("%s has no request body", c.op)
			}
			schema := l.op.RequestBody.Value.Content.Get("application/json").Schema.Value
			var body any
			if err := json.Unmarshal([]byte(c.body), &body); err != nil {
				t.Fatal(err)
			}
			err := schema.VisitJSON(body)
			if (err == nil) != c.valid {
				t.Errorf("valid = %v, want %v (%v)", err == nil, c.valid, err)
			}
		})
	}
}

// rateLimitHeaders are the headers of every answer of a rate-limited operation once its credential is
// known (the X-RateLimit trio; see the description's Limits section).
var rateLimitHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

// TestRateLimitHeaders: every operation but the public ones counts in a rate group, and declares the
// rate-limit headers, required integers, on its 2xx answers and its 429.
func TestRateLimitHeaders(t *testing.T) {
	doc := loadDoc(t)
	for id, l := range operationsByID(t, doc) {
		_, limited := l.op.Extensions["x-css-rate-group"]
		if limited == isPublic(id) {
			t.Errorf("%s: rate-limited = %v, want %v", id, limited, !isPublic(id))
		}
		if !limited {
			continue
		}
		for code, r := range l.op.Responses.Map() {
			if !strings.HasPrefix(code, "2") && code != "429" {
				continue
			}
			for _, name := range rateLimitHeaders {
				h := r.Value.Headers[name]
				if h == nil || !h.Value.Required || !h.Value.Schema.Value.Type.Is("integer") {
					t.Errorf("%s %s: want a required integer header %s", id, code, name)
				}
			}
		}
	}
}
