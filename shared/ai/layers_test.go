package ai_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The model port and its adapters import nothing of generation or the local stack: the brief reaches them
// typed (shared/brief), and the offline stand-ins live in infra/local. `go list -deps` of shared/ai/...,
// tests excluded.
func TestNoImportRunsBackUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("only %d packages listed", len(deps))
	}
	const module = "github.com/creatorstrategy/css/"
	for _, d := range deps {
		for _, above := range []string{"shared/generation", "shared/research", "infra/"} {
			if d == module+above || strings.HasPrefix(d, module+strings.TrimSuffix(above, "/")+"/") {
				t.Errorf("shared/ai/... imports %s", d)
			}
		}
	}
}
