// Package functions holds tests over what each function's binary links: `go list -deps` of every
// functions/<name> main, as `make build` builds it for Lambda.
package functions

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/creatorstrategy/css/"

// standIns are the offline stand-ins: they serve the local stack and tests, and no Lambda links them. A
// Lambda configured for one fails at start instead.
var standIns = []string{
	module + "infra/local/offline/textmodel",     // the offline text model
	module + "infra/local/offline/imagemodel",    // the offline image model
	module + "infra/local/offline/youtubesample", // the offline research sample
}

// links lists each of pkgs (patterns of main packages) with the packages it links, as the Lambda build
// sees them (the tags, GOOS and GOARCH of make build).
func links(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-tags", "lambda.norpc", "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}`}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue // not a main package
		}
		if len(f) < 100 {
			t.Fatalf("%s: only %d packages listed", f[0], len(f)-1)
		}
		deps[f[0]] = f[1:]
	}
	return deps
}

// linked names the stand-ins among deps.
func linked(deps []string) []string {
	var out []string
	for _, d := range deps {
		for _, s := range standIns {
			if d == s || strings.HasPrefix(d, s+"/") {
				out = append(out, d)
			}
		}
	}
	return out
}

// No Lambda binary links an offline stand-in. The local stack does: that proves the list names packages
// that exist and that the check sees them.
func TestNoFunctionLinksAnOfflineStandIn(t *testing.T) {
	fns := links(t, "./...")
	if len(fns) < 10 {
		t.Fatalf("only %d functions listed", len(fns))
	}
	for _, fn := range slices.Sorted(maps.Keys(fns)) {
		deps := fns[fn]
		if got := linked(deps); len(got) > 0 {
			t.Errorf("%s links %v: the offline stand-ins belong to the local stack", strings.TrimPrefix(fn, module), got)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, module+"infra/local/") {
				t.Errorf("%s links %s, a package of the local stack", strings.TrimPrefix(fn, module), d)
			}
		}
	}
	local := links(t, "../infra/local")[module+"infra/local"]
	if got := linked(local); len(got) != len(standIns) {
		t.Errorf("infra/local links %v of the stand-ins %v", got, standIns)
	}
}
