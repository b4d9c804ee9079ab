package generation_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// injectionCorpus reads testdata/injection_corpus.txt: one Go-quoted string a line, # comments.
func injectionCorpus(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open("testdata/injection_corpus.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := strconv.Unquote(line)
		if err != nil {
			tb.Fatalf("corpus line %q: %v", line, err)
		}
		out = append(out, s)
	}
	if len(out) < 20 {
		tb.Fatalf("the corpus holds %d strings, want at least 20", len(out))
	}
	return out
}
