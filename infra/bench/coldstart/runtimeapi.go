package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// runtimeAPI plays the Lambda Runtime API (2018-06-01) for one process: it hands the armed invocation to
// the first GET .../invocation/next and reports the first response, error or init error. Later calls to
// next block until the process goes away, as they would in Lambda between invocations.
type runtimeAPI struct {
	mu      sync.Mutex
	current *invocation
}

// invocation is one event on its way to one process.
type invocation struct {
	id        string
	event     []byte
	arn       string
	deadline  time.Duration
	delivered bool
	// deliveredAt is when the process asked for its event: the end of its init phase.
	deliveredAt time.Time
	done        chan outcome // buffered: the first outcome wins, later ones are dropped
}

// outcome is how the process answered, and when the harness heard it.
type outcome struct {
	kind kind
	at   time.Time
	body []byte
}

type kind string

const (
	kindResponse  kind = "response"
	kindError     kind = "error"
	kindInitError kind = "init error"
)

func newInvocation(id string, event []byte, arn string, deadline time.Duration) *invocation {
	return &invocation{id: id, event: event, arn: arn, deadline: deadline, done: make(chan outcome, 1)}
}

// arm makes inv the invocation the next process receives.
func (a *runtimeAPI) arm(inv *invocation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.current = inv
}

func (a *runtimeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", a.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", a.finisher(kindResponse))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", a.finisher(kindError))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", a.finisher(kindInitError))
	return mux
}

func (a *runtimeAPI) next(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	inv := a.current
	fresh := inv != nil && !inv.delivered
	if fresh {
		inv.delivered, inv.deliveredAt = true, time.Now()
	}
	a.mu.Unlock()
	if !fresh {
		// Nothing more for this process: hold the call until the harness kills it.
		<-r.Context().Done()
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(inv.deadline).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", inv.arn)
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Parent=0000000000000000;Sampled=0")
	_, _ = w.Write(inv.event)
}

func (a *runtimeAPI) finisher(k kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, fmt.Sprintf("read body: %v", err), http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		inv := a.current
		a.mu.Unlock()
		// An init error names no invocation; the others must name the current one.
		if inv == nil || (k != kindInitError && r.PathValue("id") != inv.id) {
			http.Error(w, "unknown invocation", http.StatusNotFound)
			return
		}
		select {
		case inv.done <- outcome{kind: k, at: at, body: body}:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	}
}
