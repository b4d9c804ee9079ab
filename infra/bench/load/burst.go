package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// burstCmd sends -requests GETs to -url, the keys of -keys in turn, -concurrency in flight, and checks what
// a burst from many keys must leave true (issue 21): every answer is 2xx or 429 RATE_LIMIT, and no key got
// more 2xx in one rate-limit window than -limit. It prints p50/p99 and, per window, the most 2xx one key
// got.
//
//	load burst -url http://127.0.0.1:PORT/api/v1/notes -keys keys.txt -requests 10000 -concurrency 32 -limit 150
func burstCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("burst", flag.ContinueOnError)
	target := fs.String("url", "", "the URL to GET (loopback only)")
	keysPath := fs.String("keys", "", "file of API keys, one a line")
	requests := fs.Int("requests", 10000, "requests in all")
	conc := fs.Int("concurrency", 32, "requests in flight")
	limit := fs.Int("limit", 0, "the calls a key may make per window (CSS_RATE_OTHER_PER_MIN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := checkLoopbackURL(*target); err != nil {
		return err
	}
	keys, err := readKeys(*keysPath)
	if err != nil {
		return err
	}
	if *requests < 1 || *conc < 1 || *limit < 1 {
		return errors.New("burst: -requests, -concurrency and -limit must be at least 1")
	}
	b := newBurst(keys)
	client := newClient(*conc)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= *requests || ctx.Err() != nil {
					return
				}
				b.record(i%len(keys), get(ctx, client, *target, keys[i%len(keys)]))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	failures := b.report(out, *limit, elapsed)
	for _, f := range failures {
		fmt.Fprintln(out, "FAIL", f)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d check(s) failed", len(failures))
	}
	return nil
}

func readKeys(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var keys []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k := strings.TrimSpace(sc.Text()); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("burst: no keys in %s", path)
	}
	return keys, sc.Err()
}

// answer is one response: its status, latency, and the end of the rate-limit window it was counted in.
type answer struct {
	status    int
	latency   time.Duration
	windowEnd time.Time
	err       error
}

func get(ctx context.Context, client *http.Client, url, key string) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	t0 := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	got := time.Now()
	a := answer{status: res.StatusCode, latency: got.Sub(t0)}
	// X-RateLimit-Reset (Retry-After on a 429) is the whole seconds to the window's end, rounded up, as the
	// server saw it: the window is the minute that ends at or just before then.
	reset := cmp.Or(res.Header.Get("X-RateLimit-Reset"), res.Header.Get("Retry-After"))
	if s, err := strconv.Atoi(reset); err == nil {
		a.windowEnd = got.Add(time.Duration(s) * time.Second).Truncate(time.Minute)
	}
	return a
}

// burst tallies answers per key and window.
type burst struct {
	keys      int
	mu        sync.Mutex
	latencies []time.Duration
	statuses  map[int]int
	errs      []string
	// ok counts 2xx by key and window end.
	ok map[int]map[time.Time]int
}

func newBurst(keys []string) *burst {
	return &burst{keys: len(keys), statuses: map[int]int{}, ok: map[int]map[time.Time]int{}}
}

func (b *burst) record(key int, a answer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.err != nil {
		b.errs = append(b.errs, a.err.Error())
		return
	}
	b.latencies = append(b.latencies, a.latency)
	b.statuses[a.status]++
	if a.status >= 200 && a.status < 300 {
		if b.ok[key] == nil {
			b.ok[key] = map[time.Time]int{}
		}
		b.ok[key][a.windowEnd]++
	}
}

// report prints the figures and returns the checks that failed.
func (b *burst) report(out io.Writer, limit int, elapsed time.Duration) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	slices.Sort(b.latencies)
	n := len(b.latencies) + len(b.errs)
	fmt.Fprintf(out, "%d requests from %d keys in %.1f s (%.0f/s): p50 %s, p99 %s, max %s\n", n, b.keys,
		elapsed.Seconds(), float64(n)/elapsed.Seconds(), ms(percentile(b.latencies, 0.5)),
		ms(percentile(b.latencies, 0.99)), ms(percentile(b.latencies, 1)))
	var failures []string
	for _, c := range slices.Sorted(maps.Keys(b.statuses)) {
		fmt.Fprintf(out, "  %d: %d\n", c, b.statuses[c])
		if (c < 200 || c >= 300) && c != http.StatusTooManyRequests {
			failures = append(failures, fmt.Sprintf("%d answers with status %d", b.statuses[c], c))
		}
	}
	if len(b.errs) > 0 {
		failures = append(failures, fmt.Sprintf("%d requests failed (first: %s)", len(b.errs), b.errs[0]))
	}
	most := map[time.Time]int{}
	for key, windows := range b.ok {
		for end, count := range windows {
			most[end] = max(most[end], count)
			if end.IsZero() {
				failures = append(failures, fmt.Sprintf("key %d: a 2xx without X-RateLimit-Reset", key))
			} else if count > limit {
				failures = append(failures, fmt.Sprintf("key %d: %d 2xx in the window ending %s; the limit is %d", key, count, end.Format(time.TimeOnly), limit))
			}
		}
	}
	for _, end := range slices.SortedFunc(maps.Keys(most), time.Time.Compare) {
		fmt.Fprintf(out, "  window ending %s: at most %d 2xx for one key (limit %d)\n", end.Format(time.TimeOnly), most[end], limit)
	}
	return failures
}
