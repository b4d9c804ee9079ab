package promptgen

import (
	"strings"
	"testing"
	"testing/fstest"
)

func generate(t *testing.T, files map[string]string) ([]byte, error) {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys["prompts/"+name] = &fstest.MapFile{Data: []byte(text)}
	}
	set, err := Parse(fsys, Pattern)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return Generate(set, Prompts)
}

// Every construct outside the compiled subset fails the generator with the template's name and line.
func TestUnsupportedConstructsFail(t *testing.T) {
	for _, tc := range []struct{ text, where, why string }{
		{"a\n{{range .Notes}}x{{end}}", "x.tmpl:2:", "RangeNode"},
		{"{{$x := .Language}}{{$x}}", "x.tmpl:1:", "variable declarations"},
		{"a\nb\n{{with $x := .Series}}{{end}}", "x.tmpl:3:", "variable declarations"},
		{"{{.Language | printf \"%s\"}}", "x.tmpl:1:", "several commands"},
		{"{{printf \"%s\" .Language}}", "x.tmpl:1:", "function printf"},
		{"{{if and .Notes .Series}}x{{end}}", "x.tmpl:1:", "function and"},
		{"{{len .Notes}}", "x.tmpl:1:", "function len"},
		{"{{.In.a.b}}", "x.tmpl:1:", "dynamic type"},
		{"{{with .ProfileView}}{{.FocusedNiche}}{{end}}", "x.tmpl:1:", "dynamic type"},
		{"{{.Nope}}", "x.tmpl:1:", "can't evaluate field Nope"},
		{"{{.blocks}}", "x.tmpl:1:", "can't evaluate field blocks"},
		{"{{.Series.Nope}}", "x.tmpl:1:", "can't evaluate field Nope in type *brief.Series"},
		{"{{.Language \"x\"}}", "x.tmpl:1:", "not a method but has arguments"},
		{"{{.Data \"x\"}}", "x.tmpl:1:", "wrong number of args for Data"},
		{"{{.ProfileView 1}}", "x.tmpl:1:", "wrong number of args for ProfileView"},
		{"{{duration .In.x}}", "x.tmpl:1:", "dynamic type"},
		{"{{duration .Language}}", "x.tmpl:1:", "wrong type for value; expected int; got string"},
		{"{{join .Profile.Keywords 3}}", "x.tmpl:1:", "number 3 for a parameter of type string"},
		{"{{eq .Language nil}}", "x.tmpl:1:", "nil is not supported in eq"},
		{"{{eq .Series .Series}}", "x.tmpl:1:", "comparing a *brief.Series"},
		{"{{eq .Notes .Notes}}", "x.tmpl:1:", "comparing a []brief.Note"},
		{"{{eq (.ProfileView) 1}}", "x.tmpl:1:", "comparing a interface {}"},
		{"{{eq .Language}}", "x.tmpl:1:", "eq needs at least two arguments"},
		{"{{index .Items 0 1}}", "x.tmpl:1:", "other than one index"},
		{"{{index .Items .Language}}", "x.tmpl:1:", "non-negative int constant"},
		{"{{index .In \"a\"}}{{index .Language 0}}", "x.tmpl:1:", "index of a string"},
		{"{{.}}", "x.tmpl:1:", "printing the prompt's data"},
		{"{{template \"y.tmpl\" .Series}}", "x.tmpl:1:", "other data"},
		{"{{template \"y.tmpl\"}}", "x.tmpl:1:", "without data"},
		{"{{template \"nope.tmpl\" .}}", "x.tmpl:1:", "not defined"},
		{"{{1.5i}}", "x.tmpl:1:", "complex constants"},
		{"{{nil}}", "x.tmpl:1:", "nil is not supported as a command"},
	} {
		_, err := generate(t, map[string]string{"x.tmpl": tc.text, "y.tmpl": "y"})
		if err == nil {
			t.Errorf("%q: generated", tc.text)
			continue
		}
		if !strings.Contains(err.Error(), tc.where) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: %v; want %s and %q", tc.text, err, tc.where, tc.why)
		}
	}
}

func TestSelfInclusionFails(t *testing.T) {
	_, err := generate(t, map[string]string{"x.tmpl": `{{template "y.tmpl" .}}`, "y.tmpl": `{{if .Notes}}{{template "x.tmpl" .}}{{end}}`})
	if err == nil || !strings.Contains(err.Error(), "includes itself") {
		t.Fatalf("err %v", err)
	}
}

func TestGoNamesDoNotCollide(t *testing.T) {
	_, err := generate(t, map[string]string{"a-b.tmpl": "x", "a_b.tmpl": "y"})
	if err == nil || !strings.Contains(err.Error(), "one Go name") {
		t.Fatalf("err %v", err)
	}
}

// The subset compiles into what the comparison in package generation then checks; here, that each
// construct yields the Go it should.
func TestSupportedConstructs(t *testing.T) {
	src, err := generate(t, map[string]string{"x.tmpl": `{{- /* a comment */ -}}
{{.Language}} {{.Count}} {{"{{lit}}"}} {{.In.k}} {{patternChars}} {{duration 90}} {{join .Profile.Keywords ", "}}
{{if eq .In.k "v" 3 2.5 true}}a{{else if .Notes}}b{{else}}c{{end}}
{{with .Series}}{{.Name}}{{$.Data "s" .}}{{else}}none{{end}}
{{.Data "first" (index .Items 0)}}{{index .In "k"}}{{$.Language}}{{template "y.tmpl" $}}`, "y.tmpl": "y"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`w.WriteString(d.Brief.Language)`,
		`w.WriteString(strconv.FormatInt(int64(d.Count), 10))`,
		`w.WriteString("{{lit}}")`,
		`printValue(w, d.In["k"])`,
		`promptPatternChars()`,
		`promptDuration(90)`,
		`strings.Join(d.Brief.Profile.Keywords, ", ")`,
		`promptEq(d.In["k"], "v", int(3), float64(2.5), true)`,
		`if len(d.Brief.Notes) > 0 {`,
		`} else {`,
		`w.WriteString(t`,
		`d.Data("s", t`,
		`if len(d.Brief.Items) == 0 {`,
		`d.In["k"]`,
		`if err := prompt_y(w, d); err != nil {`,
		`case "x.tmpl":`,
		`return noPrompt(name)`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated code lacks %s:\n%s", want, src)
		}
	}
}
