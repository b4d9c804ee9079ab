// Package promptgen compiles generation's prompt templates (shared/generation/prompts/*.tmpl) into plain
// Go: one function per template that writes what text/template would write for the same promptData.
// It parses the templates with text/template (the parse tree, trim markers applied) and walks each tree,
// knowing promptData's members from a table (Members) that generation's tests check against reflect, and
// every other type by reflect on shared/brief. Anything outside the subset it compiles fails with the
// template's name and line rather than being compiled into something subtly different.
//
// It runs at `go generate ./shared/generation` only: no function links it, nor text/template (whose
// reflect-driven method lookup makes the linker keep every exported method of every type that reaches an
// interface).
package promptgen

import (
	"bytes"
	"fmt"
	"go/format"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/creatorstrategy/css/shared/brief"
)

// Pattern names the templates in shared/generation.
const Pattern = "prompts/*.tmpl"

// Output says what Generate writes: the functions' names and what the header says they come from.
type Output struct {
	Source string // the templates, as the header names them
	Exec   string // the function that renders a template by name
	Prefix string // each template's function is Prefix + its name without .tmpl
}

// Prompts is the production output: prompts_gen.go.
var Prompts = Output{Source: Pattern, Exec: "execPrompt", Prefix: "prompt_"}

// ConstructsPattern names the templates that exercise every construct the compiler supports, which
// generation's tests compile (Constructs, into a _test.go file) and compare with text/template too.
const ConstructsPattern = "testdata/constructs/*.tmpl"

// Constructs is the test output: constructs_gen_test.go.
var Constructs = Output{Source: ConstructsPattern, Exec: "execConstruct", Prefix: "construct_"}

// Option is the option the templates are executed with; the compiled code has its semantics.
const Option = "missingkey=zero"

// Member is an exported member of generation.promptData (not promoted from its embedded *brief.Brief).
type Member struct {
	Name   string
	Method bool         // a method with a value receiver, else a field
	Type   reflect.Type // the field's type, or the method's type without its receiver
}

// Members are promptData's own exported fields and methods, besides the embedded Brief (Embedded).
// generation's TestPromptDataMembers holds this table to reflect.TypeOf(promptData{}).
var Members = []Member{
	{Name: "In", Type: reflect.TypeFor[map[string]any]()},
	{Name: "Count", Type: reflect.TypeFor[int]()},
	{Name: "Data", Method: true, Type: reflect.TypeFor[func(string, any) string]()},
	{Name: "ItemView", Method: true, Type: reflect.TypeFor[func() any]()},
	{Name: "OutlierView", Method: true, Type: reflect.TypeFor[func() any]()},
	{Name: "ProfileView", Method: true, Type: reflect.TypeFor[func() any]()},
	{Name: "VideoView", Method: true, Type: reflect.TypeFor[func() any]()},
}

// Embedded is promptData's one embedded field, named by its type: Brief.
var Embedded = reflect.TypeFor[*brief.Brief]()

// Func is a function of the templates' FuncMap and the Go function the compiled code calls for it.
type Func struct {
	Name string       // the template's name for it
	Go   string       // the Go function (in package generation, or strings.X) the compiled code calls
	Type reflect.Type // its signature
}

// Funcs is the FuncMap the templates are parsed and executed with. generation's tests execute the
// templates with exactly these Go functions and check the table against that FuncMap.
var Funcs = []Func{
	{Name: "duration", Go: "promptDuration", Type: reflect.TypeFor[func(int) string]()},
	{Name: "join", Go: "strings.Join", Type: reflect.TypeFor[func([]string, string) string]()},
	{Name: "patternChars", Go: "promptPatternChars", Type: reflect.TypeFor[func() int]()},
}

// Parse parses the templates of fsys matching patterns as generation executes them: one set, named by
// file, with Option and a FuncMap of Funcs' signatures (stand-ins: parsing needs only names and types).
func Parse(fsys fs.FS, patterns ...string) (*template.Template, error) {
	fm := template.FuncMap{}
	for _, f := range Funcs {
		fm[f.Name] = reflect.Zero(f.Type).Interface()
	}
	return template.New("").Option(Option).Funcs(fm).ParseFS(fsys, patterns...)
}

// Generate compiles every template of the set into package generation's source (gofmt-ed).
func Generate(set *template.Template, o Output) ([]byte, error) {
	var tmpls []*template.Template
	for _, t := range set.Templates() {
		if t.Tree != nil && t.Tree.Root != nil {
			tmpls = append(tmpls, t)
		}
	}
	slices.SortFunc(tmpls, func(a, b *template.Template) int { return strings.Compare(a.Name(), b.Name()) })
	if len(tmpls) == 0 {
		return nil, fmt.Errorf("promptgen: no templates")
	}
	g := &gen{funcNames: map[string]string{}, imports: map[string]bool{"strings": true}}
	for _, t := range tmpls {
		fn := goName(o.Prefix, t.Name())
		for other, n := range g.funcNames {
			if n == fn {
				return nil, fmt.Errorf("promptgen: templates %q and %q map to one Go name %s", other, t.Name(), fn)
			}
		}
		g.funcNames[t.Name()] = fn
	}
	if err := g.checkCycles(tmpls); err != nil {
		return nil, err
	}
	var body bytes.Buffer
	for _, t := range tmpls {
		src, err := g.compile(t)
		if err != nil {
			return nil, err
		}
		body.Write(src)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by promptgen from %s; DO NOT EDIT.\n\n", o.Source)
	out.WriteString("// Edit the templates, then run `go generate ./shared/generation`.\n\n")
	out.WriteString("package generation\n\nimport (\n")
	for _, imp := range slices.Sorted(maps.Keys(g.imports)) {
		fmt.Fprintf(&out, "\t%q\n", imp)
	}
	out.WriteString(")\n\n")
	fmt.Fprintf(&out, "// %s writes the template name for d, as text/template's ExecuteTemplate would.\n", o.Exec)
	fmt.Fprintf(&out, "func %s(w *strings.Builder, name string, d promptData) error {\n\tswitch name {\n", o.Exec)
	for _, t := range tmpls {
		fmt.Fprintf(&out, "\tcase %q:\n\t\treturn %s(w, d)\n", t.Name(), g.funcNames[t.Name()])
	}
	out.WriteString("\t}\n\treturn noPrompt(name)\n}\n\n")
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("promptgen: generated code does not parse: %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// goName is the Go function of a template: prefix + its name without .tmpl, non-identifier runes as _.
func goName(prefix, name string) string {
	name = strings.TrimSuffix(name, ".tmpl")
	var sb strings.Builder
	sb.WriteString(prefix)
	for _, r := range name {
		if r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			sb.WriteRune(r)
		} else {
			sb.WriteString("_")
		}
	}
	return sb.String()
}

type gen struct {
	funcNames map[string]string // template name → Go function
	imports   map[string]bool
}

// checkCycles refuses templates that include themselves (text/template stops them at a depth limit; the
// compiled code would recurse until the stack overflows).
func (g *gen) checkCycles(tmpls []*template.Template) error {
	edges := map[string][]*parse.TemplateNode{}
	for _, t := range tmpls {
		walkNodes(t.Tree.Root, func(n parse.Node) {
			if tn, ok := n.(*parse.TemplateNode); ok {
				edges[t.Name()] = append(edges[t.Name()], tn)
			}
		})
	}
	state := map[string]int{}
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("promptgen: template %q includes itself", name)
		case 2:
			return nil
		}
		state[name] = 1
		for _, tn := range edges[name] {
			if err := visit(tn.Name); err != nil {
				return err
			}
		}
		state[name] = 2
		return nil
	}
	for _, t := range tmpls {
		if err := visit(t.Name()); err != nil {
			return err
		}
	}
	return nil
}

// walkNodes calls f on n and every list node under it (if/with/range bodies and else branches).
func walkNodes(n parse.Node, f func(parse.Node)) {
	if n == nil || (reflect.ValueOf(n).Kind() == reflect.Pointer && reflect.ValueOf(n).IsNil()) {
		return
	}
	f(n)
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			walkNodes(c, f)
		}
	case *parse.IfNode:
		walkNodes(n.List, f)
		walkNodes(n.ElseList, f)
	case *parse.WithNode:
		walkNodes(n.List, f)
		walkNodes(n.ElseList, f)
	case *parse.RangeNode:
		walkNodes(n.List, f)
		walkNodes(n.ElseList, f)
	}
}
