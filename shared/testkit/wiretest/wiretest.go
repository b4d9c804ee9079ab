// Package wiretest is what the tests of the functions' mains share: a cloud on the emulators configured as
// template.yaml configures the functions (Setup), the sample events, API Gateway events for any operation,
// and CheckFunction, which proves from a main's handler which operations it serves. A test binary using
// Setup runs emulatortest.Main.
package wiretest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
	"github.com/creatorstrategy/css/shared/testkit/authtest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/wire"
)

// Cloud is a fresh table on DynamoDB Local holding the sample events' key, the generation and research
// queues on ElasticMQ, and an identity provider whose session tokens the functions trust, all named in the
// environment as template.yaml names them to the functions.
type Cloud struct {
	Store    *store.Store
	Accounts *accounts.Service
	IDP      *authtest.Provider
	SQS      *awssqs.Client
	// GenerationQueue and ResearchQueue are the queues' URLs.
	GenerationQueue, ResearchQueue string
}

// Setup makes a Cloud and names it in the environment (t.Setenv).
func Setup(t *testing.T) *Cloud {
	t.Helper()
	endpoint := emulatortest.DynamoDB(t)
	table := fmt.Sprintf("css-events-%d", time.Now().UnixNano())
	idp, err := authtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Close() })
	t.Setenv("CSS_DYNAMODB_ENDPOINT", endpoint)
	t.Setenv("CSS_TABLE_NAME", table)
	t.Setenv("AWS_REGION", "us-east-1")
	sqsEndpoint := emulatortest.ElasticMQ(t)
	sqsClient, err := sqs.NewClient(sqsEndpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	urls := map[string]string{}
	for _, name := range []string{queue.Generation, queue.Research} {
		spec := queue.Specs()[name]
		spec.Name = fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
		qs, err := sqs.CreateQueues(ctx, sqsClient, spec)
		if err != nil {
			t.Fatal(err)
		}
		urls[name] = qs.URL
	}
	t.Setenv("CSS_SQS_ENDPOINT", sqsEndpoint)
	t.Setenv("CSS_GENERATION_QUEUE_URL", urls[queue.Generation])
	t.Setenv("CSS_RESEARCH_QUEUE_URL", urls[queue.Research])
	for _, kv := range idp.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	st := SeededTable(t, endpoint, table)
	return &Cloud{Store: st, Accounts: accounts.NewService(st, time.Now), IDP: idp, SQS: sqsClient,
		GenerationQueue: urls[queue.Generation], ResearchQueue: urls[queue.Research]}
}

// SeededTable creates table on the DynamoDB Local at endpoint, puts the sample events' identity into it
// (samevents.Seed) and returns the store over it.
func SeededTable(t testing.TB, endpoint, table string) *store.Store {
	t.Helper()
	ctx := context.Background()
	client, err := dynamo.NewClient(endpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.CreateTable(ctx, client, table); err != nil {
		t.Fatal(err)
	}
	if err := samevents.Seed(ctx, dynamo.New(client, table)); err != nil {
		t.Fatal(err)
	}
	return store.New(dynamo.New(client, table))
}

// Session mints a session token for account, as the account system would.
func (c *Cloud) Session(t testing.TB, account string) string {
	t.Helper()
	s, err := c.IDP.Token(account, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Env is function's wire.Env from the environment, logging nowhere.
func Env(t testing.TB, function string) wire.Env {
	t.Helper()
	env, err := wire.NewEnv(function, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("%s: %v", function, err)
	}
	return env
}

// Build builds function's handler with a main's build, from the environment.
func Build[H any](t testing.TB, function string, build func(context.Context, wire.Env) (H, error)) H {
	t.Helper()
	h, err := build(context.Background(), Env(t, function))
	if err != nil {
		t.Fatalf("%s: %v", function, err)
	}
	return h
}

// LoadEvent reads the sample event name.
func LoadEvent(t testing.TB, name string) wire.EventV2 {
	t.Helper()
	ev, err := samevents.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// SampleStatus is the status each sample event of events/ is answered with, on a fresh Cloud.
var SampleStatus = map[string]int{
	"integrations-list-my-videos.json": 200,
	"keys-list-keys.json":              200,
	"memory-create-note.json":          201,
	"memory-list-notes.json":           200,
	"planning-get-schedule.json":       200,
	"utility-health.json":              200,
	"utility-openapi.json":             200,
	"videos-commit-video.json":         200,
	"videos-delete-video-idea.json":    404, // no such idea in a fresh table
	"videos-list-my-videos.json":       200,
}

// OperationOf is the contract's operation the event is a request for.
func OperationOf(t testing.TB, c *contract.Contract, ev wire.EventV2) *contract.Operation {
	t.Helper()
	for _, op := range c.Operations {
		if op.Method+" "+op.Path == ev.RouteKey {
			return op
		}
	}
	t.Fatalf("route %q is not in the contract", ev.RouteKey)
	return nil
}

// absentID is a valid uuid that names nothing: the path parameters and ids of the requests built here.
const absentID = "0b6e3f52-9c1a-4d7e-8f20-000000000000"

// Event is a request for op as API Gateway delivers it, its path parameters filled with absentID.
func Event(op *contract.Operation, authorization string, body string) wire.EventV2 {
	path := op.Path
	for {
		i := strings.Index(path, "{")
		j := strings.Index(path, "}")
		if i < 0 || j < i {
			break
		}
		path = path[:i] + absentID + path[j+1:]
	}
	ev := wire.EventV2{
		Version: "2.0", RouteKey: op.Method + " " + op.Path, RawPath: path,
		Headers: map[string]string{"accept": "application/json", "host": "abc123defg.execute-api.us-east-1.amazonaws.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			APIID: "abc123defg", RequestID: "test-" + op.ID, RouteKey: op.Method + " " + op.Path, Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: op.Method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7"},
		},
	}
	if authorization != "" {
		ev.Headers["authorization"] = authorization
	}
	if body != "" {
		ev.Headers["content-type"] = "application/json"
		ev.Body = body
	}
	return ev
}

// MustRefuse invokes h with ev and wants a refusal with status and code in the Error shape.
func MustRefuse(t testing.TB, name string, h wire.APIHandler, ev wire.EventV2, status int, code string) {
	t.Helper()
	resp, err := h(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var body struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	if resp.StatusCode != status || json.Unmarshal([]byte(resp.Body), &body) != nil || body.Code != code || body.Error == "" {
		t.Errorf("%s: %d %s, want %d with code %s in the Error shape", name, resp.StatusCode, resp.Body, status, code)
	}
	if status == 401 && resp.Headers["Www-Authenticate"] == "" && resp.Headers["WWW-Authenticate"] == "" {
		t.Errorf("%s: 401 without WWW-Authenticate: %v", name, resp.Headers)
	}
}

// DecodedBody is what a client receives from API Gateway for resp: the body base64-decoded when
// isBase64Encoded, then decompressed as its Content-Encoding says.
func DecodedBody(t testing.TB, name string, resp wire.ResponseV2) []byte {
	t.Helper()
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatalf("%s: isBase64Encoded, but the body is not base64: %v", name, err)
		}
	}
	switch enc := resp.Headers["Content-Encoding"]; enc {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: Content-Encoding gzip, but %v", name, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: gzip body: %v", name, err)
		}
	default:
		t.Fatalf("%s: unexpected Content-Encoding %q", name, enc)
	}
	return body
}
