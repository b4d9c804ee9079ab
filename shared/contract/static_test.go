package contract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sync"
	"testing"
)

// opView is what an operation declares, without its lazily compiled validator.
type opView struct {
	ID, Method, Path, Tag, Function string
	Credential                      Credential
	RateGroup                       RateGroup
	Public, HasBody, BodyRequired   bool
	SuccessStatus                   int
	PathParams, OpParams            []string
	BodySchema                      string
}

func view(ops []*Operation) []opView {
	out := make([]opView, len(ops))
	for i, op := range ops {
		out[i] = opView{op.ID, op.Method, op.Path, op.Tag, op.Function, op.Credential, op.RateGroup, op.Public,
			op.HasBody, op.BodyRequired, op.SuccessStatus, op.src.pathParams, op.src.opParams, op.src.bodySchema}
	}
	return out
}

// TestStaticContractIsContractJSON: the contract Load returns (static_gen.go) is what decoding
// contract.json gives, operation by operation (in order), component by component, and every lookup
// finds the same operation.
func TestStaticContractIsContractJSON(t *testing.T) {
	decoded, err := load(contract)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := view(c.Operations), view(decoded.Operations); !reflect.DeepEqual(got, want) {
		if len(got) != len(want) {
			t.Fatalf("static contract: %d operations, contract.json %d", len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("operation %d: static %+v, contract.json %+v", i, got[i], want[i])
			}
		}
	}
	if !reflect.DeepEqual(*c.comps, *decoded.comps) {
		t.Error("the static components differ from contract.json's")
	}
	for _, op := range c.Operations {
		if op.src.comps != c.comps {
			t.Errorf("%s: its components are not the contract's", op.ID)
		}
		if got := c.Operation(op.ID); got != op {
			t.Errorf("Operation(%q) = %p, want %p", op.ID, got, op)
		}
		if got := decoded.Operation(op.ID); got == nil || got.ID != op.ID {
			t.Errorf("the decoded contract's Operation(%q) = %v", op.ID, got)
		}
	}
	if len(c.byID) != len(c.Operations) {
		t.Errorf("%d operations by id, %d in all", len(c.byID), len(c.Operations))
	}
	for _, id := range []string{"", "createnote", "createNote ", "zzz", "AAA"} {
		if op := c.Operation(id); op != nil {
			t.Errorf("Operation(%q) = %s, want nil", id, op.ID)
		}
	}
	// Every validator compiles, as it does from contract.json.
	for i, op := range c.Operations {
		sv, serr := op.validator()
		dv, derr := decoded.Operations[i].validator()
		if serr != nil || derr != nil {
			t.Fatalf("%s: compile: %v / %v", op.ID, serr, derr)
		}
		if !reflect.DeepEqual(sv, dv) {
			t.Errorf("%s: the static validator differs from contract.json's", op.ID)
		}
	}
}

// TestLoadAllocatesNothing: Load returns the static contract, decoding nothing, and every call the same
// one, concurrently too.
func TestLoadAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		if _, err := Load(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Load allocates %v times; want 0", n)
	}
	first, _ := Load()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c, err := Load()
			if err != nil || c != first {
				t.Errorf("Load = %p, %v; want %p", c, err, first)
			}
			// Concurrent first uses compile each validator once (run with -race).
			if _, err := c.Operation("createNote").ValidateBody([]byte(`{"category":"insight","content":"x"}`)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// TestLoadDocumentIsItsOwn: LoadDocument decodes anew each call, so its Contracts share nothing.
func TestLoadDocumentIsItsOwn(t *testing.T) {
	a, err := LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.Operations[0] == b.Operations[0] {
		t.Error("two LoadDocument calls share operations")
	}
	if a.Operation("createNote") == nil || a.Operation("createNote") == b.Operation("createNote") {
		t.Error("LoadDocument's lookup is not its own")
	}
}

// TestStaticContractIsData: static_gen.go declares only variables, with no map, function or call in
// them, so the linker lays it all out and no code runs at init to build it.
func TestStaticContractIsData(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "static_gen.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			t.Errorf("static_gen.go declares func %s", d.Name.Name)
		case *ast.GenDecl:
			if d.Tok != token.VAR && d.Tok != token.IMPORT {
				t.Errorf("static_gen.go declares a %s", d.Tok)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.MapType:
			t.Errorf("static_gen.go holds a map (built at init)")
		case *ast.CallExpr:
			t.Errorf("static_gen.go calls %v (run at init)", n.Fun)
		case *ast.FuncLit:
			t.Errorf("static_gen.go holds a function literal")
		}
		return true
	})
}
