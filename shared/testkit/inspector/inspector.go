// Package inspector runs the MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in
// infra/tools/mcp-inspector and installed there by infra/tools/install-mcp-inspector, part of `make
// tools`) from Go tests: a real MCP client, not written by this project, driving /mcp over HTTP or css-mcp
// over stdio. A test that needs it fails, never skips, when it is not installed.
//
//	out := inspector.Run(t, url, "--transport", "http", "--method", "tools/list",
//		"--header", "Authorization: Bearer "+key)
//	out = inspector.Run(t, cssMCPBinary, "-e", "CSS_API_KEY="+key, "-e", "CSS_MCP_URL="+url,
//		"--method", "tools/call", "--tool-name", "get_my_videos", "--tool-arg", "limit=5")
package inspector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Timeout bounds one run of the CLI (its own connection timeout is 15 s).
const Timeout = 60 * time.Second

// Dir is the folder holding the pinned package.json and, once installed, node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "infra", "tools", "mcp-inspector")
}

// Path returns the installed CLI, or an error saying how to install it.
func Path() (string, error) {
	path := filepath.Join(Dir(), "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("the MCP Inspector is not installed (%w): run `make tools` or infra/tools/install-mcp-inspector", err)
	}
	return path, nil
}

// Result is one run of the CLI.
type Result struct {
	Stdout, Stderr []byte
	// ExitCode is the CLI's exit status (0 on success).
	ExitCode int
}

// Exec runs `mcp-inspector --cli --stored-auth-only args...` and returns what it wrote and its exit
// status. It fails t when the CLI is missing, cannot be started, or outlives Timeout, never when it exits
// non-zero: the caller checks, which lets a test assert a refusal. The CLI gets a home of its own, so it
// reads and writes nothing of the user's (its catalog, storage and secrets live under ~/.mcp-inspector).
//
// --stored-auth-only: on a 401 with WWW-Authenticate the Inspector would start an OAuth login; with it, it
// exits 3 (`auth_required`) with the server's answer in the message instead.
func Exec(t testing.TB, args ...string) Result {
	t.Helper()
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), Timeout)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, path, append([]string{"--cli", "--stored-auth-only"}, args...)...)
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"MCP_STORAGE_DIR="+filepath.Join(home, "storage"),
		"MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"),
		"NO_COLOR=1",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcp-inspector %q: no result within %s (stderr: %s)", args, Timeout, stderr.Bytes())
	}
	if _, exited := errors.AsType[*exec.ExitError](err); err != nil && !exited {
		t.Fatalf("mcp-inspector %q: %v", args, err)
	}
	return Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: cmd.ProcessState.ExitCode()}
}

// Run runs `mcp-inspector --cli args...` and returns its standard output; it fails t when the CLI is
// missing or exits non-zero.
func Run(t testing.TB, args ...string) []byte {
	t.Helper()
	res := Exec(t, args...)
	if res.ExitCode != 0 {
		t.Fatalf("mcp-inspector %q: exit status %d\nstdout: %s\nstderr: %s", args, res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stdout
}
