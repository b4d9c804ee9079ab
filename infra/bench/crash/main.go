// Command crash checks that the local stack loses nothing it acknowledged when it is killed (make
// bench-crash): it starts the stack, registers a webhook to a receiver on loopback, sends writes from
// several goroutines (notes; videos, each emitting video.committed; asynchronous title generations, each a
// job emitting titles.generated) and records every one answered 2xx, kills the stack with SIGKILL at random
// moments and starts it again on the same data folder, then checks that every acknowledged write reads
// back, that no generation is left pending, and that every event of an acknowledged write reached the
// receiver. It prints the figures and fails when anything is lost.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	var c config
	flag.StringVar(&c.stack, "stack", "", "the local stack's binary (go build -o … ./functions/local)")
	flag.StringVar(&c.data, "data", "", "a fresh data folder for the stack")
	flag.IntVar(&c.port, "port", 0, "the stack's loopback port")
	flag.StringVar(&c.receiver, "receiver", "127.0.0.1:0", "the webhook receiver's loopback address")
	flag.IntVar(&c.writers, "writers", 8, "goroutines sending writes")
	flag.IntVar(&c.kills, "kills", 3, "how many times to kill the stack")
	flag.DurationVar(&c.minLife, "min-life", 5*time.Second, "shortest time the stack serves before a kill")
	flag.DurationVar(&c.maxLife, "max-life", 20*time.Second, "longest time the stack serves before a kill")
	flag.DurationVar(&c.settle, "settle", 90*time.Second, "how long, after the last start, pending jobs and events may take")
	flag.Uint64Var(&c.seed, "seed", uint64(time.Now().UnixNano()), "seed of the kill moments")
	tiny := flag.Bool("tiny", false, "a smoke run: 2 writers, lives of 0.5-1.5 s")
	flag.Parse()
	if *tiny {
		c.writers, c.minLife, c.maxLife = 2, 500*time.Millisecond, 1500*time.Millisecond
	}
	if c.stack == "" || c.data == "" || c.port == 0 {
		fmt.Fprintln(os.Stderr, "crash: -stack, -data and -port are required")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		os.Exit(1)
	}
}

type config struct {
	stack, data, receiver string
	port, writers, kills  int
	minLife, maxLife      time.Duration
	settle                time.Duration
	seed                  uint64
}

// The writers spread over channels (a channel holds at most 500 notes, decision 9), one development key
// each, as many as an account's live keys (5).
const channels = 5

// keyOf is the key of writer w's channel.
func keyOf(w int) string { return fmt.Sprintf("sk-css-%032x", w%channels+1) }

// maxNotes is what the writers leave under a channel's cap: they send videos instead past it.
const maxNotes = 490

// acked holds what the stack acknowledged; sent counts every attempt.
type acked struct {
	mu          sync.Mutex
	notes       map[int][]string // by channel (w%channels): contents (a note's id is not needed to find it)
	videos      []write
	generations []write
	sent        atomic.Int64
	refused     atomic.Int64 // answered, not 2xx
	lost        atomic.Int64 // no answer: the stack was killed or down
}

// write is an acknowledged write's id and its writer.
type write struct {
	id string
	w  int
}

func run(c config) error {
	events := map[string]bool{} // "video.committed/<id>", "titles.generated/<generationId>"
	var evMu sync.Mutex
	deliveries := 0
	ln, err := net.Listen("tcp", c.receiver)
	if err != nil {
		return err
	}
	recv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			Type string `json:"type"`
			Data struct {
				ID           string `json:"id"`
				GenerationID string `json:"generationId"`
			} `json:"data"`
		}
		if err := json.NewDecoder(r.Body).Decode(&env); err == nil {
			evMu.Lock()
			events[env.Type+"/"+env.Data.ID+env.Data.GenerationID] = true
			deliveries++
			evMu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go recv.Serve(ln)
	defer recv.Close()

	base := fmt.Sprintf("http://127.0.0.1:%d", c.port)
	cl := &client{base: base, http: &http.Client{Timeout: 30 * time.Second}}
	stack, err := start(c, base)
	if err != nil {
		return err
	}
	defer func() {
		if stack != nil {
			stack.kill()
		}
	}()

	for w := range min(c.writers, channels) {
		status, body, err := cl.do(w, "POST", "/api/webhooks", fmt.Sprintf(`{"url":"http://%s/hook","events":["video.committed","titles.generated"]}`, ln.Addr()), nil)
		if err != nil || status != http.StatusCreated {
			return fmt.Errorf("register the webhook: %d %s %v", status, body, err)
		}
	}

	a := acked{notes: map[int][]string{}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for w := range c.writers {
		wg.Go(func() { send(ctx, cl, w, &a) })
	}
	rng := rand.New(rand.NewPCG(c.seed, 0))
	for k := range c.kills {
		life := c.minLife + time.Duration(rng.Int64N(int64(c.maxLife-c.minLife)+1))
		time.Sleep(life)
		stack.kill()
		fmt.Printf("kill %d after %s: %d writes acknowledged so far\n", k+1, life.Round(time.Millisecond), a.count())
		if stack, err = start(c, base); err != nil {
			return err
		}
	}
	time.Sleep(c.minLife)
	stop()
	wg.Wait()

	// Every acknowledged write reads back.
	missingNotes, missingVideos := 0, 0
	notesAcked := 0
	for w, contents := range a.notes {
		var notes struct {
			Notes []struct{ Content string } `json:"notes"`
		}
		if err := cl.get(w, "/api/v1/notes", &notes); err != nil {
			return err
		}
		have := map[string]bool{}
		for _, n := range notes.Notes {
			have[n.Content] = true
		}
		for _, n := range contents {
			notesAcked++
			if !have[n] {
				missingNotes++
			}
		}
	}
	videos := map[string]bool{}
	for w := range min(c.writers, channels) {
		var list struct {
			Videos []struct{ ID string } `json:"videos"`
		}
		if err := cl.get(w, "/api/v1/my-videos", &list); err != nil {
			return err
		}
		for _, v := range list.Videos {
			videos[v.ID] = true
		}
	}
	for _, v := range a.videos {
		if !videos[v.id] {
			missingVideos++
		}
	}

	// No generation stays pending, and every event of an acknowledged write arrives, within settle.
	deadline := time.Now().Add(c.settle)
	var pending, failed, succeeded int
	var undelivered []string
	for {
		pending, failed, succeeded = 0, 0, 0
		var want []string
		for _, v := range a.videos {
			want = append(want, "video.committed/"+v.id)
		}
		for _, g := range a.generations {
			id := g.id
			var run struct{ Status string }
			if err := cl.get(g.w, "/api/v1/generations/"+id, &run); err != nil {
				pending++ // unreadable counts as stuck until it reads
				continue
			}
			switch run.Status {
			case "success":
				succeeded++
				want = append(want, "titles.generated/"+id)
			case "failed":
				failed++
			default:
				pending++
			}
		}
		evMu.Lock()
		undelivered = undelivered[:0]
		for _, e := range want {
			if !events[e] {
				undelivered = append(undelivered, e)
			}
		}
		evMu.Unlock()
		if pending == 0 && len(undelivered) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	evMu.Lock()
	expected := len(a.videos) + succeeded
	fmt.Printf("seed %d, %d writers, %d kills\n", c.seed, c.writers, c.kills)
	fmt.Printf("writes sent %d: acknowledged %d (notes %d, videos %d, generations %d), refused %d, unanswered %d\n",
		a.sent.Load(), a.count(), notesAcked, len(a.videos), len(a.generations), a.refused.Load(), a.lost.Load())
	fmt.Printf("lost: notes %d, videos %d; generations: %d success, %d failed, %d stuck\n", missingNotes, missingVideos, succeeded, failed, pending)
	fmt.Printf("events expected %d, delivered %d (%d deliveries received, duplicates included), not delivered %d\n",
		expected, expected-len(undelivered), deliveries, len(undelivered))
	evMu.Unlock()
	if missingNotes+missingVideos+pending+len(undelivered) > 0 {
		return fmt.Errorf("lost %d notes and %d videos, %d generations stuck, %d events not delivered (first: %v)",
			missingNotes, missingVideos, pending, len(undelivered), undelivered[:min(3, len(undelivered))])
	}
	if a.count() == 0 {
		return errors.New("no write was acknowledged")
	}
	return nil
}

func (a *acked) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.videos) + len(a.generations)
	for _, notes := range a.notes {
		n += len(notes)
	}
	return n
}

// send sends notes, videos and (one in ten) asynchronous title generations until ctx ends, recording
// each acknowledged one.
func send(ctx context.Context, cl *client, w int, a *acked) {
	for i := 0; ctx.Err() == nil; i++ {
		a.sent.Add(1)
		var (
			status int
			body   []byte
			err    error
			text   = fmt.Sprintf("crash w%d i%d", w, i)
			kind   = "video"
		)
		a.mu.Lock()
		switch {
		case i%10 == 9:
			kind = "generation"
		case i%2 == 0 && len(a.notes[w%channels]) < maxNotes:
			kind = "note"
		}
		a.mu.Unlock()
		switch kind {
		case "generation":
			status, body, err = cl.do(w, "POST", "/api/v1/generate/titles", fmt.Sprintf(`{"title":%q,"type":"listicle"}`, text),
				http.Header{"Prefer": {"respond-async"}})
		case "note":
			status, body, err = cl.do(w, "POST", "/api/v1/notes", fmt.Sprintf(`{"category":"general","content":%q}`, text), nil)
		default:
			status, body, err = cl.do(w, "POST", "/api/v1/my-videos", fmt.Sprintf(`{"title":%q,"contentType":"Long","formulaType":"listicle"}`, text), nil)
		}
		var v struct{ ID, GenerationID string }
		switch {
		case err != nil:
			a.lost.Add(1)
			time.Sleep(50 * time.Millisecond) // the stack is down: do not spin until it is back
			continue
		case status < 200 || status > 299 || json.Unmarshal(body, &v) != nil:
			a.refused.Add(1)
			continue
		}
		a.mu.Lock()
		switch kind {
		case "generation":
			a.generations = append(a.generations, write{v.GenerationID, w})
		case "note":
			a.notes[w%channels] = append(a.notes[w%channels], text)
		default:
			a.videos = append(a.videos, write{v.ID, w})
		}
		a.mu.Unlock()
	}
}

// process is a running stack; done is closed once it has exited.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// start runs the stack on c's data folder and port and waits until it answers.
func start(c config, base string) (*process, error) {
	cmd := exec.Command(c.stack)
	keys := make([]string, min(c.writers, channels))
	for w := range keys {
		keys[w] = keyOf(w)
	}
	cmd.Env = append(os.Environ(), "CSS_DATA_DIR="+c.data, fmt.Sprintf("PORT=%d", c.port), "CSS_DEV_API_KEYS="+strings.Join(keys, ","),
		"CSS_RATE_OTHER_PER_MIN=100000000", "CSS_RATE_GENERATION_PER_MIN=100000000", "CSS_MONTHLY_GENERATIONS=100000000",
		"CSS_MAX_VIDEOS=100000000", "CSS_LOG_LEVEL=warn")
	log, err := os.OpenFile(c.data+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	for range 600 {
		select {
		case <-p.done:
			return nil, fmt.Errorf("the stack exited at start (log: %s.log)", c.data)
		default:
		}
		if resp, err := http.Get(base + "/api/v1/health"); err == nil {
			resp.Body.Close()
			return p, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.kill()
	return nil, fmt.Errorf("the stack did not answer within 60 s (log: %s.log)", c.data)
}

type client struct {
	base string
	http *http.Client
}

func (c *client) do(w int, method, path, body string, h http.Header) (int, []byte, error) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	maps.Copy(req.Header, h)
	req.Header.Set("Authorization", "Bearer "+keyOf(w))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (c *client) get(w int, path string, v any) error {
	status, body, err := c.do(w, "GET", path, "", nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, status, body)
	}
	return json.Unmarshal(body, v)
}
