package deploy

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/queue"
)

// stem is the resource stem of a queue: "webhook-deliveries" -> "WebhookDeliveries".
func stem(name string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func seconds(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

// The template's queues are exactly shared/queue's Specs, with their settings: the local stack opens its
// in-process queues from the same Specs, so retries and dead-lettering behave the same in both.
func TestQueuesMatchTheSpecs(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	res := at(tpl, "Resources").(map[string]any)
	declared := map[string]bool{}
	for _, spec := range queue.Specs() {
		id := stem(spec.Name)
		src, dlq := id+"Queue", id+"DeadLetterQueue"
		declared[src], declared[dlq] = true, true
		q, d := at(res, src), at(res, dlq)
		if str(at(q, "Type")) != "AWS::SQS::Queue" || str(at(d, "Type")) != "AWS::SQS::Queue" {
			t.Errorf("%s: want AWS::SQS::Queue resources %s and %s", spec.Name, src, dlq)
			continue
		}
		p, dp := at(q, "Properties"), at(d, "Properties")
		checks := []struct {
			what string
			got  any
			want string
		}{
			{src + ".VisibilityTimeout", at(p, "VisibilityTimeout"), seconds(spec.VisibilityTimeout)},
			{src + ".MessageRetentionPeriod", at(p, "MessageRetentionPeriod"), seconds(spec.Retention)},
			{src + ".RedrivePolicy.maxReceiveCount", at(p, "RedrivePolicy", "maxReceiveCount"), strconv.Itoa(spec.MaxReceiveCount)},
			{src + ".SqsManagedSseEnabled", at(p, "SqsManagedSseEnabled"), "true"},
			{dlq + ".MessageRetentionPeriod", at(dp, "MessageRetentionPeriod"), seconds(spec.DeadLetterRetention)},
			{dlq + ".SqsManagedSseEnabled", at(dp, "SqsManagedSseEnabled"), "true"},
		}
		for _, c := range checks {
			if got := str(c.got); got != c.want {
				t.Errorf("%s = %q; want %s (queue.Specs)", c.what, got, c.want)
			}
		}
		if !isGetAtt(at(p, "RedrivePolicy", "deadLetterTargetArn"), dlq, "Arn") {
			t.Errorf("%s.RedrivePolicy.deadLetterTargetArn: want !GetAtt %s.Arn", src, dlq)
		}
		if at(dp, "RedrivePolicy") != nil {
			t.Errorf("%s: a dead-letter queue with a redrive policy", dlq)
		}
		if spec.DeadLetterRetention != 14*24*time.Hour || spec.DeadLetterRetention <= spec.Retention {
			t.Errorf("%s: dead letters kept %s; want 14 days, longer than the queue's %s", spec.Name, spec.DeadLetterRetention, spec.Retention)
		}
		if spec.MaxReceiveCount < 1 || spec.VisibilityTimeout <= 0 {
			t.Errorf("%s: spec %+v", spec.Name, spec)
		}

		env := "CSS_" + strings.ToUpper(strings.ReplaceAll(spec.Name, "-", "_")) + "_QUEUE_URL"
		if !isRef(at(tpl, "Globals", "Function", "Environment", "Variables", env), src) {
			t.Errorf("Globals.Function.Environment: want %s: !Ref %s", env, src)
		}
		for _, out := range []struct{ name, ref string }{{src + "Url", src}, {dlq + "Url", dlq}} {
			if !isRef(at(tpl, "Outputs", out.name, "Value"), out.ref) {
				t.Errorf("Outputs.%s: want !Ref %s", out.name, out.ref)
			}
		}
		for _, out := range []struct{ name, res string }{{src + "Arn", src}, {dlq + "Arn", dlq}} {
			if !isGetAtt(at(tpl, "Outputs", out.name, "Value"), out.res, "Arn") {
				t.Errorf("Outputs.%s: want !GetAtt %s.Arn", out.name, out.res)
			}
		}
		if !hasDeadLetterAlarm(res, dlq) {
			t.Errorf("%s: no alarm on ApproximateNumberOfMessagesVisible > 0 (Maximum, missing data not breaching)", dlq)
		}
	}
	for id, r := range res {
		if str(at(r, "Type")) == "AWS::SQS::Queue" && !declared[id] {
			t.Errorf("%s: a queue missing from shared/queue.Specs", id)
		}
	}
}

// hasDeadLetterAlarm reports whether an alarm fires as soon as dlq holds a visible message (its condition
// and actions are TestOperatorBasics' to check).
func hasDeadLetterAlarm(res map[string]any, dlq string) bool {
	for _, r := range res {
		p := at(r, "Properties")
		dims := asList(at(p, "Dimensions"))
		if str(at(r, "Type")) == "AWS::CloudWatch::Alarm" && str(at(p, "Namespace")) == "AWS/SQS" &&
			str(at(p, "MetricName")) == "ApproximateNumberOfMessagesVisible" &&
			len(dims) == 1 && str(at(dims[0], "Name")) == "QueueName" && isGetAtt(at(dims[0], "Value"), dlq, "QueueName") &&
			str(at(p, "Threshold")) == "0" && str(at(p, "ComparisonOperator")) == "GreaterThanThreshold" &&
			str(at(p, "Statistic")) == "Maximum" && str(at(p, "TreatMissingData")) == "notBreaching" {
			return true
		}
	}
	return false
}

// A function consuming a queue reports partial batch failures (shared/queue/sqs.Handler answers them), and
// the queue's visibility timeout is at least six times the function's timeout.
func TestQueueWorkersReportBatchItemFailures(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	globalTimeout := str(at(tpl, "Globals", "Function", "Timeout"))
	for id, fn := range functions(tpl) {
		evs, _ := at(fn, "Properties", "Events").(map[string]any)
		for name, ev := range evs {
			if str(at(ev, "Type")) != "SQS" {
				continue
			}
			p := at(ev, "Properties")
			ga := at(p, "Queue", "Fn::GetAtt")
			queueID := str(at(ga, "0"))
			if str(at(ga, "1")) != "Arn" || str(at(tpl, "Resources", queueID, "Type")) != "AWS::SQS::Queue" {
				t.Errorf("%s.%s: Queue must be !GetAtt <a queue of the template>.Arn", id, name)
				continue
			}
			if !slices.Contains(strs(at(p, "FunctionResponseTypes")), "ReportBatchItemFailures") {
				t.Errorf("%s.%s: want FunctionResponseTypes [ReportBatchItemFailures]", id, name)
			}
			timeout := str(at(fn, "Properties", "Timeout"))
			if timeout == "" {
				timeout = globalTimeout
			}
			fnSeconds, err1 := strconv.Atoi(timeout)
			vt, err2 := strconv.Atoi(str(at(tpl, "Resources", queueID, "Properties", "VisibilityTimeout")))
			if err1 != nil || err2 != nil {
				t.Errorf("%s.%s: timeout %q or visibility timeout of %s unreadable", id, name, timeout, queueID)
				continue
			}
			if vt < 6*fnSeconds {
				t.Errorf("%s.%s: %s's visibility timeout %d s is under six times the function's timeout (%d s)", id, name, queueID, vt, fnSeconds)
			}
		}
	}
}

func TestStem(t *testing.T) {
	for name, want := range map[string]string{"generation": "Generation", "webhook-deliveries": "WebhookDeliveries", "a--b": "AB"} {
		if got := stem(name); got != want {
			t.Errorf("stem(%q) = %q; want %q", name, got, want)
		}
	}
}

// The generation worker's timeout is the one shared/config checks CSS_GENERATION_DEADLINE against.
func TestGenerationWorkerTimeoutMatchesTheConfig(t *testing.T) {
	tpl := readTemplate(t, templatePath)
	got := str(at(tpl, "Resources", "GenerationWorkerFunction", "Properties", "Timeout"))
	if want := strconv.Itoa(int(config.GenerationWorkerTimeout / time.Second)); got != want {
		t.Errorf("GenerationWorkerFunction Timeout %q, want %s (config.GenerationWorkerTimeout)", got, want)
	}
}
