package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	file string // relative to the repository root
	line int    // of the opening fence
	lang string // the fence's info string: sh, bash, console, json, ...
	text string
}

// runnable reports whether the block is one a reader pastes into a shell and the test runs: fenced as sh
// or bash, and calling curl.
func (b docBlock) runnable() bool {
	return (b.lang == "sh" || b.lang == "bash") && curlWord.MatchString(b.text)
}

// docsBase is the one place the docs name the local stack's address (README.md's "Calling it"); every
// other snippet goes through $BASE, so `PORT=8090 make run` needs no edit of any of them.
const docsBase = "BASE=http://127.0.0.1:${PORT:-8080}"

// hardPort is the local stack's default address written out, which sh and bash snippets must not do (a
// loopback webhook receiver on another port is fine).
var hardPort = regexp.MustCompile(`(127\.0\.0\.1|localhost):8080\b`)

// docBlocks returns the fenced blocks of every Markdown file under root, README.md first, then by path;
// each file's blocks in order.
func docBlocks(t *testing.T, root string) []docBlock {
	t.Helper()
	skip := map[string]bool{".git": true, ".cache": true, ".tools": true, ".data": true, ".build": true, ".aws-sam": true, "node_modules": true}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skip[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(files, func(i, j int) bool {
		if (files[i] == "README.md") != (files[j] == "README.md") {
			return files[i] == "README.md"
		}
		return files[i] < files[j]
	})
	var blocks []docBlock
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, fencedBlocks(f, string(b))...)
	}
	return blocks
}

// fencedBlocks returns the fenced blocks of a Markdown file. Only blocks fenced as sh or bash that call
// curl are run; console marks an example that cannot run on the local stack (cloud commands, `make run`
// itself, commands that need the stack stopped).
func fencedBlocks(file, doc string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, "```") {
			if cur != nil {
				cur.text += line + "\n"
			}
			continue
		}
		if cur == nil {
			cur = &docBlock{file: file, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
			continue
		}
		blocks = append(blocks, *cur)
		cur = nil
	}
	return blocks
}

var (
	curlWord      = regexp.MustCompile(`\bcurl\b`)
	statusComment = regexp.MustCompile(`^#\s*([1-5][0-9][0-9])\b`)
)

// trailingComment returns the comment ending a shell line, ignoring # inside quotes.
func trailingComment(line string) string {
	var quote rune
	prev := ' '
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return line[i:]
		}
		prev = r
	}
	return ""
}

// script turns a block into the lines bash runs: continuation lines joined, and a curl command whose
// trailing comment starts with a status expecting that status.
func (b docBlock) script() string {
	text := strings.ReplaceAll(b.text, "\\\n", " ")
	var out strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "curl ") {
			if m := statusComment.FindStringSubmatch(trailingComment(line)); m != nil {
				line = "CSS_DOC_EXPECT=" + m[1] + " " + line
			}
		}
		out.WriteString(line + "\n")
	}
	return out.String()
}

func TestDocScriptExpectsTheCommentsStatus(t *testing.T) {
	b := docBlock{text: "curl -X DELETE $API/x -H \"$H\"   # 204, or 404\n" +
		"curl -d '{\"a\":\"#200\"}' $API/y\n" +
		"curl -X POST $W/1 \\\n  -H \"$H\"  # 409 while pending; 202 {\"deliveryId\"} once ended\n" +
		"X=$(curl -s $BASE/z)   # 202 at once\n"}
	got := b.script()
	for _, want := range []string{
		"CSS_DOC_EXPECT=204 curl -X DELETE",
		"\ncurl -d '{\"a\":\"#200\"}' $API/y\n",
		"CSS_DOC_EXPECT=409 curl -X POST $W/1    -H",
		"X=$(curl -s $BASE/z)   # 202 at once\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("script lacks %q:\n%s", want, got)
		}
	}
}

// docPrelude sets what the examples assume (KEY and BASE come from the environment) and wraps curl: each
// call must exit 0 with a 2xx, or with CSS_DOC_EXPECT when set. A call that does not is written to
// $CSS_DOC_FAILURES and ends the script.
const docPrelude = `set -eo pipefail
API=$BASE/api/v1
H="Authorization: Bearer $KEY"
J="Content-Type: application/json"
CH=$(command curl -sSf $API/me -H "$H" | jq -r .channelId)
css_doc_block=
curl() {
	local expect=${CSS_DOC_EXPECT:-2xx} out code
	out=$(mktemp)
	echo "$css_doc_block" >> "$CSS_DOC_CALLS"
	if ! code=$(command curl -sS -o "$out" -w '%{http_code}' "$@"); then
		echo "$css_doc_block: curl $*: curl failed" >> "$CSS_DOC_FAILURES"
		rm -f "$out"
		return 1
	fi
	cat "$out"; echo; rm -f "$out"
	if { [[ $expect == 2xx ]] && [[ $code != 2?? ]]; } || { [[ $expect != 2xx ]] && [[ $code != "$expect" ]]; }; then
		echo "$css_doc_block: curl $*: answered $code, want $expect" >> "$CSS_DOC_FAILURES"
		return 1
	fi
}
`

// TestDocExamples runs the curl examples of README.md and of the READMEs beside the code against a local
// stack, so a moved or renamed operation cannot leave a doc behind. Each file's blocks run in order in one
// bash, as a reader would paste them. A curl example fenced as anything but sh, bash (run) or console
// (cannot run locally) fails, so none escapes by its fence; and the stack's address is written once,
// README.md's BASE, which every sh or bash snippet uses.
func TestDocExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the docs' examples need %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string][]docBlock{}
	var order []string
	bases := 0
	for _, b := range docBlocks(t, root) {
		if b.lang == "sh" || b.lang == "bash" {
			if m := hardPort.FindString(b.text); m != "" {
				t.Errorf("%s:%d: %s written out; use $BASE (%s, README.md)", b.file, b.line, m, docsBase)
			}
			bases += strings.Count(b.text, docsBase)
		}
		if curlWord.MatchString(b.text) && b.lang != "sh" && b.lang != "bash" && b.lang != "console" {
			t.Errorf("%s:%d: curl in a block fenced %q; fence it sh (the test runs it) or console (it cannot run locally)", b.file, b.line, b.lang)
		}
		if !b.runnable() {
			continue
		}
		if byFile[b.file] == nil {
			order = append(order, b.file)
		}
		byFile[b.file] = append(byFile[b.file], b)
	}
	if byFile["README.md"] == nil || len(order) < 4 {
		t.Fatalf("found curl examples in %v; README.md and the READMEs beside the code have them", order)
	}
	if bases != 1 || !strings.Contains(byFile["README.md"][0].text, docsBase) {
		t.Errorf("the docs set %q %d times; README.md's first example sets it, once", docsBase, bases)
	}

	data := t.TempDir()
	base, _, stop := start(t, map[string]string{
		"CSS_DATA_DIR":                data,
		"CSS_DEV_API_KEYS":            devKey,
		"CSS_RESEARCH_SCHEDULE_EVERY": "24h", // a run starts only when an example asks for one
	})
	defer stop()

	calls := 0
	for _, file := range order {
		var script strings.Builder
		script.WriteString(docPrelude)
		for _, b := range byFile[file] {
			fmt.Fprintf(&script, "css_doc_block=%q\n", fmt.Sprintf("%s:%d", b.file, b.line))
			script.WriteString(b.script())
		}
		dir := t.TempDir()
		failures, callLog := filepath.Join(dir, "failures"), filepath.Join(dir, "calls")
		cmd := exec.Command("bash", "-c", script.String())
		cmd.Dir = root
		// BASE for the READMEs beside the code; README.md sets it again from PORT, as a reader's shell would.
		cmd.Env = append(os.Environ(), "KEY="+devKey, "BASE="+base, "PORT="+strings.TrimPrefix(base, "http://127.0.0.1:"), "CSS_DATA_DIR="+data,
			"CSS_DOC_FAILURES="+failures, "CSS_DOC_CALLS="+callLog)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		failed, _ := os.ReadFile(failures)
		called, _ := os.ReadFile(callLog)
		calls += strings.Count(string(called), "\n")
		if err != nil || len(failed) > 0 {
			t.Errorf("%s: the examples failed (%v):\n%s\noutput:\n%s", file, err, failed, tail(out.String(), 4000))
		}
	}
	if calls < 50 {
		t.Errorf("the docs' examples made %d curl calls; expected at least 50", calls)
	}
	t.Logf("%d curl calls from %d files: %v", calls, len(order), order)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile("(?m)^#{1,6} +(.+?) *$")
	slugDrop  = regexp.MustCompile("[^\\p{L}\\p{N} _-]")
)

// slug is the anchor GitHub gives a heading.
func slug(heading string) string {
	return strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(heading), ""), " ", "-")
}

// TestDocLinksResolve: every relative link of the repository's Markdown files names a file or folder that
// exists, and an anchor a heading of that file has, so docs moved beside the code keep pointing at each other.
func TestDocLinksResolve(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{".git": true, ".cache": true, ".tools": true, ".data": true, ".build": true, ".aws-sam": true, "node_modules": true}
	anchors := func(path string) map[string]bool {
		b, _ := os.ReadFile(path)
		inFence, have := false, map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
			}
			if m := mdHeading.FindStringSubmatch(line); m != nil && !inFence {
				have[slug(m[1])] = true
			}
		}
		return have
	}
	links := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skip[d.Name()] {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), file)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: no such file", rel, target)
					continue
				}
			}
			if anchor != "" && !anchors(dest)[anchor] {
				t.Errorf("%s: link %s: no heading with that anchor", rel, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if links < 30 {
		t.Errorf("found %d relative links; the scan is broken", links)
	}
}
