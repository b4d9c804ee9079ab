package lambdaapp

import (
	"context"
	"log/slog"
	"time"
)

// MetricNamespace is the CloudWatch namespace of the service's own metrics.
const MetricNamespace = "CSS"

// MetricCredentialRefusals counts credentials refused that were not in the authenticator's cache, by
// function: a flood of made-up keys shows here.
const MetricCredentialRefusals = "CredentialRefusals"

// countMetric returns a counter that writes one line in CloudWatch's embedded metric format per call:
// Lambda ships stdout to CloudWatch Logs, which turns the line into a data point of name (value 1) in
// MetricNamespace, with the dimension FunctionName (the group, e.g. "videos"). The line is written whatever
// the log level, since it is a metric rather than a log.
func countMetric(logger *slog.Logger, now func() time.Time, function, name string) func(context.Context) {
	type metric struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	type directive struct {
		Namespace  string     `json:"Namespace"`
		Dimensions [][]string `json:"Dimensions"`
		Metrics    []metric   `json:"Metrics"`
	}
	type emf struct {
		Timestamp         int64       `json:"Timestamp"`
		CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
	}
	directives := []directive{{Namespace: MetricNamespace, Dimensions: [][]string{{"FunctionName"}},
		Metrics: []metric{{Name: name, Unit: "Count"}}}}
	h := logger.Handler()
	return func(ctx context.Context) {
		t := now()
		r := slog.NewRecord(t, slog.LevelInfo, "metric "+name, 0)
		r.AddAttrs(slog.Any("_aws", emf{Timestamp: t.UnixMilli(), CloudWatchMetrics: directives}),
			slog.String("FunctionName", function), slog.Int(name, 1))
		_ = h.Handle(ctx, r)
	}
}
