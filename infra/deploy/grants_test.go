package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/ownperf"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/quota"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/authtest"
	"github.com/creatorstrategy/css/shared/testkit/connectiontest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/testkit/secretstest"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
	"github.com/creatorstrategy/css/shared/wire"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// recorder sits between the functions and DynamoDB Local and notes, for the function the test is calling,
// the IAM action of every call and the partition keys it touches (the request's dynamodb:LeadingKeys; each
// item of a TransactWriteItems is authorized by its own action, on its own key).
type recorder struct {
	mu      sync.Mutex
	current string
	calls   map[string][]tableCall // function -> calls
	proxy   *httputil.ReverseProxy
	t       *testing.T
}

// tableCall is one authorization IAM makes: an action on some partition keys.
type tableCall struct {
	action string
	pks    []string
}

// attr is a DynamoDB attribute value; keys are strings.
type attr struct{ S string }

// key is the part of a request naming an item.
type key struct{ PK attr }

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil && (r.Context().Err() != nil || errors.Is(err, io.ErrUnexpectedEOF)) {
		// The client gave up before it had sent the request (a synchronous generation's poll of its run,
		// cut off when the wait ends): it never reached the table.
		return
	}
	if err != nil {
		rec.t.Errorf("recorder: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	var in struct {
		Key                       key
		Item                      key
		ExpressionAttributeValues map[string]attr
		RequestItems              map[string]struct{ Keys []key }
		TransactItems             []map[string]struct {
			Key  key
			Item key
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		rec.t.Errorf("recorder: %s body: %v", op, err)
	}
	var calls []tableCall
	switch op {
	case "GetItem", "DeleteItem", "UpdateItem":
		calls = []tableCall{{op, []string{in.Key.PK.S}}}
	case "PutItem":
		calls = []tableCall{{op, []string{in.Item.PK.S}}}
	case "Query":
		calls = []tableCall{{op, []string{in.ExpressionAttributeValues[":pk"].S}}}
	case "BatchGetItem":
		c := tableCall{action: op}
		for _, ri := range in.RequestItems {
			for _, k := range ri.Keys {
				c.pks = append(c.pks, k.PK.S)
			}
		}
		calls = []tableCall{c}
	case "TransactWriteItems":
		for _, it := range in.TransactItems {
			for kind, x := range it {
				pk := x.Key.PK.S
				if kind == "Put" {
					pk = x.Item.PK.S
				}
				calls = append(calls, tableCall{map[string]string{"Put": "PutItem", "Delete": "DeleteItem",
					"Update": "UpdateItem", "ConditionCheck": "ConditionCheckItem"}[kind], []string{pk}})
			}
		}
	default:
		rec.t.Errorf("recorder: %s is not a call the store makes", op)
	}
	rec.mu.Lock()
	for _, c := range calls {
		c.action = "dynamodb:" + c.action
		if slices.Contains(c.pks, "") {
			rec.t.Errorf("recorder: %s without a partition key: %s", c.action, body)
		}
		rec.calls[rec.current] = append(rec.calls[rec.current], c)
	}
	rec.mu.Unlock()
	rec.proxy.ServeHTTP(w, r)
}

// call is one request of the scenario.
type call struct {
	method, path, query string
	body                any
	session             bool   // a session token instead of the sample key
	key                 string // an API key instead of the sample key
	header              map[string]string
	cookies             []string // the browser's cookies (name=value)
}

// TestGrantsCoverWhatTheFunctionsCall runs every operation through its function's Lambda entry point, the
// implemented ones down their success path, against DynamoDB Local through a recorder, and checks that
// template.yaml grants each function every table action it called and nothing it did not call.
func TestGrantsCoverWhatTheFunctionsCall(t *testing.T) {
	fns := buildFunctions(t) // the queue functions' binaries build while the emulators start
	endpoint := emulatortest.DynamoDB(t)
	upstream, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{calls: map[string][]tableCall{}, proxy: httputil.NewSingleHostReverseProxy(upstream), t: t}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	idp, err := authtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer idp.Close()

	ctx := context.Background()
	table := fmt.Sprintf("css-grants-%d", time.Now().UnixNano())
	st := wiretest.SeededTable(t, endpoint, table)
	// Ideas come from generation, which has not landed: put one, for committing and deleting.
	ideas := []string{st.NewID(), st.NewID()}
	for _, id := range ideas {
		if err := st.PutIdea(ctx, samevents.Channel, videos.Idea{ID: id, Title: "t", ContentType: "Long", FormulaType: "f",
			CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CSS_DYNAMODB_ENDPOINT", srv.URL)
	t.Setenv("CSS_TABLE_NAME", table)
	t.Setenv("AWS_REGION", "us-east-1")
	// Generation jobs travel on an ElasticMQ queue and the worker runs them on Bedrock (a loopback one
	// answering as the offline model: startModels), with no image store: the image tools fail, which is
	// the path that gives a quota unit back. The API functions, in process, never call a model.
	sqsEndpoint := emulatortest.ElasticMQ(t)
	sqsClient, err := sqs.NewClient(sqsEndpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	spec := queue.Specs()[queue.Generation]
	spec.Name = fmt.Sprintf("grants-generation-%d", time.Now().UnixNano())
	genQueue, err := sqs.CreateQueues(ctx, sqsClient, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CSS_SQS_ENDPOINT", sqsEndpoint)
	t.Setenv("CSS_GENERATION_QUEUE_URL", genQueue.URL)
	t.Setenv("CSS_MODEL_PROVIDER", "offline")
	// One key drives every function here, each an instance with its own rate leases (ratelimit/lease.go):
	// with the default 60 generations a minute, one function's unspent lease may refuse another's calls
	// early. This test is about grants, so the rates are out of its way (the leases still take their
	// UpdateItem on RATE#).
	t.Setenv("CSS_RATE_GENERATION_PER_MIN", "100000")
	t.Setenv("CSS_RATE_OTHER_PER_MIN", "100000")
	keywords := []string{"vegan", "meal prep", "budget", "protein"}
	researchEnv := startResearchCloud(t, keywords)
	for _, kv := range idp.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	session, err := idp.Token(samevents.Account, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The keys that seal webhook secrets and refresh tokens come from Secrets Manager, here served on loopback.
	const keyARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:css-webhook-key"
	const tokenKeyARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:css-youtube-token-key"
	const googleSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:css-google-client-secret"
	secretsSrv := secretstest.Start(t, map[string]string{keyARN: strings.Repeat("k", 64), tokenKeyARN: strings.Repeat("t", 64),
		googleSecretARN: "css-test-secret"})
	t.Setenv("CSS_WEBHOOK_KEY_SECRET_ARN", keyARN)
	t.Setenv("CSS_YOUTUBE_TOKEN_KEY_SECRET_ARN", tokenKeyARN)
	// The events and webhook-deliveries queues on ElasticMQ: the operations publish what they emit.
	queues := eventQueues(t)
	t.Setenv("CSS_SECRETS_ENDPOINT", secretsSrv.Endpoint())
	// The YouTube connection: mock-oauth2-server for Google's OAuth, the research's Data API server for the
	// owner's calls (the token endpoint and revocation through it, as connectiontest does).
	google := connectiontest.Start(t)
	researchEnv.youtube.SetTokenUpstream(google.Issuer + "/token")
	researchEnv.youtube.AddOwner("owner-grants", youtubetest.Owner{ChannelID: researchEnv.owner, Title: "Grants", Language: "en"})
	researchEnv.youtube.AddCaptions(researchEnv.owner, researchEnv.ownVideo, youtubetest.CaptionTrack{ID: "g-en", Language: "en",
		Kind: "standard", LastUpdated: "2026-11-01T00:00:00Z", VTT: "WEBVTT\n\n00:00:01.000 --> 00:00:30.000\nhi there friends\n\n00:02:00.000 --> 00:02:30.000\nbeans and rice\n"})
	for k, v := range map[string]string{"CSS_GOOGLE_CLIENT_ID": "css-test-client", "CSS_GOOGLE_CLIENT_SECRET_ARN": googleSecretARN,
		"CSS_GOOGLE_AUTH_ENDPOINT": google.AuthURL(), "CSS_GOOGLE_TOKEN_ENDPOINT": researchEnv.youtube.TokenURL(),
		"CSS_GOOGLE_REVOKE_ENDPOINT": researchEnv.youtube.RevokeURL(), "CSS_PUBLIC_URL": "https://api.example.com"} {
		t.Setenv(k, v)
	}

	c := loadContract(t)
	handlers := map[string]wire.APIHandler{}
	succeeded := map[string]bool{} // operation id -> answered 2xx
	send := func(cl call) events.APIGatewayV2HTTPResponse {
		t.Helper()
		var op *contract.Operation
		for _, o := range c.Operations {
			if o.Method == cl.method && routeMatches(o.Path, cl.path) {
				op = o
			}
		}
		if op == nil {
			t.Fatalf("%s %s: no such operation", cl.method, cl.path)
		}
		h, ok := handlers[op.Function]
		if !ok {
			h = apiFunction(t, contract.Function(op.Function))
			handlers[op.Function] = h
		}
		ev := wire.EventV2{
			Version: "2.0", RouteKey: op.Method + " " + op.Path, RawPath: cl.path, RawQueryString: cl.query,
			Headers: map[string]string{"accept": "application/json"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: op.Method + " " + op.Path, Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: op.Method, Path: cl.path}},
		}
		switch {
		case op.Credential == contract.CredentialNone:
		case cl.session:
			ev.Headers["authorization"] = "Bearer " + session
		case cl.key != "":
			ev.Headers["authorization"] = "Bearer " + cl.key
		default:
			ev.Headers["authorization"] = "Bearer " + samevents.Key
		}
		for k, v := range cl.header {
			ev.Headers[k] = v
		}
		ev.Cookies = cl.cookies
		if cl.body != nil {
			b, _ := json.Marshal(cl.body)
			ev.Body, ev.Headers["content-type"] = string(b), "application/json"
		}
		rec.mu.Lock()
		rec.current = functionID(op.Function)
		rec.mu.Unlock()
		resp, err := h(ctx, ev)
		if err != nil {
			t.Fatalf("%s: %v", op.ID, err)
		}
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			succeeded[op.ID] = true
		case resp.StatusCode >= 500 && resp.StatusCode != 501:
			t.Errorf("%s %s: %d %s", cl.method, cl.path, resp.StatusCode, resp.Body)
		}
		return resp
	}
	do := func(cl call) map[string]any {
		t.Helper()
		var out map[string]any
		_ = json.Unmarshal([]byte(send(cl).Body), &out)
		return out
	}
	id := func(m map[string]any) string { s, _ := m["id"].(string); return s }
	const v1 = "/api/v1"

	// The success path of every implemented operation (the scenario fails below when one is missing).
	do(call{method: "PUT", path: v1 + "/niche-profile", body: map[string]any{"broadNiche": "cooking", "focusedNiche": "vegan meal prep",
		"keywords": keywords}})
	do(call{method: "GET", path: v1 + "/niche-profile"})
	do(call{method: "GET", path: v1 + "/research-insights"})
	do(call{method: "GET", path: v1 + "/history"})
	series := id(do(call{method: "POST", path: v1 + "/series", body: map[string]any{"name": "Budget Bites", "description": "Cheap meals",
		"scriptFormula": "hook, cost, cook, taste"}}))
	video := id(do(call{method: "POST", path: v1 + "/my-videos", body: map[string]any{"title": "5 vegan lunches", "contentType": "Long",
		"formulaType": "listicle", "seriesId": series}}))
	do(call{method: "POST", path: v1 + "/my-videos", body: map[string]any{"ideaId": ideas[0], "seriesId": series}})
	do(call{method: "POST", path: v1 + "/my-videos/status", body: map[string]any{"videoId": video, "status": "scripted"}})
	// The link to an upload: an id the channel's sync never read is refused (404) after reading the sync; null
	// clears the link.
	do(call{method: "PATCH", path: v1 + "/my-videos/" + video, body: map[string]any{"youtubeVideoId": "dQw4w9WgXcQ"}})
	do(call{method: "PATCH", path: v1 + "/my-videos/" + video, body: map[string]any{"youtubeVideoId": nil}})
	do(call{method: "GET", path: v1 + "/my-videos"})
	do(call{method: "GET", path: v1 + "/video-ideas"})
	do(call{method: "DELETE", path: v1 + "/video-ideas/" + ideas[1]})
	do(call{method: "POST", path: v1 + "/schedule", body: map[string]any{"dayOfWeek": 2, "slotType": "publish", "contentType": "Long",
		"publishTime": "15:00"}})
	do(call{method: "POST", path: v1 + "/schedule", body: map[string]any{"dayOfWeek": 2, "slotType": "publish", "contentType": "Long",
		"publishTime": "15:00", "assignedVideoId": video, "weekStart": "2026-11-22"}})
	do(call{method: "GET", path: v1 + "/schedule", query: "weekStart=2026-11-22"})
	do(call{method: "DELETE", path: v1 + "/schedule", query: "dayOfWeek=2&slotType=publish&publishTime=15:00"})
	do(call{method: "PATCH", path: v1 + "/series/" + series, body: map[string]any{"isActive": false}})
	do(call{method: "GET", path: v1 + "/series"})
	do(call{method: "DELETE", path: v1 + "/series/" + series})
	note := id(do(call{method: "POST", path: v1 + "/notes", body: map[string]any{"category": "insight", "content": "Shorts do best on Tuesdays"}}))
	do(call{method: "GET", path: v1 + "/notes"})
	do(call{method: "DELETE", path: v1 + "/notes/" + note})
	key := id(do(call{method: "POST", path: v1 + "/keys", session: true, body: map[string]any{"channelId": samevents.Channel, "name": "zapier"}}))
	do(call{method: "GET", path: v1 + "/keys", session: true})
	do(call{method: "DELETE", path: v1 + "/keys/" + key, session: true})
	do(call{method: "GET", path: "/api/my-videos", query: "projectId=" + samevents.Channel})

	// Generation: each function that queues jobs, with an Idempotency-Key (its claim is a write of its
	// own), answered 202 at once; then the worker runs the jobs from the queue as Lambda would.
	async := func(key string) map[string]string {
		return map[string]string{"prefer": "respond-async", "idempotency-key": key}
	}
	gen := func(m map[string]any) string { s, _ := m["generationId"].(string); return s }
	titles := gen(do(call{method: "POST", path: v1 + "/generate/titles", header: async("t1"), body: map[string]any{"title": "vegan lunches", "type": "listicle"}}))
	// A script's series must exist when it is asked for (its prompt budget is checked before queueing);
	// the short script's is deleted before the worker runs, so that job fails before any model call and
	// gives its quota unit back.
	for _, p := range []string{"long-script", "short-script"} {
		se := id(do(call{method: "POST", path: v1 + "/series", body: map[string]any{"name": "Budget Bites " + p, "description": "Cheap meals",
			"scriptFormula": "hook, cost, cook, taste"}}))
		do(call{method: "POST", path: v1 + "/generate/" + p, header: async(p), body: map[string]any{"title": "vegan lunches", "type": "story", "seriesId": se}})
		if p == "short-script" {
			do(call{method: "DELETE", path: v1 + "/series/" + se})
		}
	}
	do(call{method: "POST", path: v1 + "/generate/thumbnail", header: async("th"), body: map[string]any{"title": "vegan lunches", "type": "compare"}})
	for p, body := range map[string]map[string]any{
		"description": {"title": "vegan lunches"}, "hooks": {"title": "vegan lunches"}, "ctas": {},
		"podcast-prep": {"episodeType": "solo", "topic": "protein"}, "newsletter": {"title": "x", "style": "story", "transcript": "0:00 hi there\n1:00 beans and rice"},
		"clips": {"title": "x", "transcript": "0:00 hi there friends\n2:00 beans and rice"}, "community-posts": {"postType": "poll"},
		"channel-optimize": {"type": "playlists"}, "reoptimize": {"videoUrl": "https://youtu.be/abc"}, "ideas": {"count": 3},
	} {
		do(call{method: "POST", path: v1 + "/generate/" + p, header: async(p), body: body})
	}
	do(call{method: "POST", path: v1 + "/niche-score", header: async("ns"), body: map[string]any{}})
	// The same Idempotency-Key again: the held claim's run is read.
	for range 2 {
		do(call{method: "POST", path: "/api/generate", header: async("legacy"), body: map[string]any{"tool": "hooks", "videoTitle": "vegan lunches"}})
	}
	// The YouTube connection (integrations), consent given as the owner's browser would, and a transcript of
	// the channel's own video fetched for clips (generation).
	connect := func() {
		t.Helper()
		started := do(call{method: "POST", path: v1 + "/youtube/connection"})
		link, _ := url.Parse(fmt.Sprint(started["authorizationUrl"]))
		opened := send(call{method: "GET", path: link.Path, query: link.RawQuery})
		authURL, cookie := connectiontest.StartPage(t, opened.StatusCode, opened.Body, opened.Cookies)
		callback := connectiontest.Consent(t, authURL, "owner-grants")
		if res := send(call{method: "GET", path: "/api/youtube/oauth/callback", query: callback.RawQuery, cookies: []string{cookie}}); res.StatusCode != 200 {
			t.Fatalf("callback: %d %s", res.StatusCode, res.Body)
		}
	}
	connect()
	do(call{method: "GET", path: v1 + "/youtube/connection"})
	clips := map[string]any{"title": "x", "videoUrl": "https://youtu.be/" + researchEnv.ownVideo}
	do(call{method: "POST", path: v1 + "/generate/clips", header: async("yt-clips"), body: clips})
	// The owner revokes the grant at Google: a new instance's refresh is refused, and the connection is
	// marked needs_reconnect (with its event) by the generation function.
	researchEnv.youtube.RevokeIssued()
	delete(handlers, string(contract.FunctionGeneration))
	do(call{method: "POST", path: v1 + "/generate/clips", header: async("yt-clips-refused"), body: clips})
	if got := do(call{method: "GET", path: v1 + "/youtube/connection"}); got["status"] != "needs_reconnect" {
		t.Errorf("after a refused grant: %v", got)
	}
	do(call{method: "DELETE", path: v1 + "/youtube/connection"})
	worker := fns.generationWorker()
	drain := func() {
		t.Helper()
		rec.mu.Lock()
		rec.current = "GenerationWorkerFunction"
		rec.mu.Unlock()
		for {
			out, err := sqsClient.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: &genQueue.URL, MaxNumberOfMessages: 10,
				MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) == 0 {
				return
			}
			ev := events.SQSEvent{}
			for _, m := range out.Messages {
				ev.Records = append(ev.Records, events.SQSMessage{MessageId: *m.MessageId, ReceiptHandle: *m.ReceiptHandle, Body: *m.Body,
					Attributes: m.Attributes, EventSourceARN: genQueue.ARN})
			}
			resp, err := worker(ctx, ev)
			if err != nil || len(resp.BatchItemFailures) > 0 {
				t.Fatalf("worker: %v, failures %v", err, resp.BatchItemFailures)
			}
			for _, m := range out.Messages {
				if _, err := sqsClient.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: &genQueue.URL, ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	drain()
	if run := do(call{method: "GET", path: v1 + "/generations/" + titles}); run["status"] != "success" {
		t.Fatalf("titles run: %v", run)
	}
	do(call{method: "POST", path: v1 + "/refine", header: async("rf"), body: map[string]any{"generationId": titles, "feedback": "shorter"}})
	drain()
	// Research: a run through the worker (on the YouTube API's wire format), the research read back, a
	// second run that reuses the niche's research, a keyword change the scheduler starts a run for.
	rf := newResearchFunctions(t, researchEnv, fns, func(fn string) { rec.mu.Lock(); rec.current = fn; rec.mu.Unlock() })
	run := id(do(call{method: "POST", path: v1 + "/research"}))
	rf.drain()
	if r := do(call{method: "GET", path: v1 + "/research/runs/" + run}); r["status"] != "succeeded" {
		t.Fatalf("research run: %v", r)
	}
	do(call{method: "GET", path: v1 + "/research/videos", query: "sort=views&limit=5"})
	do(call{method: "POST", path: v1 + "/research"})
	rf.drain()
	// The daily sync of a connected channel (decision 43): connecting again queues one (integrations), the
	// research worker runs it with the owner's token, the scheduler queues the day's sync of every
	// connected channel, and the performance report reads what it stored.
	connect()
	rf.drain()
	rf.schedule()
	rf.drain()
	if got := do(call{method: "GET", path: v1 + "/youtube/connection"}); got["lastSyncAt"] == nil {
		t.Errorf("no sync recorded after the sync ran: %v", got)
	}
	do(call{method: "GET", path: v1 + "/performance"})
	// The owner revokes the grant: a new worker instance's refresh is refused during a sync, the
	// connection is marked needs_reconnect (taken off the connected channels), and the message dropped.
	researchEnv.youtube.RevokeIssued()
	rf.worker = fns.researchWorker()
	if _, err := researchEnv.sqs.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: &researchEnv.queueURL,
		MessageBody: new(`{"kind":"` + ownperf.MessageKind + `","channelId":"` + samevents.Channel + `"}`)}); err != nil {
		t.Fatal(err)
	}
	rf.drain()
	if got := do(call{method: "GET", path: v1 + "/youtube/connection"}); got["status"] != "needs_reconnect" {
		t.Errorf("after a grant refused during a sync: %v", got)
	}
	// A video set an earlier build left without an expiry and no state names (a superseded run's): the
	// scheduler's first visit to the channel deletes it (decision 49).
	orphan := store.Item{Key: store.Key{PK: "CH#" + samevents.Channel, SK: "RVSET#01900000-0000-7000-8000-000000000000#000"},
		Data: append([]byte{2}, `[{"id":"v1","t":"t","c":"UC1","v":1,"k":"Long","s":"youtube"}]`...)}
	if err := st.Table().Write(ctx, store.Put(orphan, store.Always)); err != nil {
		t.Fatal(err)
	}
	do(call{method: "PUT", path: v1 + "/niche-profile", body: map[string]any{"focusedNiche": "vegan meal prep",
		"keywords": []string{"vegan", "meal prep", "budget", "tofu"}}})
	// The API's searches run out on the scheduled run's first search: it marks the day's searches and waits.
	researchEnv.youtube.SetBucketQuota(quota.Searches, researchEnv.youtube.Spent().Searches)
	if rep := rf.schedule(); rep.Started != 1 {
		t.Fatalf("the scheduler after a keyword change: %+v", rep)
	}
	if _, err := st.Table().Get(ctx, orphan.Key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the orphaned video set after the scheduler's visit: %v; want it deleted", err)
	}
	rf.drain()
	// Webhooks. The receiver is a public address literal: registering resolves no name.
	hookBody := map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"video.committed"}}
	hook := id(do(call{method: "POST", path: "/api/webhooks", body: hookBody}))
	do(call{method: "GET", path: "/api/webhooks"})
	do(call{method: "GET", path: "/api/webhooks/" + hook})
	do(call{method: "PATCH", path: "/api/webhooks/" + hook, body: map[string]any{"description": "zapier"}})
	do(call{method: "POST", path: "/api/webhooks/" + hook + "/rotate-secret"})
	test := do(call{method: "POST", path: "/api/webhooks/" + hook + "/test"})["deliveryId"].(string)
	do(call{method: "GET", path: "/api/webhooks/" + hook + "/deliveries"})
	// The dispatcher has not run: finish the test delivery as it would, so it can be redelivered.
	state, err := st.LoadDelivery(ctx, webhooks.DeliveryRef{ChannelID: samevents.Channel, WebhookID: hook, DeliveryID: test, EventID: test})
	if err != nil || state.Delivery == nil {
		t.Fatalf("load the test delivery: %+v, %v", state, err)
	}
	finished := *state.Delivery
	finished.Status = webhooks.Failed
	if err := st.SaveDelivery(ctx, samevents.Channel, finished, state.DeliveryVersion); err != nil {
		t.Fatal(err)
	}
	do(call{method: "POST", path: "/api/webhooks/" + hook + "/deliveries/" + test + "/redeliver"})
	// A second registration (another URL: a channel registers one URL once) to delete.
	other := map[string]any{"url": "https://93.184.216.34/other-hook", "events": []string{"video.committed"}}
	do(call{method: "DELETE", path: "/api/webhooks/" + id(do(call{method: "POST", path: "/api/webhooks", body: other}))})

	// Every operation once more, as the simplest request: the ones not implemented yet authenticate, then
	// answer 400 or 501; the public ones are served. Then again with a session token (X-Channel-Id naming
	// the sample channel), so every function also authenticates one, whose account's item its rate lease
	// reads (UpdateItem); and again with a key whose lookup item predates carrying the account's access
	// end, so every function reads an account by GetItem, as it does for such a key.
	legacy := legacyKey(t, ctx, st)
	for _, pass := range []string{"key", "session", "legacy key"} {
		for _, op := range c.Operations {
			path := op.Path
			for strings.Contains(path, "{") {
				i, j := strings.Index(path, "{"), strings.Index(path, "}")
				path = path[:i] + st.NewID() + path[j+1:]
			}
			cl := call{method: op.Method, path: path, header: map[string]string{"x-channel-id": samevents.Channel}}
			switch {
			case op.Credential == contract.CredentialSession || pass == "session" && op.Credential != contract.CredentialNone:
				cl.session = true
			case pass == "legacy key":
				cl.key = legacy
			}
			do(cl)
		}
	}

	// MCP: the tools run the same operations in the mcp function, which needs their grants, no more.
	mcpScenario(t, ctx, rec, st, session, legacy)
	// The sign-in (decision 55): a grant made, used at /mcp, refreshed and revoked by its client; another,
	// made with a key whose lookup item predates the account's access end, listed and revoked by the owner.
	signinScenario(t, ctx, rec, samevents.Key, true)
	signinScenario(t, ctx, rec, legacy, false)
	signIns, _ := do(call{method: "GET", path: v1 + "/mcp/grants"})["grants"].([]any)
	if len(signIns) != 1 {
		t.Fatalf("the channel's grants: %v", signIns)
	}
	do(call{method: "DELETE", path: v1 + "/mcp/grants/" + id(signIns[0].(map[string]any))})

	runDispatcher(t, rec, st, queues, fns)
	fns.checkModels(readTemplate(t, templatePath))

	for _, op := range c.Operations {
		if !succeeded[op.ID] { // every operation has a handler (rest.New refuses one without)
			t.Errorf("%s: the scenario never reaches its success path; add a request for it", op.ID)
		}
	}
	granted := grants(t, readTemplate(t, templatePath))
	checkGrants(t, granted, rec.calls)
	// The dispatcher, which connects to URLs users choose, cannot read a YouTube connection (decision 50).
	for _, g := range granted["WebhookDispatcherFunction"] {
		for _, a := range []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:Scan"} {
			if g.allows(a, []string{store.ConnectionPartition(samevents.Channel)}) {
				t.Errorf("WebhookDispatcherFunction: statement %s lets it read YouTube connections (%s)", g.sid, a)
			}
		}
	}
	for fn := range functions(readTemplate(t, templatePath)) {
		if rec.calls[fn] == nil {
			t.Errorf("%s: no table call recorded", fn)
		}
	}
}

// checkGrants holds each function's calls to its grants: each call is allowed by a statement, and each
// action of a statement, on each partition-key prefix it names, was used by a call it allows.
func checkGrants(t *testing.T, granted map[string][]grant, calls map[string][]tableCall) {
	t.Helper()
	for fn, cs := range calls {
		for _, c := range cs {
			if !slices.ContainsFunc(granted[fn], func(g grant) bool { return g.allows(c.action, c.pks) }) {
				t.Errorf("%s called %s on %v, which template.yaml does not grant it", fn, c.action, c.pks)
			}
		}
	}
	for fn, gs := range granted {
		for _, g := range gs {
			for a := range g.actions {
				patterns := g.leadingKeys
				if patterns == nil {
					patterns = []string{"*"}
				}
				for _, p := range patterns {
					used := slices.ContainsFunc(calls[fn], func(c tableCall) bool {
						return g.allows(c.action, c.pks) && c.action == a && slices.ContainsFunc(c.pks, func(pk string) bool { return stringLike(p, pk) })
					})
					if !used {
						t.Errorf("%s: statement %s grants %s on %s, which none of its operations called", fn, g.sid, a, p)
					}
				}
			}
		}
	}
}

// routeMatches says whether path is an instance of the route pattern (braces match one segment).
func routeMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if !strings.HasPrefix(ps[i], "{") && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// mcpScenario drives the mcp function's handler through tools that reach every grant it holds: reads,
// notes, a commit from the backlog (outbox and events), a schedule assignment (a condition check on the
// video), a status change and a generation (runs, quota, queue; no worker runs, so it answers pending
// after the function's wait).
func mcpScenario(t *testing.T, ctx context.Context, rec *recorder, st *store.Store, session, legacyKey string) {
	t.Helper()
	idea := st.NewID()
	if err := st.PutIdea(ctx, samevents.Channel, videos.Idea{ID: idea, Title: "mcp idea", ContentType: "Long", FormulaType: "f",
		CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	h := mcpFunction(t)
	rec.mu.Lock()
	rec.current = "McpFunction"
	rec.mu.Unlock()
	n := 0
	headers := map[string]string{"authorization": "Bearer " + samevents.Key}
	rpc := func(method string, params any) map[string]any {
		t.Helper()
		n++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "method": method, "params": params})
		hdr := map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream"}
		for k, v := range headers {
			hdr[k] = v
		}
		resp, err := h(ctx, wire.EventV2{
			Version: "2.0", RouteKey: "POST /mcp", RawPath: "/mcp", Body: string(b),
			Headers: hdr,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: "POST /mcp", Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/mcp"}},
		})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("mcp %s: %d %s %v", method, resp.StatusCode, resp.Body, err)
		}
		var out struct {
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if err := json.Unmarshal([]byte(resp.Body), &out); err != nil || out.Error != nil {
			t.Fatalf("mcp %s: %s", method, resp.Body)
		}
		return out.Result
	}
	tool := func(name string, args map[string]any) map[string]any {
		t.Helper()
		r := rpc("tools/call", map[string]any{"name": name, "arguments": args})
		if r["isError"] == true {
			t.Fatalf("mcp %s: %v", name, r["content"])
		}
		sc, _ := r["structuredContent"].(map[string]any)
		return sc
	}
	// Every message is counted, so its key is read with a lease (UpdateItem); a body the strict reading
	// refuses names no message, and its key is read alone (GetItem): the first request, on a cold instance.
	if resp, err := h(ctx, wire.EventV2{
		Version: "2.0", RouteKey: "POST /mcp", RawPath: "/mcp", Body: `{"jsonrpc":"2.0","id":0,"method":"ping"}`,
		Headers: map[string]string{"content-type": "text/plain", "accept": "application/json, text/event-stream",
			"authorization": "Bearer " + samevents.Key},
		RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: "POST /mcp", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/mcp"}},
	}); err != nil || resp.StatusCode != 415 {
		t.Fatalf("mcp, a text/plain body: %d %s %v", resp.StatusCode, resp.Body, err)
	}
	rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "grants", "version": "1"}})
	if tools := rpc("tools/list", map[string]any{}); len(tools["tools"].([]any)) != 39 {
		t.Fatalf("mcp tools/list: %v", tools)
	}
	note, _ := tool("save_note", map[string]any{"category": "general", "content": "from MCP"})["id"].(string)
	tool("get_notes", map[string]any{})
	tool("delete_note", map[string]any{"id": note})
	video, _ := tool("commit_video", map[string]any{"ideaId": idea})["id"].(string)
	tool("update_schedule", map[string]any{"dayOfWeek": 3, "slotType": "publish", "contentType": "Long",
		"publishTime": "09:30", "assignedVideoId": video})
	tool("get_schedule", map[string]any{})
	tool("update_video_status", map[string]any{"videoId": video, "status": "scripted"})
	tool("get_my_videos", map[string]any{})
	if r := tool("generate_hooks", map[string]any{"title": "vegan lunches"}); r["status"] != "pending" {
		t.Fatalf("a generation without a worker: %v", r)
	}
	// A session token: its account's item is read by the tool's rate lease (an API key's lookup carries
	// what it needs of the account)...
	headers = map[string]string{"authorization": "Bearer " + session, "x-channel-id": samevents.Channel}
	tool("get_notes", map[string]any{})
	// ...and a key whose lookup item predates that has its account read.
	headers = map[string]string{"authorization": "Bearer " + legacyKey}
	tool("get_notes", map[string]any{})
}

// legacyKey makes a live key on the sample channel whose lookup item has the shape written before it
// carried the account's access end (shared/store), and returns the key.
func legacyKey(t *testing.T, ctx context.Context, st *store.Store) string {
	t.Helper()
	k, err := accounts.NewService(st, time.Now).CreateKey(ctx, samevents.Account, samevents.Channel, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	hash := auth.HashKey(k.Key)
	old, err := json.Marshal(map[string]string{"keyId": k.ID, "accountId": samevents.Account, "channelId": samevents.Channel, "hash": hash})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Table().Write(ctx, store.Put(store.Item{Key: store.Key{PK: "KEYHASH#" + hash, SK: "KEY"}, Data: old}, store.Always)); err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// signinScenario signs in through the signin function as a connector would, with key on the consent page,
// and calls /mcp with the access token; with useAndRevoke it also refreshes and revokes the grant.
func signinScenario(t *testing.T, ctx context.Context, rec *recorder, key string, useAndRevoke bool) {
	t.Helper()
	signinH, mcpH := signinFunction(t), mcpFunction(t)
	send := func(h wire.APIHandler, function, method, path, contentType, body string, headers map[string]string) wire.ResponseV2 {
		t.Helper()
		rec.mu.Lock()
		rec.current = function
		rec.mu.Unlock()
		hdr := map[string]string{"content-type": contentType}
		for k, v := range headers {
			hdr[k] = v
		}
		resp, err := h(ctx, wire.EventV2{Version: "2.0", RouteKey: method + " " + path, RawPath: path, Body: body, Headers: hdr,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: method + " " + path, Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	const form = "application/x-www-form-urlencoded"
	post := func(path string, v url.Values) wire.ResponseV2 {
		return send(signinH, "SigninFunction", "POST", path, form, v.Encode(), nil)
	}
	resp := send(signinH, "SigninFunction", "POST", "/oauth/register", "application/json",
		`{"redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none","client_name":"grants"}`, nil)
	var client struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &client); err != nil || resp.StatusCode != 201 {
		t.Fatalf("register: %d %s", resp.StatusCode, resp.Body)
	}
	verifier := strings.Repeat("v", 64)
	sum := sha256.Sum256([]byte(verifier))
	authz := url.Values{"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"state": {"grants-state"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}, "resource": {"https://api.example.com/mcp"}, "scope": {"mcp"},
		"css_api_key": {key}, "css_step": {"login"}}
	if resp := post("/oauth/authorize", authz); resp.StatusCode != 200 || !strings.Contains(resp.Body, "Allow") {
		t.Fatalf("consent page: %d %s", resp.StatusCode, resp.Body)
	}
	authz.Set("css_step", "allow")
	resp = post("/oauth/authorize", authz)
	loc, err := url.Parse(resp.Headers["Location"])
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("allow: %d %v", resp.StatusCode, resp.Headers)
	}
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	resp = post("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {"http://127.0.0.1:9/cb"}, "client_id": {client.ClientID}, "code_verifier": {verifier},
		"resource": {"https://api.example.com/mcp"}})
	if err := json.Unmarshal([]byte(resp.Body), &tok); err != nil || resp.StatusCode != 200 {
		t.Fatalf("token: %d %s", resp.StatusCode, resp.Body)
	}
	if !useAndRevoke {
		return
	}
	resp = post("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
		"client_id": {client.ClientID}})
	if err := json.Unmarshal([]byte(resp.Body), &tok); err != nil || resp.StatusCode != 200 {
		t.Fatalf("refresh: %d %s", resp.StatusCode, resp.Body)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`
	mcpHeaders := map[string]string{"accept": "application/json, text/event-stream", "authorization": "Bearer " + tok.AccessToken}
	if resp := send(mcpH, "McpFunction", "POST", "/mcp", "application/json", call, mcpHeaders); resp.StatusCode != 200 ||
		strings.Contains(resp.Body, `"isError":true`) {
		t.Fatalf("mcp with the access token: %d %s", resp.StatusCode, resp.Body)
	}
	if resp := post("/oauth/revoke", url.Values{"token": {tok.RefreshToken}, "client_id": {client.ClientID}}); resp.StatusCode != 200 {
		t.Fatalf("revoke: %d %s", resp.StatusCode, resp.Body)
	}
	if resp := send(mcpH, "McpFunction", "POST", "/mcp", "application/json", call, mcpHeaders); resp.StatusCode != 401 {
		t.Fatalf("mcp with the revoked grant's token: %d %s", resp.StatusCode, resp.Body)
	}
}
