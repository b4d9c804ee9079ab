package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Gremlins runs a mutant only when the coverage profile has a block over its position, and Go's coverage
// has none over a tagless switch's case conditions or over package-level declarations
// (go-gremlins/gremlins#298): such mutants come back NOT COVERED however well the tests reach them. This
// runner tests every NOT COVERED mutant itself, the way gremlins would: the mutated file is laid over the
// package with `go test -overlay`, and the package's tests are run.

// mutate returns src with the mutant of kind at line:col (1-based, bytes) applied on the syntax tree, as
// gremlins applies it: an operator keeps its operands, so inverting the first && of a && b && c gives
// (a || b) && c.
func mutate(src []byte, line, col int, kind string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	if line < 1 || line > tf.LineCount() {
		return nil, fmt.Errorf("no line %d", line)
	}
	at := tf.Offset(tf.LineStart(line)) + col - 1
	off := func(p token.Pos) int { return tf.Offset(p) }
	var out []byte
	ast.Inspect(f, func(n ast.Node) bool {
		if out != nil {
			return false
		}
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if off(x.OpPos) != at {
				return true
			}
			if op, ok := binaryMutation(kind, x.Op); ok {
				repl := "(" + string(src[off(x.X.Pos()):off(x.X.End())]) + " " + op.String() + " " +
					string(src[off(x.Y.Pos()):off(x.Y.End())]) + ")"
				out = splice(src, off(x.Pos()), off(x.End()), repl)
			}
		case *ast.UnaryExpr:
			if off(x.OpPos) == at && kind == "INVERT_NEGATIVES" && x.Op == token.SUB {
				out = splice(src, at, at+1, "+")
			}
		case *ast.IncDecStmt:
			if off(x.TokPos) == at && kind == "INCREMENT_DECREMENT" {
				out = splice(src, at, at+2, map[token.Token]string{token.INC: "--", token.DEC: "++"}[x.Tok])
			}
		case *ast.BranchStmt:
			if off(x.TokPos) == at && kind == "INVERT_LOOPCTRL" && x.Label == nil {
				switch x.Tok {
				case token.BREAK:
					out = splice(src, at, at+len("break"), "continue")
				case token.CONTINUE:
					out = splice(src, at, at+len("continue"), "break")
				}
			}
		}
		return true
	})
	if out == nil {
		return nil, fmt.Errorf("no %s mutant at %d:%d", kind, line, col)
	}
	return out, nil
}

// binaryMutation is what gremlins' mutator kind turns op into.
func binaryMutation(kind string, op token.Token) (token.Token, bool) {
	m := map[string]map[token.Token]token.Token{
		"CONDITIONALS_BOUNDARY": {token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR},
		"CONDITIONALS_NEGATION": {token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.GEQ: token.LSS,
			token.GTR: token.LEQ, token.LEQ: token.GTR},
		"ARITHMETIC_BASE": {token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL},
		"INVERT_LOGICAL":  {token.LAND: token.LOR, token.LOR: token.LAND},
	}[kind]
	to, ok := m[op]
	return to, ok
}

func splice(src []byte, start, end int, repl string) []byte {
	return slices.Concat(src[:start], []byte(repl), src[end:])
}

// runner tests mutants of one package with `go test -overlay`.
type runner struct {
	dir     string        // a scratch folder
	limit   time.Duration // a mutant's tests taking longer are TIMED OUT
	goTest  func(ctx context.Context, pkg, overlay string) ([]byte, error)
	counter int
}

// goTest runs the tests of the package in dir pkg (relative to the module root) with an overlay.
func goTest(ctx context.Context, pkg, overlay string) ([]byte, error) {
	args := []string{"test", "-count=1"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./"+pkg)...)
	cmd.WaitDelay = 10 * time.Second
	return cmd.CombinedOutput()
}

// newRunner times the package's unmutated tests (compiling included) to set the time limit.
func newRunner(pkg string, coefficient int) (*runner, error) {
	dir, err := os.MkdirTemp("", "mutation-")
	if err != nil {
		return nil, err
	}
	r := &runner{dir: dir, goTest: goTest}
	start := time.Now()
	if out, err := r.goTest(context.Background(), pkg, ""); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("the unmutated tests of %s fail: %w\n%s", pkg, err, out)
	}
	r.limit = max(time.Minute, time.Duration(coefficient)*time.Since(start))
	return r, nil
}

func (r *runner) close() { os.RemoveAll(r.dir) }

// status runs the tests of the package holding path (relative to the module root) against the mutant, and
// says what gremlins would: KILLED, LIVED, TIMED OUT or NOT VIABLE (it does not compile).
func (r *runner) status(path string, line, col int, kind string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	mutated, err := mutate(src, line, col, kind)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	r.counter++
	file := filepath.Join(r.dir, fmt.Sprintf("m%d.go", r.counter))
	if err := os.WriteFile(file, mutated, 0o600); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	if err != nil {
		return "", err
	}
	ov := filepath.Join(r.dir, fmt.Sprintf("m%d.json", r.counter))
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.limit)
	defer cancel()
	out, err := r.goTest(ctx, filepath.Dir(path), ov)
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "TIMED OUT", nil
	case err == nil:
		return "LIVED", nil
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return "NOT VIABLE", nil
	case errors.As(err, &exit):
		return "KILLED", nil
	}
	return "", fmt.Errorf("go test: %w\n%s", err, out)
}
