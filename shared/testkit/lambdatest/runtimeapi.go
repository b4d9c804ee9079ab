// Package lambdatest runs a Lambda function's real binary on this machine: it plays the Lambda Runtime API
// (2018-06-01) on loopback, starts the binary with the environment Lambda gives a provided.al2023 function,
// and hands it events one after the other as Lambda does to one execution environment. The cold-start
// harness (infra/bench/coldstart) times first answers with it; tests that must check what a main wires
// (infra/deploy's grants test) run the mains themselves with it, since a test cannot import a main.
// Test and benchmark support: no function links it.
package lambdatest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RuntimeAPI plays the Lambda Runtime API for one process: GET .../invocation/next hands over the armed
// invocation once, and waits while none is armed (as Lambda holds it between invocations); the first
// response or error posted for the invocation is its outcome. An init error is the outcome of the armed
// invocation, and is kept for the next one armed when none is.
type RuntimeAPI struct {
	mu        sync.Mutex
	current   *Invocation
	armed     chan struct{} // closed and replaced whenever an invocation is armed
	initError *Outcome
}

// NewRuntimeAPI returns a Runtime API with nothing armed.
func NewRuntimeAPI() *RuntimeAPI { return &RuntimeAPI{armed: make(chan struct{})} }

// Invocation is one event on its way to one process.
type Invocation struct {
	ID       string
	Event    []byte
	ARN      string
	Deadline time.Duration // from delivery, as Lambda-Runtime-Deadline-Ms says it

	delivered bool
	// deliveredAt is when the process asked for the event: for the first, the end of its init phase.
	deliveredAt time.Time
	done        chan Outcome // buffered: the first outcome wins, later ones are dropped
}

// NewInvocation is an invocation of event.
func NewInvocation(id string, event []byte, arn string, deadline time.Duration) *Invocation {
	return &Invocation{ID: id, Event: event, ARN: arn, Deadline: deadline, done: make(chan Outcome, 1)}
}

// Done receives the invocation's outcome.
func (inv *Invocation) Done() <-chan Outcome { return inv.done }

// Outcome is how the process answered, and when the Runtime API heard it.
type Outcome struct {
	Kind Kind
	At   time.Time
	Body []byte
	// DeliveredAt is when the process asked for the event (zero when it never did: an init error).
	DeliveredAt time.Time
}

// Kind is what the process posted.
type Kind string

const (
	KindResponse  Kind = "response"
	KindError     Kind = "error"
	KindInitError Kind = "init error"
)

// Arm makes inv the invocation the process receives on its next call to next.
func (a *RuntimeAPI) Arm(inv *Invocation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.current = inv
	if a.initError != nil {
		inv.done <- *a.initError
	}
	close(a.armed)
	a.armed = make(chan struct{})
}

// Handler serves the Runtime API's routes.
func (a *RuntimeAPI) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", a.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", a.finisher(KindResponse))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", a.finisher(KindError))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", a.finisher(KindInitError))
	return mux
}

func (a *RuntimeAPI) next(w http.ResponseWriter, r *http.Request) {
	for {
		a.mu.Lock()
		inv, armed := a.current, a.armed
		fresh := inv != nil && !inv.delivered
		if fresh {
			inv.delivered, inv.deliveredAt = true, time.Now()
		}
		a.mu.Unlock()
		if fresh {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Lambda-Runtime-Aws-Request-Id", inv.ID)
			h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(inv.Deadline).UnixMilli(), 10))
			h.Set("Lambda-Runtime-Invoked-Function-Arn", inv.ARN)
			h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Parent=0000000000000000;Sampled=0")
			_, _ = w.Write(inv.Event)
			return
		}
		// Nothing for the process now: hold the call until an invocation is armed or the process goes.
		select {
		case <-armed:
		case <-r.Context().Done():
			return
		}
	}
}

func (a *RuntimeAPI) finisher(k Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, fmt.Sprintf("read body: %v", err), http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		inv := a.current
		if k == KindInitError {
			o := Outcome{Kind: k, At: at, Body: body}
			if a.initError == nil {
				a.initError = &o
			}
			if inv != nil {
				select {
				case inv.done <- o:
				default:
				}
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		// An answer must name the invocation the process was handed.
		if inv == nil || !inv.delivered || r.PathValue("id") != inv.ID {
			http.Error(w, "unknown invocation", http.StatusNotFound)
			return
		}
		select {
		case inv.done <- Outcome{Kind: k, At: at, Body: body, DeliveredAt: inv.deliveredAt}:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// Serve serves a on a fresh loopback port until stop. Give each process a Runtime API of its own, as each
// Lambda execution environment has: with one shared API, the next call a killed process had already sent
// after answering (aws-lambda-go asks for the next event at once) could take the following process's event.
func Serve(a *RuntimeAPI) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("runtime API listener: %w", err)
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln) // returns when stop closes it
	}()
	return ln.Addr().String(), func() {
		srv.Close() // also closes the connections, which ends the next calls held open
		<-served
	}, nil
}
