package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
)

// generationHandlers serves the operations that run as generation jobs (decision 17), GET /generations/{id}
// and the unversioned POST /api/generate (decision 26).
func generationHandlers(sv Services) map[string]handler {
	g := sv.Generation
	// A function built without a generator (a test of another group) answers 501 for these.
	notConfigured := apperr.New(apperr.NotImplemented, "generation is not configured in this function")
	// job submits one generation and answers 200 with its output, or 202 with where to find it.
	job := func(ctx context.Context, c *call, op string, body any, key, prefer *string) (any, error) {
		if g == nil {
			return nil, notConfigured
		}
		out, err := g.Submit(ctx, generation.Submission{
			Operation: op, ChannelID: c.principal.ChannelID, AccountID: c.principal.AccountID, Body: body,
			IdempotencyKey: contract.Value(key), Async: respondAsync(contract.Value(prefer)),
		})
		if err != nil {
			return nil, err
		}
		if out.Done {
			// The run's id, so the client can refine it or fetch it again (decision of issue 23).
			return reply{status: http.StatusOK, header: http.Header{"X-Generation-Id": {out.RunID}}, body: rawJSON(out.Output)}, nil
		}
		return reply{status: http.StatusAccepted,
			header: http.Header{"Location": {"/api/v1/generations/" + out.RunID}},
			body:   contract.GenerationAccepted{GenerationID: out.RunID, Status: contract.GenerationAcceptedStatusPending}}, nil
	}
	hs := map[string]handler{
		"getGeneration": typed(func(ctx context.Context, c *call, in *contract.GetGenerationInput) (any, error) {
			if g == nil {
				return nil, notConfigured
			}
			return g.Run(ctx, c.principal.ChannelID, in.ID)
		}),
		"generateLegacy": typed(func(ctx context.Context, c *call, in *contract.GenerateLegacyInput) (any, error) {
			op, body, err := legacyBody(in.Body)
			if err != nil {
				return nil, err
			}
			return job(ctx, c, op, body, in.IdempotencyKey, in.Prefer)
		}),
	}
	// Every operation the registry runs as a generation job is served the same way (x-css-tool).
	for _, gen := range contract.Generations() {
		hs[gen.Operation] = handler{input: gen.Operation, serve: func(ctx context.Context, c *call) (any, error) {
			in, err := gen.Bind(c.op, c.params, c.body)
			if err != nil {
				return nil, err
			}
			return job(ctx, c, gen.Operation, in.Body, in.IdempotencyKey, in.Prefer)
		}}
	}
	return hs
}

// respondAsync reads Prefer (RFC 7240): a comma-separated list of preferences, respond-async among them.
func respondAsync(prefer string) bool {
	for p := range strings.SplitSeq(prefer, ",") {
		name, _, _ := strings.Cut(p, ";")
		if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
			return true
		}
	}
	return false
}

// legacyBody maps an unversioned request to its versioned operation (the registry's x-css-legacy-tool,
// decision 26) and validated body: videoTitle
// becomes title, titleType becomes type, the rest passes through.
func legacyBody(in contract.LegacyGenerateRequest) (string, any, error) {
	gen, ok := contract.LegacyGeneration(string(in.Tool))
	if !ok {
		return "", nil, apperr.Invalid("tool", "unknown tool %q", in.Tool)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return "", nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, err
	}
	delete(m, "tool")
	for from, to := range map[string]string{"videoTitle": "title", "titleType": "type"} {
		if v, ok := m[from]; ok {
			m[to] = v
			delete(m, from)
		}
	}
	mapped, err := json.Marshal(m)
	if err != nil {
		return "", nil, err
	}
	// Validated as the versioned operation's body: a 400 names the versioned field.
	value, err := contract.ValidateJSON(gen.Body, mapped)
	if err != nil {
		return "", nil, err
	}
	if mapped, err = json.Marshal(value); err != nil { // defaults applied
		return "", nil, err
	}
	body := gen.NewBody()
	if err := json.Unmarshal(mapped, body); err != nil {
		return "", nil, fmt.Errorf("decode %s: %w", gen.Body, err)
	}
	return gen.Operation, body, nil
}
