package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/bedrock"
	"github.com/creatorstrategy/css/shared/ai/openai"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/health"
)

type fixed struct{}

func (fixed) Generate(context.Context, ai.Request) (ai.Result, error) {
	return ai.Result{JSON: json.RawMessage(`{}`), Model: "offline"}, nil
}

func TestText(t *testing.T) {
	bedrockCfg := config.Config{ModelProvider: config.ProviderBedrock, Region: "eu-west-1", ModelMaxAttempts: 4,
		GenerationModel: config.DefaultBedrockGenerationModel, GradingModel: config.DefaultBedrockGradingModel}
	if m, err := Text(bedrockCfg, nil); err != nil {
		t.Errorf("bedrock: %v", err)
	} else if _, ok := m.(*bedrock.Model); !ok {
		t.Errorf("bedrock: got %T", m)
	}
	bedrockCfg.Region = ""
	if _, err := Text(bedrockCfg, nil); err == nil {
		t.Error("bedrock without a region")
	}

	offered := WithOffline(Offline{Text: func() ai.Model { return fixed{} }})
	if m, err := Text(config.Config{ModelProvider: config.ProviderOffline}, nil, offered); err != nil || m != (fixed{}) {
		t.Errorf("offline: %v, %v", m, err)
	}
	// A Lambda offers no stand-in: configured for one, it fails at start and says why.
	if _, err := Text(config.Config{ModelProvider: config.ProviderOffline}, nil); !errors.Is(err, ErrOfflineNotLinked) ||
		!strings.Contains(err.Error(), "local stack") {
		t.Errorf("offline without an offline model: %v", err)
	}
	if _, err := Text(config.Config{ModelProvider: "gemini"}, nil); err == nil {
		t.Error("unknown provider")
	}
}

// The openai model gets the configured server, key and models: one call to a loopback server shows it.
func TestTextOpenAI(t *testing.T) {
	var authz, model string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz = r.Header.Get("Authorization")
		var body struct{ Model string }
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		model = body.Model
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer srv.Close()
	cfg := config.Config{ModelProvider: config.ProviderOpenAI, OpenAIBaseURL: srv.URL + "/v1", OpenAIAPIKey: "sk-test",
		GenerationModel: "big", GradingModel: "small", ModelMaxAttempts: 1}
	m, err := Text(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*openai.Model); !ok {
		t.Fatalf("got %T", m)
	}
	_, err = m.Generate(context.Background(), ai.Request{Role: ai.Grading, Task: "t", SchemaName: "t",
		Schema: json.RawMessage(`{"type":"object","properties":{}}`), Messages: []ai.Message{{Role: "user", Text: "hi"}}})
	if err != nil || authz != "Bearer sk-test" || model != "small" {
		t.Errorf("err %v, Authorization %q, model %q", err, authz, model)
	}
}

type fixedImages struct{}

func (fixedImages) Image(context.Context, ai.ImageRequest) (ai.Image, error) { return ai.Image{}, nil }

// Models names the offered stand-ins as they name themselves, draws with the offered image model beside
// any text model but Bedrock's, and, offered none, draws nothing and refuses the offline text model.
func TestModels(t *testing.T) {
	offered := WithOffline(Offline{Text: func() ai.Model { return fixed{} }, Images: func() (ai.ImageModel, error) { return fixedImages{}, nil },
		Name: "offline", ImagesName: "offline"})
	offline := config.Config{ModelProvider: config.ProviderOffline}
	s, err := Models(offline, nil, offered)
	if err != nil || s.Text != (fixed{}) || s.Images != (fixedImages{}) || !s.Offline ||
		s.TextName != "offline (no model configured)" || s.GradingName != s.TextName || s.ImagesName != "offline preview" {
		t.Errorf("offline: %+v, %v", s, err)
	}
	if _, err := Models(offline, nil); !errors.Is(err, ErrOfflineNotLinked) {
		t.Errorf("offline offered none: %v", err)
	}
	openaiCfg := config.Config{ModelProvider: config.ProviderOpenAI, OpenAIBaseURL: "http://127.0.0.1:1/v1",
		GenerationModel: "big", GradingModel: "small", ModelMaxAttempts: 1}
	if s, err := Models(openaiCfg, nil, offered); err != nil || s.Images != (fixedImages{}) || s.Offline || s.TextName != "big" {
		t.Errorf("openai with the stand-ins offered: %+v, %v", s, err)
	}
	if s, err := Models(openaiCfg, nil); err != nil || s.Images != nil || s.ImagesName != "" {
		t.Errorf("openai offered none: %+v, %v", s, err)
	}
}

// The configuration accepts exactly the adapter's structured output modes.
func TestStructuredOutputModesAgree(t *testing.T) {
	var modes []string
	for _, m := range openai.Modes {
		modes = append(modes, string(m))
	}
	if !slices.Equal(modes, config.StructuredOutputModes) {
		t.Errorf("openai.Modes %v, config.StructuredOutputModes %v", modes, config.StructuredOutputModes)
	}
}

// The OpenAI-compatible server's health: ok when it lists both models, degraded when it misses one, down
// (with the reason) when it cannot be reached.
func TestModelsProbe(t *testing.T) {
	list := `{"object":"list","data":[{"id":"big"},{"id":"small"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, list)
	}))
	defer srv.Close()
	cfg := config.Config{ModelProvider: config.ProviderOpenAI, OpenAIBaseURL: srv.URL + "/v1",
		GenerationModel: "big", GradingModel: "small", ModelMaxAttempts: 1, OpenAIStructuredOutput: "auto"}
	set, err := Models(cfg, nil)
	if err != nil || set.Probe == nil {
		t.Fatalf("%+v, %v", set, err)
	}
	if p := set.Probe(context.Background()); p.State != health.OK || p.Reason != "" {
		t.Errorf("both served: %+v", p)
	}
	list = `{"object":"list","data":[{"id":"big"}]}`
	if p := set.Probe(context.Background()); p.State != health.Degraded || p.Reason != "the model server does not serve small" {
		t.Errorf("one missing: %+v", p)
	}
	srv.Close()
	if p := set.Probe(context.Background()); p.State != health.Down || !strings.Contains(p.Reason, "cannot reach the model server") {
		t.Errorf("down: %+v", p)
	}
	offline, err := Models(config.Config{ModelProvider: config.ProviderOffline}, nil, WithOffline(Offline{Text: func() ai.Model { return fixed{} }, Name: "offline"}))
	if err != nil || offline.Probe != nil {
		t.Errorf("the offline model has a probe: %v", err)
	}
}
