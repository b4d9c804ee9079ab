package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

const src = `package p

func f(a, b int) bool {
	if a > b {
		return true
	}
	return a == b
}
`

func rep(t *testing.T, js string) report {
	t.Helper()
	var r report
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func readSrc(path string) ([]byte, error) {
	if path != "pkg/p/f.go" {
		return nil, os.ErrNotExist
	}
	return []byte(src), nil
}

func TestScore(t *testing.T) {
	r := rep(t, `{"files":[{"file_name":"f.go","mutations":[
		{"type":"CONDITIONALS_NEGATION","status":"KILLED","line":4,"column":7},
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":4,"column":7},
		{"type":"CONDITIONALS_NEGATION","status":"TIMED OUT","line":7,"column":11},
		{"type":"INVERT_NEGATIVES","status":"NOT COVERED","line":7,"column":11},
		{"type":"ARITHMETIC_BASE","status":"NOT VIABLE","line":7,"column":11}]}]}`)
	eq, err := parseEquivalent(strings.NewReader("# comment\n\npkg/p/f.go\t7\tCONDITIONALS_BOUNDARY\tif a > b {\ta > b and a >= b agree here\n"), "eq")
	if err != nil {
		t.Fatal(err)
	}
	got, err := score("pkg/p", r, eq, readSrc)
	if err != nil {
		t.Fatal(err)
	}
	if got.killed != 1 || got.timedOut != 1 || got.lived != 0 || got.notCovered != 1 || got.equivalent != 1 {
		t.Fatalf("tally %+v", got)
	}
	if got.detected() != 2 || got.considered() != 3 || int(got.percent()) != 66 {
		t.Fatalf("score %d of %d (%.2f%%), want 2 of 3", got.detected(), got.considered(), got.percent())
	}
	if len(got.survivors) != 1 || !strings.Contains(got.survivors[0], "pkg/p/f.go:7:11 INVERT_NEGATIVES (never reached)  return a == b") {
		t.Fatalf("survivors %q", got.survivors)
	}

	// An entry whose line text, column or mutator differs does not match; an entry matching nothing that
	// survives is stale, and an error.
	for _, entry := range []string{
		"pkg/p/f.go\t7\tCONDITIONALS_BOUNDARY\tif a >= b {\twhy",
		"pkg/p/f.go\t8\tCONDITIONALS_BOUNDARY\tif a > b {\twhy",
		"pkg/p/f.go\t7\tCONDITIONALS_NEGATION\tif a > b {\twhy",
	} {
		eq, err := parseEquivalent(strings.NewReader(entry), "eq")
		if err != nil {
			t.Fatal(err)
		}
		got, err := score("pkg/p", r, eq, readSrc)
		if err == nil || got.lived != 1 || got.equivalent != 0 || len(got.stale) != 1 {
			t.Errorf("%q: %+v, %v; want the mutant surviving and the entry stale", entry, got, err)
		}
	}
	// Entries of other packages are neither used nor stale here.
	eq, _ = parseEquivalent(strings.NewReader("pkg/q/f.go\t7\tCONDITIONALS_BOUNDARY\tif a > b {\twhy"), "eq")
	if got, err := score("pkg/p", r, eq, readSrc); err != nil || got.lived != 1 {
		t.Errorf("another package's entry: %+v, %v", got, err)
	}
	if got := (tally{}).percent(); got != 100 {
		t.Errorf("no mutants: %.2f%%, want 100", got)
	}
}

func TestParseEquivalentRefusesBadLines(t *testing.T) {
	for _, line := range []string{
		"pkg/p/f.go\t7\tCONDITIONALS_BOUNDARY\tif a > b {",
		"pkg/p/f.go\tseven\tCONDITIONALS_BOUNDARY\tif a > b {\twhy",
		"pkg/p/f.go\t7\tCONDITIONALS_BOUNDARY\tif a > b {\t",
	} {
		if _, err := parseEquivalent(strings.NewReader(line), "eq"); err == nil {
			t.Errorf("%q accepted", line)
		}
	}
}

// TestScoreSameLineTwice: two mutants on lines of the same text, at the same column, take an entry each;
// one entry leaves the other mutant surviving.
func TestScoreSameLineTwice(t *testing.T) {
	twice := "package p\n\nfunc f(i int) {\n\tif i > 0 {\n\t}\n\tif i > 0 {\n\t}\n}\n"
	read := func(string) ([]byte, error) { return []byte(twice), nil }
	r := rep(t, `{"files":[{"file_name":"f.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":4,"column":7},
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":6,"column":7}]}]}`)
	entry := "pkg/p/f.go\t7\tCONDITIONALS_BOUNDARY\tif i > 0 {\twhy\n"
	for _, tt := range []struct {
		entries           int
		equivalent, lived int
	}{{1, 1, 1}, {2, 2, 0}} {
		eq, err := parseEquivalent(strings.NewReader(strings.Repeat(entry, tt.entries)), "eq")
		if err != nil {
			t.Fatal(err)
		}
		got, err := score("pkg/p", r, eq, read)
		if err != nil || got.equivalent != tt.equivalent || got.lived != tt.lived {
			t.Errorf("%d entries: %+v, %v; want %d equivalent, %d surviving", tt.entries, got, err, tt.equivalent, tt.lived)
		}
	}
}
