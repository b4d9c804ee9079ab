// Package mcp is the service's Model Context Protocol interface (decisions 34-40): 39 tools, 6 resources
// and 10 prompts over the same operations as the REST API. A tool that mirrors a REST operation is declared
// in the contract beside it (x-css-mcp: name, title, kind, summary, description), takes its arguments'
// schema from the contract and runs the operation in process
// (rest.Server.Invoke): the same authorisation, rate groups, validation, quota, idempotency, history and
// events. Transports live at the edge: Handler serves streamable HTTP; the stdio bridge (infra/css-mcp)
// forwards to it.
package mcp

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/rest"
	"github.com/creatorstrategy/css/shared/videos"
)

// Name and Version are what the server reports (decisions 28 and 34).
const (
	Name    = "creator-strategy-service"
	Version = "2.6.0"
)

// Operations runs the contract's operations in process (*rest.Server).
type Operations interface {
	Invoke(ctx context.Context, p auth.Principal, opID string, raw contract.RawRequest) (rest.Result, error)
}

// RateLimiter counts one call of a principal in a rate group (*rest.Server): what an MCP request that
// runs no operation (a template resource, a prompt, tool arguments refused before their operation) costs,
// as one REST call in the group. Over the limit it answers RATE_LIMIT.
type RateLimiter interface {
	Take(ctx context.Context, p auth.Principal, group contract.RateGroup) error
}

// VideoReader reads one video of a channel (css://video/{id}).
type VideoReader interface {
	Get(ctx context.Context, channelID, videoID string) (videos.Video, error)
}

// SeriesReader reads one series of a channel (css://series/{id}).
type SeriesReader interface {
	Get(ctx context.Context, channelID, seriesID string) (planning.Series, error)
}

// ResearchReader reads a channel's last research run (the research age of the composite tools).
type ResearchReader interface {
	LastRun(ctx context.Context, channelID string) (*research.Run, error)
}

// Config is what the server is built over.
type Config struct {
	Contract   *contract.Contract
	Operations Operations
	// Limiter counts the requests that run no operation (nil: they are not counted; ForAPI always sets it).
	Limiter  RateLimiter
	Videos   VideoReader
	Series   SeriesReader
	Research ResearchReader
	// Now is the clock of the composite tools (the current week); time.Now when nil.
	Now func() time.Time
	Log *slog.Logger
}

// server holds what the handlers share.
type server struct {
	cfg    Config
	ops    Operations
	argsMu sync.Mutex
	args   map[string]*contract.Arguments // operation id -> its arguments
	tools  map[string]sdk.ToolHandler     // tool name -> its handler
	// published is tools.json, read on first use.
	published func() ([]publishedTool, error)
}

// Server is the MCP server: the tool handlers, which Handler's fast path calls directly (fastpath.go),
// and the SDK's server with every tool, resource and prompt registered, which answers everything else.
// The SDK's server is built on the first request it answers, not at start: registering 39 tools costs
// the SDK two JSON round trips each (3 MB, 3 ms), which a cold start answering a tools/call need not pay.
type Server struct {
	limiter RateLimiter // nil: nothing is counted
	tools   map[string]sdk.ToolHandler
	// groups are the rate groups of the tools that run one operation (the mirrors).
	groups  map[string]contract.RateGroup
	sdk     func() (*sdk.Server, error)
	buffers sync.Pool // *[]byte: the fast path's answers
}

// NewServer returns the MCP server. It is stateless and safe for concurrent use; one server serves every
// request.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Contract == nil || cfg.Operations == nil || cfg.Videos == nil || cfg.Series == nil || cfg.Research == nil {
		return nil, fmt.Errorf("mcp: a contract, the operations and the video, series and research readers are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	s := &server{cfg: cfg, ops: cfg.Operations, args: map[string]*contract.Arguments{}, tools: map[string]sdk.ToolHandler{},
		published: sync.OnceValues(readToolList)}
	s.addHandlers()
	groups := map[string]contract.RateGroup{}
	for _, t := range mirroredTools {
		if op := cfg.Contract.Operation(t.op); op != nil {
			groups[t.name] = op.RateGroup
		}
	}
	return &Server{limiter: cfg.Limiter, tools: s.tools, groups: groups, sdk: sync.OnceValues(s.sdkServer),
		buffers: sync.Pool{New: func() any { return new([]byte) }}}, nil
}

// SDK returns the SDK's server with every tool, resource and prompt registered (built on first use).
func (s *Server) SDK() (*sdk.Server, error) { return s.sdk() }

// sdkServer builds the SDK's server. The tool handlers it registers are the fast path's: they use no
// Session and run outside any SDK middleware, which the fast path has neither of; a server that adds
// middleware acting on known tools' calls must give the fast path up (countReads does not).
func (s *server) sdkServer() (*sdk.Server, error) {
	published, err := s.published()
	if err != nil {
		return nil, err
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: Name, Title: "Creator Strategy Service", Version: Version},
		&sdk.ServerOptions{
			Instructions: instructions,
			Logger:       s.cfg.Log,
			// The lists never change while the server runs, and a stateless server could not notify a
			// change: saying they may made a 2026-07-28 client with list-changed handlers open
			// subscriptions/listen, which the SDK holds open until the client leaves (a connection that never
			// finished). Logging as before (the SDK's default).
			Capabilities: &sdk.ServerCapabilities{Logging: &sdk.LoggingCapabilities{}, Tools: &sdk.ToolCapabilities{},
				Prompts: &sdk.PromptCapabilities{}, Resources: &sdk.ResourceCapabilities{}},
		})
	srv.AddReceivingMiddleware(s.countReads)
	for _, t := range published {
		tool := &sdk.Tool{Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, Annotations: t.Annotations}
		if t.OutputSchema != nil { // a nil RawMessage in the interface would publish "outputSchema": null
			tool.OutputSchema = t.OutputSchema
		}
		srv.AddTool(tool, s.tools[t.Name])
	}
	s.addResources(srv)
	s.addPrompts(srv)
	return srv, nil
}

// countReads counts every request the SDK handles as one call in the group of reads, but the ones an
// operation counts itself (a call of a known tool, a read of a fixed resource): initialize, ping and the
// lists included (issue 32: past the limit, 20 tools/list a POST still answered 30 KB each), every
// prompts/get, every other resources/read, found or not, and every call of an unknown tool. It is the one
// middleware of the SDK's server, and it lets calls of known tools through untouched, so the fast path
// (which has no middleware) answers those as the SDK does.
func (s *server) countReads(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req) // counted by the endpoint (countNotifications)
		}
		unknown, name := "", "" // a tool or prompt of no such name: answered here, its name cut short
		switch r := req.(type) {
		case *sdk.CallToolRequest:
			if r.Params != nil && s.tools[r.Params.Name] != nil {
				return next(ctx, method, req)
			}
			if r.Params != nil {
				unknown, name = "tool", r.Params.Name
			}
		case *sdk.GetPromptRequest:
			if r.Params != nil && !slices.ContainsFunc(prompts, func(p prompt) bool { return p.name == r.Params.Name }) {
				unknown, name = "prompt", r.Params.Name
			}
		case *sdk.ReadResourceRequest:
			if r.Params != nil && fixedURIs[r.Params.URI] {
				return next(ctx, method, req)
			}
		}
		caller, err := resourcePrincipal(req.GetExtra())
		if err != nil {
			return nil, err
		}
		if err := s.take(ctx, caller, contract.RateOther); err != nil {
			return nil, resourceError("", err)
		}
		if unknown != "" {
			// The SDK's own answer would echo the whole name, up to the body's 1 MiB.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown %s %q", unknown, clipName(name))}
		}
		return next(ctx, method, req)
	}
}

// countNotifications counts each notification of body (a message, or a batch of them) as one call of p in
// the group of reads. The SDK's server never sees a stateless request's notifications, so countReads
// cannot; over the limit, the error is RATE_LIMIT for the whole request.
func (s *Server) countNotifications(ctx context.Context, p auth.Principal, body []byte) error {
	if s.limiter == nil {
		return nil
	}
	var err error
	count := func(_, m gjson.Result) bool {
		if m.Get("method").Exists() && !m.Get("id").Exists() {
			err = s.limiter.Take(ctx, p, contract.RateOther)
		}
		return err == nil
	}
	if msg := gjson.ParseBytes(body); msg.IsArray() {
		msg.ForEach(count)
	} else {
		count(gjson.Result{}, msg)
	}
	return err
}

// maxEchoedName bounds what an error repeats of a name the caller sent.
const maxEchoedName = 200

// clipName is name cut to maxEchoedName characters, "…" marking a cut.
func clipName(name string) string {
	i, n := 0, 0
	for i = range name {
		if n == maxEchoedName {
			return name[:i] + "…"
		}
		n++
	}
	return name
}

// instructions tell an assistant what the server is for and how its tools fit together.
const instructions = `Creator Strategy Service: a video creator's channel data (niche profile, research, ` +
	`backlog of ideas, pipeline of videos, weekly schedule, series, notes, generation history) and AI ` +
	`generation personalised from it. Read with get_* tools or the css:// resources; generate with ` +
	`generate_* tools (each run is kept in get_history and can be improved with refine); act with ` +
	`commit_video, update_video_status, dismiss_idea and update_schedule. A generation that takes long ` +
	`answers with status "pending" and a generationId: check get_history later. Errors start with their ` +
	`code (VALIDATION_ERROR, NOT_FOUND, RATE_LIMIT, USAGE_LIMIT, GENERATION_FAILED, ...).`

// take counts one call of p in group (nothing without a limiter).
func (s *server) take(ctx context.Context, p auth.Principal, group contract.RateGroup) error {
	if s.cfg.Limiter == nil {
		return nil
	}
	return s.cfg.Limiter.Take(ctx, p, group)
}

// principalKey is where Handler leaves the authenticated principal in the token info.
const principalKey = "principal"

// principal returns the caller of a request the transport authenticated.
func principal(extra *sdk.RequestExtra) (auth.Principal, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return auth.Principal{}, false
	}
	p, ok := extra.TokenInfo.Extra[principalKey].(auth.Principal)
	return p, ok && p.ChannelID != ""
}
