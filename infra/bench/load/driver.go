package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// plan is the targets file.
type plan struct {
	Targets []*target `json:"targets"`
}

// target is one kind of request the driver repeats.
type target struct {
	Name    string            `json:"name"`
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	// Status is the answer that counts as a success; 0 means any 2xx.
	Status int `json:"status"`
	// Baseline names the target this one's requests/s are compared with.
	Baseline string `json:"baseline"`
	// Keys, when set, are sent in turn as "Authorization: Bearer <key>", each at most PerKey times between
	// resets: how a load that creates records stays under a per-channel limit (500 notes per channel).
	Keys   []string `json:"keys"`
	PerKey int      `json:"perKey"`
	// Reset, when set, runs after each round (not measured) and gives every key its budget back.
	Reset *reset `json:"reset"`

	used int // requests sent against the key budget since the last reset
}

// reset deletes what a round created: for each key, GET List, read the array under Field, and DELETE
// Delete with {id} replaced by each element's id.
type reset struct {
	List   string `json:"list"`
	Field  string `json:"field"`
	Delete string `json:"delete"`
}

func readPlan(path string) (*plan, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p plan
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// bounds say how much each target runs per round.
type bounds struct {
	requests int           // per round; 0 when duration bounds it
	duration time.Duration // per round; 0 when requests bounds it
	warmup   int           // unmeasured requests before the first round
	rounds   int
	conc     int
}

func (p *plan) validate(b bounds) error {
	if len(p.Targets) == 0 {
		return errors.New("no targets")
	}
	if (b.requests > 0) == (b.duration > 0) {
		return errors.New("bound each round by -requests or by -duration, one of them")
	}
	if b.rounds < 1 || b.conc < 1 || b.warmup < 0 {
		return errors.New("-rounds and -concurrency must be at least 1, -warmup not negative")
	}
	names := map[string]bool{}
	for _, t := range p.Targets {
		if t.Name == "" || names[t.Name] {
			return fmt.Errorf("target %q: names must be present and unique", t.Name)
		}
		names[t.Name] = true
		t.Method = cmp.Or(t.Method, http.MethodGet)
		if _, err := checkLoopbackURL(t.URL); err != nil {
			return fmt.Errorf("target %q: %w", t.Name, err)
		}
		if t.Reset != nil {
			for _, u := range []string{t.Reset.List, strings.ReplaceAll(t.Reset.Delete, "{id}", "x")} {
				if _, err := checkLoopbackURL(u); err != nil {
					return fmt.Errorf("target %q reset: %w", t.Name, err)
				}
			}
			if t.Reset.Field == "" || !strings.Contains(t.Reset.Delete, "{id}") || len(t.Keys) == 0 {
				return fmt.Errorf("target %q reset: needs keys, field and a delete URL with {id}", t.Name)
			}
		}
		if len(t.Keys) > 0 && t.PerKey < 1 {
			return fmt.Errorf("target %q: keys need perKey", t.Name)
		}
		if len(t.Keys) > 0 && b.requests > 0 {
			need := b.warmup + b.requests
			if t.Reset == nil {
				need = b.warmup + b.rounds*b.requests
			}
			if budget := len(t.Keys) * t.PerKey; need > budget {
				return fmt.Errorf("target %q: %d requests between resets exceed the key budget %d (%d keys x %d)",
					t.Name, need, budget, len(t.Keys), t.PerKey)
			}
		}
	}
	for _, t := range p.Targets {
		if t.Baseline != "" && !names[t.Baseline] {
			return fmt.Errorf("target %q: baseline %q is not a target", t.Name, t.Baseline)
		}
	}
	return nil
}

// result is what a target did over all rounds.
type result struct {
	name      string
	baseline  string
	requests  int
	errors    int
	firstErr  string
	elapsed   time.Duration
	latencies []time.Duration
	exhausted bool // a duration-bound round ran out of key budget
}

func (r *result) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

type driver struct {
	client *http.Client
	b      bounds
}

// run runs every round: in each, the targets one after the other, so that the targets compared with each
// other meet the same machine state.
func (d *driver) run(ctx context.Context, p *plan) ([]*result, error) {
	results := make([]*result, len(p.Targets))
	for i, t := range p.Targets {
		results[i] = &result{name: t.Name, baseline: t.Baseline}
		if d.b.warmup > 0 {
			if err := d.round(ctx, t, d.b.warmup, 0, nil); err != nil {
				return nil, err
			}
		}
	}
	for range d.b.rounds {
		for i, t := range p.Targets {
			if err := d.round(ctx, t, d.b.requests, d.b.duration, results[i]); err != nil {
				return nil, err
			}
			if t.Reset != nil {
				if err := d.reset(ctx, t); err != nil {
					return nil, fmt.Errorf("target %q: reset: %w", t.Name, err)
				}
			}
		}
	}
	return results, nil
}

// round sends n requests (or as many as fit in dur) over conc connections, adding them to into (nil for a
// warm-up).
func (d *driver) round(ctx context.Context, t *target, n int, dur time.Duration, into *result) error {
	var (
		next      atomic.Int64
		wg        sync.WaitGroup
		mu        sync.Mutex
		exhausted atomic.Bool
	)
	budget := math.MaxInt
	if len(t.Keys) > 0 {
		budget = len(t.Keys)*t.PerKey - t.used
	}
	start := time.Now()
	deadline := start.Add(dur)
	for range d.b.conc {
		wg.Go(func() {
			var lat []time.Duration
			var errs int
			var firstErr string
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if (n > 0 && i >= n) || (dur > 0 && !time.Now().Before(deadline)) {
					break
				}
				if i >= budget {
					exhausted.Store(true)
					break
				}
				took, err := d.do(ctx, t, t.used+i)
				if err != nil {
					errs++
					firstErr = cmp.Or(firstErr, err.Error())
					continue
				}
				lat = append(lat, took)
			}
			if into == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			into.requests += len(lat) + errs
			into.errors += errs
			into.latencies = append(into.latencies, lat...)
			into.firstErr = cmp.Or(into.firstErr, firstErr)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	// Every index handed out counts against the keys, sent or not, so no key is ever used past PerKey.
	claimed := min(int(next.Load()), budget)
	if n > 0 {
		claimed = min(claimed, n)
	}
	t.used += claimed
	if into != nil {
		into.elapsed += elapsed
		into.exhausted = into.exhausted || (dur > 0 && exhausted.Load())
	}
	return ctx.Err()
}

// do sends the i-th request of t and reads the whole answer; an unexpected status is an error.
func (d *driver) do(ctx context.Context, t *target, i int) (time.Duration, error) {
	var body io.Reader
	if t.Body != "" {
		body = strings.NewReader(t.Body)
	}
	req, err := http.NewRequestWithContext(ctx, t.Method, t.URL, body)
	if err != nil {
		return 0, err
	}
	for k, v := range t.Headers {
		req.Header.Set(k, v)
	}
	if len(t.Keys) > 0 {
		req.Header.Set("Authorization", "Bearer "+t.Keys[i%len(t.Keys)])
	}
	start := time.Now()
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if ok := resp.StatusCode == t.Status || (t.Status == 0 && resp.StatusCode/100 == 2); !ok {
		return 0, fmt.Errorf("%s %s: status %d", t.Method, t.URL, resp.StatusCode)
	}
	return took, nil
}

// reset deletes, for every key, the records the list shows, and gives the keys their budget back.
func (d *driver) reset(ctx context.Context, t *target) error {
	for _, key := range t.Keys {
		var list map[string]json.RawMessage
		if err := d.call(ctx, http.MethodGet, t.Reset.List, key, &list); err != nil {
			return err
		}
		var items []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(list[t.Reset.Field], &items); err != nil {
			return fmt.Errorf("GET %s: field %q: %w", t.Reset.List, t.Reset.Field, err)
		}
		for _, it := range items {
			if it.ID == "" {
				return fmt.Errorf("GET %s: an element of %q has no id", t.Reset.List, t.Reset.Field)
			}
			if err := d.call(ctx, http.MethodDelete, strings.ReplaceAll(t.Reset.Delete, "{id}", it.ID), key, nil); err != nil {
				return err
			}
		}
	}
	t.used = 0
	return nil
}

func (d *driver) call(ctx context.Context, method, url, key string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: status %d: %s", method, url, resp.StatusCode, body)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	return nil
}

// report prints the table and says which checks failed: any error, a key budget that ran out, or a
// target below minRatio of its baseline's requests/s.
func report(out io.Writer, results []*result, minRatio float64) []string {
	byName := map[string]*result{}
	for _, r := range results {
		byName[r.name] = r
	}
	var failures []string
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\trequests\terrors\treq/s\tp50\tp99\tvs baseline")
	for _, r := range results {
		slices.Sort(r.latencies)
		vs := "-"
		if b := byName[r.baseline]; b != nil && b.rps() > 0 {
			ratio := r.rps() / b.rps()
			vs = fmt.Sprintf("%.0f%% of %s", 100*ratio, b.name)
			if ratio < minRatio {
				failures = append(failures, fmt.Sprintf("%s: %.0f%% of %s's requests/s, want at least %.0f%%",
					r.name, 100*ratio, b.name, 100*minRatio))
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\n",
			r.name, r.requests, r.errors, r.rps(), ms(percentile(r.latencies, 0.50)), ms(percentile(r.latencies, 0.99)), vs)
		if r.errors > 0 {
			failures = append(failures, fmt.Sprintf("%s: %d errors, the first: %s", r.name, r.errors, r.firstErr))
		}
		if r.exhausted {
			failures = append(failures, fmt.Sprintf("%s: the keys' budget ran out before the duration did", r.name))
		}
	}
	tw.Flush()
	return failures
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// percentile is the nearest-rank percentile of sorted, p in (0, 1]; 0 for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
