// Package testserver starts, on loopback, an MCP server built with the official SDK the way the service
// serves /mcp (decision 34: streamable HTTP, stateless, JSON answers, a bearer API key checked before the
// MCP handler, 401 with WWW-Authenticate otherwise), with one tool, one resource and one prompt of each
// kind the bridge must carry. It is what css-mcp's tests talk to.
package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// ResourceURI is the server's one resource.
	ResourceURI = "css://test/profile"
	// ResourceJSON is its content.
	ResourceJSON = `{"broadNiche":"cooking","focusedNiche":"vegan meal prep"}`
	// PromptName is the server's one prompt; it takes a `title` argument.
	PromptName = "video-package"
)

// AddArgs and AddResult are the `add` tool's input and structured output.
type AddArgs struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

type AddResult struct {
	Sum int `json:"sum"`
}

// Request is what the server saw of one HTTP request that passed the key check.
type Request struct {
	Method          string // the JSON-RPC method, "" for a response
	ProtocolVersion string // the MCP-Protocol-Version header
	UserAgent       string
}

// Server is a running test server.
type Server struct {
	// URL is the MCP endpoint, <base>/mcp.
	URL string
	// Key is the API key it accepts; ExpiredKey is refused with 403 ACCESS_EXPIRED.
	Key, ExpiredKey string

	// Started receives one value each time the `hold` tool starts; it returns when Release is closed or
	// its request ends.
	Started chan struct{}
	Release chan struct{}

	mu       sync.Mutex
	requests []Request
}

// Start serves the test server until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		Key:        "sk-css-0123456789abcdef0123456789abcdef",
		ExpiredKey: "sk-css-fedcba9876543210fedcba9876543210",
		Started:    make(chan struct{}, 64),
		Release:    make(chan struct{}),
	}
	server := s.mcpServer()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.checkKey(handler))
	httpServer := httptest.NewServer(mux)
	t.Cleanup(func() {
		s.release()
		httpServer.Close()
	})
	s.URL = httpServer.URL + "/mcp"
	return s
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.Release:
	default:
		close(s.Release)
	}
}

// checkKey is the service's authentication in small: the bearer key, else 401 in the Error shape with a
// WWW-Authenticate challenge.
func (s *Server) checkKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case ok && key == s.Key:
		case ok && key == s.ExpiredKey:
			writeError(w, http.StatusForbidden, "ACCESS_EXPIRED", "access to this account expired at 2026-01-01T00:00:00Z")
			return
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="css"`)
			writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "invalid API key")
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.requests = append(s.requests, Request{
			Method:          msg.Method,
			ProtocolVersion: r.Header.Get("Mcp-Protocol-Version"),
			UserAgent:       r.Header.Get("User-Agent"),
		})
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": message, "code": code})
}

func (s *Server) mcpServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "creator-strategy-service", Version: "2.6.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(_ context.Context, _ *mcp.CallToolRequest, args AddArgs) (*mcp.CallToolResult, AddResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d", args.A+args.B)}}},
				AddResult{Sum: args.A + args.B}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "hold", Description: "Waits until the test releases it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, AddResult, error) {
			s.Started <- struct{}{}
			select {
			case <-s.Release:
			case <-ctx.Done():
			}
			return nil, AddResult{}, nil
		})
	server.AddResource(&mcp.Resource{URI: ResourceURI, Name: "profile", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "application/json", Text: ResourceJSON},
			}}, nil
		})
	server.AddPrompt(&mcp.Prompt{Name: PromptName, Description: "Plans a video's package.",
		Arguments: []*mcp.PromptArgument{{Name: "title", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "Call generate_titles for " + req.Params.Arguments["title"]}}}}, nil
		})
	return server
}
