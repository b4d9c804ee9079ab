// Package bedrocktest is a loopback Amazon Bedrock Runtime for tests that drive the real SDK: Converse
// (POST /model/{modelId}/converse, restJson1) answered with the input of the forced tool, as the text
// adapter (ai/bedrock) asks, and InvokeModel (POST /model/{modelId}/invoke) answered with a picture in the
// Stability models' response, as the image adapter (ai/bedrockimage) asks. It checks every request's SigV4
// signature. Test support: only tests import it.
package bedrocktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/creatorstrategy/css/shared/testkit/sigv4test"
)

// Call is one request the server received.
type Call struct {
	Operation string // "converse" or "invoke"
	ModelID   string // from the path
	Region    string // the region it was signed for
	Body      map[string]any
	Answer    Answer // what a Converse call was answered
}

// Tool is the name of the tool a Converse call forces (toolChoice.tool.name): the task it asks for.
func (c Call) Tool() string {
	choice, _ := c.Body["toolConfig"].(map[string]any)
	tc, _ := choice["toolChoice"].(map[string]any)
	tool, _ := tc["tool"].(map[string]any)
	name, _ := tool["name"].(string)
	return name
}

// Answer is the server's reply to a Converse call: the forced tool's input (a JSON value) and the token
// usage to report.
type Answer struct {
	Input                     string
	InputTokens, OutputTokens int
}

// Server is the loopback Bedrock Runtime.
type Server struct {
	URL   string // the endpoint (CSS_BEDROCK_ENDPOINT)
	Creds aws.Credentials

	t        testing.TB
	converse func(Call) Answer
	picture  []byte // the PNG InvokeModel answers
	mu       sync.Mutex
	calls    []Call
}

// Start serves requests signed with creds until the test ends: converse answers Converse calls, and
// InvokeModel answers a w x h PNG of one colour.
func Start(t testing.TB, creds aws.Credentials, converse func(Call) Answer, w, h int) *Server {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = 200, 40, 40, 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	s := &Server{Creds: creds, t: t, converse: converse, picture: buf.Bytes()}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Calls are the requests received, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("bedrocktest: read body: %v", err)
	}
	sc, err := sigv4test.Verify(r, raw, s.Creds)
	if err != nil || sc.Service != "bedrock" {
		s.t.Errorf("bedrocktest: %s: signed for %+v: %v", r.URL.Path, sc, err)
		apiError(w, http.StatusForbidden, "AccessDeniedException")
		return
	}
	// /model/{modelId}/{operation}, the id escaped as one path segment.
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	i := strings.LastIndexByte(rest, '/')
	if !ok || i < 0 || r.Method != http.MethodPost {
		apiError(w, http.StatusNotFound, "UnknownOperationException")
		return
	}
	id, err := url.PathUnescape(rest[:i])
	if err != nil {
		apiError(w, http.StatusBadRequest, "ValidationException")
		return
	}
	c := Call{Operation: rest[i+1:], ModelID: id, Region: sc.Region}
	if err := json.Unmarshal(raw, &c.Body); err != nil {
		s.t.Errorf("bedrocktest: %s body is not JSON: %v", c.Operation, err)
	}
	if c.Operation == "converse" {
		c.Answer = s.converse(c)
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	n := len(s.calls)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch c.Operation {
	case "converse":
		a := c.Answer
		name, _ := json.Marshal(c.Tool())
		fmt.Fprintf(w, `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_%d","name":%s,"input":%s}}]}},`+
			`"stopReason":"tool_use","usage":{"inputTokens":%d,"outputTokens":%d,"totalTokens":%d},"metrics":{"latencyMs":900}}`,
			n, name, a.Input, a.InputTokens, a.OutputTokens, a.InputTokens+a.OutputTokens)
	case "invoke":
		fmt.Fprintf(w, `{"seeds":[2130420379],"finish_reasons":[null],"images":[%q]}`, base64.StdEncoding.EncodeToString(s.picture))
	default:
		apiError(w, http.StatusNotFound, "UnknownOperationException")
	}
}

// apiError answers as Bedrock does: the code in X-Amzn-ErrorType and a message in the body.
func apiError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":"%s from bedrocktest"}`, code)
}
