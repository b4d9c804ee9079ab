// Command events measures how soon an event reaches its receiver on the local stack (make bench-events):
// it registers a receiver on loopback for video.committed, commits videos at a steady rate, and reports
// the time from each event (the envelope's timestamp, taken by the operation) and from each request's
// start to the first delivery attempt's arrival. Every signature is checked with the standard-webhooks
// library. It fails when an event does not arrive or the p99 from the event exceeds -max-p99.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "the local stack")
	key := flag.String("key", os.Getenv("KEY"), "an API key of the stack")
	rate := flag.Int("rate", 100, "events per second")
	duration := flag.Duration("duration", 30*time.Second, "how long to send")
	maxP99 := flag.Duration("max-p99", 100*time.Millisecond, "fail above this p99 (event to first attempt); 0: do not judge it (a smoke)")
	flag.Parse()
	if err := run(*base, *key, *rate, *duration, *maxP99); err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

type arrival struct {
	at, eventAt time.Time
}

func run(base, key string, rate int, duration, maxP99 time.Duration) error {
	var (
		mu       sync.Mutex
		secret   string
		arrived  = map[string]arrival{} // video id -> first arrival
		badSig   int
		requests = map[string]time.Time{} // video id -> request start
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	recv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Timestamp time.Time `json:"timestamp"`
			Data      struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		mu.Lock()
		defer mu.Unlock()
		if wh, err := standardwebhooks.NewWebhook(secret); err != nil || wh.Verify(body, r.Header) != nil {
			badSig++
		}
		if _, ok := arrived[env.Data.ID]; !ok {
			arrived[env.Data.ID] = arrival{at: now, eventAt: env.Timestamp}
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go recv.Serve(ln)
	defer recv.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 10 * time.Second}
	do := func(method, path, body string) (int, []byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	status, body, err := do("POST", "/api/webhooks", fmt.Sprintf(`{"url":"http://%s/hook","events":["video.committed"]}`, ln.Addr()))
	if err != nil || status != 201 {
		return fmt.Errorf("register: %d %s %v", status, body, err)
	}
	var reg struct{ ID, Secret string }
	if err := json.Unmarshal(body, &reg); err != nil {
		return err
	}
	mu.Lock()
	secret = reg.Secret
	mu.Unlock()
	defer do("DELETE", "/api/webhooks/"+reg.ID, "")

	n := int(duration.Seconds() * float64(rate))
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	var failed int
	for i := range n {
		<-tick.C
		wg.Go(func() {
			start := time.Now()
			status, body, err := do("POST", "/api/v1/my-videos", fmt.Sprintf(`{"title":"bench %d","contentType":"Long","formulaType":"f"}`, i))
			var v struct{ ID string }
			if err != nil || status != 200 || json.Unmarshal(body, &v) != nil {
				mu.Lock()
				failed++
				mu.Unlock()
				return
			}
			mu.Lock()
			requests[v.ID] = start
			mu.Unlock()
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		mu.Lock()
		done := len(arrived) >= len(requests)
		mu.Unlock()
		if done || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var fromEvent, fromRequest []time.Duration
	missing := 0
	for id, start := range requests {
		a, ok := arrived[id]
		if !ok {
			missing++
			continue
		}
		fromEvent = append(fromEvent, a.at.Sub(a.eventAt))
		fromRequest = append(fromRequest, a.at.Sub(start))
	}
	fmt.Printf("%d events at %d/s over %s: %d requests failed, %d not delivered, %d bad signatures\n", n, rate, duration, failed, missing, badSig)
	report := func(what string, ds []time.Duration) time.Duration {
		slices.Sort(ds)
		q := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
		fmt.Printf("  %-36s p50 %6.1f ms  p90 %6.1f ms  p99 %6.1f ms  max %6.1f ms\n", what, ms(q(0.5)), ms(q(0.9)), ms(q(0.99)), ms(ds[len(ds)-1]))
		return q(0.99)
	}
	if len(fromEvent) == 0 {
		return fmt.Errorf("no event arrived")
	}
	p99 := report("event to first attempt", fromEvent)
	report("request start to first attempt", fromRequest)
	switch {
	case failed > 0 || missing > 0 || badSig > 0:
		return fmt.Errorf("%d failed requests, %d events not delivered, %d bad signatures", failed, missing, badSig)
	case maxP99 > 0 && p99 > maxP99:
		return fmt.Errorf("p99 %s above %s", p99, maxP99)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
