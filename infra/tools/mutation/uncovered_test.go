package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const mutSrc = `package p

const n = 5 * 2

func f(a, b, c bool, x int) int {
	for i := 0; i < x; i++ {
		if a && b && c {
			break
		}
		switch {
		case x >= -1:
			continue
		}
	}
	return x % 3
}
`

func TestMutate(t *testing.T) {
	tests := []struct {
		name      string
		line, col int
		kind      string
		want      string // the mutated line, trimmed
	}{
		{"constant", 3, 13, "ARITHMETIC_BASE", "const n = (5 / 2)"},
		{"boundary", 6, 16, "CONDITIONALS_BOUNDARY", "for i := 0; (i <= x); i++ {"},
		{"negation", 6, 16, "CONDITIONALS_NEGATION", "for i := 0; (i >= x); i++ {"},
		{"increment", 6, 22, "INCREMENT_DECREMENT", "for i := 0; i < x; i-- {"},
		{"first && of three keeps its operands", 7, 8, "INVERT_LOGICAL", "if (a || b) && c {"},
		{"second && of three", 7, 13, "INVERT_LOGICAL", "if (a && b || c) {"},
		{"break", 8, 4, "INVERT_LOOPCTRL", "continue"},
		{"case condition", 11, 10, "CONDITIONALS_NEGATION", "case (x < -1):"},
		{"negative", 11, 13, "INVERT_NEGATIVES", "case x >= +1:"},
		{"continue", 12, 4, "INVERT_LOOPCTRL", "break"},
		{"remainder", 15, 11, "ARITHMETIC_BASE", "return (x * 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := mutate([]byte(mutSrc), tt.line, tt.col, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(out), "\n")
			if got := strings.TrimSpace(lines[tt.line-1]); got != tt.want {
				t.Fatalf("line %d = %q, want %q", tt.line, got, tt.want)
			}
			// Nothing else changes.
			orig := strings.Split(mutSrc, "\n")
			for i := range orig {
				if i != tt.line-1 && orig[i] != lines[i] {
					t.Fatalf("line %d changed: %q", i+1, lines[i])
				}
			}
		})
	}
	for _, bad := range []struct {
		line, col int
		kind      string
	}{{7, 8, "CONDITIONALS_NEGATION"}, {7, 7, "INVERT_LOGICAL"}, {99, 1, "INVERT_LOGICAL"}} {
		if _, err := mutate([]byte(mutSrc), bad.line, bad.col, bad.kind); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestRunnerStatus: the mutated file is laid over the package; the test run's outcome is the mutant's
// status.
func TestRunnerStatus(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p", "f.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(mutSrc), 0o600); err != nil {
		t.Fatal(err)
	}
	exitErr := func() error {
		err := exec.Command("false").Run()
		return err
	}()
	tests := []struct {
		name string
		out  string
		err  error
		want string
	}{
		{"tests pass", "ok", nil, "LIVED"},
		{"tests fail", "--- FAIL", exitErr, "KILLED"},
		{"does not compile", "FAIL\tp [build failed]", exitErr, "NOT VIABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var overlay string
			r := &runner{dir: t.TempDir(), limit: 1e9, goTest: func(_ context.Context, pkg, ov string) ([]byte, error) {
				if pkg != filepath.Dir(src) {
					t.Errorf("package %q, want %q", pkg, filepath.Dir(src))
				}
				overlay = ov
				return []byte(tt.out), tt.err
			}}
			got, err := r.status(src, 15, 11, "ARITHMETIC_BASE")
			if err != nil || got != tt.want {
				t.Fatalf("status = %q, %v; want %q", got, err, tt.want)
			}
			b, err := os.ReadFile(overlay)
			if err != nil || !strings.Contains(string(b), `"Replace"`) || !strings.Contains(string(b), filepath.Join(dir, "p", "f.go")) {
				t.Fatalf("overlay %s, %v", b, err)
			}
		})
	}
	slow := &runner{dir: t.TempDir(), limit: 10 * time.Millisecond, goTest: func(ctx context.Context, _, _ string) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	if got, err := slow.status(src, 15, 11, "ARITHMETIC_BASE"); err != nil || got != "TIMED OUT" {
		t.Errorf("tests past the limit: %q, %v; want TIMED OUT", got, err)
	}
	r := &runner{dir: t.TempDir(), limit: 1e9, goTest: func(context.Context, string, string) ([]byte, error) {
		return nil, errors.New("go not found")
	}}
	if _, err := r.status(src, 15, 11, "ARITHMETIC_BASE"); err == nil {
		t.Error("a go command that did not run gave a status")
	}
}
