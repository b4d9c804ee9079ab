// Command coldstart measures Lambda cold starts on this machine. It plays the Lambda Runtime API on
// loopback, starts each function binary N times with a Lambda-like environment, and times each run from
// exec to the first response (or error) the process posts, then kills it. It prints p50, p90 and min per
// binary and each p50 as a multiple of the baseline's (the hello-world function).
//
//	coldstart [-n 20] [-baseline hello] [-dynamodb http://127.0.0.1:PORT] [-guard hellotable2=1.5 [-allow mcp=1.6]] name=path[:eventfile] ...
//
// A name may carry a label after "@" (videos@base=old/videos): it is timed as the function before the "@",
// so two builds of one function compare side by side in one run.
//
// Without an event file a binary receives an HTTP API request for the OpenAPI document without
// credentials: the utility function answers it from memory and the other groups refuse it before any
// store access, so no run needs the network. The request carries the Accept-Encoding real clients send
// (browsers, Go's net/http, curl --compressed and Python's requests all accept gzip), lowercased as API
// Gateway delivers headers, so the utility function answers with the gzip-compressed document as it does
// in production; give an event file without accept-encoding to time the uncompressed answer.
// CSS_DYNAMODB_ENDPOINT and CSS_JWKS_URL point at a loopback port that closes every connection, so a
// function that does reach out fails at once instead of leaving the machine.
//
// With -dynamodb (a DynamoDB Local), each function of the service is also timed on an authenticated request
// that reads a seeded table (table.go), as a row of its own named <name>+table. The functions reach the
// table through a meter: each such row also gives the p50 of the time the run waited for the emulator,
// the p50 of each run's time without that wait as a multiple of the baseline's p50 (the function's own
// cost, which the emulator's JVM on this machine does not decide), and the table calls the runs made.
// The identity provider the keys function fetches its key set from (over TLS) is metered too, at the TCP
// level (connmeter.go), and its wait counts with the table's.
//
// -guard ref=ratio is the cold-start regression guard (guard.go): the harness fails, naming them, when
// functions' table rows take more than ratio times ref's p50, both without their waits; -allow fn=ratio
// gives one function its own limit. Below -guard-min-n runs per binary it is not judged (a smoke).
//
// Each process gets a Runtime API of its own on a fresh loopback port, as each Lambda execution
// environment has.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/testkit/lambdatest"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("coldstart", flag.ContinueOnError)
	n := fs.Int("n", 20, "timed runs per binary")
	warmup := fs.Int("warmup", 1, "untimed runs per binary first (page cache)")
	baseline := fs.String("baseline", "hello", "name of the binary the others are compared with")
	timeout := fs.Duration("timeout", 10*time.Second, "longest wait for one run's first answer")
	dynamodbEndpoint := fs.String("dynamodb", "", "a DynamoDB Local endpoint: also time an authenticated request that reads the table")
	dynamodbTLS := fs.Bool("dynamodb-tls", false, "with -dynamodb: the functions reach the table over TLS, trusting the machine's certificate folders as a Lambda image's (see setupTable)")
	warmTable := fs.Int("warm-table", defaultEmulatorWarmup, "rounds of table calls that warm the emulator's JVM before timing (with -dynamodb)")
	var extra envList
	fs.Var(&extra, "env", "extra KEY=VALUE for every process (repeatable)")
	var g guard
	fs.Var(guardFlag{&g}, "guard", "ref=ratio: fail when a function's table row, without its waits, takes more than ratio times ref's p50 (ref a table baseline, e.g. hellotable2=1.5)")
	fs.Var(allowFlag{&g}, "allow", "function=ratio: that function's limit instead of -guard's (repeatable)")
	guardMinN := fs.Int("guard-min-n", 10, "judge the guard only from this many runs per binary (fewer are noise: a smoke)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *warmup < 0 || *warmTable < 0 {
		return errors.New("-n must be at least 1, -warmup and -warm-table not negative")
	}
	if fs.NArg() == 0 {
		return errors.New("no binaries: give name=path[:eventfile] arguments")
	}
	var targets []target
	for _, a := range fs.Args() {
		t, err := parseTarget(a)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	if *dynamodbEndpoint != "" {
		setup, err := setupTable(ctx, *dynamodbEndpoint, *warmTable, *dynamodbTLS)
		if err != nil {
			return err
		}
		defer setup.close()
		for i, t := range targets {
			if isTableBaseline(t.name) {
				targets[i].env, targets[i].meter, targets[i].wantStatus = setup.env, setup.meter, 200
			} else if tt, ok := setup.tableTarget(t); ok {
				targets = append(targets, tt)
			}
		}
	}
	if err := g.validate(targets, *dynamodbEndpoint != ""); err != nil {
		return err
	}

	h, err := startHarness(*timeout, extra)
	if err != nil {
		return err
	}
	defer h.close()

	samples := make([][]sample, len(targets))
	// Round-robin over the binaries so that noise on the machine spreads over all of them alike.
	for round := -*warmup; round < *n; round++ {
		for i, t := range targets {
			s := h.once(ctx, t)
			if round >= 0 {
				samples[i] = append(samples[i], s)
			}
		}
	}
	rows := make([]row, len(targets))
	for i, t := range targets {
		rows[i] = summarize(t.name, samples[i], t.meter != nil)
	}
	printTable(out, rows, *baseline)
	for i, r := range rows {
		if r.failed > 0 {
			return fmt.Errorf("%s: %d of %d runs gave no answer (first: %v)", r.name, r.failed, r.runs, r.firstFailure)
		}
		if want := targets[i].wantStatus; want != 0 {
			for _, s := range samples[i] {
				if s.status != want {
					return fmt.Errorf("%s: answered %d, want %d: the run did not time what it says", r.name, s.status, want)
				}
			}
		}
	}
	switch {
	case g.ref == "":
	case *n < *guardMinN:
		fmt.Fprintf(out, "\nguard: not judged at -n %d (below -guard-min-n %d, the ratios are noise)\n", *n, *guardMinN)
	default:
		return g.check(out, rows)
	}
	return nil
}

// target is one binary to measure.
type target struct {
	name  string
	path  string
	event []byte
	// env is added to the environment of its processes (after -env).
	env []string
	// wantStatus, when set, is the statusCode every run must answer.
	wantStatus int
	// meter, when set, measures how long each run waits for the table.
	meter *tableMeter
}

// parseTarget reads name=path[:eventfile].
func parseTarget(s string) (target, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return target{}, fmt.Errorf("%q: want name=path[:eventfile]", s)
	}
	path, eventFile, _ := strings.Cut(rest, ":")
	if path == "" {
		return target{}, fmt.Errorf("%q: empty path", s)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return target{}, fmt.Errorf("%q: %w", s, err)
	}
	event := defaultEvent
	if eventFile != "" {
		if event, err = os.ReadFile(eventFile); err != nil {
			return target{}, fmt.Errorf("%q: %w", s, err)
		}
		if !json.Valid(event) {
			return target{}, fmt.Errorf("%q: %s is not JSON", s, eventFile)
		}
	}
	return target{name: name, path: abs, event: event}, nil
}

// defaultEvent is GET /api/v1/openapi.json as API Gateway's HTTP API (payload 2.0) delivers it.
var defaultEvent = func() []byte {
	b, err := json.Marshal(apiEvent("GET /api/v1/openapi.json", "/api/v1/openapi.json", "", ""))
	if err != nil {
		panic(err) // a fixed value that always marshals
	}
	return b
}()

type envList []string

func (e *envList) String() string { return strings.Join(*e, ",") }

func (e *envList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q: want KEY=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}

// harness owns the dead endpoint; each run gets a Runtime API of its own (lambdatest.Serve).
type harness struct {
	dead    net.Listener
	wg      sync.WaitGroup
	timeout time.Duration
	extra   []string
}

func startHarness(timeout time.Duration, extra []string) (*harness, error) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("dead endpoint listener: %w", err)
	}
	h := &harness{dead: dead, timeout: timeout, extra: extra}
	h.wg.Go(func() {
		for {
			c, err := dead.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	})
	return h, nil
}

func (h *harness) close() {
	h.dead.Close()
	h.wg.Wait()
}

// sample is one run.
type sample struct {
	took   time.Duration // exec to the first answer; zero when there was none
	init   time.Duration // of took, exec to the process asking for its event (Lambda's init phase)
	waited time.Duration // of took, the time spent waiting for the table (metered targets)
	// of took, metered targets: from receiving the event to the first table call, the time between table
	// calls (none waiting), and from the last call's answer to the function's answer
	beforeFirst, between, afterLast time.Duration
	calls                           []string        // the table operations the run called (metered targets)
	answer                          lambdatest.Kind // empty when the process exited or timed out first
	status                          int             // the API Gateway response's statusCode, when the answer carries one
	err                             error           // why there was no answer
}

// once starts t's binary, waits for its first answer, and kills it.
func (h *harness) once(ctx context.Context, t target) sample {
	inv := lambdatest.NewInvocation(uuid.NewString(), t.event,
		"arn:aws:lambda:us-east-1:123456789012:function:css-bench-"+t.name, 29*time.Second)
	api := lambdatest.NewRuntimeAPI()
	api.Arm(inv)
	apiAddr, stopAPI, err := lambdatest.Serve(api)
	if err != nil {
		return sample{err: err}
	}
	defer stopAPI()

	var stderr lambdatest.TailBuffer
	cmd := exec.Command(t.path)
	cmd.Env = append(append(lambdaEnv(t.name, apiAddr, filepath.Dir(t.path), h.dead.Addr().String()), h.extra...), t.env...)
	cmd.Dir = filepath.Dir(t.path)
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr

	if t.meter != nil {
		t.meter.reset()
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{err: fmt.Errorf("start: %w", err)}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}

	timer := time.NewTimer(h.timeout)
	defer timer.Stop()
	select {
	case o := <-inv.Done():
		stop()
		s := sample{took: o.At.Sub(start), answer: o.Kind, status: statusOf(o.Body)}
		if !o.DeliveredAt.IsZero() {
			s.init = o.DeliveredAt.Sub(start)
		}
		if t.meter != nil {
			var calls []tableCall
			s.waited, s.calls, calls = t.meter.read()
			s.beforeFirst, s.between, s.afterLast = phasesAround(o.DeliveredAt, calls, o.At)
		}
		return s
	case err := <-exited:
		return sample{err: fmt.Errorf("exited before answering (%v): %s", err, stderr.String())}
	case <-timer.C:
		stop()
		return sample{err: fmt.Errorf("no answer within %s: %s", h.timeout, stderr.String())}
	case <-ctx.Done():
		stop()
		return sample{err: ctx.Err()}
	}
}

// lambdaEnv is the environment Lambda gives a provided.al2023 function (lambdatest.LambdaEnv), plus the
// service's own variables as template.yaml sets them.
func lambdaEnv(name, runtimeAPI, taskRoot, dead string) []string {
	return append(lambdatest.LambdaEnv("css-bench-"+name, runtimeAPI, taskRoot),
		"CSS_MODE=production",
		"CSS_TABLE_NAME=css-bench",
		"CSS_DYNAMODB_ENDPOINT=http://"+dead,
		// The functions that run generations need their queue, and the one that starts research its own
		// (never reached on these requests).
		"CSS_GENERATION_QUEUE_URL=http://"+dead+"/000000000000/css-bench-generation",
		"CSS_RESEARCH_QUEUE_URL=http://"+dead+"/000000000000/css-bench-research",
		"CSS_JWKS_URL=https://"+dead+"/.well-known/jwks.json",
		"CSS_JWT_ISSUER=https://accounts.example.test",
		"CSS_JWT_AUDIENCE=css",
		"CSS_JWKS_MAX_STALE=24h",
		"CSS_JWT_LEEWAY=30s",
		// The sign-in's issuer, as template.yaml gives it: a function that signs in /mcp refuses to start
		// without one, on any event.
		"CSS_PUBLIC_URL=https://api.example.com",
		"CSS_RATE_GENERATION_PER_MIN=60",
		"CSS_RATE_OTHER_PER_MIN=600",
		"CSS_MONTHLY_GENERATIONS=2000",
		"CSS_LOG_LEVEL=info",
	)
}

// statusOf reads statusCode from an API Gateway proxy response; 0 for anything else.
func statusOf(body []byte) int {
	var r struct {
		StatusCode int `json:"statusCode"`
	}
	if json.Unmarshal(body, &r) != nil {
		return 0
	}
	return r.StatusCode
}

// row is one binary's line of the table.
type row struct {
	name          string
	runs, failed  int
	errors        int // runs answered with an error or init error
	min, p50, p90 time.Duration
	answer        string // what the first answered run said, e.g. "response 200"
	firstFailure  error
	// metered rows: p50 of the time waiting for the table, and of each run's time without it; the table
	// operations of the first answered run, and the fewest and most calls of any run
	metered            bool
	waitP50, ownP50    time.Duration
	calls              []string
	minCalls, maxCalls int
	// p50 of each phase of a run: init (exec to asking for the event) and, metered, around the table calls
	initP50                                  time.Duration
	beforeFirstP50, betweenP50, afterLastP50 time.Duration
}

func summarize(name string, samples []sample, metered bool) row {
	r := row{name: name, runs: len(samples), metered: metered}
	var took, waited, own, inits, before, between, after []time.Duration
	for _, s := range samples {
		if s.answer == "" {
			r.failed++
			r.firstFailure = cmp.Or(r.firstFailure, s.err)
			continue
		}
		if s.answer != lambdatest.KindResponse {
			r.errors++
		}
		if r.answer == "" {
			r.answer = string(s.answer)
			if s.status != 0 {
				r.answer += fmt.Sprintf(" %d", s.status)
			}
			r.calls, r.minCalls, r.maxCalls = s.calls, len(s.calls), len(s.calls)
		}
		r.minCalls, r.maxCalls = min(r.minCalls, len(s.calls)), max(r.maxCalls, len(s.calls))
		took = append(took, s.took)
		waited = append(waited, s.waited)
		own = append(own, s.took-s.waited)
		inits, before = append(inits, s.init), append(before, s.beforeFirst)
		between, after = append(between, s.between), append(after, s.afterLast)
	}
	for _, d := range [][]time.Duration{took, waited, own, inits, before, between, after} {
		slices.Sort(d)
	}
	if len(took) > 0 {
		r.min, r.p50, r.p90 = took[0], percentile(took, 0.50), percentile(took, 0.90)
		r.waitP50, r.ownP50 = percentile(waited, 0.50), percentile(own, 0.50)
		r.initP50 = percentile(inits, 0.50)
		r.beforeFirstP50, r.betweenP50, r.afterLastP50 = percentile(before, 0.50), percentile(between, 0.50), percentile(after, 0.50)
	}
	return r
}

// percentile is the nearest-rank percentile of sorted (not empty), p in (0, 1].
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func printTable(out io.Writer, rows []row, baseline string) {
	var base time.Duration
	for _, r := range rows {
		if r.name == baseline {
			base = r.p50
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "function\truns\tno answer\terrors\tmin\tp50\tp90\tp50 / %s\ttable wait p50\tp50 without it / %s\tfirst answer\ttable calls\n", baseline, baseline)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	ratioOf := func(d time.Duration) string {
		if base > 0 && d > 0 {
			return fmt.Sprintf("%.2fx", float64(d)/float64(base))
		}
		return "-"
	}
	for _, r := range rows {
		wait, own, calls := "-", "-", "-"
		if r.metered {
			wait, own = ms(r.waitP50), ratioOf(r.ownP50)
			calls = fmt.Sprint(r.minCalls)
			if r.maxCalls != r.minCalls {
				calls += fmt.Sprintf("-%d", r.maxCalls)
			}
			if len(r.calls) > 0 {
				calls += " (" + strings.Join(r.calls, " ") + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.name, r.runs, r.failed, r.errors, ms(r.min), ms(r.p50), ms(r.p90), ratioOf(r.p50), wait, own, r.answer, calls)
	}
	tw.Flush()

	// Where a run's time goes, so a change can be aimed at the phase that costs.
	fmt.Fprintln(out, "\nphases (p50): init is exec to asking for the event; the others split the handling of a metered run around its table calls")
	fmt.Fprintf(tw, "function\tinit\thandling\tbefore first call\ttable wait\tbetween calls\tafter last call\n")
	for _, r := range rows {
		before, wait, between, after := "-", "-", "-", "-"
		if r.metered {
			before, wait, between, after = ms(r.beforeFirstP50), ms(r.waitP50), ms(r.betweenP50), ms(r.afterLastP50)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.name, ms(r.initP50), ms(r.p50-r.initP50), before, wait, between, after)
	}
	tw.Flush()
}
