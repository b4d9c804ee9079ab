package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var stampedVersion = regexp.MustCompile(`-X github\.com/creatorstrategy/css/shared/config\.Version=(\S+?)"`)

// TestMakeRunStampsTheVersion: `make run` builds the local stack with the version `make build` stamps into
// every Lambda (git describe), so /health reports the commit locally too, never `dev`.
func TestMakeRunStampsTheVersion(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dryRun := func(target string) string {
		t.Helper()
		cmd := exec.Command("make", "-n", "--no-print-directory", target)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make -n %s: %v", target, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "#") && (strings.HasPrefix(line, "go build ") || strings.Contains(line, " go build ")) {
				if m := stampedVersion.FindStringSubmatch(line); m != nil {
					return m[1]
				}
				t.Fatalf("make %s builds without the version: %s", target, line)
			}
		}
		t.Fatalf("make -n %s runs no go build:\n%s", target, out)
		return ""
	}
	describe := exec.Command("git", "describe", "--tags", "--always", "--dirty")
	describe.Dir = root
	want, err := describe.Output()
	if err != nil {
		t.Fatalf("git describe: %v", err)
	}
	run, build := dryRun("run"), dryRun("build")
	if run != strings.TrimSpace(string(want)) || run != build {
		t.Errorf("make run stamps %q, make build %q; git describe says %q", run, build, want)
	}
}
