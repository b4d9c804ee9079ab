package contract_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A citation: "decision 7", "decisions 34-40", "decisions 22–25", "decisions 1, 2, 4 and 5".
var (
	citation   = regexp.MustCompile(`(?i)\bdecisions? (\d+(?:(?:\s*[-–,]\s*|\s+and\s+)\d+)*)`)
	citedPart  = regexp.MustCompile(`(\d+)\s*[-–]\s*(\d+)|\d+`)
	decisionH3 = regexp.MustCompile(`(?m)^### (\d+)\. \S`)
)

// decisionNumbers returns the numbers DECISIONS.md has a heading for, checking they run 1, 2, 3, ... in order.
func decisionNumbers(t *testing.T) map[int]bool {
	t.Helper()
	doc, err := os.ReadFile("DECISIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	have := map[int]bool{}
	for i, m := range decisionH3.FindAllStringSubmatch(string(doc), -1) {
		n, _ := strconv.Atoi(m[1])
		if n != i+1 {
			t.Errorf("DECISIONS.md: heading %d is numbered %d; decisions are numbered 1, 2, 3, ... and never renumbered", i+1, n)
		}
		have[n] = true
	}
	if len(have) < 45 {
		t.Errorf("DECISIONS.md has %d decisions, want at least 45", len(have))
	}
	return have
}

// cited expands one citation's numbers ("34-40" is seven).
func cited(list string) []int {
	var ns []int
	for _, p := range citedPart.FindAllStringSubmatch(list, -1) {
		if p[1] != "" {
			a, _ := strconv.Atoi(p[1])
			b, _ := strconv.Atoi(p[2])
			for n := a; n <= b && n-a < 100; n++ {
				ns = append(ns, n)
			}
			continue
		}
		n, _ := strconv.Atoi(p[0])
		ns = append(ns, n)
	}
	return ns
}

func TestCitedNumbersExpand(t *testing.T) {
	for in, want := range map[string]string{
		"decision 7;":               "[7]",
		"decisions 34-40)":          "[34 35 36 37 38 39 40]",
		"decisions 22–25":           "[22 23 24 25]",
		"decisions 1, 2, 4 and 5":   "[1 2 4 5]",
		"Decision 17 says":          "[17]",
		"decisions 28 and 34; also": "[28 34]",
	} {
		m := citation.FindStringSubmatch(in)
		if m == nil {
			t.Errorf("%q: no citation found", in)
			continue
		}
		if got := fmtInts(cited(m[1])); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func fmtInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestCitedDecisionsExist: every "decision N" in the repository's Go, YAML and Markdown files names a
// decision of DECISIONS.md, so a reader of the repository alone can look it up.
func TestCitedDecisionsExist(t *testing.T) {
	have := decisionNumbers(t)
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root is not two folders up: %v", err)
	}
	skip := map[string]bool{".git": true, ".cache": true, ".tools": true, ".data": true, ".build": true, ".aws-sam": true, "node_modules": true}
	citations := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".yaml", ".yml", ".md":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				for _, n := range cited(m[1]) {
					citations++
					if !have[n] {
						rel, _ := filepath.Rel(root, path)
						t.Errorf("%s:%d cites decision %d, which shared/contract/DECISIONS.md does not have", rel, i+1, n)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if citations < 100 {
		t.Errorf("found %d citations; the scan is broken (the code cites over a hundred)", citations)
	}
}
