package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync/atomic"
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
	// Busy: the server took the request but did not answer within the probe's time. llama-cpp-python
	// answers one request at a time, so a probe waits behind a generation: busy is up, not down.
	Busy bool
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
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(w httptrace.WroteRequestInfo) { wrote.Store(w.Err == nil) },
	}))
	resp, err := m.http.Do(req)
	if err != nil {
		if wrote.Load() && errors.Is(err, context.DeadlineExceeded) {
			return ProbeResult{Reachable: true, Busy: true}
		}
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
