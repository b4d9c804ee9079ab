package deploy

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// The monthly cost estimate of README.md ("What it costs"), computed here from the prices and the
// assumptions below so that the table, the per-generation figure and what they rest on cannot drift apart:
// TestCostEstimate fails when the README's table is not what this renders (and prints the new one).

// prices are AWS's on-demand list prices in us-east-1 (USD), compiled 2026-11-27, free tiers left out.
var prices = struct {
	lambdaRequest, lambdaGBSecond                   float64 // arm64
	apiRequest                                      float64 // HTTP API, first 300 million a month
	dynamoWrite, dynamoRead, dynamoGBMonth, pitrGB  float64 // on-demand request units; storage; continuous backups
	sqsRequest                                      float64 // standard queue, per 64 KB chunk
	s3GBMonth, s3Put, s3Get                         float64 // S3 Standard
	secretMonth, secretsAPICall                     float64
	logsIngestGB, logsStoreGB, alarmMonth           float64 // CloudWatch: ingestion, storage, a standard alarm
	schedulerInvocation                             float64 // EventBridge Scheduler (scheduled rules cost nothing)
	sonnetIn, sonnetOut, haikuIn, haikuOut, imageUl float64 // Bedrock, per token (global profiles) and per picture
	transferOutGB                                   float64 // to the internet
}{
	lambdaRequest: 0.20 / 1e6, lambdaGBSecond: 0.0000133334,
	apiRequest:  1.00 / 1e6,
	dynamoWrite: 0.625 / 1e6, dynamoRead: 0.125 / 1e6, dynamoGBMonth: 0.25, pitrGB: 0.20,
	sqsRequest: 0.40 / 1e6,
	s3GBMonth:  0.023, s3Put: 0.005 / 1000, s3Get: 0.0004 / 1000,
	secretMonth: 0.40, secretsAPICall: 0.05 / 10000,
	logsIngestGB: 0.50, logsStoreGB: 0.03, alarmMonth: 0.10,
	schedulerInvocation: 1.00 / 1e6,
	sonnetIn:            3.00 / 1e6, sonnetOut: 15.00 / 1e6, haikuIn: 1.00 / 1e6, haikuOut: 5.00 / 1e6, imageUl: 0.14,
	transferOutGB: 0.09,
}

// channel is what one active channel does in a month.
var channel = struct {
	apiCalls, generations, imageShare, events, deliveries, researchRuns float64
	tableMB                                                             float64 // items kept (runs, pipeline, research)
}{apiCalls: 1500, generations: 30, imageShare: 0.10, events: 150, deliveries: 75, researchRuns: 4.33, tableMB: 5}

// Per unit of work: Lambda (GB, seconds), table request units, queue requests, model tokens, log bytes.
const (
	apiGB, apiSeconds           = 0.25, 0.060 // an API request, warm, 3-4 table calls
	apiReads, apiWrites         = 2, 1.25     // credential and data reads; the rate counter and some writes
	responseKB                  = 5
	logKB                       = 1.0 // the request line and the platform's START/END/REPORT
	genWaitSeconds              = 12  // the API function waits for the job (at most 25 s)
	workerGB, genWorkerSeconds  = 0.5, 14
	genReads, genWrites         = 12, 6
	genSonnetIn, genSonnetOut   = 6000, 1500 // the writer (the prompt budget is 8,000 tokens)
	genHaikuIn, genHaikuOut     = 2500, 300  // the grader
	repairShare                 = 0.10       // answers that need one repair turn
	repairIn, repairOut         = 7500, 1500
	runKB                       = 10
	imageMB, imageRetentionMths = 1.5, 3 // a PNG, kept ImageRetentionDays (90)
	eventWrites, eventSQS       = 2, 3   // outbox put and delete; send, receive, delete
	dispatcherGB, eventSeconds  = 0.25, 0.01
	deliverySeconds             = 0.3 // the signed POST to the receiver
	deliveryWrites              = 2
	researchSteps               = 8
	researchStepSeconds         = 3
	researchWrites, researchRds = 60, 40
	researchIn, researchOut     = 20000, 4000
	alarms                      = 35    // with AlarmTopicArn (prod)
	sweepsPerMonth              = 43200 // the outbox sweep, every minute
	schedulesPerMonth           = 2880  // the research scheduler, every 15 minutes
	scheduleGB, scheduleSeconds = 0.25, 0.1
)

// costLine is one service's monthly cost for n active channels.
type costLine struct {
	service string
	cost    func(n float64) float64
}

func generationTokensCost() float64 {
	p := prices
	return genSonnetIn*p.sonnetIn + genSonnetOut*p.sonnetOut + genHaikuIn*p.haikuIn + genHaikuOut*p.haikuOut +
		repairShare*(repairIn*p.sonnetIn+repairOut*p.sonnetOut)
}

func researchTokensCost() float64 { return researchIn*prices.sonnetIn + researchOut*prices.sonnetOut }

func costLines() []costLine {
	p, c := prices, channel
	gb := func(mb float64) float64 { return mb / 1024 }
	invocations := func(n float64) float64 {
		return n*(c.apiCalls+2*c.generations+c.events/10+c.deliveries+c.researchRuns*researchSteps+2*c.generations*c.imageShare) +
			sweepsPerMonth + schedulesPerMonth
	}
	return []costLine{
		{"Lambda (arm64)", func(n float64) float64 {
			gbs := n*(c.apiCalls*apiGB*apiSeconds+
				c.generations*(apiGB*genWaitSeconds+workerGB*genWorkerSeconds)+
				c.events*dispatcherGB*eventSeconds+c.deliveries*dispatcherGB*deliverySeconds+
				c.researchRuns*researchSteps*workerGB*researchStepSeconds) +
				(sweepsPerMonth+schedulesPerMonth)*scheduleGB*scheduleSeconds
			return invocations(n)*p.lambdaRequest + gbs*p.lambdaGBSecond
		}},
		{"API Gateway (HTTP API)", func(n float64) float64 {
			return n * (c.apiCalls + c.generations + 2*c.generations*c.imageShare) * p.apiRequest
		}},
		{"DynamoDB (on demand, PITR)", func(n float64) float64 {
			reads := c.apiCalls*apiReads + c.generations*genReads + c.researchRuns*researchRds
			writes := c.apiCalls*apiWrites + c.generations*genWrites + c.events*eventWrites + c.deliveries*deliveryWrites +
				c.researchRuns*researchWrites
			return n * (reads*p.dynamoRead + writes*p.dynamoWrite + gb(c.tableMB)*(p.dynamoGBMonth+p.pitrGB))
		}},
		{"SQS", func(n float64) float64 {
			return n * (3*c.generations + eventSQS*(c.events+c.deliveries) + 3*c.researchRuns*researchSteps) * p.sqsRequest
		}},
		{"Bedrock text: generations", func(n float64) float64 { return n * c.generations * generationTokensCost() }},
		{"Bedrock text: research", func(n float64) float64 { return n * c.researchRuns * researchTokensCost() }},
		{"Bedrock pictures", func(n float64) float64 { return n * c.generations * c.imageShare * p.imageUl }},
		{"S3 (pictures)", func(n float64) float64 {
			images := n * c.generations * c.imageShare
			return images * (gb(imageMB)*imageRetentionMths*p.s3GBMonth + p.s3Put + 2*p.s3Get)
		}},
		// Two secrets of the stack: the webhook secrets' key and the YouTube refresh tokens' (decision 50).
		{"Secrets Manager", func(n float64) float64 { return 2*p.secretMonth + invocations(n)/100*p.secretsAPICall }},
		{"CloudWatch Logs", func(n float64) float64 {
			return gb(invocations(n)*logKB/1024) * (p.logsIngestGB + p.logsStoreGB)
		}},
		{"CloudWatch alarms", func(float64) float64 { return alarms * p.alarmMonth }},
		{"EventBridge schedules", func(float64) float64 { return schedulesPerMonth * p.schedulerInvocation }},
		{"Data transfer out", func(n float64) float64 {
			return gb(n*(c.apiCalls+c.generations)*responseKB/1024) * p.transferOutGB
		}},
	}
}

func dollars(v float64) string {
	if v < 0.005 {
		return "<$0.01"
	}
	if v < 10 {
		return fmt.Sprintf("$%.2f", v)
	}
	s := fmt.Sprintf("%d", int64(math.Round(v)))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return "$" + s
}

// costTable renders the README's table.
func costTable() string {
	sizes := []float64{10, 1000, 100000}
	var b strings.Builder
	b.WriteString("| per month | 10 channels | 1,000 channels | 100,000 channels |\n|---|---:|---:|---:|\n")
	totals := make([]float64, len(sizes))
	for _, l := range costLines() {
		b.WriteString("| " + l.service)
		for i, n := range sizes {
			v := l.cost(n)
			totals[i] += v
			b.WriteString(" | " + dollars(v))
		}
		b.WriteString(" |\n")
	}
	b.WriteString("| **total**")
	for _, v := range totals {
		b.WriteString(" | **" + dollars(v) + "**")
	}
	b.WriteString(" |\n| per channel")
	for i, v := range totals {
		b.WriteString(" | " + dollars(v/sizes[i]))
	}
	b.WriteString(" |\n")
	return b.String()
}

func TestCostEstimate(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := costTable()
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md's cost table is not what the model renders; replace it with:\n%s", want)
	}
	perGeneration := fmt.Sprintf("$%.3f", generationTokensCost())
	if !strings.Contains(string(readme), "about "+perGeneration+" of model tokens per generation") {
		t.Errorf("README.md does not say %q", "about "+perGeneration+" of model tokens per generation")
	}
	t.Logf("\n%s", want)
}
