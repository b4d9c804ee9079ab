package wire

import (
	"context"
	"log/slog"
)

// MetricNamespace is the CloudWatch namespace of the service's own metrics.
const MetricNamespace = "CSS"

// MetricCredentialRefusals counts credentials refused that were not in the authenticator's cache, by
// function: a flood of made-up keys shows here.
const MetricCredentialRefusals = "CredentialRefusals"

// Counter returns a counter of the metric name that writes one line in CloudWatch's embedded metric format
// per call: Lambda ships stdout to CloudWatch Logs, which turns the line into a data point of name (value 1)
// in MetricNamespace, with the dimension FunctionName (env.Function). The line is written whatever the log
// level, since it is a metric rather than a log.
func Counter(env Env, name string) func(context.Context) {
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
	h := env.Log.Handler()
	return func(ctx context.Context) {
		t := env.Now()
		r := slog.NewRecord(t, slog.LevelInfo, "metric "+name, 0)
		r.AddAttrs(slog.Any("_aws", emf{Timestamp: t.UnixMilli(), CloudWatchMetrics: directives}),
			slog.String("FunctionName", env.Function), slog.Int(name, 1))
		_ = h.Handle(ctx, r)
	}
}
