package promptgen

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// value is a compiled expression: Go code with no side effects (a temporary holds every call's result)
// and its static type. The root (promptData, `$` and the top-level dot) has no reflect.Type here.
type value struct {
	expr string
	t    reflect.Type
	root bool
	addr bool // text/template would see it as addressable (reached through a pointer or a slice)
}

var root = value{expr: "d", root: true}

var (
	anyType    = reflect.TypeFor[any]()
	stringType = reflect.TypeFor[string]()
	errorType  = reflect.TypeFor[error]()
	stringer   = reflect.TypeFor[fmt.Stringer]()
)

// failure is a template construct outside the compiled subset.
type failure struct{ err error }

type fn struct {
	g      *gen
	t      *template.Template
	buf    bytes.Buffer
	tmp    int
	checks []map[string]bool // nil checks already emitted, per open block
}

func (g *gen) compile(t *template.Template) (src []byte, err error) {
	f := &fn{g: g, t: t, checks: []map[string]bool{{}}}
	defer func() {
		if r := recover(); r != nil {
			fl, ok := r.(failure)
			if !ok {
				panic(r)
			}
			src, err = nil, fl.err
		}
	}()
	fmt.Fprintf(&f.buf, "// %s renders %s.\nfunc %s(w *strings.Builder, d promptData) error {\n", g.funcNames[t.Name()], t.Name(), g.funcNames[t.Name()])
	f.walk(t.Tree.Root, root)
	f.buf.WriteString("return nil\n}\n\n")
	return f.buf.Bytes(), nil
}

// fail stops the compilation with the template's name, line and the construct.
func (f *fn) fail(n parse.Node, format string, args ...any) {
	loc, ctx := f.t.Tree.ErrorContext(n)
	panic(failure{fmt.Errorf("promptgen: %s: %s: %s", loc, ctx, fmt.Sprintf(format, args...))})
}

// prefix is how text/template starts an execution error at n.
func (f *fn) prefix(n parse.Node) string {
	loc, ctx := f.t.Tree.ErrorContext(n)
	return fmt.Sprintf("template: %s: executing %q at <%s>: ", loc, f.t.Name(), ctx)
}

func (f *fn) p(format string, args ...any) {
	fmt.Fprintf(&f.buf, format, args...)
	f.buf.WriteByte('\n')
}

func (f *fn) newTmp() string {
	f.tmp++
	return "t" + strconv.Itoa(f.tmp)
}

func (f *fn) open()  { f.checks = append(f.checks, map[string]bool{}) }
func (f *fn) close() { f.checks = f.checks[:len(f.checks)-1] }

func (f *fn) errNew(msg string) string {
	f.g.imports["errors"] = true
	return "errors.New(" + strconv.Quote(msg) + ")"
}

// nilCheck emits the error text/template answers when expr (a pointer) is nil, once per block.
func (f *fn) nilCheck(expr, msg string) {
	for _, c := range f.checks {
		if c[expr] {
			return
		}
	}
	f.checks[len(f.checks)-1][expr] = true
	f.p("if %s == nil {\nreturn %s\n}", expr, f.errNew(msg))
}

func (f *fn) walk(n parse.Node, dot value) {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			f.walk(c, dot)
		}
	case *parse.TextNode:
		f.p("w.WriteString(%s)", strconv.Quote(string(n.Text)))
	case *parse.CommentNode:
	case *parse.ActionNode:
		if len(n.Pipe.Decl) > 0 {
			f.fail(n, "variable declarations are not supported")
		}
		f.print(n, f.pipe(n.Pipe, dot))
	case *parse.IfNode:
		f.ifOrWith(false, n.Pipe, n.List, n.ElseList, dot)
	case *parse.WithNode:
		f.ifOrWith(true, n.Pipe, n.List, n.ElseList, dot)
	case *parse.TemplateNode:
		name, ok := f.g.funcNames[n.Name]
		if !ok {
			f.fail(n, "template %q is not defined", n.Name)
		}
		if n.Pipe == nil {
			f.fail(n, "a template called without data is not supported")
		}
		if v := f.pipe(n.Pipe, dot); !v.root {
			f.fail(n, "a template called with other data than the prompt's is not supported")
		}
		f.p("if err := %s(w, d); err != nil {\nreturn err\n}", name)
	default:
		f.fail(n, "%T is not supported", n)
	}
}

func (f *fn) ifOrWith(with bool, pipe *parse.PipeNode, list, elseList *parse.ListNode, dot value) {
	if len(pipe.Decl) > 0 {
		f.fail(pipe, "variable declarations are not supported")
	}
	v := f.pipe(pipe, dot)
	if with && !v.root && !isIdent(v.expr) {
		tmp := f.newTmp()
		f.p("%s := %s", tmp, v.expr)
		v.expr = tmp
	}
	cond := f.truth(pipe, v)
	if cond == "true" && isIdent(v.expr) && v.expr != "d" {
		f.p("_ = %s", v.expr)
	}
	f.p("if %s {", cond)
	f.open()
	if with {
		if !v.root && v.t.Kind() == reflect.Pointer {
			f.checks[len(f.checks)-1][v.expr] = true // not nil in the body
		}
		f.walk(list, v)
	} else {
		f.walk(list, dot)
	}
	f.close()
	if elseList != nil {
		f.p("} else {")
		f.open()
		f.walk(elseList, dot)
		f.close()
	}
	f.p("}")
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (i > 0 && '0' <= r && r <= '9')) {
			return false
		}
	}
	return s != ""
}

// truth is text/template's isTrue of v as a Go condition.
func (f *fn) truth(n parse.Node, v value) string {
	if v.root {
		return "true"
	}
	switch v.t.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice:
		return "len(" + v.expr + ") > 0"
	case reflect.String:
		return v.expr + ` != ""`
	case reflect.Bool:
		return v.expr
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer:
		return v.expr + " != nil"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return v.expr + " != 0"
	case reflect.Struct:
		return "true"
	case reflect.Interface:
		if v.t.NumMethod() == 0 {
			return "promptTruth(" + v.expr + ")"
		}
	}
	f.fail(n, "the truth of a %s is not supported", v.t)
	return ""
}

// print writes v as text/template prints an action's value.
func (f *fn) print(n *parse.ActionNode, v value) {
	if v.root {
		f.fail(n, "printing the prompt's data is not supported")
	}
	t := v.t
	if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		f.p("if err := printValue(w, %s); err != nil {\nreturn promptErr(%s, err)\n}", v.expr,
			strconv.Quote(f.prefix(n)+"can't print "+n.String()+" of type "))
		return
	}
	if t.Kind() == reflect.Interface || t.Kind() == reflect.Chan || t.Kind() == reflect.Func {
		f.fail(n, "printing a %s is not supported", t)
	}
	if formats(t) || (v.addr && formats(reflect.PointerTo(t))) || (t.Kind() == reflect.Pointer && formats(t.Elem())) {
		f.fail(n, "printing a %s, which formats itself, is not supported", t)
	}
	switch t.Kind() {
	case reflect.String:
		if t == stringType {
			f.p("w.WriteString(%s)", v.expr)
		} else {
			f.p("w.WriteString(string(%s))", v.expr)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.g.imports["strconv"] = true
		f.p("w.WriteString(strconv.FormatInt(int64(%s), 10))", v.expr)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f.g.imports["strconv"] = true
		f.p("w.WriteString(strconv.FormatUint(uint64(%s), 10))", v.expr)
	case reflect.Bool:
		f.g.imports["strconv"] = true
		f.p("w.WriteString(strconv.FormatBool(bool(%s)))", v.expr)
	default:
		// fmt's default format of the value, pointers followed once as text/template does.
		f.p("if err := printValue(w, %s); err != nil {\nreturn promptErr(%s, err)\n}", v.expr,
			strconv.Quote(f.prefix(n)+"can't print "+n.String()+" of type "))
	}
}

func formats(t reflect.Type) bool { return t.Implements(errorType) || t.Implements(stringer) }

func (f *fn) pipe(p *parse.PipeNode, dot value) value {
	if len(p.Decl) > 0 {
		f.fail(p, "variable declarations are not supported")
	}
	if len(p.Cmds) != 1 {
		f.fail(p, "pipelines of several commands are not supported")
	}
	return f.command(p.Cmds[0], dot)
}

func (f *fn) command(c *parse.CommandNode, dot value) value {
	args := c.Args[1:]
	switch first := c.Args[0].(type) {
	case *parse.FieldNode:
		return f.fieldChain(dot, first, first.Ident, args, dot)
	case *parse.VariableNode:
		return f.variable(first, args, dot)
	case *parse.IdentifierNode:
		return f.call(first.Ident, c, args, dot)
	case *parse.PipeNode:
		if len(args) > 0 {
			f.fail(c, "arguments to a parenthesized pipeline")
		}
		return f.pipe(first, dot)
	}
	if len(args) > 0 {
		f.fail(c, "arguments to a non-function")
	}
	switch first := c.Args[0].(type) {
	case *parse.DotNode:
		return dot
	case *parse.StringNode:
		return value{expr: strconv.Quote(first.Text), t: stringType}
	case *parse.BoolNode:
		return value{expr: strconv.FormatBool(first.True), t: reflect.TypeFor[bool]()}
	case *parse.NumberNode:
		return f.idealConstant(first)
	}
	f.fail(c, "%s is not supported as a command", c.Args[0])
	return value{}
}

func (f *fn) variable(v *parse.VariableNode, args []parse.Node, dot value) value {
	if v.Ident[0] != "$" {
		f.fail(v, "variables other than $ are not supported")
	}
	if len(v.Ident) == 1 {
		if len(args) > 0 {
			f.fail(v, "arguments to a non-function")
		}
		return root
	}
	return f.fieldChain(root, v, v.Ident[1:], args, dot)
}

// idealConstant is a number as text/template reads one where no type is expected.
func (f *fn) idealConstant(n *parse.NumberNode) value {
	isHexInt := len(n.Text) > 2 && n.Text[0] == '0' && (n.Text[1] == 'x' || n.Text[1] == 'X') && !strings.ContainsAny(n.Text, "pP")
	isRuneInt := len(n.Text) > 0 && n.Text[0] == '\''
	switch {
	case n.IsComplex:
		f.fail(n, "complex constants are not supported")
	case n.IsFloat && !isHexInt && !isRuneInt && strings.ContainsAny(n.Text, ".eEpP"):
		return value{expr: "float64(" + strconv.FormatFloat(n.Float64, 'g', -1, 64) + ")", t: reflect.TypeFor[float64]()}
	case n.IsInt && int64(int(n.Int64)) == n.Int64:
		return value{expr: "int(" + strconv.FormatInt(n.Int64, 10) + ")", t: reflect.TypeFor[int]()}
	}
	f.fail(n, "number %s is not supported", n.Text)
	return value{}
}

func (f *fn) fieldChain(recv value, n parse.Node, idents []string, args []parse.Node, dot value) value {
	for i, id := range idents {
		var a []parse.Node
		if i == len(idents)-1 {
			a = args
		}
		recv = f.field(recv, id, n, a, dot)
	}
	return recv
}

// field is text/template's evalField: a method first, then a struct field, then a map key.
func (f *fn) field(recv value, name string, n parse.Node, args []parse.Node, dot value) value {
	if recv.root {
		for _, m := range Members {
			if m.Name == name && m.Method {
				return f.method(m, n, args, dot)
			}
		}
		if _, ok := Embedded.MethodByName(name); ok {
			f.fail(n, "method %s of %s is not supported", name, Embedded)
		}
		if len(args) > 0 {
			f.fail(n, "%s is not a method but has arguments", name)
		}
		for _, m := range Members {
			if m.Name == name {
				return value{expr: "d." + name, t: m.Type}
			}
		}
		if name == "Brief" {
			return value{expr: "d.Brief", t: Embedded}
		}
		sf, ok := Embedded.Elem().FieldByName(name)
		if !ok || !sf.IsExported() || len(sf.Index) != 1 {
			f.fail(n, "can't evaluate field %s of the prompt's data", name)
		}
		f.nilCheck("d.Brief", f.prefix(n)+"reflect: indirection through nil pointer to embedded struct field Brief")
		return value{expr: "d.Brief." + name, t: sf.Type, addr: true}
	}
	t := recv.t
	if t.Kind() == reflect.Interface {
		f.fail(n, "field %s of a value of dynamic type (%s) is not supported", name, t)
	}
	mt := t
	if t.Kind() != reflect.Pointer && recv.addr {
		mt = reflect.PointerTo(t)
	}
	if _, ok := mt.MethodByName(name); ok {
		f.fail(n, "method %s of %s is not supported", name, t)
	}
	if len(args) > 0 {
		f.fail(n, "%s is not a method but has arguments", name)
	}
	switch t.Kind() {
	case reflect.Struct:
		sf, ok := t.FieldByName(name)
		if !ok || !sf.IsExported() || len(sf.Index) != 1 {
			f.fail(n, "can't evaluate field %s in type %s", name, t)
		}
		return value{expr: recv.expr + "." + name, t: sf.Type, addr: recv.addr}
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			sf, ok := t.Elem().FieldByName(name)
			if !ok || !sf.IsExported() || len(sf.Index) != 1 {
				f.fail(n, "can't evaluate field %s in type %s", name, t)
			}
			f.nilCheck(recv.expr, f.prefix(n)+"nil pointer evaluating "+t.String()+"."+name)
			return value{expr: recv.expr + "." + name, t: sf.Type, addr: true}
		}
	case reflect.Map:
		if t.Key() == stringType {
			// A missing key is the element's zero value (missingkey=zero), as a Go map lookup is.
			return value{expr: recv.expr + "[" + strconv.Quote(name) + "]", t: t.Elem()}
		}
	}
	f.fail(n, "can't evaluate field %s in type %s", name, t)
	return value{}
}

// method calls a method of promptData.
func (f *fn) method(m Member, n parse.Node, args []parse.Node, dot value) value {
	return f.invoke(n, "method", m.Name, "d."+m.Name, m.Type, args, dot)
}

// invoke compiles a call of goName, a Go function or method of type t (what says which), with args.
func (f *fn) invoke(at parse.Node, what, name, goName string, t reflect.Type, args []parse.Node, dot value) value {
	if t.IsVariadic() || t.NumOut() != 1 {
		f.fail(at, "%s %s: only non-variadic %ss of one result are supported", what, name, what)
	}
	if len(args) != t.NumIn() {
		f.fail(at, "wrong number of args for %s: want %d got %d", name, t.NumIn(), len(args))
	}
	exprs := make([]string, len(args))
	for i, a := range args {
		exprs[i] = f.arg(a, t.In(i), dot)
	}
	tmp := f.newTmp()
	f.p("%s := %s(%s)", tmp, goName, strings.Join(exprs, ", "))
	return value{expr: tmp, t: t.Out(0)}
}

// call compiles a function call: the builtins eq and index, or a function of Funcs.
func (f *fn) call(name string, at parse.Node, args []parse.Node, dot value) value {
	switch name {
	case "eq":
		if len(args) < 2 {
			f.fail(at, "eq needs at least two arguments")
		}
		exprs := make([]string, len(args))
		for i, a := range args {
			exprs[i] = f.comparable(a, dot)
		}
		tmp := f.newTmp()
		f.p("%s, err := promptEq(%s)\nif err != nil {\nreturn promptErr(%s, err)\n}", tmp, strings.Join(exprs, ", "),
			strconv.Quote(f.prefix(at)+"error calling eq: "))
		return value{expr: tmp, t: reflect.TypeFor[bool]()}
	case "index":
		return f.index(at, args, dot)
	}
	for _, fu := range Funcs {
		if fu.Name == name {
			return f.invoke(at, "function", name, fu.Go, fu.Type, args, dot)
		}
	}
	f.fail(at, "function %s is not supported", name)
	return value{}
}

// index compiles `index x i` of a slice or a string-keyed map, with text/template's errors.
func (f *fn) index(at parse.Node, args []parse.Node, dot value) value {
	if len(args) != 2 {
		f.fail(at, "index with other than one index is not supported")
	}
	item := f.value(args[0], dot)
	if item.root {
		f.fail(at, "indexing the prompt's data is not supported")
	}
	prefix := f.prefix(at) + "error calling index: "
	switch item.t.Kind() {
	case reflect.Slice:
		var idx string
		if n, ok := args[1].(*parse.NumberNode); ok && n.IsInt && n.Int64 >= 0 && int64(int(n.Int64)) == n.Int64 {
			idx = strconv.FormatInt(n.Int64, 10)
			if n.Int64 > 0 {
				f.p("if len(%s) < %s {\nreturn %s\n}", item.expr, idx, f.errNew(prefix+"index out of range: "+idx))
			}
		} else {
			iv := f.value(args[1], dot)
			if iv.root || iv.t.Kind() != reflect.Int {
				f.fail(at, "an index other than a non-negative int constant or an int is not supported")
			}
			idx = f.newTmp() // a variable, not a constant: Go refuses a negative constant index
			f.p("%s := %s", idx, iv.expr)
			f.g.imports["fmt"] = true
			f.p("if %[1]s < 0 || %[1]s > len(%[2]s) {\nreturn fmt.Errorf(\"%%sindex out of range: %%d\", %[3]s, %[1]s)\n}", idx, item.expr, strconv.Quote(prefix))
		}
		// An index equal to the length passes text/template's check and panics in reflect.
		f.p("if len(%s) == %s {\nreturn %s\n}", item.expr, idx, f.errNew(prefix+"reflect: slice index out of range"))
		tmp := f.newTmp()
		f.p("%s := %s[%s]", tmp, item.expr, idx)
		return value{expr: tmp, t: item.t.Elem(), addr: true}
	case reflect.Map:
		if item.t.Key() != stringType {
			break
		}
		key := f.value(args[1], dot)
		if key.root || key.t != stringType {
			f.fail(at, "a map index other than a string is not supported")
		}
		tmp := f.newTmp()
		f.p("%s := %s[%s]", tmp, item.expr, key.expr)
		return value{expr: tmp, t: item.t.Elem()}
	}
	f.fail(at, "index of a %s is not supported", item.t)
	return value{}
}

// value evaluates an argument node that is not a literal.
func (f *fn) value(n parse.Node, dot value) value {
	switch a := n.(type) {
	case *parse.DotNode:
		return dot
	case *parse.FieldNode:
		return f.fieldChain(dot, a, a.Ident, nil, dot)
	case *parse.VariableNode:
		return f.variable(a, nil, dot)
	case *parse.PipeNode:
		return f.pipe(a, dot)
	case *parse.IdentifierNode:
		return f.call(a.Ident, a, nil, dot)
	case *parse.StringNode:
		return value{expr: strconv.Quote(a.Text), t: stringType}
	case *parse.BoolNode:
		return value{expr: strconv.FormatBool(a.True), t: reflect.TypeFor[bool]()}
	case *parse.NumberNode:
		return f.idealConstant(a)
	}
	f.fail(n, "%s is not supported as an argument", n)
	return value{}
}

// comparable is an argument of eq: a basic value or an empty interface, as an `any`.
func (f *fn) comparable(n parse.Node, dot value) string {
	if _, ok := n.(*parse.NilNode); ok {
		f.fail(n, "nil is not supported in eq")
	}
	v := f.value(n, dot)
	if v.root {
		f.fail(n, "comparing the prompt's data is not supported")
	}
	switch v.t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return v.expr
	case reflect.Interface:
		// A parenthesized pipeline's nil is an invalid value, which text/template refuses as an argument.
		if _, ok := n.(*parse.PipeNode); !ok && v.t.NumMethod() == 0 {
			return v.expr
		}
	}
	f.fail(n, "comparing a %s is not supported", v.t)
	return ""
}

// arg is an argument of a method or function whose parameter is of type typ.
func (f *fn) arg(n parse.Node, typ reflect.Type, dot value) string {
	switch a := n.(type) {
	case *parse.NilNode:
		switch typ.Kind() {
		case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
			return "nil"
		}
		f.fail(n, "cannot assign nil to %s", typ)
	case *parse.StringNode:
		if typ.Kind() == reflect.String || typ == anyType {
			return strconv.Quote(a.Text)
		}
		f.fail(n, "a string for a parameter of type %s", typ)
	case *parse.BoolNode:
		if typ.Kind() == reflect.Bool || typ == anyType {
			return strconv.FormatBool(a.True)
		}
		f.fail(n, "a bool for a parameter of type %s", typ)
	case *parse.NumberNode:
		switch {
		case typ == anyType:
			return f.idealConstant(a).expr
		case typ.Kind() == reflect.Int && a.IsInt:
			return strconv.FormatInt(a.Int64, 10)
		}
		f.fail(n, "number %s for a parameter of type %s is not supported", a.Text, typ)
	}
	v := f.value(n, dot)
	if v.root {
		if typ == anyType {
			return v.expr
		}
		f.fail(n, "the prompt's data for a parameter of type %s", typ)
	}
	if v.t.Kind() == reflect.Interface && typ.Kind() != reflect.Interface {
		f.fail(n, "a value of dynamic type (%s) for a parameter of type %s is not supported", v.t, typ)
	}
	if !v.t.AssignableTo(typ) {
		f.fail(n, "wrong type for value; expected %s; got %s", typ, v.t)
	}
	return v.expr
}
