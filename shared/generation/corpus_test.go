package generation_test

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
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

var blockRE = regexp.MustCompile(`(?s)<(data-[0-9a-f]{16}) name="([^"]*)">\n(.*?)\n</(data-[0-9a-f]{16})>\n`)

// dataBlocks returns a user message's data blocks by name, and the message with every block cut out.
func dataBlocks(tb testing.TB, user string) (map[string]string, string) {
	tb.Helper()
	out := map[string]string{}
	rest := blockRE.ReplaceAllStringFunc(user, func(m string) string {
		sub := blockRE.FindStringSubmatch(m)
		if sub[1] != sub[4] {
			tb.Errorf("block %s closed by %s", sub[1], sub[4])
		}
		if !json.Valid([]byte(sub[3])) || strings.Contains(sub[3], "\n") {
			tb.Errorf("block %s is not one line of JSON: %s", sub[2], sub[3])
		}
		out[sub[2]] = sub[3]
		return ""
	})
	return out, rest
}

func dataBlock(tb testing.TB, user, name string) string {
	tb.Helper()
	blocks, _ := dataBlocks(tb, user)
	b, ok := blocks[name]
	if !ok {
		tb.Errorf("no data block %q in:\n%s", name, user)
	}
	return b
}
