package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ProbeTimeout bounds one probe of the server.
const ProbeTimeout = 3 * time.Second

// ProbeResult is what a probe of the server found.
type ProbeResult struct {
	// Reachable: the server answered the model list.
	Reachable bool
	// Missing names the configured models the server does not list.
	Missing []string
	// Err says what went wrong when the server was not reachable or its answer not readable.
	Err error
}

// Probe asks the server for its model list (GET <base>/models: OpenAI, Ollama, llama.cpp, llama-cpp-python,
// vLLM and LM Studio all serve it) and says whether the configured models are on it. It spends no tokens;
// callers cache it (health.ProbeCache).
func (m *Model) Probe(ctx context.Context) ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(m.opts.BaseURL, "/")+"/models", nil)
	if err != nil {
		return ProbeResult{Err: err}
	}
	if m.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.opts.APIKey)
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return ProbeResult{Err: fmt.Errorf("cannot reach the model server: %w", err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return ProbeResult{Err: fmt.Errorf("the model server answered its model list with HTTP %d: %.200s",
			resp.StatusCode, (exchange{body: body}).message())}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return ProbeResult{Err: fmt.Errorf("the model server's model list is not readable: %w", err)}
	}
	var served []string
	for _, d := range list.Data {
		served = append(served, d.ID)
	}
	res := ProbeResult{Reachable: true}
	for _, want := range []string{m.opts.GenerationModel, m.opts.GradingModel} {
		if !slices.Contains(served, want) && !slices.Contains(res.Missing, want) {
			res.Missing = append(res.Missing, want)
		}
	}
	return res
}
