package workers_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/provider"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/generation/schemacheck"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/testkit/memstore"
	"github.com/creatorstrategy/css/shared/testkit/offline"
	"github.com/creatorstrategy/css/shared/testkit/offline/textmodel"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/wire/workers"
)

// steps is the research queue: the test delivers what the pipeline sends.
type steps struct {
	mu   sync.Mutex
	msgs []queue.Message
}

func (q *steps) Send(_ context.Context, msgs ...queue.Outgoing) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		q.msgs = append(q.msgs, queue.Message{ID: fmt.Sprint("m", len(q.msgs)), Body: m.Body, Attempt: 1})
	}
	return nil
}

func (q *steps) drain(t *testing.T, p *research.Pipeline) {
	t.Helper()
	for i := 0; ; i++ {
		q.mu.Lock()
		if i == len(q.msgs) {
			q.mu.Unlock()
			return
		}
		m := q.msgs[i]
		q.mu.Unlock()
		if err := p.Handle(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// counted is a model that records the prompt size of every call.
type counted struct {
	ai.Model
	mu     sync.Mutex
	tasks  []string
	tokens []int
}

func (c *counted) Generate(ctx context.Context, req ai.Request) (ai.Result, error) {
	n := generation.Tokens(req.System)
	for _, m := range req.Messages {
		n += generation.Tokens(m.Text)
	}
	c.mu.Lock()
	c.tasks, c.tokens = append(c.tasks, req.Task), append(c.tokens, n)
	c.mu.Unlock()
	return c.Model.Generate(ctx, req)
}

// setup is a channel with a spanish niche profile, the research service and the queue its runs go on.
func setup(t *testing.T) (*store.Store, *research.Service, *steps, config.Config) {
	t.Helper()
	st := store.New(memstore.New(t))
	if _, err := profile.NewService(st).Put(context.Background(), "ch1", contract.NicheProfile{
		FocusedNiche: contract.Ptr("comida vegana para estudiantes"), TargetAudience: contract.Ptr("estudiantes con poco dinero"),
		Keywords:        []string{"vegan", "meal prep", "budget", "protein"},
		ContentLanguage: contract.Ptr(contract.NicheProfileContentLanguage("spanish")),
	}); err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{ModelProvider: config.ProviderOffline, PromptBudget: generation.DefaultPromptBudget,
		Research: config.Research{Source: config.SourceOffline, DerivedMetrics: true}} // as the local stack on the sample (decision 48)
	q := &steps{}
	svc, err := research.NewService(st, q, research.ConfigFrom(cfg.Research), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return st, svc, q, cfg
}

// sample is the offline research sample, offered as the local stack offers it.
var sample = workers.WithOfflineSample(youtubesample.New(time.Now))

// A Lambda offers no stand-in: configured for the offline sample or model, the worker fails at start and
// says why.
func TestLambdaRefusesTheOfflineStandIns(t *testing.T) {
	_, _, _, cfg := setup(t)
	if _, err := workers.ResearchSource(context.Background(), cfg, nil); !errors.Is(err, provider.ErrOfflineNotLinked) ||
		!strings.Contains(err.Error(), "CSS_RESEARCH_SOURCE") {
		t.Errorf("source: %v", err)
	}
	if _, err := provider.Text(cfg, slog.New(slog.DiscardHandler)); !errors.Is(err, provider.ErrOfflineNotLinked) ||
		!strings.Contains(err.Error(), "CSS_MODEL_PROVIDER") {
		t.Errorf("writers: %v", err)
	}
}

// The worker's pipeline, wired as the Lambda and the local stack wire it, writes the patterns and the
// ideas with the configured model: here the offline one, in the channel's language.
func TestPipelineWritesWithTheModel(t *testing.T) {
	ctx := context.Background()
	st, svc, q, cfg := setup(t)
	src, err := workers.ResearchSource(ctx, cfg, nil, sample)
	if err != nil {
		t.Fatal(err)
	}
	model, err := provider.Text(cfg, slog.New(slog.DiscardHandler), provider.WithOffline(offline.Models()))
	if err != nil {
		t.Fatal(err)
	}
	writers := workers.ResearchWriters(model, cfg, slog.New(slog.DiscardHandler))
	p, err := workers.ResearchPipeline(cfg, st, src, q, slog.New(slog.DiscardHandler), writers...)
	if err != nil {
		t.Fatal(err)
	}
	run, err := svc.Start(ctx, "ch1", "test")
	if err != nil {
		t.Fatal(err)
	}
	q.drain(t, p)
	done, err := svc.Run(ctx, "ch1", run.ID)
	if err != nil || done.Status != research.Succeeded {
		t.Fatalf("run %+v %v", done, err)
	}
	counts := map[string]map[string]int{}
	for _, s := range done.Steps {
		counts[s.Name] = s.Counts
	}
	if c := counts[research.StepPatterns]; c["modelCalls"] != 6 || c["patterns"] != 6 || c["inputTokens"] == 0 {
		t.Errorf("analyse_patterns counts %v", c)
	}
	if c := counts[research.StepIdeas]; c["modelCalls"] != 1 || c["ideas"] != 20 {
		t.Errorf("write_ideas counts %v", c)
	}
	pats, err := svc.Insights(ctx, "ch1")
	if err != nil {
		t.Fatal(err)
	}
	// research.Statistics writes unlabelled English: the offline model's English for a spanish channel is
	// labelled.
	for kind, text := range map[string]string{"titles": pats.Titles, "thumbnails": pats.Thumbnails, "longScripts": pats.LongScripts,
		"shortScripts": pats.ShortScripts, "descriptions": pats.Descriptions, "ideas": pats.Ideas} {
		if !strings.HasPrefix(text, textmodel.Marker) {
			t.Errorf("%s is not the model's text: %s", kind, text)
		}
	}
	ideas, err := st.ListIdeas(ctx, "ch1")
	if err != nil || len(ideas) != 20 {
		t.Fatalf("%d ideas, %v", len(ideas), err)
	}
	for _, i := range ideas {
		if i.InspiredBy == nil || !strings.Contains(*i.InspiredBy, "offline-sample.invalid") || i.ViewCount == nil || *i.ViewCount <= 0 {
			t.Errorf("idea %+v names no research video", i)
		}
	}
}

// Issue 10's figure: a run of 500 videos makes at most 8 analysis model calls (one per content kind, one
// for the ideas), every prompt within the prompt budget.
func TestAnalysisCallsAndPromptBudget(t *testing.T) {
	ctx := context.Background()
	st, svc, q, cfg := setup(t)
	src, err := workers.ResearchSource(ctx, cfg, nil, sample)
	if err != nil {
		t.Fatal(err)
	}
	model := &counted{Model: textmodel.New()}
	w := &generation.ResearchWriter{Model: model, Answers: schemacheck.New(), Budget: cfg.PromptBudget}
	p, err := workers.ResearchPipeline(cfg, st, src, q, slog.New(slog.DiscardHandler), research.WithPatternWriter(w), research.WithIdeaWriter(w))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Start(ctx, "ch1", "test"); err != nil {
		t.Fatal(err)
	}
	q.drain(t, p)
	if len(model.tasks) > 8 || len(model.tasks) < 7 {
		t.Fatalf("%d model calls: %v", len(model.tasks), model.tasks)
	}
	most := 0
	for i, n := range model.tokens {
		most = max(most, n)
		if n > cfg.PromptBudget {
			t.Errorf("%s: a prompt of %d tokens, over the budget of %d", model.tasks[i], n, cfg.PromptBudget)
		}
	}
	t.Logf("%d model calls for a run of 500 videos; the largest prompt %d tokens of %d", len(model.tasks), most, cfg.PromptBudget)
}
