package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryVariableIsDocumented: each environment variable this package reads has its row in README.md,
// the one table of the service's configuration.
func TestEveryVariableIsDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.go")
	name := regexp.MustCompile(`"((?:CSS|AWS)_[A-Z0-9_]+|PORT|GOGC)"`)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			seen++
			if !strings.Contains(string(readme), "`"+m[1]+"`") {
				t.Errorf("%s reads %s, which shared/config/README.md does not document", f, m[1])
			}
		}
	}
	if seen < 40 {
		t.Errorf("found %d variables; the scan is broken", seen)
	}
}
