package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each prerequisite the README names is checked before make installs or builds anything: with one missing,
// infra/tools/require fails naming it and the README's section (issue 35 item 1). The PATH of each case
// holds links to this machine's tools, all but the one left out.
func TestMissingPrerequisitesAreNamed(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "infra", "tools", "require")
	// What the script itself runs, and the tools make test needs.
	base := []string{"bash", "env", "sed", "id", "chromium", "chromedriver", "apt-get"}
	tools := []string{"go", "java", "mvn", "node", "npm", "python3"}
	pathWithout := func(left string) string {
		dir := t.TempDir()
		for _, name := range append(base, tools...) {
			if name == left {
				continue
			}
			target, err := exec.LookPath(name)
			if err != nil {
				t.Fatalf("this machine has no %s, which make test needs", name)
			}
			if name == "python3" {
				// The interpreter itself: a version manager's shim needs the manager on the PATH.
				out, err := exec.Command(target, "-c", "import sys; print(sys.executable)").Output()
				if err != nil {
					t.Fatal(err)
				}
				target = strings.TrimSpace(string(out))
			}
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	run := func(path string) (string, error) {
		cmd := exec.Command(script, "test", "go", "java", "mvn", "node", "npm", "python3-venv", "apt")
		cmd.Env = []string{"PATH=" + path, "HOME=" + os.Getenv("HOME")}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(pathWithout("")); err != nil {
		t.Fatalf("with every tool: %v\n%s", err, out)
	}
	for left, named := range map[string]string{"go": "- go", "mvn": "- mvn", "node": "- node", "npm": "- npm",
		"java": "Java 17", "python3": "Python 3 with venv"} {
		out, err := run(pathWithout(left))
		if err == nil || !strings.Contains(out, named) || !strings.Contains(out, `"The two commands"`) {
			t.Errorf("without %s: %v\n%s", left, err, out)
		}
	}
}
