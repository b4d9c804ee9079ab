package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/infra/css-mcp/internal/testserver"
	"github.com/creatorstrategy/css/shared/testkit/inspector"
)

// binary is css-mcp built once for the tests that run it as a client would.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "css-mcp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "css-mcp")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building css-mcp:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	goodKey = "sk-css-0123456789abcdef0123456789abcdef"
	badKey  = "sk-css-00000000000000000000000000000000"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestConfigure(t *testing.T) {
	for _, tc := range []struct {
		name       string
		vars       map[string]string
		defaultURL string
		wantURL    string
		wantErr    string
	}{
		{"key and local URL", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "http://127.0.0.1:8080/mcp"}, "", "http://127.0.0.1:8080/mcp", ""},
		{"https", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "https://abc.execute-api.us-east-1.amazonaws.com/mcp"}, "", "https://abc.execute-api.us-east-1.amazonaws.com/mcp", ""},
		{"http to localhost", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "http://localhost:8080/mcp"}, "", "http://localhost:8080/mcp", ""},
		{"http to ::1", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "http://[::1]:8080/mcp"}, "", "http://[::1]:8080/mcp", ""},
		{"http to 127.0.0.2", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "http://127.0.0.2/mcp"}, "", "http://127.0.0.2/mcp", ""},
		{"stamped default", map[string]string{"CSS_API_KEY": goodKey}, "https://api.example.com/mcp", "https://api.example.com/mcp", ""},
		{"URL over the default", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "http://127.0.0.1:8080/mcp"}, "https://api.example.com/mcp", "http://127.0.0.1:8080/mcp", ""},

		{"no key", map[string]string{"CSS_MCP_URL": "http://127.0.0.1:8080/mcp"}, "", "", "CSS_API_KEY is not set"},
		{"key too short", map[string]string{"CSS_API_KEY": goodKey[:len(goodKey)-1]}, "", "", "CSS_API_KEY is malformed: an API key is sk-css- followed by 32 lowercase hex characters (this value has 38 characters)"},
		{"key too long", map[string]string{"CSS_API_KEY": goodKey + "0"}, "", "", "(this value has 40 characters)"},
		{"uppercase hex", map[string]string{"CSS_API_KEY": strings.ToUpper(goodKey[:7]) + goodKey[7:]}, "", "", "CSS_API_KEY is malformed"},
		{"another prefix", map[string]string{"CSS_API_KEY": "sk-abc-0123456789abcdef0123456789abcdef"}, "", "", "CSS_API_KEY is malformed"},
		{"not hex", map[string]string{"CSS_API_KEY": "sk-css-0123456789abcdef0123456789abcdeg"}, "", "", "CSS_API_KEY is malformed"},
		{"trailing newline", map[string]string{"CSS_API_KEY": goodKey + "\n"}, "", "", "(this value has 40 characters, with spaces or line breaks)"},
		{"no URL, no default", map[string]string{"CSS_API_KEY": goodKey}, "", "", "CSS_MCP_URL is not set: set it to the service's MCP endpoint"},
		{"relative URL", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "/mcp"}, "", "", "CSS_MCP_URL must be an absolute http:// or https:// URL with a host"},
		{"other scheme", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "ftp://example.com/mcp"}, "", "", "CSS_MCP_URL must be an absolute"},
		{"no host", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "https:///mcp"}, "", "", "CSS_MCP_URL must be an absolute"},
		{"opaque", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "https:example.com"}, "", "", "CSS_MCP_URL must be an absolute"},
		{"unparsable", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "https://exa mple.com/%zz"}, "", "", "CSS_MCP_URL must be an absolute"},
		{"credentials", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "https://user:pass@example.com/mcp"}, "", "", "CSS_MCP_URL must not carry credentials"},
		{"http elsewhere", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "http://api.example.com/mcp"}, "", "", "CSS_MCP_URL must use https:// unless it points at this machine"},
		{"http to a private address", map[string]string{"CSS_API_KEY": goodKey, "CSS_MCP_URL": "http://10.0.0.5/mcp"}, "", "", "must use https://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := configure(env(tc.vars), tc.defaultURL)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("configure: %v, want %q", err, tc.wantErr)
				}
				if key := tc.vars["CSS_API_KEY"]; key != "" && strings.Contains(err.Error(), strings.TrimSpace(key)) {
					t.Errorf("the error quotes the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("configure: %v", err)
			}
			if cfg.Endpoint != tc.wantURL || cfg.Key != tc.vars["CSS_API_KEY"] || cfg.UserAgent != "css-mcp/2.6.0" {
				t.Errorf("config %+v", cfg)
			}
		})
	}
}

func TestRunArguments(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		vars       map[string]string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"version", []string{"-version"}, nil, 0, "css-mcp 2.6.0\n", ""},
		{"version, two dashes", []string{"--version"}, nil, 0, "css-mcp 2.6.0\n", ""},
		{"help", []string{"-h"}, nil, 0, "", "CSS_API_KEY  your API key"},
		{"unknown flag", []string{"-verbose"}, nil, 2, "", "flag provided but not defined: -verbose"},
		{"an argument", []string{"serve"}, nil, 2, "", `css-mcp: unexpected argument "serve"`},
		{"no key", nil, nil, 2, "", "css-mcp: CSS_API_KEY is not set"},
		{"no URL", nil, map[string]string{"CSS_API_KEY": goodKey}, 2, "", "css-mcp: CSS_MCP_URL is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tc.args, env(tc.vars), &mcp.IOTransport{}, &stdout, &stderr)
			if code != tc.wantCode || stdout.String() != tc.wantStdout || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

func command(t *testing.T, vars ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), binary)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, vars...)
	return cmd
}

// The binary as an assistant runs it: the SDK's client over its standard input and output.
func TestBinaryWithTheSDKClient(t *testing.T) {
	server := testserver.Start(t)
	cmd := command(t, "CSS_API_KEY="+server.Key, "CSS_MCP_URL="+server.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test-assistant", Version: "1"}, nil)
	session, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %s)", err, stderr.Bytes())
	}
	ctx := t.Context()
	tools, err := session.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 || tools.Tools[0].Name != "add" {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 20, "b": 22}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"sum":42}` {
		t.Errorf("add(20, 22) = %s", got)
	}
	resource, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceURI})
	if err != nil || len(resource.Contents) != 1 || resource.Contents[0].Text != testserver.ResourceJSON {
		t.Errorf("resources/read: %v %+v", err, resource)
	}
	prompt, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: testserver.PromptName, Arguments: map[string]string{"title": "x"}})
	if err != nil || len(prompt.Messages) != 1 {
		t.Errorf("prompts/get: %v %+v", err, prompt)
	}
	if err := session.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || stderr.Len() != 0 {
		t.Errorf("exit %d, stderr %q, want 0 and nothing", code, stderr.Bytes())
	}
	for _, req := range server.Requests() {
		if req.UserAgent != "css-mcp/2.6.0" {
			t.Errorf("%s: User-Agent %q", req.Method, req.UserAgent)
		}
	}
}

// What a client sees of each refusal: the exit status, the line on standard error (never the key), and,
// for the server's refusal, the answer to its first call.
func TestBinaryRefusals(t *testing.T) {
	server := testserver.Start(t)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	for _, tc := range []struct {
		name       string
		key        string
		url        string
		wantCode   int
		wantStderr string
	}{
		{"missing key", "", server.URL, 2, "css-mcp: CSS_API_KEY is not set: put your API key (sk-css- followed by 32 hex characters) in the \"env\" block of your MCP client's configuration\n"},
		{"malformed key", "sk-css-12345", server.URL, 2, "css-mcp: CSS_API_KEY is malformed: an API key is sk-css- followed by 32 lowercase hex characters (this value has 12 characters)\n"},
		{"missing URL", goodKey, "", 2, "css-mcp: CSS_MCP_URL is not set: set it to the service's MCP endpoint, {app_url}/mcp (the deployed stack's ApiUrl output followed by /mcp, or http://127.0.0.1:8080/mcp for make run)\n"},
		{"wrong key", badKey, server.URL, 1, "css-mcp: the server refused the API key (401 Unauthorized, UNAUTHORIZED: invalid API key); check CSS_API_KEY\n"},
		{"expired account", server.ExpiredKey, server.URL, 1, "css-mcp: the server refused access with this API key (403 Forbidden, ACCESS_EXPIRED: access to this account expired at 2026-01-01T00:00:00Z); check CSS_API_KEY\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vars []string
			if tc.key != "" {
				vars = append(vars, "CSS_API_KEY="+tc.key)
			}
			if tc.url != "" {
				vars = append(vars, "CSS_MCP_URL="+tc.url)
			}
			cmd := command(t, vars...)
			cmd.Stdin = strings.NewReader(initialize)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			if stderr.String() != tc.wantStderr {
				t.Errorf("stderr\n%s\nwant\n%s", stderr.String(), tc.wantStderr)
			}
			if tc.key != "" && strings.Contains(stderr.String()+stdout.String(), tc.key) {
				t.Error("the key was written out")
			}
			if tc.wantCode == 1 {
				// The refused call is answered, so the client shows the reason too.
				var reply struct {
					ID    int `json:"id"`
					Error struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(stdout.Bytes(), &reply); err != nil || reply.ID != 1 ||
					reply.Error.Message+"\n" != tc.wantStderr {
					t.Errorf("stdout %s (%v)", stdout.Bytes(), err)
				}
			} else if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.Bytes())
			}
		})
	}
}

// A line that is not JSON ends the bridge: the SDK's stdio reader stops at it.
func TestBinaryMalformedInput(t *testing.T) {
	server := testserver.Start(t)
	cmd := command(t, "CSS_API_KEY="+server.Key, "CSS_MCP_URL="+server.URL)
	cmd.Stdin = strings.NewReader("not json\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	want := "css-mcp: reading standard input: invalid character 'o' in literal null (expecting 'u')\n"
	if code := cmd.ProcessState.ExitCode(); code != 1 || stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q; want 1, %q", code, stderr.String(), stdout.String(), want)
	}
}

// The Inspector's CLI, a client the project did not write, over HTTP straight to the server and over
// stdio through css-mcp: the same answers either way.
func TestInspector(t *testing.T) {
	server := testserver.Start(t)
	transports := map[string][]string{
		"http":  {server.URL, "--transport", "http", "--header", "Authorization: Bearer " + server.Key},
		"stdio": {binary, "-e", "CSS_API_KEY=" + server.Key, "-e", "CSS_MCP_URL=" + server.URL},
	}
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, out map[string]any)
	}{
		{"tools/list", []string{"--method", "tools/list"}, func(t *testing.T, out map[string]any) {
			if got := names(out["tools"]); got != "add,hold" {
				t.Errorf("tools %s", got)
			}
		}},
		{"tools/call", []string{"--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=3"}, func(t *testing.T, out map[string]any) {
			if got, _ := json.Marshal(out["structuredContent"]); string(got) != `{"sum":5}` || out["isError"] == true {
				t.Errorf("add: %v", out)
			}
		}},
		{"resources/list", []string{"--method", "resources/list"}, func(t *testing.T, out map[string]any) {
			list, _ := out["resources"].([]any)
			if len(list) != 1 || list[0].(map[string]any)["uri"] != testserver.ResourceURI {
				t.Errorf("resources %v", out)
			}
		}},
		{"resources/read", []string{"--method", "resources/read", "--uri", testserver.ResourceURI}, func(t *testing.T, out map[string]any) {
			contents, _ := out["contents"].([]any)
			if len(contents) != 1 || contents[0].(map[string]any)["text"] != testserver.ResourceJSON {
				t.Errorf("contents %v", out)
			}
		}},
		{"prompts/list", []string{"--method", "prompts/list"}, func(t *testing.T, out map[string]any) {
			if got := names(out["prompts"]); got != testserver.PromptName {
				t.Errorf("prompts %s", got)
			}
		}},
		{"prompts/get", []string{"--method", "prompts/get", "--prompt-name", testserver.PromptName, "--prompt-args", "title=vegan lunches"}, func(t *testing.T, out map[string]any) {
			messages, _ := out["messages"].([]any)
			if len(messages) != 1 || !strings.Contains(fmt.Sprint(messages[0]), "Call generate_titles for vegan lunches") {
				t.Errorf("messages %v", out)
			}
		}},
	} {
		for _, transport := range []string{"http", "stdio"} {
			t.Run(tc.name+"/"+transport, func(t *testing.T) {
				args := append(append([]string{}, transports[transport]...), tc.args...)
				args = append(args, "--format", "json")
				stdout := inspector.Run(t, args...)
				// --format json: one object, the method's result under "result".
				var out struct {
					Result map[string]any `json:"result"`
				}
				if err := json.Unmarshal(stdout, &out); err != nil || out.Result == nil {
					t.Fatalf("output %s: %v", stdout, err)
				}
				tc.check(t, out.Result)
			})
		}
	}
}

// How the Inspector reports a refused key: over HTTP its own way (exit 3, auth_required, the service's
// error body); over stdio with css-mcp's line.
func TestInspectorRefusals(t *testing.T) {
	server := testserver.Start(t)
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"http, wrong key", []string{server.URL, "--transport", "http", "--header", "Authorization: Bearer " + badKey}, 3,
			`{\"code\":\"UNAUTHORIZED\",\"error\":\"invalid API key\"}`},
		{"http, no key", []string{server.URL, "--transport", "http"}, 3, `invalid API key`},
		{"stdio, wrong key", []string{binary, "-e", "CSS_API_KEY=" + badKey, "-e", "CSS_MCP_URL=" + server.URL}, 1,
			"css-mcp: the server refused the API key (401 Unauthorized, UNAUTHORIZED: invalid API key); check CSS_API_KEY"},
		{"stdio, malformed key", []string{binary, "-e", "CSS_API_KEY=sk-css-12", "-e", "CSS_MCP_URL=" + server.URL}, 1,
			"css-mcp: CSS_API_KEY is malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := inspector.Exec(t, append(tc.args, "--method", "tools/list", "--format", "json")...)
			out := string(res.Stdout) + string(res.Stderr)
			if res.ExitCode != tc.wantCode || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d\nstdout %s\nstderr %s\nwant exit %d and %s", res.ExitCode, res.Stdout, res.Stderr, tc.wantCode, tc.want)
			}
			if strings.Contains(out, badKey) {
				t.Error("the key was written out")
			}
		})
	}
}

func names(list any) string {
	items, _ := list.([]any)
	var out []string
	for _, item := range items {
		m, _ := item.(map[string]any)
		out = append(out, fmt.Sprint(m["name"]))
	}
	return strings.Join(out, ",")
}
