package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/testkit/inspector"
)

// mcpSection is the section of css-mcp's README whose json blocks are MCP client configurations.
const mcpSection = "## Assistants and editors (MCP)"

// snippetAddress is make run's endpoint as the JSON snippets write it (JSON has no shell variables); the
// test replaces it with its own stack's.
const snippetAddress = "http://127.0.0.1:8080"

// clientConfigs returns the json blocks of the MCP section of infra/css-mcp/README.md.
func clientConfigs(t *testing.T, readme string) []string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n"+mcpSection+"\n")
	if !ok {
		t.Fatalf("infra/css-mcp/README.md has no section %q", mcpSection)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks []string
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "```json\n")
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatal("an unterminated json block")
		}
		blocks, rest = append(blocks, block), tail
	}
	return blocks
}

// mcpServer is one server entry of a client's configuration, as Claude Desktop, VS Code and Cursor write
// it: a command to start (stdio), or a URL with headers (streamable HTTP).
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// TestMCPClientSnippets starts every client configuration of css-mcp's README MCP section as its client would
// (the command with its arguments and environment, or the URL with its headers), through the MCP
// Inspector's CLI, against a local stack, and lists the tools, which the Inspector must find portable
// (no warning of --strict). css-mcp is on the PATH as `make css-mcp`
// puts it there; the snippets' endpoint and key placeholders become the test stack's.
func TestMCPClientSnippets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "infra", "css-mcp", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := clientConfigs(t, string(readme))
	base, _, stop := start(t, map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey})
	defer stop()

	bin := t.TempDir()
	install := exec.Command("go", "install", "-trimpath", "../../infra/css-mcp")
	install.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ../../infra/css-mcp: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CSS_API_KEY", devKey) // Cursor's ${env:CSS_API_KEY}
	// What a client puts in place of the snippets' variables, and the test's stack for make run's address.
	subst := strings.NewReplacer(snippetAddress, base, "${input:css-api-key}", devKey, "${env:CSS_API_KEY}", os.Getenv("CSS_API_KEY"))

	transports := map[string]int{}
	for i, block := range blocks {
		var cfg struct {
			MCPServers map[string]mcpServer `json:"mcpServers"` // Claude Desktop, Cursor
			Servers    map[string]mcpServer `json:"servers"`    // VS Code
		}
		if err := json.Unmarshal([]byte(block), &cfg); err != nil {
			t.Fatalf("block %d is not JSON: %v\n%s", i+1, err, block)
		}
		servers := cfg.MCPServers
		if servers == nil {
			servers = cfg.Servers
		}
		if len(servers) != 1 {
			t.Fatalf("block %d: %d servers, want 1\n%s", i+1, len(servers), block)
		}
		for name, s := range servers {
			var args []string
			transport := "stdio"
			switch {
			case s.Command != "" && s.URL == "" && (s.Type == "" || s.Type == "stdio"):
				if s.Command != "css-mcp" {
					t.Errorf("block %d: command %q, want css-mcp", i+1, s.Command)
				}
				args = append([]string{s.Command}, s.Args...)
				keys := make([]string, 0, len(s.Env))
				for k := range s.Env {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					args = append(args, "-e", k+"="+subst.Replace(s.Env[k]))
				}
			case s.URL != "" && s.Command == "" && (s.Type == "" || s.Type == "http"):
				transport = "http"
				args = []string{subst.Replace(s.URL), "--transport", "http"}
				for k, v := range s.Headers {
					args = append(args, "--header", k+": "+subst.Replace(v))
				}
			default:
				t.Fatalf("block %d: %s is neither a command nor a URL: %+v", i+1, name, s)
			}
			transports[transport]++
			t.Run(fmt.Sprintf("block%d-%s-%s", i+1, name, transport), func(t *testing.T) {
				// --strict: the Inspector names every schema-portability problem of the tools on stderr
				// (a list of types, say, which single-type dialects such as Gemini's cannot read).
				res := inspector.Exec(t, append(args, "--method", "tools/list", "--format", "json", "--strict")...)
				if res.ExitCode != 0 || len(bytes.TrimSpace(res.Stderr)) > 0 {
					t.Fatalf("block %d: exit status %d\nstderr: %s", i+1, res.ExitCode, res.Stderr)
				}
				out := res.Stdout
				var v struct {
					Result struct {
						Tools []struct{ Name string } `json:"tools"`
					} `json:"result"`
				}
				if err := json.Unmarshal(out, &v); err != nil {
					t.Fatalf("block %d: %v\n%s", i+1, err, out)
				}
				if len(v.Result.Tools) != 39 {
					t.Errorf("block %d: %d tools, want 39", i+1, len(v.Result.Tools))
				}
			})
		}
	}
	// At least two clients, each way.
	if transports["stdio"] < 2 || transports["http"] < 2 {
		t.Errorf("infra/css-mcp/README.md configures %v clients by transport; want at least 2 each", transports)
	}
}

// npxInspector is a run of the MCP Inspector through npx, and the version it names, if any.
var npxInspector = regexp.MustCompile(`npx (?:-y )?@modelcontextprotocol/inspector(@[0-9A-Za-z.-]+)?`)

// TestInspectorSnippetsArePinned: every `npx @modelcontextprotocol/inspector` in the docs names the version
// infra/tools/mcp-inspector pins (unpinned, npx on Node 20 picks a 0.x release whose CLI refuses the
// docs' arguments).
func TestInspectorSnippetsArePinned(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(inspector.Dir(), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	want := "@" + pkg.Dependencies["@modelcontextprotocol/inspector"]
	root := filepath.Join("..", "..")
	found := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		doc, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range npxInspector.FindAllStringSubmatch(string(doc), -1) {
			found++
			if m[1] != want {
				t.Errorf("%s: %q, want @modelcontextprotocol/inspector%s", path, m[0], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 2 {
		t.Errorf("%d npx runs of the Inspector in the docs; infra/css-mcp/README.md has two", found)
	}
}
