// Command mutation runs gremlins (mutation testing) on packages one at a time, on one worker, each within a
// time limit, tests itself the mutants gremlins leaves NOT COVERED (see uncovered.go), and scores each
// package as the share of its mutants the tests detect (killed, or timed out), leaving out the mutants
// listed in equivalent.txt (changes no test could tell apart, each with a reason). A mutant that compiles
// and that the tests do not detect, whether they reach it or not, counts as surviving. `make mutation`
// runs it.
//
//	go run ./infra/tools/mutation -gremlins .tools/gremlins-v0.6.0/gremlins [-threshold 90] [-timeout 45m] pkg...
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// mutators are gremlins' defaults plus inverted logic and loop control.
var mutators = []string{"--invert-logical", "--invert-loopctrl"}

// excludes are files of a package that are not mutated: generated code and the code generators (run by `go
// generate`, checked by the staleness test, not by the validator's tests).
var excludes = map[string][]string{
	"shared/contract": {`internal/`, `requests_gen\.go$`},
	"shared/auth":     {`authtest/`}, // the test double of the account system
}

func main() {
	bin := flag.String("gremlins", "", "the gremlins binary")
	threshold := flag.Float64("threshold", 90, "the least score (percent) each package must reach")
	timeout := flag.Duration("timeout", 45*time.Minute, "time limit of each package's run")
	coefficient := flag.Int("timeout-coefficient", 5, "gremlins' test timeout, as a multiple of the suite's time")
	equivalentFile := flag.String("equivalent", "infra/tools/mutation/equivalent.txt", "the mutants judged equivalent")
	flag.Parse()
	if *bin == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mutation -gremlins PATH [-threshold 90] [-timeout 45m] pkg...")
		os.Exit(2)
	}
	eq, err := readEquivalent(*equivalentFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	failed := false
	var rows []string
	for _, pkg := range flag.Args() {
		pkg = strings.TrimSuffix(strings.TrimPrefix(pkg, "./"), "/")
		start := time.Now()
		rep, err := run(*bin, pkg, *timeout, *coefficient)
		if err == nil {
			err = rerunUncovered(pkg, &rep, *coefficient, start.Add(*timeout))
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", pkg, err)
			failed = true
			rows = append(rows, fmt.Sprintf("  %-18s failed: %v", pkg, err))
			continue
		}
		s, err := score(pkg, rep, eq, os.ReadFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", pkg, err)
			failed = true
		}
		for _, m := range s.survivors {
			fmt.Printf("  survived: %s\n", m)
		}
		for _, e := range s.stale {
			fmt.Printf("  listed as equivalent, but no surviving mutant matches (detected, or the code moved): %s\n", e)
			failed = true
		}
		ok := s.percent() >= *threshold
		failed = failed || !ok
		rows = append(rows, fmt.Sprintf("  %-18s %6.2f%%  detected %d of %d (killed %d, timed out %d; survived %d; %d equivalent left out, %d not viable)  %s%s",
			pkg, s.percent(), s.detected(), s.considered(), s.killed, s.timedOut, s.lived, s.equivalent, s.notViable,
			time.Since(start).Round(time.Second), map[bool]string{true: "", false: "  BELOW THRESHOLD"}[ok]))
	}
	fmt.Printf("\nmutation score (threshold %.0f%%):\n%s\n", *threshold, strings.Join(rows, "\n"))
	if failed {
		os.Exit(1)
	}
}

// rerunUncovered tests each NOT COVERED mutant of rep with the package's own tests, recording what
// happened in its status, and stops at deadline.
func rerunUncovered(pkg string, rep *report, coefficient int, deadline time.Time) error {
	var todo []*mutation
	var paths []string
	for i := range rep.Files {
		for j := range rep.Files[i].Mutations {
			if m := &rep.Files[i].Mutations[j]; m.Status == "NOT COVERED" {
				todo = append(todo, m)
				paths = append(paths, filepath.Join(pkg, rep.Files[i].FileName))
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	r, err := newRunner(pkg, coefficient)
	if err != nil {
		return err
	}
	defer r.close()
	fmt.Printf("== %s: %d mutants gremlins left NOT COVERED, tested here (go test -overlay, limit %s each)\n", pkg, len(todo), r.limit.Round(time.Second))
	for i, m := range todo {
		if time.Now().After(deadline) {
			return errors.New("not done within the time limit")
		}
		status, err := r.status(paths[i], m.Line, m.Column, m.Type)
		if err != nil {
			return err
		}
		m.Status = status
		if status == "LIVED" {
			fmt.Printf("       LIVED %s at %s:%d:%d\n", m.Type, paths[i], m.Line, m.Column)
		}
	}
	return nil
}

// report is the part of gremlins' JSON output read here.
type report struct {
	Files []struct {
		FileName  string     `json:"file_name"`
		Mutations []mutation `json:"mutations"`
	} `json:"files"`
}

type mutation struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

func run(bin, pkg string, timeout time.Duration, coefficient int) (report, error) {
	out, err := os.CreateTemp("", "gremlins-*.json")
	if err != nil {
		return report{}, err
	}
	out.Close()
	defer os.Remove(out.Name())
	args := append([]string{"unleash", "--workers", "1", "--timeout-coefficient", strconv.Itoa(coefficient),
		"--output-statuses", "lct", "-o", out.Name()}, mutators...)
	for _, e := range excludes[pkg] {
		args = append(args, "--exclude-files", e)
	}
	args = append(args, "./"+pkg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	fmt.Printf("== %s: gremlins %s\n", pkg, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return report{}, fmt.Errorf("not done within %s", timeout)
		}
		return report{}, fmt.Errorf("gremlins: %w", err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return report{}, err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return report{}, fmt.Errorf("gremlins output: %w", err)
	}
	return rep, nil
}

// equivalent is one mutant judged equivalent: where it is (the package's file, the source line's text and
// the column, so the entry survives lines moving); its reason in the list is required there, not kept.
type equivalent struct {
	pkg, file, mutator, text string
	column                   int
}

func (e equivalent) String() string {
	return fmt.Sprintf("%s/%s col %d %s %q", e.pkg, e.file, e.column, e.mutator, e.text)
}

// readEquivalent reads the list: one mutant a line, tab-separated: package/file, column, mutator, the
// source line (trimmed), the reason. Blank lines and # comments are skipped.
func readEquivalent(path string) ([]equivalent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseEquivalent(f, path)
}

func parseEquivalent(r io.Reader, name string) ([]equivalent, error) {
	var out []equivalent
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[4] == "" {
			return nil, fmt.Errorf("%s:%d: want file, column, mutator, source line and reason, tab-separated", name, n)
		}
		col, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column: %w", name, n, err)
		}
		pkg, file := filepath.Split(f[0])
		out = append(out, equivalent{pkg: strings.TrimSuffix(pkg, "/"), file: file, column: col, mutator: f[2], text: f[3]})
	}
	return out, sc.Err()
}

// tally is a package's result.
type tally struct {
	killed, timedOut, lived, notCovered, equivalent, notViable int
	survivors                                                  []string
	stale                                                      []equivalent
}

func (t tally) detected() int   { return t.killed + t.timedOut }
func (t tally) considered() int { return t.detected() + t.lived + t.notCovered }
func (t tally) percent() float64 {
	if t.considered() == 0 {
		return 100
	}
	return 100 * float64(t.detected()) / float64(t.considered())
}

// score tallies rep for pkg, leaving out the surviving mutants that eq lists; an entry of eq for pkg that
// matches no surviving mutant is stale.
func score(pkg string, rep report, eq []equivalent, readFile func(string) ([]byte, error)) (tally, error) {
	var t tally
	used := map[int]bool{}
	lines := map[string][]string{}
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				t.killed++
				continue
			case "TIMED OUT":
				t.timedOut++
				continue
			case "LIVED", "NOT COVERED":
			default: // NOT VIABLE, SKIPPED: no mutant to score
				t.notViable++
				continue
			}
			path := filepath.Join(pkg, f.FileName)
			if lines[path] == nil {
				b, err := readFile(path)
				if err != nil {
					return t, err
				}
				lines[path] = strings.Split(string(b), "\n")
			}
			text := ""
			if m.Line >= 1 && m.Line <= len(lines[path]) {
				text = strings.TrimSpace(lines[path][m.Line-1])
			}
			// Lines of the same text (two `if i > 0 {` in one file) take an entry each.
			i := indexOf(eq, used, func(e equivalent) bool {
				return e.pkg == pkg && e.file == f.FileName && e.column == m.Column && e.mutator == m.Type && e.text == text
			})
			switch {
			case i >= 0:
				used[i] = true
				t.equivalent++
			case m.Status == "LIVED":
				t.lived++
				t.survivors = append(t.survivors, fmt.Sprintf("%s:%d:%d %s  %s", path, m.Line, m.Column, m.Type, text))
			default:
				t.notCovered++
				t.survivors = append(t.survivors, fmt.Sprintf("%s:%d:%d %s (never reached)  %s", path, m.Line, m.Column, m.Type, text))
			}
		}
	}
	for i, e := range eq {
		if e.pkg == pkg && !used[i] {
			t.stale = append(t.stale, e)
		}
	}
	sort.Strings(t.survivors)
	if len(t.stale) > 0 {
		return t, errors.New("equivalent.txt lists mutants that no longer survive")
	}
	return t, nil
}

// indexOf returns the first entry of eq that is not used and matches, or -1.
func indexOf(eq []equivalent, used map[int]bool, match func(equivalent) bool) int {
	for i, e := range eq {
		if !used[i] && match(e) {
			return i
		}
	}
	return -1
}
