package generation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
)

// Issue 19 item 5: a request whose prompt can never fit the budget (here a profile stored before the
// contract bounded its fields) is refused at once, 400 VALIDATION_ERROR naming the field to shorten; no
// job is queued and no quota unit spent.
func TestOverBudgetRefusedBeforeQueueing(t *testing.T) {
	e := newEnv(t, 100)
	ctx := context.Background()
	if err := e.st.PutProfile(ctx, "ch1", profile.NicheProfile{BroadNiche: strings.Repeat("coffee ", 6000), Keywords: []string{"a", "b", "c", "d"}}); err != nil {
		t.Fatal(err)
	}
	in := contract.LongScriptRequest{Title: "espresso at home", Type: "how-to"}
	_, err := e.gen.Submit(ctx, generation.Submission{Operation: "generateLongScript", ChannelID: "ch1", AccountID: "acct1", Body: &in, Async: true})
	ae, _ := apperr.As(err)
	if ae == nil || ae.Code != apperr.Validation || ae.Field != "broadNiche" {
		t.Fatalf("err = %v, want VALIDATION_ERROR naming broadNiche", err)
	}
	t.Log(err)
	if e.q.sent.Load() != 0 {
		t.Errorf("%d jobs queued", e.q.sent.Load())
	}
	if n, _, _, _ := e.st.GenerationUsage(ctx, "acct1", time.Now().UTC().Format("2006-01")); n != 0 {
		t.Errorf("quota count %d, want 0", n)
	}
}

// A job that fails for a reason a retry cannot change (its prompt is over the budget: the profile grew
// after it was queued) is failed at once, on its first delivery, with its error; the queue does not retry.
func TestOverBudgetJobFailsAtOnce(t *testing.T) {
	e := newEnv(t, 100)
	ctx := context.Background()
	run := generation.ToolRun{ID: uuid.Must(uuid.NewV7()).String(), ToolName: "long_scripts", Status: generation.Pending,
		Input: json.RawMessage(`{"title":"espresso at home","type":"how-to"}`), GeneratedAt: time.Now()}
	if err := e.st.CreateRun(ctx, "ch1", run); err != nil {
		t.Fatal(err)
	}
	if err := e.st.PutProfile(ctx, "ch1", profile.NicheProfile{BroadNiche: strings.Repeat("coffee ", 6000)}); err != nil {
		t.Fatal(err)
	}
	job, _ := json.Marshal(generation.Job{RunID: run.ID, ChannelID: "ch1", AccountID: "acct1", Operation: "generateLongScript"})
	if err := e.gen.Handle(ctx, queue.Message{ID: "m", Body: job, Attempt: 1}); err != nil {
		t.Fatalf("first delivery: %v, want the job done with (no retry)", err)
	}
	got, _, _ := e.st.GetRun(ctx, "ch1", run.ID)
	if got.Status != generation.Failed || !strings.HasPrefix(generation.Value(got.Error), "VALIDATION_ERROR: broadNiche") {
		t.Errorf("run = %s %q, want failed with VALIDATION_ERROR naming broadNiche", got.Status, generation.Value(got.Error))
	}
	if e.writer.count("") != 0 {
		t.Errorf("%d model calls", e.writer.count(""))
	}
}

// A long draft is graded within the budget: the text to grade takes what the fixed parts leave, so what
// a model writes cannot make its own grading call fail.
func TestLongDraftIsGradedWithinBudget(t *testing.T) {
	e := newEnv(t, 100)
	ctx := context.Background()
	if err := e.st.PutProfile(ctx, "ch1", profile.NicheProfile{BroadNiche: strings.Repeat("b", 100), Keywords: []string{"a", "b", "c", "d"}}); err != nil {
		t.Fatal(err)
	}
	// 2,200 long words: a valid script of ~35 KB, 8,800 estimated tokens, more than the whole budget.
	script := "[B-ROLL: the machine]\n[GRAPHIC: grind sizes]\n" + strings.Repeat("extraordinarily ", 2200)
	draft, _ := json.Marshal(map[string]any{"script": script})
	e.writer.answers[generation.TaskLongScript] = []string{string(draft)}
	e.grader.answers[generation.TaskGradeContent] = []string{`{"score":80,"feedback":"ok"}`}
	in := contract.LongScriptRequest{Title: "espresso at home", Type: "how-to"}
	if _, err := e.gen.Submit(ctx, generation.Submission{Operation: "generateLongScript", ChannelID: "ch1", AccountID: "acct1", Body: &in}); err != nil {
		t.Fatalf("err = %v after %d grading calls", err, e.grader.count(""))
	}
	for _, c := range e.grader.calls {
		used := generation.Tokens(c.System)
		for _, m := range c.Messages {
			used += generation.Tokens(m.Text)
		}
		if used > generation.DefaultPromptBudget {
			t.Errorf("grading prompt of %d tokens", used)
		}
	}
}

// stringBounds returns a schema's string properties' maxLength and array properties' maxItems and item
// maxLength, from the contract.
func stringBounds(t *testing.T, component string) map[string][2]int {
	t.Helper()
	s, err := contract.JSONSchema(component)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int{}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		p := p.(map[string]any)
		num := func(m map[string]any, k string) int {
			switch v := m[k].(type) {
			case float64:
				return int(v)
			case int:
				return v
			case uint64:
				return int(v)
			}
			return 0
		}
		switch p["type"] {
		case "string":
			if _, isEnum := p["enum"]; !isEnum && p["format"] == nil {
				out[name] = [2]int{0, num(p, "maxLength")}
			}
		case "array":
			if items, ok := p["items"].(map[string]any); ok && items["type"] == "string" {
				out[name] = [2]int{num(p, "maxItems"), num(items, "maxLength")}
			}
		}
	}
	return out
}

// Any valid niche profile fits every tool's budget: the largest profile the contract accepts (every text
// field and list at its bounds, in one-, two- and three-byte characters: the token estimate counts bytes),
// with the largest request texts, 50 notes of the largest size and the longest transcript, assembles for
// every tool's main call and for the grading call within the budget; the fixed parts leave the material
// its floor. The series' bounds are the specification's (description 2,000, scriptFormula 5,000), which
// together with the largest request cannot always fit: with the largest series too, each call either fits
// or is refused with a VALIDATION_ERROR naming the field to shorten, before anything is queued.
func TestLargestValidProfileFitsEveryTool(t *testing.T) {
	// The request's own texts are per request (a request that cannot fit is refused, naming its field): the
	// proof takes the longest title and a context of 5,000 characters (the contract's bound) in ASCII and
	// two-byte scripts, 1,000 in three-byte ones (Hindi, Japanese, Korean).
	for _, ch := range []struct {
		name, char string
		context    int
	}{{"ascii", "x", 5000}, {"two-byte", "é", 5000}, {"three-byte", "語", 1000}} {
		t.Run(ch.name, func(t *testing.T) {
			ctx := context.Background()
			st := store.New(memstore.New(t))
			fill := func(n int) string { return strings.Repeat(ch.char, n) }
			var p contract.NicheProfile
			raw := map[string]any{}
			for name, b := range stringBounds(t, "NicheProfile") {
				if b[1] == 0 {
					t.Fatalf("NicheProfile.%s has no maxLength", name)
				}
				if b[0] == 0 {
					raw[name] = fill(b[1])
					continue
				}
				var list []string
				for i := range b[0] {
					list = append(list, fmt.Sprintf("%s%d", name[:2], i%10)+fill(b[1]-3))
				}
				raw[name] = list
			}
			buf, _ := json.Marshal(raw)
			if err := json.Unmarshal(buf, &p); err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("the largest profile is not valid: %v", err)
			}
			if _, err := profile.NewService(st).Put(ctx, "ch1", p); err != nil {
				t.Fatal(err)
			}
			sb := stringBounds(t, "SeriesCreate")
			se, err := planning.NewSeriesService(st, time.Now).Create(ctx, "ch1", contract.SeriesCreate{Name: fill(sb["name"][1]),
				Description: fill(sb["description"][1]), ScriptFormula: fill(sb["scriptFormula"][1])})
			if err != nil {
				t.Fatal(err)
			}
			if sb["description"][1] != 2000 || sb["scriptFormula"][1] != 5000 {
				t.Fatalf("series bounds %v: the specification's are 2000 and 5000", sb)
			}
			ns := notes.NewService(st, time.Now)
			for i := range 50 {
				if _, err := ns.Create(ctx, "ch1", contract.NoteCreate{Category: "style", Content: fmt.Sprint(i) + fill(1990)}, notes.FromApp); err != nil {
					t.Fatal(err)
				}
			}
			input := json.RawMessage(fmt.Sprintf(`{"title":%q,"type":"how-to","context":%q,"topic":%q,"currentTitle":%q}`,
				fill(200), fill(ch.context), fill(200), fill(200)))
			a := &generation.Assembler{Data: st}
			for _, c := range []struct{ tool, task string }{
				{"titles", generation.TaskTitles}, {"long_scripts", generation.TaskLongScript}, {"short_scripts", generation.TaskShortScript},
				{"descriptions", generation.TaskDescription}, {"thumbnails", generation.TaskThumbnail}, {"hooks", generation.TaskHooks},
				{"ctas", generation.TaskCTAs}, {"podcast_prep", generation.TaskPodcastPrep}, {"newsletter", generation.TaskNewsletter},
				{"clips", generation.TaskClips}, {"community_posts", generation.TaskCommunityPosts}, {"channel_optimize", generation.TaskChannelBanner},
				{"reoptimize", generation.TaskReoptimize}, {"niche_score", generation.TaskNicheScore}, {"ideas", generation.TaskIdeas},
				{"long_scripts", generation.TaskGradeContent}, {"titles", generation.TaskGradeTitles},
			} {
				for _, seriesID := range []string{"", se.ID} {
					base := generation.Brief{Task: c.task, VideoType: "Long", Input: input,
						Transcript: strings.Repeat("0:00 a long transcript line about espresso\n", 5000)}
					switch c.task {
					case generation.TaskGradeContent:
						base.Items, base.GradedTool = []string{strings.Repeat("a long script ", 5000)}, "long scripts"
					case generation.TaskGradeTitles:
						base.Items = []string{fill(100), fill(100), fill(100), fill(100), fill(100), fill(100), fill(100), fill(100)}
					}
					b, err := a.Assemble(ctx, "ch1", c.tool, seriesID, base)
					if err != nil && seriesID != "" {
						if e, ok := apperr.As(err); !ok || e.Code != apperr.Validation || e.Field == "" {
							t.Errorf("%s %s with the largest series: %v, want a VALIDATION_ERROR naming a field", c.tool, c.task, err)
						}
						t.Logf("%-16s %-16s refused with the largest series: %v", c.tool, c.task, err)
						continue
					}
					if err != nil {
						t.Errorf("%s %s: %v", c.tool, c.task, err)
						continue
					}
					sys, usr, err := generation.Render(b)
					if err != nil {
						t.Fatal(err)
					}
					used := generation.Tokens(sys) + generation.Tokens(usr)
					if used > generation.DefaultPromptBudget {
						t.Errorf("%s %s: %d tokens over the budget", c.tool, c.task, used)
					}
					if b.Profile.BroadNiche != contract.Value(p.BroadNiche) || (b.Series == nil) != (seriesID == "") {
						t.Errorf("%s: the profile or the series was left out", c.tool)
					}
					t.Logf("%-16s %-16s series %-5v %5d tokens (transcript %d, %d notes)", c.tool, c.task, seriesID != "", used, generation.Tokens(b.Transcript), len(b.Notes))
				}
			}
		})
	}
}

// Issue 36 item 3: a model server's context window (CSS_MODEL_CONTEXT_TOKENS) bounds prompts to what it
// leaves after the answer. llama-cpp-python's default of 2,048 tokens cannot hold any prompt with a
// 4,096-token answer: every request is refused at submit, naming the window, instead of 400s from the
// server in the log; 8,192 leaves 4,096 for a prompt, which a usual request fits and a long one does not.
func TestContextWindowBoundsPromptsAtSubmit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		window        int
		title         string
		refused       bool
		wantInMessage string // and how to set the window, in the refusal
	}{
		{"2048 tokens", 2048, "espresso at home", true, "context window of 2048 tokens"},
		{"8192 tokens, a usual request", 8192, "espresso at home", false, ""},
		{"8192 tokens, a long context", 8192, "espresso at home", true, "context window of 8192 tokens"},
		{"not set, a long context", 0, "espresso at home", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 100, func(_ *env, c *generation.Config) { c.ContextWindow = tc.window })
			if strings.Contains(tc.name, "long context") {
				// About 5,250 tokens of profile (stored before the contract bounded its fields): within the
				// default budget, over what an 8,192-token window leaves.
				if err := e.st.PutProfile(ctx, "ch1", profile.NicheProfile{BroadNiche: strings.Repeat("coffee ", 3000), Keywords: []string{"a", "b", "c", "d"}}); err != nil {
					t.Fatal(err)
				}
			}
			in := contract.TitlesRequest{Title: tc.title, Type: "how-to"}
			_, err := e.gen.Submit(ctx, generation.Submission{Operation: "generateTitles", ChannelID: "ch1", AccountID: "acct1", Body: &in, Async: true})
			ae, _ := apperr.As(err)
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if ae == nil || ae.Code != apperr.Validation || !strings.Contains(ae.Message, tc.wantInMessage) || !strings.Contains(ae.Message, "--n_ctx") {
				t.Fatalf("err = %v, want VALIDATION_ERROR naming %q and how to set it", err, tc.wantInMessage)
			}
			if e.q.sent.Load() != 0 {
				t.Errorf("%d jobs queued", e.q.sent.Load())
			}
		})
	}
	if got := generation.PromptBudget(0, 0); got != generation.DefaultPromptBudget {
		t.Errorf("PromptBudget(0, 0) = %d", got)
	}
	if got := generation.PromptBudget(8000, 100_000); got != 8000 {
		t.Errorf("PromptBudget(8000, 100000) = %d, want the budget", got)
	}
	if got := generation.PromptBudget(8000, 8192); got != 4096 {
		t.Errorf("PromptBudget(8000, 8192) = %d, want 4096", got)
	}
}
