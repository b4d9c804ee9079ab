package wiretest

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/authtest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/wire"
)

// CheckFunction proves from h, a main's handler on c, that the function serves exactly fn's operations:
//   - the sample events of fn's operations answer as SampleStatus says, with API Gateway's request id (no
//     authorizer: the function authenticates each request itself), and 401 without their credential;
//   - every operation of fn that takes a credential refuses none, a malformed one, an unknown key, a forged
//     session and a credential of the wrong kind with 401 in the Error shape, and with the right one and a
//     request the contract takes runs on the services the main built (no 5xx: each Lambda builds only
//     the services its operations call, wire.NewAPI); the public ones answer without one;
//   - every other function's operation is no path of h, nor is a path with dot segments.
func CheckFunction(t *testing.T, c *Cloud, fn contract.Function, h wire.APIHandler) {
	t.Helper()
	doc, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	names, err := samevents.Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		ev := LoadEvent(t, name)
		op := OperationOf(t, doc, ev)
		if contract.Function(op.Function) != fn {
			continue
		}
		checkSample(t, c, name, op, ev, h)
	}
	session := "Bearer " + c.Session(t, samevents.Account)
	forged, err := authtest.Forged(samevents.Account)
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	for _, op := range doc.Operations {
		good := "Bearer " + samevents.Key
		if op.Credential == contract.CredentialSession {
			good = session
		}
		if contract.Function(op.Function) != fn {
			resp, err := h(context.Background(), Event(op, good, ""))
			if err != nil || resp.StatusCode != 404 && resp.StatusCode != 405 {
				t.Errorf("%s (function %s) is served by %s: %v %d %s", op.ID, op.Function, fn, err, resp.StatusCode, resp.Body)
			}
			continue
		}
		served++
		if op.Public {
			resp, err := h(context.Background(), Event(op, "", ""))
			want := op.SuccessStatus
			switch {
			case op.ID == "completeYouTubeConnection", op.ID == "beginYouTubeConnection":
				want = 400 // without a state: the refusal page
			case op.ID == "getDocsScript" && !apidocs.New().HasRenderer():
				want = 404 // a build without Redoc's script (a plain `go test` of a clean clone)
			}
			if err != nil || resp.StatusCode != want {
				t.Errorf("%s (public): %v %d %s", op.ID, err, resp.StatusCode, resp.Body)
			}
			continue
		}
		refusals := map[string]string{
			"no credential":  "",
			"basic scheme":   "Basic " + base64.StdEncoding.EncodeToString([]byte("user:pass")),
			"malformed key":  "Bearer sk-css-NOT-A-KEY",
			"unknown key":    "Bearer sk-css-ffffffffffffffffffffffffffffffff",
			"forged session": "Bearer " + forged,
		}
		if op.Credential == contract.CredentialSession {
			refusals["API key on a session-only operation"] = "Bearer " + samevents.Key
		}
		for what, authz := range refusals {
			MustRefuse(t, op.ID+" with "+what, h, Event(op, authz, ""), 401, "UNAUTHORIZED")
		}
		// With the right credential and a request the contract takes, the operation runs on the services
		// this function's build made: a service it did not build would answer 5xx (or 501).
		ev := validEvent(t, op, good)
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode == 401 || resp.StatusCode == 403 || resp.StatusCode >= 500 {
			t.Errorf("%s with a valid credential and request: %v %d %s", op.ID, err, resp.StatusCode, resp.Body)
		}
	}
	if served == 0 {
		t.Errorf("no operation of the contract is served by %s", fn)
	}
	// A path with dot segments names no operation: 404 in the Error shape, not net/http's redirect to the
	// cleaned path (issue 32 item 7).
	dots := Event(doc.Operation("listNotes"), "Bearer "+samevents.Key, "")
	dots.RawPath = "/api/v1/generations/../../keys"
	dots.RequestContext.HTTP.Path = dots.RawPath
	MustRefuse(t, "a path with dot segments", h, dots, 404, "NOT_FOUND")
}

// checkSample invokes h with the sample event name, for op, as API Gateway delivers it.
func checkSample(t *testing.T, c *Cloud, name string, op *contract.Operation, ev wire.EventV2, h wire.APIHandler) {
	t.Helper()
	status, ok := SampleStatus[name]
	if !ok {
		t.Errorf("%s: no expectation in SampleStatus; add one", name)
		return
	}
	if ev.RequestContext.Authorizer != nil {
		t.Errorf("%s: carries an authorizer context; the API has no authorizer", name)
	}
	if got := ev.Headers["authorization"] != ""; got == op.Public {
		t.Errorf("%s: credential sent %v for an operation whose credential is %q", name, got, op.Credential)
	}
	if op.Credential == contract.CredentialSession {
		// The event's token is a placeholder: sign one the test's identity provider vouches for.
		ev.Headers["authorization"] = "Bearer " + c.Session(t, samevents.Account)
	}
	resp, err := h(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if resp.StatusCode != status {
		t.Errorf("%s via %s: %d, want %d: %s", name, op.Function, resp.StatusCode, status, resp.Body)
	}
	if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
		t.Errorf("%s: request id %q, want API Gateway's %q", name, resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
	}
	body := DecodedBody(t, name, resp)
	if name == "utility-openapi.json" {
		// The event carries the Accept-Encoding curl --compressed sends: the document travels gzipped.
		if !resp.IsBase64Encoded || resp.Headers["Content-Encoding"] != "gzip" {
			t.Errorf("%s: isBase64Encoded %v, Content-Encoding %q; want a base64 gzip body",
				name, resp.IsBase64Encoded, resp.Headers["Content-Encoding"])
		}
		if !bytes.Equal(body, contract.Document()) {
			t.Errorf("%s: the body (%d bytes) is not openapi.json", name, len(body))
		}
	}
	if !op.Public {
		delete(ev.Headers, "authorization")
		MustRefuse(t, name+" without authorization", h, ev, 401, "UNAUTHORIZED")
	}
}

// validRequests are a request the contract takes for each operation that needs a body or query
// parameters (path parameters are Event's uuid): enough to reach the operation's service.
var validRequests = map[string]struct{ body, query string }{
	"putNicheProfile":         {body: `{}`},
	"scoreNiche":              {body: `{}`},
	"commitVideo":             {body: `{"title":"How I plan a week of videos","contentType":"Long","formulaType":"how-to"}`},
	"updateVideoStatus":       {body: `{"videoId":"` + absentID + `","status":"filmed"}`},
	"updateMyVideo":           {body: `{"youtubeVideoId":"dQw4w9WgXcQ"}`},
	"upsertScheduleSlot":      {body: `{"dayOfWeek":2,"slotType":"publish"}`},
	"deleteScheduleSlot":      {query: "dayOfWeek=2&slotType=publish"},
	"createSeries":            {body: `{"name":"Weekly tips","description":"One tip a week","scriptFormula":"Hook, tip, recap"}`},
	"updateSeries":            {body: `{"name":"Weekly tips"}`},
	"createNote":              {body: `{"category":"insight","content":"Shorts do best on Tuesdays"}`},
	"generateTitles":          {body: `{"title":"Planning a week of videos","type":"how-to"}`},
	"generateLongScript":      {body: `{"title":"Planning a week of videos","type":"how-to"}`},
	"generateShortScript":     {body: `{"title":"Planning a week of videos","type":"quick-tip"}`},
	"generateDescription":     {body: `{"title":"Planning a week of videos"}`},
	"generateThumbnail":       {body: `{"title":"Planning a week of videos","type":"focus"}`},
	"generateHooks":           {body: `{"title":"Planning a week of videos"}`},
	"generateCtas":            {body: `{}`},
	"generatePodcastPrep":     {body: `{"episodeType":"solo","topic":"Planning a week of videos"}`},
	"generateNewsletter":      {body: `{"title":"Planning a week of videos","style":"recap","transcript":"` + transcript + `"}`},
	"generateClips":           {body: `{"title":"Planning a week of videos","transcript":"` + transcript + `"}`},
	"generateCommunityPosts":  {body: `{"postType":"poll"}`},
	"generateChannelOptimize": {body: `{"type":"banner"}`},
	"generateReoptimize":      {body: `{"videoUrl":"https://www.youtube.com/watch?v=dQw4w9WgXcQ"}`},
	"generateIdeas":           {body: `{}`},
	"refine":                  {body: `{"generationId":"` + absentID + `","feedback":"shorter"}`},
	"createKey":               {body: `{"channelId":"` + samevents.Channel + `"}`},
	"createWebhook":           {body: `{"url":"https://hooks.example.com/css","events":["video.committed"]}`},
	"updateWebhook":           {body: `{"active":false}`},
	"listMyVideosLegacy":      {query: "projectId=" + samevents.Channel},
	"generateLegacy":          {body: `{"tool":"hooks","title":"Planning a week of videos"}`},
}

const transcript = "Today I plan a whole week of videos in one sitting. First the ideas, then the slots."

// validEvent is a request for op with credential authz that the contract takes (checked here, so that the
// check above cannot pass on a request refused before it reaches a service).
func validEvent(t *testing.T, op *contract.Operation, authz string) wire.EventV2 {
	t.Helper()
	req := validRequests[op.ID]
	ev := Event(op, authz, req.body)
	ev.Headers["prefer"] = "respond-async" // a generation answers 202 at once rather than wait for a worker
	query, err := url.ParseQuery(req.query)
	if err != nil {
		t.Fatal(err)
	}
	ev.RawQueryString = req.query
	path := map[string]string{}
	for _, seg := range strings.Split(op.Path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			path[strings.TrimSuffix(name, "}")] = absentID
		}
	}
	if _, err := op.ValidateParams(path, query, nil); err != nil {
		t.Errorf("%s: the test's request is not valid: %v", op.ID, err)
	}
	if op.HasBody {
		if _, err := op.ValidateBody([]byte(req.body)); err != nil {
			t.Errorf("%s: the test's body %s is not valid: %v", op.ID, req.body, err)
		}
	}
	return ev
}
