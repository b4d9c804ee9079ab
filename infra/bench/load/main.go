// Command load is a small, bounded HTTP load generator for this machine only: it refuses any target that is
// not on loopback. It reports requests/s, p50, p99 and errors per target, and each target's requests/s as
// a share of its baseline's.
//
//	load run -targets plan.json [-requests 2000 | -duration 10s] [-rounds 3] [-concurrency 32] [-warmup 200] [-min-ratio 0.4]
//	load burst -url URL -keys keys.txt [-requests 10000] [-concurrency 32] -limit N   many keys at once (burst.go)
//	load bare -addr 127.0.0.1:PORT -fixtures fixtures.json [-table DIR]   serve fixed bytes (the baseline) until killed
//	load freeport                                            print a free loopback TCP port
//
// The plan file is {"targets": [...]}, each target {name, method, url, headers, body, status, baseline,
// keys, perKey, reset}; see target. Targets that create records use keys and reset to stay under the
// service's per-channel limits: the keys are sent in turn, each at most perKey times between resets, and
// after each round the reset lists and deletes what the round created (not measured).
//
// run exits 1 when a target saw an error or fell below -min-ratio of its baseline.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/pebble"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: load run|burst|bare|freeport [flags]")
	}
	switch args[0] {
	case "run":
		return runCmd(ctx, args[1:], out)
	case "burst":
		return burstCmd(ctx, args[1:], out)
	case "bare":
		return bareCmd(ctx, args[1:], out)
	case "freeport":
		port, err := freePort()
		if err != nil {
			return err
		}
		fmt.Fprintln(out, port)
		return nil
	}
	return fmt.Errorf("unknown command %q: want run, burst, bare or freeport", args[0])
}

func runCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	planPath := fs.String("targets", "", "plan file (JSON)")
	requests := fs.Int("requests", 0, "requests per target per round")
	duration := fs.Duration("duration", 0, "time per target per round (instead of -requests)")
	rounds := fs.Int("rounds", 1, "rounds; each runs every target once, in order")
	conc := fs.Int("concurrency", 32, "requests in flight per target")
	warmup := fs.Int("warmup", 0, "unmeasured requests per target before the first round")
	minRatio := fs.Float64("min-ratio", 0, "fail when a target's requests/s is below this share of its baseline's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *planPath == "" {
		return errors.New("run: -targets is required")
	}
	p, err := readPlan(*planPath)
	if err != nil {
		return err
	}
	b := bounds{requests: *requests, duration: *duration, warmup: *warmup, rounds: *rounds, conc: *conc}
	if err := p.validate(b); err != nil {
		return err
	}
	d := &driver{client: newClient(b.conc), b: b}
	results, err := d.run(ctx, p)
	if err != nil {
		return err
	}
	if failures := report(out, results, *minRatio); len(failures) > 0 {
		for _, f := range failures {
			fmt.Fprintln(out, "FAIL", f)
		}
		return fmt.Errorf("%d check(s) failed", len(failures))
	}
	return nil
}

func bareCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bare", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	fixtures := fs.String("fixtures", "", "fixtures file (JSON)")
	tableDir := fs.String("table", "", "a folder for an embedded table (Pebble, as the local stack's): fixtures marked write store each request there, durably")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoopbackAddr(*addr); err != nil {
		return err
	}
	var table store.Table
	if *tableDir != "" {
		t, err := pebble.Open(*tableDir)
		if err != nil {
			return err
		}
		defer t.Close()
		table = t
	}
	h, err := bareHandler(*fixtures, table)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(out, "bare handler listening on http://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}
