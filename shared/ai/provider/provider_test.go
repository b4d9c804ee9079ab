package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/bedrock"
	"github.com/creatorstrategy/css/shared/ai/openai"
	"github.com/creatorstrategy/css/shared/config"
)

type fixed struct{}

func (fixed) Generate(context.Context, ai.Request) (ai.Result, error) {
	return ai.Result{JSON: json.RawMessage(`{}`), Model: "offline"}, nil
}

func TestText(t *testing.T) {
	bedrockCfg := config.Config{ModelProvider: config.ProviderBedrock, Region: "eu-west-1", ModelMaxAttempts: 4,
		GenerationModel: config.DefaultBedrockGenerationModel, GradingModel: config.DefaultBedrockGradingModel}
	if m, err := Text(bedrockCfg, nil, nil); err != nil {
		t.Errorf("bedrock: %v", err)
	} else if _, ok := m.(*bedrock.Model); !ok {
		t.Errorf("bedrock: got %T", m)
	}
	bedrockCfg.Region = ""
	if _, err := Text(bedrockCfg, nil, nil); err == nil {
		t.Error("bedrock without a region")
	}

	if m, err := Text(config.Config{ModelProvider: config.ProviderOffline}, func() ai.Model { return fixed{} }, nil); err != nil || m != (fixed{}) {
		t.Errorf("offline: %v, %v", m, err)
	}
	if _, err := Text(config.Config{ModelProvider: config.ProviderOffline}, nil, nil); err == nil {
		t.Error("offline without an offline model")
	}
	if _, err := Text(config.Config{ModelProvider: "gemini"}, nil, nil); err == nil {
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
	m, err := Text(cfg, nil, nil)
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
