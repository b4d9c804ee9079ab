package lambdaapp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/creatorstrategy/css/infra/emulators/emulatortest"
	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/dynamo"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

const eventsDir = "../../events"

// lambdaEnv points the functions at a fresh table on DynamoDB Local, as template.yaml configures them.
func lambdaEnv(t *testing.T) *store.Store {
	t.Helper()
	endpoint := emulatortest.DynamoDB(t)
	table := fmt.Sprintf("css-events-%d", time.Now().UnixNano())
	t.Setenv("CSS_DYNAMODB_ENDPOINT", endpoint)
	t.Setenv("CSS_TABLE_NAME", table)
	t.Setenv("AWS_REGION", "us-east-1")
	ctx := context.Background()
	client, err := dynamo.NewClient(endpoint, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.CreateTable(ctx, client, table); err != nil {
		t.Fatal(err)
	}
	return store.New(dynamo.New(client, table))
}

func loadEvent(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// functionOf names the function whose route the event is, from the contract.
func functionOf(t *testing.T, c *contract.Contract, ev EventV2) string {
	t.Helper()
	for _, op := range c.Operations {
		if op.Method+" "+op.Path == ev.RouteKey {
			return op.Function
		}
	}
	t.Fatalf("route %q is not in the contract", ev.RouteKey)
	return ""
}

// TestSampleEvents invokes each function's Lambda entry point with the sample events of events/.
func TestSampleEvents(t *testing.T) {
	lambdaEnv(t)
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"integrations-list-my-videos.json": 200,
		"keys-list-keys.json":              200,
		"memory-create-note.json":          201,
		"memory-list-notes.json":           200,
		"planning-get-schedule.json":       200,
		"utility-health.json":              200,
		"utility-openapi.json":             200,
		"videos-commit-video.json":         200,
		"videos-delete-video-idea.json":    404, // no such idea in a fresh table
		"videos-list-my-videos.json":       200,
	}
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	seen := 0
	for _, f := range files {
		name := filepath.Base(f)
		if name == "authorizer-request.json" {
			continue
		}
		status, ok := want[name]
		if !ok {
			t.Errorf("%s: no expectation; add one", name)
			continue
		}
		seen++
		var ev EventV2
		loadEvent(t, name, &ev)
		fn := functionOf(t, c, ev)
		h, err := Handler(context.Background(), fn, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		resp, err := h(context.Background(), ev)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if resp.StatusCode != status {
			t.Errorf("%s via %s: %d, want %d: %s", name, fn, resp.StatusCode, status, resp.Body)
		}
		if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
			t.Errorf("%s: request id %q, want API Gateway's %q", name, resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
		}
		body := decodedBody(t, name, resp)
		if name == "utility-openapi.json" {
			// The event carries the Accept-Encoding curl --compressed sends: the document travels gzipped.
			if !resp.IsBase64Encoded || resp.Headers["Content-Encoding"] != "gzip" {
				t.Errorf("%s: isBase64Encoded %v, Content-Encoding %q; want a base64 gzip body",
					name, resp.IsBase64Encoded, resp.Headers["Content-Encoding"])
			}
			if !bytes.Equal(body, contract.Document()) {
				t.Errorf("%s: the body (%d bytes) is not openapi.json", name, len(body))
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d expected events found", seen, len(want))
	}
}

// TestOpenAPIDocumentEncoding checks how the document leaves the utility Lambda: a gzip body must reach API
// Gateway base64-encoded (isBase64Encoded), a plain one as text.
func TestOpenAPIDocumentEncoding(t *testing.T) {
	lambdaEnv(t)
	h, err := Handler(context.Background(), "utility", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		acceptEncoding string // "" sends none
		gzip           bool
	}{
		{"", false},
		{"identity", false},
		{"gzip;q=0, br", false},
		{"br", false},
		{"gzip", true},
		{"*", true},
		{"GZIP;q=0.5", true},
		{"gzip, deflate, br, zstd", true},
	}
	for _, tt := range tests {
		var ev EventV2
		loadEvent(t, "utility-openapi.json", &ev)
		delete(ev.Headers, "accept-encoding")
		if tt.acceptEncoding != "" {
			ev.Headers["accept-encoding"] = tt.acceptEncoding
		}
		name := fmt.Sprintf("accept-encoding %q", tt.acceptEncoding)
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %d", name, err, resp.StatusCode)
		}
		if resp.IsBase64Encoded != tt.gzip {
			t.Errorf("%s: isBase64Encoded %v, want %v", name, resp.IsBase64Encoded, tt.gzip)
		}
		if got, want := resp.Headers["Content-Encoding"], map[bool]string{true: "gzip"}[tt.gzip]; got != want {
			t.Errorf("%s: Content-Encoding %q, want %q", name, got, want)
		}
		if resp.Headers["Vary"] != "Accept-Encoding" || resp.Headers["Content-Type"] != "application/json" {
			t.Errorf("%s: Vary %q, Content-Type %q", name, resp.Headers["Vary"], resp.Headers["Content-Type"])
		}
		if body := decodedBody(t, name, resp); !bytes.Equal(body, contract.Document()) {
			t.Errorf("%s: the body (%d bytes) is not openapi.json", name, len(body))
		}
	}
}

// decodedBody is what a client receives from API Gateway for resp: the body base64-decoded when
// isBase64Encoded, then decompressed as its Content-Encoding says.
func decodedBody(t *testing.T, name string, resp ResponseV2) []byte {
	t.Helper()
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatalf("%s: isBase64Encoded, but the body is not base64: %v", name, err)
		}
	}
	switch enc := resp.Headers["Content-Encoding"]; enc {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: Content-Encoding gzip, but %v", name, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatalf("%s: gzip body: %v", name, err)
		}
	default:
		t.Fatalf("%s: unexpected Content-Encoding %q", name, enc)
	}
	return body
}

// TestAuthorizerThenGroup passes the sample authorizer request through the real authorizer and hands its
// context to a group function, as API Gateway does.
func TestAuthorizerThenGroup(t *testing.T) {
	st := lambdaEnv(t)
	ctx := context.Background()
	var areq events.APIGatewayV2CustomAuthorizerV2Request
	loadEvent(t, "authorizer-request.json", &areq)
	key := strings.TrimPrefix(areq.IdentitySource[0], "Bearer ")
	if _, err := accounts.NewService(st, time.Now).EnsureDevKey(ctx, "events-account", key); err != nil {
		t.Fatal(err)
	}
	a := auth.NewAuthenticator(st, auth.NewHS256Verifier("unused-in-this-test-0123456789abcdef"), 20*time.Second)
	aresp, err := a.Authorize(ctx, areq)
	if err != nil || !aresp.IsAuthorized {
		t.Fatalf("authorizer: %+v %v", aresp, err)
	}
	var ev EventV2
	loadEvent(t, "memory-create-note.json", &ev)
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: roundTrip(t, aresp.Context)}
	h, err := Handler(ctx, "memory", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := h(ctx, ev); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create note: %v %d %s", err, resp.StatusCode, resp.Body)
	}
	loadEvent(t, "memory-list-notes.json", &ev)
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: roundTrip(t, aresp.Context)}
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Body, `"total":1`) {
		t.Fatalf("list notes: %v %d %s", err, resp.StatusCode, resp.Body)
	}

	// An unknown key is still "authorized" by the authorizer (so the group answers in the Error shape), and
	// the group Lambda answers 401.
	areq.IdentitySource = []string{"Bearer sk-css-ffffffffffffffffffffffffffffffff"}
	areq.Headers["authorization"] = areq.IdentitySource[0]
	denied, err := a.Authorize(ctx, areq)
	if err != nil {
		t.Fatal(err)
	}
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: roundTrip(t, denied.Context)}
	if resp, _ := h(ctx, ev); resp.StatusCode != 401 || !strings.Contains(resp.Body, `"UNAUTHORIZED"`) {
		t.Fatalf("unknown key: %d %s", resp.StatusCode, resp.Body)
	}
}

// roundTrip sends the authorizer context through JSON, as it travels through API Gateway.
func roundTrip(t *testing.T, c map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
