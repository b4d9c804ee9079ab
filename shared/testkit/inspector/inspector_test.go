package inspector

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The installed CLI is the version package.json pins (a stale node_modules would test another client).
func TestInstalledIsPinned(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(Dir(), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	pinned := pkg.Dependencies["@modelcontextprotocol/inspector"]
	if pinned == "" || strings.ContainsAny(pinned, "^~<>=* ") {
		t.Fatalf("package.json pins %q: want one exact version", pinned)
	}
	if got := strings.TrimSpace(string(Run(t, "--version"))); got != pinned {
		t.Errorf("installed %q, pinned %q: run infra/tools/install-mcp-inspector", got, pinned)
	}
}

func TestExecReportsTheExitStatus(t *testing.T) {
	res := Exec(t, "http://127.0.0.1:9/mcp", "--transport", "http") // no --method
	if res.ExitCode == 0 {
		t.Errorf("a run without --method exited 0 (stdout %s)", res.Stdout)
	}
	if !strings.Contains(string(res.Stderr), "Method is required") {
		t.Errorf("stderr %q", res.Stderr)
	}
}
