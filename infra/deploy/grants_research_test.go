package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/queue/sqs"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

// researchCloud is what the research functions talk to in the grants test, configured as template.yaml
// configures them: the research queue on ElasticMQ, the YouTube Data API's wire format on loopback, and a
// loopback SSM holding the API key under the name CSS_YOUTUBE_API_KEY_PARAM gives.
type researchCloud struct {
	sqs      *awssqs.Client
	queueURL string
	queueARN string
	youtube  *youtubetest.Server
	// owner is a channel of the catalog that the YouTube connection connects (its uploads are what the
	// daily sync reads), and ownVideo one of its uploads.
	owner, ownVideo string
}

const (
	grantsYouTubeKey   = "AIza-grants-test-key"
	grantsYouTubeParam = "/css/test/youtube-api-key"
)

func startResearchCloud(t *testing.T, keywords []string) researchCloud {
	t.Helper()
	endpoint := emulatortest.ElasticMQ(t)
	client, err := sqs.NewClient(endpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	spec := queue.Specs()[queue.Research]
	spec.Name = fmt.Sprintf("research-grants-%d", time.Now().UnixNano())
	q, err := sqs.CreateQueues(context.Background(), client, spec)
	if err != nil {
		t.Fatal(err)
	}
	n := research.Niche{Keywords: keywords, Language: "english", Focus: "vegan meal prep"}
	catalog := youtubesample.Corpus(n, time.Now())
	yt := youtubetest.Start(grantsYouTubeKey, catalog)
	t.Cleanup(yt.Close)
	// YouTube Analytics for the daily sync of a connected channel, taking the owner tokens yt's OAuth
	// flow issues.
	analytics := youtubetest.StartAnalytics(catalog, time.Now)
	analytics.TrustOwners(yt)
	t.Cleanup(analytics.Close)
	ssm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Name string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		if r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || in.Name != grantsYouTubeParam {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"ParameterNotFound","message":"Parameter not found."}`)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		fmt.Fprintf(w, `{"Parameter":{"Name":%q,"Type":"SecureString","Value":%q,"Version":1}}`, in.Name, grantsYouTubeKey)
	}))
	t.Cleanup(ssm.Close)
	for k, v := range map[string]string{
		"CSS_SQS_ENDPOINT": endpoint, "CSS_RESEARCH_QUEUE_URL": q.URL, "CSS_RESEARCH_SOURCE": "youtube",
		"CSS_YOUTUBE_API_KEY_PARAM": grantsYouTubeParam, "CSS_SSM_ENDPOINT": ssm.URL, "CSS_YOUTUBE_ENDPOINT": yt.Endpoint(),
		"CSS_YOUTUBE_ANALYTICS_ENDPOINT": analytics.Endpoint(), "CSS_YOUTUBE_REPORTING_ENDPOINT": analytics.Endpoint(),
		// Accepted (YouTubeDerivedMetricsAccepted=true), research writes patterns and ideas too: the grants
		// must cover that (decision 48).
		"CSS_YOUTUBE_DERIVED_METRICS": "true",
	} {
		t.Setenv(k, v)
	}
	owner := catalog.Channels[0]
	return researchCloud{sqs: client, queueURL: q.URL, queueARN: q.ARN, youtube: yt, owner: owner.ID, ownVideo: owner.Uploads[0].ID}
}

// researchFunctions runs the research worker and scheduler through their Lambda entry points: the worker
// on the research queue's messages as the event source mapping hands them over (and deletes what it
// handled), the scheduler as its schedule invokes it. setFunction names the function whose table calls
// are being recorded.
type researchFunctions struct {
	t           *testing.T
	cloud       researchCloud
	worker      sqs.LambdaHandler
	scheduler   func(context.Context) (research.ScheduleReport, error)
	setFunction func(string)
}

func newResearchFunctions(t *testing.T, cloud researchCloud, fns *cloudFunctions, setFunction func(string)) *researchFunctions {
	t.Helper()
	return &researchFunctions{t: t, cloud: cloud, worker: fns.researchWorker(), scheduler: fns.researchScheduler(), setFunction: setFunction}
}

// drain hands the queue's messages to the worker until none is left.
func (f *researchFunctions) drain() {
	f.t.Helper()
	ctx := context.Background()
	for handled := 0; ; {
		out, err := f.cloud.sqs.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: &f.cloud.queueURL,
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			f.t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return
		}
		for _, m := range out.Messages {
			if handled++; handled > 100 {
				f.t.Fatal("the research queue does not run dry")
			}
			rec := events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: f.cloud.queueARN}
			f.setFunction("ResearchWorkerFunction")
			resp, err := f.worker(ctx, events.SQSEvent{Records: []events.SQSMessage{rec}})
			if err != nil || len(resp.BatchItemFailures) > 0 {
				f.t.Fatalf("worker on %s: %v %+v", rec.Body, err, resp)
			}
			if _, err := f.cloud.sqs.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: &f.cloud.queueURL, ReceiptHandle: m.ReceiptHandle}); err != nil {
				f.t.Fatal(err)
			}
		}
	}
}

// schedule runs one scheduler pass.
func (f *researchFunctions) schedule() research.ScheduleReport {
	f.t.Helper()
	f.setFunction("ResearchSchedulerFunction")
	rep, err := f.scheduler(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}
