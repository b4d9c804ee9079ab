package generation

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/creatorstrategy/css/shared/brief"
	"github.com/creatorstrategy/css/shared/generation/internal/promptgen"
	"github.com/creatorstrategy/css/shared/profile"
)

// The oracle: the .tmpl files executed by text/template as Render executed them before they were compiled
// (the same option and funcs; the funcs are the functions the compiled prompts call).
//
//go:embed prompts/*.tmpl
var promptFiles embed.FS

var oracleFuncs = template.FuncMap{
	"join":         strings.Join,
	"patternChars": promptPatternChars,
	"duration":     promptDuration,
}

func oracle(t testing.TB) promptExec {
	t.Helper()
	tmpl, err := template.New("").Option("missingkey=zero").Funcs(oracleFuncs).ParseFS(promptFiles, "prompts/*.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	return func(w *strings.Builder, name string, d promptData) error { return tmpl.ExecuteTemplate(w, name, d) }
}

// promptTemplates are the names of every template (the tasks', system.tmpl, channel.tmpl, included ones).
func promptTemplates(t testing.TB) []string {
	t.Helper()
	names, err := promptFiles.ReadDir("prompts")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		out = append(out, n.Name())
	}
	if len(out) < 20 {
		t.Fatalf("only %d templates", len(out))
	}
	return out
}

// briefTasks are the tasks a corpus brief is rendered for: every template's name as a task (the shared
// and included ones too, whose task template is then themselves), plus a task with no template.
func briefTasks(t testing.TB) []string {
	var out []string
	for _, n := range promptTemplates(t) {
		out = append(out, strings.TrimSuffix(n, ".tmpl"))
	}
	return append(out, "no_such_task")
}

var inputKeys = []string{"title", "type", "context", "currentHook", "topic", "guestName", "guestBio", "videoUrl", "postType",
	"style", "episodeType", "peopleMode", "clipCount", "hasBackground"}

// everyKey is a request body with v in every key a template reads, and a key none reads.
func everyKey(v any) string {
	m := map[string]any{"extra": "not read by any template"}
	for _, k := range inputKeys {
		m[k] = v
	}
	raw, _ := json.Marshal(m)
	return string(raw)
}

// inputs are request bodies of every shape a template's .In lookups meet: no body, keys missing and
// extra, every JSON type (numbers integral and not, null, nested values), strings with template syntax,
// quotes, unicode, HTML and newlines, and the enum values the templates branch on.
func inputs() []string {
	out := []string{"", "{}", "null", "[1]", `{"unrelated": 1}`}
	for _, v := range []any{"", "plain", 3, 2.5, 0, -1, 1e21, 1e-7, true, false, nil, map[string]any{"a": 1, "b": []any{"x", nil}},
		map[string]any{}, []any{}, []any{1, "two", 3.5, nil, true}, "{{.Language}} {{template \"system.tmpl\" .}}",
		`quotes " ' ` + "`", "unicode é 日本語 🙂 \u202e\u200b", "<b>html</b> &amp; <script>x</script>", "line\nbreak\r\n\ttab",
		"%v %s %%"} {
		out = append(out, everyKey(v))
	}
	// The values the templates branch on, one at a time, the rest present.
	for _, pt := range []any{"poll", "quiz", "text", "", 3, true, nil, []any{"poll"}} {
		raw, _ := json.Marshal(map[string]any{"title": "T", "type": "listicle", "postType": pt, "context": "c",
			"guestName": "G", "guestBio": nil, "hasBackground": false, "clipCount": 2})
		out = append(out, string(raw))
	}
	raw, _ := json.Marshal(map[string]any{"guestName": "G", "guestBio": "B", "hasBackground": 1, "postType": "quiz"})
	return append(out, string(raw))
}

// corpus is every brief the comparison renders for task: each shaped brief with each input, and each
// hostile string in every member of a brief and every key of its input.
func corpus(task string, hostile []string) []*Brief {
	var out []*Brief
	with := func(b *Brief, in string) *Brief {
		c := *b
		if in != "" {
			c.Input = json.RawMessage(in)
		}
		return &c
	}
	for _, b := range briefs(task) {
		for _, in := range inputs() {
			out = append(out, with(b, in))
		}
	}
	for _, s := range hostile {
		out = append(out, with(fullBrief(task, s), everyKey(s)), with(fullBrief(task, s), `{"postType":"poll","title":3}`))
	}
	return out
}

// fullBrief is a brief of task with s in every member.
func fullBrief(task, s string) *Brief {
	orig, _ := json.Marshal(map[string]any{"titles": []map[string]string{{"title": s}}})
	return &Brief{Task: task, Language: s,
		Profile: profile.NicheProfile{BroadNiche: s, FocusedNiche: s, Slogan: s, NicheStatement: s, Mission: s, Purpose: s,
			Passion: s, Keywords: []string{s, s}, InsiderTerms: []string{s}, TargetAudience: s, ChannelGoals: s, PainPoints: s,
			ProfitModel: s, TopCompetitors: []string{s}, Sponsors: []string{s}, ContentLanguage: "english"},
		Notes:      []BriefNote{{Category: "style", Content: s}, {Category: "feedback", Content: s}},
		Series:     &BriefSeries{Name: s, Description: s, ScriptFormula: s},
		OwnResults: &brief.OwnResults{Label: s, Best: []brief.OwnVideo{{Title: s, OwnOutlierScore: 2.5}}},
		Patterns:   s,
		Outliers:   []Outlier{{Title: s, URL: "https://www.youtube.com/watch?v=out", Views: 10, Score: 2.25, ContentType: "Long"}},
		Recent:     []string{s},
		VideoType:  "Long", Transcript: "0:00 " + s + "\n0:30 " + s,
		Items: []string{s, s}, GradedTool: s, Original: orig, OriginalTask: TaskIdeas,
		Feedback: s, SpecificItem: s, Kind: "titles", Count: 3, ContentType: s, Taken: []string{s},
		Videos: []ResearchVideo{{Title: s, URL: "https://www.youtube.com/watch?v=src", ChannelTitle: s, Views: 1, Score: 2,
			ViewsPerDay: 12.5, ContentType: "Long", DurationSeconds: 605, Formula: s, Description: s, Tags: []string{s}},
			{Title: s}},
	}
}

// briefs are the corpus's shaped briefs of one task: empty, every member set, nil and empty slices, nil
// and set pointers, Count 0 and not, both video types, each branch taken and not.
func briefs(task string) []*Brief {
	out := []*Brief{
		{Task: task},
		{Task: task, Language: "english", Count: 0, VideoType: "Short"},
		{Task: task, Language: "english", Notes: []BriefNote{}, Outliers: []Outlier{}, Recent: []string{}, Items: []string{},
			Taken: []string{}, Videos: []ResearchVideo{}, Series: &BriefSeries{Name: "s"}, OwnResults: &brief.OwnResults{},
			Profile: profile.NicheProfile{ContentLanguage: "english"}},
		{Task: task, Language: "english", Items: []string{"only"}, Count: 7, ContentType: "Short", Original: json.RawMessage(`null`),
			Profile: profile.NicheProfile{Keywords: []string{}}, Videos: []ResearchVideo{{}}, Outliers: []Outlier{{}}},
	}
	out = append(out, fullBrief(task, "plain"), &Brief{Task: task, Count: 1, Items: []string{"a", "b"}},
		&Brief{Task: task, Count: 2, Items: []string{"a", "b"}})
	b := fullBrief(task, "x")
	b.OriginalTask, b.Task, b.VideoType, b.SpecificItem, b.Transcript = TaskTitles, task, "Short", "", ""
	b.Series.ScriptFormula = ""
	return append(out, b)
}

// testdataStrings reads testdata/injection_corpus.txt: one Go-quoted string a line, # comments.
func testdataStrings(t testing.TB) []string {
	t.Helper()
	f, err := os.Open("testdata/injection_corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			s, err := strconv.Unquote(line)
			if err != nil {
				t.Fatalf("corpus line %q: %v", line, err)
			}
			out = append(out, s)
		}
	}
	if len(out) < 20 {
		t.Fatalf("the corpus holds %d strings", len(out))
	}
	return out
}

// TestCompiledPromptsMatchTemplates: for every template and every brief of the corpus, the compiled
// prompts (what Render uses) write byte for byte what text/template writes from the .tmpl files, name the
// same data blocks in the same order with the same content, and fail with the same error.
func TestCompiledPromptsMatchTemplates(t *testing.T) {
	want := oracle(t)
	hostile := testdataStrings(t)
	cases, errs := 0, 0
	for _, task := range briefTasks(t) {
		for _, b := range corpus(task, hostile) {
			cases++
			got, gotErr := renderPrompt(b, execPrompt)
			exp, expErr := renderPrompt(b, want)
			if gotErr != nil || expErr != nil {
				errs++
				if fmt.Sprint(gotErr) != fmt.Sprint(expErr) {
					t.Fatalf("task %s, input %s: compiled error\n  %v\ntext/template's\n  %v", task, b.Input, gotErr, expErr)
				}
				continue
			}
			if diff := promptDiff(got, exp); diff != "" {
				t.Fatalf("task %s, input %s: the compiled prompt differs from text/template's (run `go generate ./shared/generation`?):\n%s", task, b.Input, diff)
			}
		}
	}
	if cases < 5000 || errs == 0 || errs == cases {
		t.Fatalf("%d cases, %d of them errors: the corpus does not cover both outcomes", cases, errs)
	}
	t.Logf("%d cases, %d errors, all equal", cases, errs)
}

// promptDiff describes how got differs from want, part by part, each with the first differing line.
func promptDiff(got, want prompt) string {
	var sb strings.Builder
	for _, p := range []struct{ name, got, want string }{
		{"system prompt", got.system, want.system}, {"channel prompt", got.channel, want.channel}, {"task prompt", got.task, want.task},
		{"data block names", strings.Join(got.blocks.names, "\n"), strings.Join(want.blocks.names, "\n")},
	} {
		if p.got != p.want {
			sb.WriteString(textDiff(p.name, p.got, p.want))
		}
	}
	if len(got.blocks.names) == len(want.blocks.names) {
		for _, n := range want.blocks.names {
			if got.blocks.values[n] != want.blocks.values[n] {
				sb.WriteString(textDiff("data block "+n, got.blocks.values[n], want.blocks.values[n]))
			}
		}
	}
	return sb.String()
}

// textDiff shows the first line where got and want part, with the line before, and both texts whole.
func textDiff(name, got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	line := func(l []string, i int) string {
		if i < len(l) {
			return strconv.Quote(l[i])
		}
		return "(none)"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s, line %d:\n", name, i+1)
	if i > 0 {
		fmt.Fprintf(&sb, "    %s\n", strconv.Quote(w[i-1]))
	}
	fmt.Fprintf(&sb, "  - compiled:      %s\n  + text/template: %s\n", line(g, i), line(w, i))
	fmt.Fprintf(&sb, "compiled:\n%s\ntext/template:\n%s\n", got, want)
	return sb.String()
}

// TestCompiledConstructsMatchTemplates: every construct the compiler supports (testdata/constructs, each
// compiled into constructs_gen_test.go) writes what text/template writes, names the same data blocks and
// fails with the same error, for every brief and input of the corpus.
func TestCompiledConstructsMatchTemplates(t *testing.T) {
	tmpl, err := template.New("").Option("missingkey=zero").Funcs(oracleFuncs).ParseFS(os.DirFS("."), promptgen.ConstructsPattern)
	if err != nil {
		t.Fatal(err)
	}
	want := func(w *strings.Builder, name string, d promptData) error { return tmpl.ExecuteTemplate(w, name, d) }
	hostile := testdataStrings(t)[:5]
	cases, errs := 0, 0
	for _, tt := range tmpl.Templates() {
		for _, b := range corpus(TaskTitles, hostile) {
			cases++
			got, gotBlocks, gotErr := renderOne(b, execConstruct, tt.Name())
			exp, expBlocks, expErr := renderOne(b, want, tt.Name())
			if gotErr != nil || expErr != nil {
				errs++
				if fmt.Sprint(gotErr) != fmt.Sprint(expErr) {
					t.Fatalf("%s, brief %+v: compiled error\n  %v\ntext/template's\n  %v", tt.Name(), b, gotErr, expErr)
				}
				continue
			}
			if diff := promptDiff(prompt{task: got, blocks: gotBlocks}, prompt{task: exp, blocks: expBlocks}); diff != "" {
				t.Fatalf("%s, input %s: the compiled template differs from text/template:\n%s", tt.Name(), b.Input, diff)
			}
		}
	}
	if len(tmpl.Templates()) < 10 || errs == 0 || errs == cases {
		t.Fatalf("%d templates, %d cases, %d of them errors: the corpus does not cover both outcomes", len(tmpl.Templates()), cases, errs)
	}
	t.Logf("%d cases, %d errors, all equal", cases, errs)
}

func renderOne(b *Brief, exec promptExec, name string) (string, *dataBlocks, error) {
	d, err := newPromptData(b)
	if err != nil {
		return "", nil, err
	}
	var w strings.Builder
	err = exec(&w, name, d)
	return w.String(), d.blocks, err
}

// TestRenderUsesTheCompiledPrompts: Render's system prompt, blocks and task are renderPrompt's with the
// compiled prompts.
func TestRenderUsesTheCompiledPrompts(t *testing.T) {
	b := fullBrief(TaskTitles, "x")
	b.Input = json.RawMessage(`{"title":"T","type":"listicle"}`)
	sys, usr, err := Render(b)
	if err != nil {
		t.Fatal(err)
	}
	p, err := renderPrompt(b, oracle(t))
	if err != nil {
		t.Fatal(err)
	}
	if sys != p.system || !strings.HasSuffix(usr, "\n\n"+p.task) || !strings.Contains(usr, strings.TrimSpace(p.channel)) {
		t.Fatalf("Render:\n%s\n%s\ntext/template:\n%s\n%s\n%s", sys, usr, p.system, p.channel, p.task)
	}
	for _, n := range p.blocks.names {
		if !strings.Contains(usr, fmt.Sprintf(" name=%q>\n%s\n</", n, p.blocks.values[n])) {
			t.Errorf("block %s missing from Render's message", n)
		}
	}
}

// TestPromptsGenUpToDate: prompts_gen.go and constructs_gen_test.go are what the generator writes from
// the .tmpl files.
func TestPromptsGenUpToDate(t *testing.T) {
	var want []byte
	for _, g := range []struct {
		o    promptgen.Output
		file string
	}{{promptgen.Constructs, "constructs_gen_test.go"}, {promptgen.Prompts, "prompts_gen.go"}} {
		set, err := promptgen.Parse(os.DirFS("."), g.o.Source)
		if err != nil {
			t.Fatal(err)
		}
		if want, err = promptgen.Generate(set, g.o); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(g.file); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s is out of date with %s (%v): run `go generate ./shared/generation` and commit it", g.file, g.o.Source, err)
		}
	}
	if !bytes.HasPrefix(want, []byte("// Code generated ")) || !bytes.Contains(want, []byte("DO NOT EDIT.")) {
		t.Error("prompts_gen.go has no generated-code header")
	}
	for _, name := range promptTemplates(t) {
		if !bytes.Contains(want, []byte(fmt.Sprintf("case %q:", name))) {
			t.Errorf("prompts_gen.go does not render %s", name)
		}
	}
}

// TestPromptDataMembers: the generator's table of promptData's members and funcs is promptData's and the
// oracle's FuncMap, as reflect sees them.
func TestPromptDataMembers(t *testing.T) {
	typ := reflect.TypeFor[promptData]()
	var methods, fields []string
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		methods = append(methods, m.Name)
		var want reflect.Type
		for _, g := range promptgen.Members {
			if g.Method && g.Name == m.Name {
				want = g.Type
			}
		}
		// The method's type without its receiver.
		in := make([]reflect.Type, m.Type.NumIn()-1)
		for j := range in {
			in[j] = m.Type.In(j + 1)
		}
		out := make([]reflect.Type, m.Type.NumOut())
		for j := range out {
			out[j] = m.Type.Out(j)
		}
		if got := reflect.FuncOf(in, out, m.Type.IsVariadic()); got != want {
			t.Errorf("method %s: %v, the generator's table says %v", m.Name, got, want)
		}
	}
	for _, f := range reflect.VisibleFields(typ) {
		switch {
		case len(f.Index) > 1 || !f.IsExported():
		case f.Anonymous:
			if f.Type != promptgen.Embedded || f.Name != "Brief" {
				t.Errorf("embedded %s %v, the generator's table says Brief %v", f.Name, f.Type, promptgen.Embedded)
			}
		default:
			fields = append(fields, f.Name)
			if i := slices.IndexFunc(promptgen.Members, func(m promptgen.Member) bool { return !m.Method && m.Name == f.Name }); i < 0 || promptgen.Members[i].Type != f.Type {
				t.Errorf("field %s %v is not in the generator's table", f.Name, f.Type)
			}
		}
	}
	var table []string
	for _, m := range promptgen.Members {
		table = append(table, m.Name)
	}
	if got := append(methods, fields...); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(table))) {
		t.Errorf("promptData exports %v, the generator's table %v", got, table)
	}
	if promptgen.Option != "missingkey=zero" {
		t.Errorf("option %q", promptgen.Option)
	}
	var names []string
	for _, f := range promptgen.Funcs {
		names = append(names, f.Name)
		fn, ok := oracleFuncs[f.Name]
		if !ok {
			t.Errorf("func %s is not the oracle's", f.Name)
			continue
		}
		v := reflect.ValueOf(fn)
		if v.Type() != f.Type {
			t.Errorf("func %s: %v, the generator's table says %v", f.Name, v.Type(), f.Type)
		}
		goName := runtime.FuncForPC(v.Pointer()).Name()
		if want := f.Go; goName != want && goName != "github.com/creatorstrategy/css/shared/generation."+want {
			t.Errorf("func %s is %s, the generator calls %s", f.Name, goName, f.Go)
		}
	}
	if got := slices.Sorted(maps.Keys(oracleFuncs)); !slices.Equal(got, names) {
		t.Errorf("the oracle's funcs %v, the generator's %v", got, names)
	}
}

type ptrStringer struct{ s string }

func (p *ptrStringer) String() string { return "ptr:" + p.s }

type valStringer int

func (v valStringer) String() string { return fmt.Sprintf("val:%d", int(v)) }

// TestPrintValueMatchesTemplate: printValue prints every kind of value as `{{.}}` does, self-formatting
// values, pointers to them, nil pointers, interfaces behind pointers, channels and functions included.
func TestPrintValueMatchesTemplate(t *testing.T) {
	tmpl := template.Must(template.New("").Parse("{{.}}"))
	n, s, a := 7, "str", any(nil)
	pn, pa := &n, &a
	for _, v := range []any{nil, "s", 3, 2.5, true, []string(nil), []any{1, "x", nil}, map[string]any{"b": 1, "a": nil},
		&n, &pn, (*int)(nil), &s, pa, ptrStringer{"x"}, &ptrStringer{"y"}, valStringer(4), ptrTo(valStringer(5)),
		json.RawMessage(`{"a":1}`), struct{ A, B int }{1, 2}, &struct{ A *int }{}, func() {}, make(chan int), errors.New("boom")} {
		var want strings.Builder
		wantErr := tmpl.Execute(&want, v)
		var got strings.Builder
		err := printValue(&got, v)
		switch {
		case (err != nil) != (wantErr != nil):
			t.Errorf("%#v: error %v, text/template's %v", v, err, wantErr)
		case err != nil:
			if !strings.HasSuffix(wantErr.Error(), "of type "+err.Error()) {
				t.Errorf("%#v: error %v, text/template's %v", v, err, wantErr)
			}
		case got.String() != want.String():
			t.Errorf("%#v: printed %q, text/template %q", v, got.String(), want.String())
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// FuzzCompiledPromptsMatchTemplates: any request body and any text in every member of the brief render
// the same with the compiled prompts as with text/template (go test runs the seeds; -fuzz explores).
func FuzzCompiledPromptsMatchTemplates(f *testing.F) {
	want := oracle(f)
	tasks := briefTasks(f)
	for _, in := range inputs()[:12] {
		f.Add(uint8(5), in, "plain", 3)
	}
	f.Add(uint8(0), `{"postType":"quiz","title":{"a":[1,2.5,null]}}`, "{{.}}", 0)
	f.Add(uint8(9), `{"guestName":"x","guestBio":false}`, "\u2028<b>", -1)
	f.Fuzz(func(t *testing.T, task uint8, in, s string, count int) {
		for _, b := range []*Brief{fullBrief(tasks[int(task)%len(tasks)], s), {Task: tasks[int(task)%len(tasks)], Language: s}} {
			b.Count, b.Input = count, json.RawMessage(in)
			got, gotErr := renderPrompt(b, execPrompt)
			exp, expErr := renderPrompt(b, want)
			if fmt.Sprint(gotErr) != fmt.Sprint(expErr) {
				t.Fatalf("compiled error %v, text/template's %v", gotErr, expErr)
			}
			if gotErr == nil {
				if diff := promptDiff(got, exp); diff != "" {
					t.Fatal(diff)
				}
			}
		}
	})
}
