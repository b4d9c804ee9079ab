package contract_test

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// statedSizes finds the README's "<gzipped> KB ... instead of <plain> KB" figures for the served document.
var statedSizes = regexp.MustCompile(`(\d+) KB (?:gzipped )?instead of (\d+) KB`)

// TestStatedDocumentSizes: the sizes README.md states for the served document (gzipped and plain, in KiB)
// are within 5% of the files served, so a grown contract cannot leave the figure behind.
func TestStatedDocumentSizes(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	size := func(name string) float64 {
		t.Helper()
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return float64(st.Size()) / 1024
	}
	gz, plain := size("openapi.json.gz"), size("openapi.json")
	found := statedSizes.FindAllStringSubmatch(string(readme), -1)
	if len(found) < 2 {
		t.Fatalf("README.md states the document's sizes %d times; expected the file table and the curl example", len(found))
	}
	for _, m := range found {
		for i, actual := range []float64{gz, plain} {
			stated, _ := strconv.Atoi(m[i+1])
			if math.Abs(float64(stated)-actual) > 0.05*actual {
				t.Errorf("README.md says %q: %d KB where the file has %.1f KB", m[0], stated, actual)
			}
		}
	}
}
