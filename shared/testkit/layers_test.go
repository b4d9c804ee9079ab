package testkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/creatorstrategy/css/"

// layer ranks a package of the module: imports point to the same rank or lower. The domain, its ports and
// adapters, and the HTTP and MCP layers (shared/...) are 0; the composition layer (shared/wire/...) 1; the
// mains (functions/...) 2; the test kit (shared/testkit/...) 3. infra/ (tools, bench, deploy) is outside:
// it may import anything and nothing under shared/ or functions/ imports it.
func layer(pkg string) (rank int, infra bool) {
	p := strings.TrimPrefix(pkg, module)
	switch {
	case strings.HasPrefix(p, "infra/"):
		return 0, true
	case p == "shared/testkit" || strings.HasPrefix(p, "shared/testkit/"):
		return 3, false
	case strings.HasPrefix(p, "functions/"):
		return 2, false
	case p == "shared/wire" || strings.HasPrefix(p, "shared/wire/"):
		return 1, false
	}
	return 0, false
}

// aiAbove says whether imp is a package the layer's rules name as above the domain's model port (shared/ai
// imports nothing of generation or research: the brief reaches the models typed, shared/brief).
func aiAbove(pkg, imp string) bool {
	p, i := strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module)
	if p != "shared/ai" && !strings.HasPrefix(p, "shared/ai/") {
		return false
	}
	for _, above := range []string{"shared/generation", "shared/research"} {
		if i == above || strings.HasPrefix(i, above+"/") {
			return true
		}
	}
	return false
}

// No import anywhere runs from a lower layer up to a higher one. Production code: each package imports its
// own rank or lower, and only the local stack's main (functions/local) imports the test kit. Tests sit at
// the test kit's rank (they may build services through the composition layer and use the kit), but no
// test under shared/ or functions/ imports infra/, and none imports a main. `go list` of the whole tree,
// with each package's test imports.
func TestNoImportRunsBackUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 100 {
		t.Fatalf("only %d packages listed", len(lines))
	}
	for _, line := range lines {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("go list: %q", line)
		}
		pkg := f[0]
		rank, infra := layer(pkg)
		if infra {
			continue
		}
		check := func(imp string, test bool) {
			if !strings.HasPrefix(imp, module) {
				return
			}
			ir, iinfra := layer(imp)
			switch {
			case iinfra:
				t.Errorf("%s imports %s: nothing under shared/ or functions/ imports infra/", pkg, imp)
			case aiAbove(pkg, imp):
				t.Errorf("%s imports %s: the model port and its adapters sit below generation and research", pkg, imp)
			case test && ir == 2:
				t.Errorf("%s's tests import the main %s", pkg, imp)
			case test:
			case ir == 3 && pkg == module+"functions/local":
			case ir > rank:
				t.Errorf("%s (rank %d) imports %s (rank %d): an import runs up", pkg, rank, imp, ir)
			}
		}
		for _, imp := range strings.Fields(f[1]) {
			check(imp, false)
		}
		for _, imp := range strings.Fields(f[2]) {
			check(imp, true)
		}
	}
}

// The check sees what it guards: the ranks of known packages.
func TestLayers(t *testing.T) {
	for pkg, want := range map[string]int{
		"shared/videos": 0, "shared/rest": 0, "shared/store/dynamo": 0, "shared/wire": 1, "shared/wire/workers": 1,
		"functions/videos": 2, "functions/local": 2, "shared/testkit/youtubetest": 3,
	} {
		if got, infra := layer(module + pkg); got != want || infra {
			t.Errorf("layer(%s) = %d, %v; want %d", pkg, got, infra, want)
		}
	}
	if _, infra := layer(module + "infra/bench/coldstart"); !infra {
		t.Error("infra/bench/coldstart is not outside the layers")
	}
}
