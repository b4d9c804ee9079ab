package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // the stored thumbnail
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/testkit/authtest"
	"github.com/creatorstrategy/css/shared/testkit/bedrocktest"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/s3test"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
	"github.com/creatorstrategy/css/shared/testkit/wiretest"
	"github.com/creatorstrategy/css/shared/wire"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// The function role's credentials, as Lambda puts them in the environment.
var creds = aws.Credentials{AccessKeyID: "AKIDWORKERTEST", SecretAccessKey: "worker-secret", SessionToken: "worker-session"}

const publicURL = "https://api.example.com"

// writer is the loopback Bedrock's model: it writes titles and a thumbnail strategy, and grades what it
// wrote, as the tool-use answers of Converse. It counts the titles written since the last grading call, so
// the batched grade has one entry per title.
type writer struct {
	mu      sync.Mutex
	written int
	calls   int
}

func (wr *writer) answer(c bedrocktest.Call) bedrocktest.Answer {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	wr.calls++
	tokens := func(in string) bedrocktest.Answer {
		return bedrocktest.Answer{Input: in, InputTokens: 1000 + wr.calls, OutputTokens: 100 + wr.calls}
	}
	switch c.Tool() {
	case generation.TaskTitles:
		var titles []string
		for i := range 4 {
			wr.written++
			titles = append(titles, fmt.Sprintf(`{"title":"Vegan lunch number %d for under three dollars"}`, wr.calls*10+i))
		}
		return tokens(`{"titles":[` + strings.Join(titles, ",") + `]}`)
	case generation.TaskGradeTitles:
		var grades []string
		for i := range wr.written {
			grades = append(grades, fmt.Sprintf(`{"index":%d,"nicheRelevance":9,"researchAlignment":8,"hookStrength":%d,"brandVoice":8,"feedback":"Clear and concrete."}`, i, 6+i%4))
		}
		wr.written = 0
		return tokens(`{"grades":[` + strings.Join(grades, ",") + `]}`)
	case generation.TaskThumbnail:
		return tokens(`{"strategy":"A shocked face next to a $3 receipt","designConcept":"Close-up of the cook, receipt in hand, kitchen behind",` +
			`"colorPalette":["#0F172A","#FACC15"],"textOverlay":"$3 LUNCH?"}`)
	case generation.TaskGradeContent:
		return tokens(`{"score":84,"feedback":"Readable at small sizes; the price pops."}`)
	}
	return tokens(`{}`)
}

// lambdaEvent is an HTTP API (payload 2.0) event for method and path with the sample key.
func lambdaEvent(method, path, routeKey string, body any, headers map[string]string) wire.EventV2 {
	ev := wire.EventV2{
		Version: "2.0", RouteKey: routeKey, RawPath: path,
		Headers: map[string]string{"accept": "application/json", "authorization": "Bearer " + samevents.Key},
		RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: routeKey, Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path}},
	}
	for k, v := range headers {
		ev.Headers[k] = v
	}
	if body != nil {
		b, _ := json.Marshal(body)
		ev.Body, ev.Headers["content-type"] = string(b), "application/json"
	}
	return ev
}

// A generation runs end to end in the cloud's shape, on Bedrock through the real SDK: the generation
// function (its Lambda handler) queues the job on SQS (ElasticMQ), the worker's Lambda handler runs it from
// the SQS event with CSS_MODEL_PROVIDER=bedrock against a loopback Bedrock Runtime (Converse with a forced
// tool for writer and grader, InvokeModel for the picture), stores the picture in a loopback S3 and the run
// in DynamoDB Local. The run is a success, with the configured Bedrock model's id, the tokens Bedrock
// reported and an output valid against the contract; the picture's lasting URL is served by the utility
// function's /files/ route, which redirects to a presigned GET of the stored JPEG.
func TestBedrockGenerationThroughTheWorker(t *testing.T) {
	ctx := context.Background()
	endpoint := emulatortest.DynamoDB(t)
	table := fmt.Sprintf("css-worker-%d", time.Now().UnixNano())
	st := wiretest.SeededTable(t, endpoint, table)
	sqsEndpoint := emulatortest.ElasticMQ(t)
	sqsClient, err := sqs.NewClient(sqsEndpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	spec := queue.Specs()[queue.Generation]
	spec.Name = fmt.Sprintf("worker-generation-%d", time.Now().UnixNano())
	genQueue, err := sqs.CreateQueues(ctx, sqsClient, spec)
	if err != nil {
		t.Fatal(err)
	}
	idp, err := authtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer idp.Close()
	for _, kv := range idp.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	wr := &writer{}
	brt := bedrocktest.Start(t, creds, wr.answer, 1344, 768)
	s3 := s3test.Start(t, "css-images-test", "us-east-1", creds)
	for k, v := range map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": creds.SecretAccessKey,
		"AWS_SESSION_TOKEN": creds.SessionToken, "CSS_DYNAMODB_ENDPOINT": endpoint, "CSS_TABLE_NAME": table,
		"CSS_SQS_ENDPOINT": sqsEndpoint, "CSS_GENERATION_QUEUE_URL": genQueue.URL, "CSS_MODEL_PROVIDER": "bedrock",
		"CSS_BEDROCK_ENDPOINT": brt.URL, "CSS_MODEL_MAX_ATTEMPTS": "1", "CSS_IMAGES_BUCKET": s3.Bucket,
		"CSS_S3_ENDPOINT": s3.URL, "CSS_PUBLIC_URL": publicURL,
	} {
		t.Setenv(k, v)
	}
	// The API functions' operations, with the generation queue their mains give them.
	api := wiretest.API(t, wiretest.Env(t, "generation"), contract.FunctionGeneration)
	contextFn := wiretest.API(t, wiretest.Env(t, "context"), contract.FunctionContext)
	utility := wiretest.API(t, wiretest.Env(t, "utility"), contract.FunctionUtility)
	worker := wiretest.Build(t, "generation-worker", build)
	call := func(h func(context.Context, wire.EventV2) (wire.ResponseV2, error), ev wire.EventV2, want int) map[string]any {
		t.Helper()
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("%s: %d %s %v", ev.RouteKey, resp.StatusCode, resp.Body, err)
		}
		var out map[string]any
		json.Unmarshal([]byte(resp.Body), &out)
		return out
	}
	call(contextFn, lambdaEvent("PUT", "/api/v1/niche-profile", "PUT /api/v1/niche-profile", map[string]any{
		"broadNiche": "cooking", "focusedNiche": "vegan meal prep on a budget", "keywords": []string{"vegan", "meal prep", "budget", "protein"},
	}, nil), 200)

	// drain runs the queued jobs through the worker's Lambda handler, as the SQS event source would.
	drain := func() int {
		t.Helper()
		jobs := 0
		for {
			out, err := sqsClient.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: &genQueue.URL, MaxNumberOfMessages: 10,
				MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) == 0 {
				return jobs
			}
			var ev events.SQSEvent
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
			jobs += len(out.Messages)
		}
	}
	async := func(key string) map[string]string {
		return map[string]string{"prefer": "respond-async", "idempotency-key": key}
	}

	for _, tc := range []struct {
		tool      string
		path      string
		body      map[string]any
		component string
		tasks     []string // the Converse calls, by forced tool, in some order
		pictures  int
	}{
		{"titles", "/api/v1/generate/titles", map[string]any{"title": "vegan lunches", "type": "listicle", "videoType": "Both"},
			"TitlesResult", []string{"titles", "titles", "grade_titles"}, 0},
		{"thumbnails", "/api/v1/generate/thumbnail", map[string]any{"title": "vegan lunches under $3", "type": "compare"},
			"ThumbnailStrategy", []string{"thumbnail", "grade_content"}, 1},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			before := len(brt.Calls())
			accepted := call(api, lambdaEvent("POST", tc.path, "POST "+tc.path, tc.body, async(tc.tool)), 202)
			id, _ := accepted["generationId"].(string)
			if n := drain(); n != 1 || id == "" {
				t.Fatalf("%d jobs for %v", n, accepted)
			}

			var inTokens, outTokens int
			var tasks []string
			for _, c := range brt.Calls()[before:] {
				if c.Region != "us-east-1" && c.Operation == "converse" {
					t.Errorf("Converse signed for %s, want the stack's region", c.Region)
				}
				switch c.Operation {
				case "converse":
					tasks = append(tasks, c.Tool())
					inTokens, outTokens = inTokens+c.Answer.InputTokens, outTokens+c.Answer.OutputTokens
					want := config.DefaultBedrockGenerationModel
					if strings.HasPrefix(c.Tool(), "grade_") {
						want = config.DefaultBedrockGradingModel
					}
					if c.ModelID != want {
						t.Errorf("%s on %s, want %s", c.Tool(), c.ModelID, want)
					}
					// The channel's niche is data: in a data block of the user turn, never in the system prompt.
					sys, _ := json.Marshal(c.Body["system"])
					msgs, _ := json.Marshal(c.Body["messages"])
					if strings.Contains(string(sys), "vegan meal prep on a budget") {
						t.Errorf("%s: the system prompt carries the channel's niche: %s", c.Tool(), sys)
					}
					if !strings.Contains(string(msgs), "vegan meal prep on a budget") && !strings.HasPrefix(c.Tool(), "grade_") {
						t.Errorf("%s: the user turn does not carry the niche: %.600s", c.Tool(), msgs)
					}
				case "invoke":
					if c.ModelID != config.DefaultImageModel || c.Region != config.DefaultImageRegion {
						t.Errorf("InvokeModel of %s in %s", c.ModelID, c.Region)
					}
				}
			}
			if !sameMultiset(tasks, tc.tasks) {
				t.Errorf("Converse calls %v, want %v", tasks, tc.tasks)
			}
			if got := countInvokes(brt.Calls()[before:]); got != tc.pictures {
				t.Errorf("%d InvokeModel calls, want %d", got, tc.pictures)
			}

			run, _, err := st.GetRun(ctx, samevents.Channel, id)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != generation.Success || run.ToolName != tc.tool || run.Model == nil || *run.Model != config.DefaultBedrockGenerationModel ||
				run.InputTokens == nil || *run.InputTokens != inTokens || run.OutputTokens == nil || *run.OutputTokens != outTokens {
				t.Errorf("run %s %s model %v tokens %v/%v, want success, %s, %d/%d tokens", run.Status, run.ToolName, deref(run.Model),
					deref(run.InputTokens), deref(run.OutputTokens), config.DefaultBedrockGenerationModel, inTokens, outTokens)
			}
			if _, err := contract.ValidateJSON(tc.component, run.Output); err != nil {
				t.Errorf("output is not a %s: %v: %s", tc.component, err, run.Output)
			}
			got := call(api, lambdaEvent("GET", "/api/v1/generations/"+id, "GET /api/v1/generations/{id}", nil, nil), 200)
			if got["status"] != "success" || got["model"] != config.DefaultBedrockGenerationModel {
				t.Errorf("GET /generations/%s: %v", id, got)
			}

			switch tc.tool {
			case "titles":
				var out struct {
					Titles    []map[string]any
					Generated int
				}
				json.Unmarshal(run.Output, &out)
				if out.Generated != 8 || len(out.Titles) == 0 || out.Titles[0]["grade"] == nil {
					t.Errorf("titles: %s", run.Output)
				}
			case "thumbnails":
				checkPicture(t, run.Output, s3, utility)
			}
		})
	}
}

// checkPicture follows the thumbnail's lasting URL: the utility function's /files/ route answers 302 to a
// presigned GET of the bucket, which fetches the stored 2048x1152 JPEG.
func checkPicture(t *testing.T, output json.RawMessage, s3 *s3test.Server,
	utility func(context.Context, wire.EventV2) (wire.ResponseV2, error)) {
	t.Helper()
	var out struct {
		ImageURL string `json:"imageUrl"`
	}
	json.Unmarshal(output, &out)
	key, ok := strings.CutPrefix(out.ImageURL, publicURL+"/files/")
	if !ok || !ai.ValidImageKey(key) || !strings.HasPrefix(key, "images/"+samevents.Channel+"/") || !strings.HasSuffix(key, ".jpeg") {
		t.Fatalf("imageUrl %q: want %s/files/images/<channel>/<name>.jpeg", out.ImageURL, publicURL)
	}
	if keys := s3.Keys(); len(keys) != 1 || keys[0] != key {
		t.Errorf("bucket holds %v, want %s", keys, key)
	}
	path := strings.TrimPrefix(out.ImageURL, publicURL)
	ev := lambdaEvent("GET", path, "GET /files/{proxy+}", nil, nil)
	delete(ev.Headers, "authorization") // an <img> tag sends no credential
	resp, err := utility(context.Background(), ev)
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, resp.Body, err)
	}
	link, err := url.Parse(resp.Headers["Location"])
	if err != nil || !strings.HasPrefix(link.String(), s3.URL+"/"+s3.Bucket+"/"+key+"?") {
		t.Fatalf("Location %q", resp.Headers["Location"])
	}
	got, err := http.Get(link.String())
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	data, _ := io.ReadAll(got.Body)
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if got.StatusCode != 200 || err != nil || format != "jpeg" || cfg.Width != ai.ThumbnailWidth || cfg.Height != ai.ThumbnailHeight {
		t.Errorf("the link: %d, %s %dx%d, %v", got.StatusCode, format, cfg.Width, cfg.Height, err)
	}
}

func countInvokes(calls []bedrocktest.Call) int {
	n := 0
	for _, c := range calls {
		if c.Operation == "invoke" {
			n++
		}
	}
	return n
}

func sameMultiset(a, b []string) bool {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// With an images bucket the worker needs the public URL its pictures are served under; it makes no call
// to find out.
func TestBuildNeedsThePublicURLWithABucket(t *testing.T) {
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "CSS_TABLE_NAME": "css-test",
		"CSS_DYNAMODB_ENDPOINT": "http://127.0.0.1:1", "CSS_MODEL_PROVIDER": "bedrock", "CSS_IMAGES_BUCKET": "css-images-test"} {
		t.Setenv(k, v)
	}
	if _, err := startBuild(); err == nil || !strings.Contains(err.Error(), "CSS_PUBLIC_URL") {
		t.Errorf("a worker with a bucket and no public URL: %v", err)
	}
	t.Setenv("CSS_PUBLIC_URL", publicURL)
	if _, err := startBuild(); err != nil {
		t.Errorf("wiring: %v", err)
	}
}

// The Lambda links no offline stand-in: configured for the offline model, the worker fails at start and
// says why.
func TestBuildRefusesTheOfflineModel(t *testing.T) {
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "CSS_TABLE_NAME": "css-test",
		"CSS_DYNAMODB_ENDPOINT": "http://127.0.0.1:1", "CSS_MODEL_PROVIDER": "offline"} {
		t.Setenv(k, v)
	}
	_, err := startBuild()
	if !errors.Is(err, provider.ErrOfflineNotLinked) || !strings.Contains(err.Error(), "local stack") {
		t.Errorf("a worker configured for the offline model: %v", err)
	}
}

// startBuild builds the worker from the environment, as wire.Start does.
func startBuild() (sqs.LambdaHandler, error) {
	env, err := wire.NewEnv("generation-worker", slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	return build(context.Background(), env)
}
