package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/testkit/inspector"
)

// TestMCPWithTheInspector drives the local stack's MCP endpoint with a real client, the MCP Inspector CLI,
// over streamable HTTP and over stdio through the css-mcp bridge: it lists the tools, resources and
// prompts, calls tools, reads a resource and gets a prompt.
func TestMCPWithTheInspector(t *testing.T) {
	base, _, stop := start(t, map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey})
	defer stop()
	bridge := filepath.Join(t.TempDir(), "css-mcp")
	if out, err := exec.Command("go", "build", "-o", bridge, "../../infra/css-mcp").CombinedOutput(); err != nil {
		t.Fatalf("build css-mcp: %v\n%s", err, out)
	}
	url := base + "/mcp"
	transports := map[string][]string{
		"http":  {url, "--transport", "http", "--header", "Authorization: Bearer " + devKey},
		"stdio": {bridge, "-e", "CSS_API_KEY=" + devKey, "-e", "CSS_MCP_URL=" + url},
	}
	for name, target := range transports {
		t.Run(name, func(t *testing.T) {
			run := func(args ...string) map[string]any {
				t.Helper()
				out := inspector.Run(t, append(append(slices.Clone(target), args...), "--format", "json")...)
				var v struct {
					Result map[string]any `json:"result"`
				}
				if err := json.Unmarshal(out, &v); err != nil || v.Result == nil {
					t.Fatalf("%v: %s", args, out)
				}
				return v.Result
			}
			if tools := run("--method", "tools/list")["tools"].([]any); len(tools) != 39 {
				t.Fatalf("tools/list: %d tools", len(tools))
			}
			if res := run("--method", "resources/list")["resources"].([]any); len(res) != 4 {
				t.Fatalf("resources/list: %v", res)
			}
			if tmpl := run("--method", "resources/templates/list")["resourceTemplates"].([]any); len(tmpl) != 2 {
				t.Fatalf("resources/templates/list: %v", tmpl)
			}
			if prompts := run("--method", "prompts/list")["prompts"].([]any); len(prompts) != 10 {
				t.Fatalf("prompts/list: %v", prompts)
			}
			note := run("--method", "tools/call", "--tool-name", "save_note", "--tool-arg", "category=general", "content=via "+name)
			if sc, _ := note["structuredContent"].(map[string]any); sc["source"] != "mcp" || note["isError"] == true {
				t.Fatalf("save_note: %v", note)
			}
			videos := run("--method", "tools/call", "--tool-name", "get_my_videos")
			if _, ok := videos["structuredContent"].(map[string]any)["videos"]; !ok {
				t.Fatalf("get_my_videos: %v", videos)
			}
			// A tool error is a result (the CLI exits 5 on isError), never a protocol failure.
			bad := inspector.Exec(t, append(slices.Clone(target), "--method", "tools/call", "--tool-name", "get_video_ideas",
				"--tool-arg", "limit=101", "--format", "json")...)
			if bad.ExitCode != 5 || !strings.Contains(string(bad.Stdout), `"isError":true`) ||
				!strings.Contains(string(bad.Stdout), "VALIDATION_ERROR: limit: must be at most 100") {
				t.Fatalf("get_video_ideas limit=101: exit %d %s %s", bad.ExitCode, bad.Stdout, bad.Stderr)
			}
			profile := run("--method", "resources/read", "--uri", "css://niche-profile")
			if c := profile["contents"].([]any); len(c) != 1 || c[0].(map[string]any)["mimeType"] != "application/json" {
				t.Fatalf("css://niche-profile: %v", profile)
			}
			prompt := run("--method", "prompts/get", "--prompt-name", "optimize-titles", "--prompt-args", "title=Meal prep on a budget")
			if !strings.Contains(toJSON(prompt["messages"]), "generate_titles") {
				t.Fatalf("optimize-titles: %v", prompt)
			}
		})
	}
	// Both notes landed in the one channel of the key.
	if _, body := call(t, "GET", base+"/api/v1/notes", devKey, ""); !strings.Contains(body, `"total":2`) {
		t.Fatalf("notes after the MCP calls: %s", body)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
