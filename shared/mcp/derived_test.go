package mcp_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/queue"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/wire"
)

// slice is a research queue the test delivers by hand.
type slice struct {
	mu   sync.Mutex
	msgs []queue.Message
}

func (q *slice) Send(_ context.Context, msgs ...queue.Outgoing) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		q.msgs = append(q.msgs, queue.Message{ID: strings.Repeat("m", len(q.msgs)+1), Body: m.Body, Attempt: 1})
	}
	return nil
}

// researchChannel runs research of the channel to its end over the env's store, as a worker whose
// derived-metrics setting is `accepted` would.
func (e *env) researchChannel(t *testing.T, channelID string, accepted bool) {
	t.Helper()
	ctx := context.Background()
	now := func() time.Time { return *e.now.Load() }
	if err := e.store.PutProfile(ctx, channelID, profile.NicheProfile{FocusedNiche: "vegan meal prep",
		Keywords: []string{"vegan", "meal prep", "budget", "protein"}, ContentLanguage: "english"}); err != nil {
		t.Fatal(err)
	}
	cfg := research.DefaultConfig(research.SourceOffline)
	cfg.DerivedMetrics = accepted
	q := &slice{}
	svc, err := research.NewService(e.store, q, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	p, err := research.NewPipeline(e.store, youtubesample.New(now), q, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Start(ctx, channelID, research.TriggerAPI); err != nil {
		t.Fatal(err)
	}
	for len(q.msgs) > 0 {
		m := q.msgs[0]
		q.msgs = q.msgs[1:]
		if err := p.Handle(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
}

// The derived-metrics switch both ways through MCP (decision 48): the tools and the resource that show
// research carry no score computed from other channels' data until it is accepted, and say why.
func TestDerivedMetricsThroughMCP(t *testing.T) {
	ctx := context.Background()
	for _, accepted := range []bool{false, true} {
		e := newEnv(t, func(c *wire.APIConfig) { c.Research.DerivedMetrics = accepted })
		e.researchChannel(t, e.channelA, accepted)
		cs := e.connect(e.keyA)
		status := map[bool]string{true: "accepted", false: "not_accepted"}[accepted]

		trending := ok(t, cs, "get_trending", map[string]any{"limit": 20})
		videos := list(trending.structured, "videos")
		if str(trending.structured, "derivedMetrics", "status") != status || len(videos) != 20 {
			t.Fatalf("accepted=%v: get_trending %v", accepted, trending.structured)
		}
		for _, v := range videos {
			if _, has := v.(map[string]any)["outlierScore"]; has != accepted {
				t.Fatalf("accepted=%v: a trending video has outlierScore: %v", accepted, has)
			}
		}
		if accepted {
			ok(t, cs, "get_trending", map[string]any{"sort": "outlier"})
		} else {
			fails(t, cs, "get_trending", map[string]any{"sort": "outlier"}, "VALIDATION_ERROR: sort")
		}

		insights := ok(t, cs, "get_research_insights", map[string]any{})
		if str(insights.structured, "derivedMetrics", "status") != status || (str(insights.structured, "titles") != "") != accepted {
			t.Errorf("accepted=%v: get_research_insights %v", accepted, insights.structured)
		}
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "css://research-insights"})
		if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"status":"`+status+`"`) ||
			strings.Contains(res.Contents[0].Text, `"titles"`) != accepted {
			t.Errorf("accepted=%v: css://research-insights %v %v", accepted, res, err)
		}

		perf := ok(t, cs, "get_performance", map[string]any{})
		if n := len(list(perf.structured, "topResearchVideos")); str(perf.structured, "derivedMetrics", "status") != status || (n > 0) != accepted {
			t.Errorf("accepted=%v: get_performance has %d topResearchVideos, derivedMetrics %v", accepted, n, perf.structured["derivedMetrics"])
		}
	}
}

// The tools that show derived figures describe them as the service's estimates, not YouTube's figures.
func TestDerivedFiguresDescribedAsTheServicesEstimates(t *testing.T) {
	e := newEnv(t)
	tools, err := e.connect(e.keyA).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"get_trending": true, "get_performance": true, "get_research_insights": true}
	for _, tool := range tools.Tools {
		if want[tool.Name] {
			delete(want, tool.Name)
			if !strings.Contains(tool.Description, "not YouTube's") || !strings.Contains(tool.Description, "derived-metrics policy") {
				t.Errorf("%s: %q does not say its figures are the service's own", tool.Name, tool.Description)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("tools missing: %v", want)
	}
}
