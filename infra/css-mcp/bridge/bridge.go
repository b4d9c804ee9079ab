// Package bridge pipes MCP's JSON-RPC messages between a local connection (an assistant speaking over
// css-mcp's standard input and output) and the service's streamable HTTP endpoint, sending the API key
// with every request (decision 38). It forwards messages as they are, so every tool, resource and prompt
// of the server reaches the assistant without the bridge knowing them.
package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// DefaultMaxInFlight bounds the messages forwarded at once: an assistant may call tools in parallel,
	// but a client flooding standard input must not open unbounded connections. Past it, the bridge stops
	// reading its input until a message is through.
	DefaultMaxInFlight = 16
	// DefaultRequestTimeout bounds one HTTP exchange with the server. The service answers within 30 s (a
	// generation outliving that answers `pending`); this only ends a request to a server that hangs.
	DefaultRequestTimeout = 2 * time.Minute
)

// Config says where the bridge forwards to and with which key.
type Config struct {
	// Endpoint is the MCP endpoint's URL ({app_url}/mcp).
	Endpoint string
	// Key is the API key, sent as `Authorization: Bearer <Key>` to Endpoint only.
	Key string
	// UserAgent is sent with every request.
	UserAgent string
	// Transport makes the HTTP requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// MaxInFlight bounds the messages forwarded at once; 0 means DefaultMaxInFlight.
	MaxInFlight int
	// RequestTimeout bounds one HTTP exchange; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Errors receives one line per failed message (never the key); nil discards them.
	Errors io.Writer

	// full, when set, is called each time the bridge waits for a free slot (tests).
	full func()
}

// Run forwards messages between local and the endpoint until local's input ends (then it waits for the
// answers to the calls still in flight, and returns nil), ctx is done, or the server refuses the key or
// the connection to it breaks (it returns why; a refused key is a *RefusedError). A call that fails on its
// own (the server unreachable, a timeout) is answered with a JSON-RPC error and the bridge goes on.
func Run(ctx context.Context, local mcp.Transport, cfg Config) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	version := &protocolVersion{}
	remoteTransport := &mcp.StreamableClientTransport{
		Endpoint:   cfg.Endpoint,
		HTTPClient: newHTTPClient(cfg, version),
		// The service is stateless with JSON answers (decision 34): there is no stream to listen to.
		DisableStandaloneSSE: true,
	}
	remote, err := remoteTransport.Connect(ctx)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", cfg.Endpoint, err)
	}
	localConn, err := local.Connect(ctx)
	if err != nil {
		remote.Close()
		return fmt.Errorf("opening the local connection: %w", err)
	}
	maxInFlight := cfg.MaxInFlight
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	b := &bridge{
		endpoint: cfg.Endpoint,
		timeout:  remoteTransport.HTTPClient.Timeout,
		errors:   cmp.Or(cfg.Errors, io.Discard),
		local:    localConn,
		remote:   remote,
		version:  version,
		fail:     cancel,
		slots:    make(chan struct{}, maxInFlight),
		pending:  make(map[jsonrpc.ID]bool),
		drained:  make(chan struct{}, 1),
		full:     cfg.full,
	}

	b.wg.Go(func() { b.down(ctx) })
	err = b.up(ctx)

	cancel(err)
	remote.Close()
	b.wg.Wait()
	localConn.Close()
	if cause := context.Cause(ctx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	return err
}

// RefusedError is the server's refusal of the key (401) or of the account behind it (403): final, as no
// later request would be accepted either.
type RefusedError struct {
	Status int
	// Code and Message are the service's error body (`code`, `error`), when it sent one.
	Code    string
	Message string
}

func (e *RefusedError) Error() string {
	what := "the server refused the API key"
	if e.Status == http.StatusForbidden {
		what = "the server refused access with this API key"
	}
	s := fmt.Sprintf("%s (%d %s", what, e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		s += ", " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s + "); check CSS_API_KEY"
}

type bridge struct {
	endpoint string
	timeout  time.Duration
	errors   io.Writer
	local    mcp.Connection
	remote   mcp.Connection
	version  *protocolVersion
	fail     context.CancelCauseFunc
	slots    chan struct{}
	full     func()
	wg       sync.WaitGroup

	mu      sync.Mutex
	errMu   sync.Mutex
	initID  jsonrpc.ID
	pending map[jsonrpc.ID]bool // calls forwarded and not answered yet
	drained chan struct{}       // signalled when pending empties
}

// up reads the local side and forwards each message to the server on its own goroutine, at most
// cap(slots) at once. It returns nil when the local input ends and every call is answered.
func (b *bridge) up(ctx context.Context) error {
	for {
		msg, err := b.local.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if errors.Is(err, io.EOF) {
				return b.drain(ctx)
			}
			return fmt.Errorf("reading standard input: %w", err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			b.mu.Lock()
			b.pending[req.ID] = true
			if req.Method == "initialize" {
				b.initID = req.ID
			}
			b.mu.Unlock()
		}
		select {
		case b.slots <- struct{}{}:
		default:
			if b.full != nil {
				b.full()
			}
			select {
			case b.slots <- struct{}{}:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		b.wg.Go(func() {
			defer func() { <-b.slots }()
			b.forward(ctx, msg)
		})
	}
}

// drain waits for the answers to the calls still in flight.
func (b *bridge) drain(ctx context.Context) error {
	for {
		b.mu.Lock()
		n := len(b.pending)
		b.mu.Unlock()
		if n == 0 {
			return context.Cause(ctx)
		}
		select {
		case <-b.drained:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// forward sends one message to the server. The answer to a call comes back through down; a call that
// could not be sent is answered here, with the reason.
func (b *bridge) forward(ctx context.Context, msg jsonrpc.Message) {
	err := b.remote.Write(ctx, msg)
	if err == nil || ctx.Err() != nil {
		return
	}
	var refused *RefusedError
	var timeout interface{ Timeout() bool }
	var unreachable *net.OpError
	switch {
	case errors.As(err, &refused):
		err = refused
	case errors.As(err, &timeout) && timeout.Timeout():
		err = fmt.Errorf("%s: no answer within %s", b.endpoint, b.timeout)
	case errors.As(err, &unreachable):
		err = fmt.Errorf("cannot reach %s: %w", b.endpoint, unreachable)
	default:
		err = fmt.Errorf("%s: %w", b.endpoint, err)
	}
	if refused != nil {
		// Run returns it, for the caller to report. Before the reply: a client that ends its input once
		// answered must not see the bridge end well.
		b.fail(refused)
	} else {
		b.report(err)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		reply := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "css-mcp: " + err.Error()}}
		// The reply goes out even when the bridge is stopping, so the client learns why.
		if werr := b.local.Write(context.WithoutCancel(ctx), reply); werr != nil {
			b.fail(fmt.Errorf("writing standard output: %w", werr))
			return
		}
		b.answered(req.ID)
	}
}

// down writes every message from the server to the local side, noting the protocol version the
// initialize call settles on.
func (b *bridge) down(ctx context.Context) {
	for {
		msg, err := b.remote.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				b.fail(fmt.Errorf("reading from %s: %w", b.endpoint, err))
			}
			return
		}
		resp, isResp := msg.(*jsonrpc.Response)
		if isResp {
			b.noteInitialized(resp)
		}
		if err := b.local.Write(ctx, msg); err != nil {
			if ctx.Err() == nil {
				b.fail(fmt.Errorf("writing standard output: %w", err))
			}
			return
		}
		if isResp {
			b.answered(resp.ID)
		}
	}
}

func (b *bridge) noteInitialized(resp *jsonrpc.Response) {
	b.mu.Lock()
	isInit := b.initID.IsValid() && resp.ID == b.initID
	b.mu.Unlock()
	if !isInit || resp.Error != nil {
		return
	}
	var result struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &result) == nil {
		b.version.set(result.ProtocolVersion)
	}
}

func (b *bridge) answered(id jsonrpc.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pending, id)
	if len(b.pending) == 0 {
		select {
		case b.drained <- struct{}{}:
		default:
		}
	}
}

func (b *bridge) report(err error) {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	fmt.Fprintf(b.errors, "css-mcp: %v\n", err)
}

// protocolVersion is the version the initialize call negotiated. The SDK's client connection learns it
// from its own session; a bridge has none, so it sends the header itself (MCP-Protocol-Version is required
// on every request after initialization).
type protocolVersion struct {
	mu sync.Mutex
	v  string
}

func (p *protocolVersion) set(v string) {
	p.mu.Lock()
	p.v = v
	p.mu.Unlock()
}

func (p *protocolVersion) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.v
}
