package generation

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/brief"
	"github.com/creatorstrategy/css/shared/profile"
)

// The prompts are text/template's, over every shape of brief and request a generation may bring.

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
		t.Fatalf("the corpus holds %d strings, want at least 20", len(out))
	}
	return out
}

// TestPromptsRenderEveryBrief: every task's template renders for every brief of the corpus (every shape of
// brief, every JSON type in every request key, the hostile strings in every member), and fails only where no
// validated request can lead: a body that is not an object, a postType that is not a string, a grading with
// nothing to grade; a task with no template fails naming it.
func TestPromptsRenderEveryBrief(t *testing.T) {
	hostile := testdataStrings(t)
	rendered, refused := 0, map[string]int{}
	for _, task := range briefTasks(t) {
		for _, b := range corpus(task, hostile) {
			_, err := renderPrompt(b)
			if err == nil {
				rendered++
				continue
			}
			var in map[string]any
			inputErr := len(b.Input) > 0 && json.Unmarshal(b.Input, &in) != nil
			_, postTypeIsText := in["postType"].(string)
			switch {
			case inputErr && strings.Contains(err.Error(), "brief input"):
				refused["not an object"]++
			case task == "community_posts" && !postTypeIsText && strings.Contains(err.Error(), "community_posts.tmpl"):
				refused["postType not text"]++
			case task == "grade_content" && len(b.Items) == 0 && strings.Contains(err.Error(), "index out of range"):
				refused["nothing to grade"]++
			case task == "no_such_task" && strings.Contains(err.Error(), `no template "no_such_task.tmpl"`):
				refused["no template"]++
			default:
				t.Fatalf("task %s, input %s: %v", task, b.Input, err)
			}
		}
	}
	if rendered < 5000 || len(refused) != 4 {
		t.Fatalf("%d rendered, refused %v: the corpus no longer covers every outcome", rendered, refused)
	}
	t.Logf("%d rendered, refused %v", rendered, refused)
}
