package rest

import (
	"context"
	"encoding/json"
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
			return rawJSON(out.Output), nil
		}
		return reply{status: http.StatusAccepted,
			header: http.Header{"Location": {"/api/v1/generations/" + out.RunID}},
			body:   contract.GenerationAccepted{GenerationID: out.RunID, Status: contract.GenerationAcceptedStatusPending}}, nil
	}
	return map[string]handler{
		"generateTitles": typed(func(ctx context.Context, c *call, in *contract.GenerateTitlesInput) (any, error) {
			return job(ctx, c, "generateTitles", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateLongScript": typed(func(ctx context.Context, c *call, in *contract.GenerateLongScriptInput) (any, error) {
			return job(ctx, c, "generateLongScript", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateShortScript": typed(func(ctx context.Context, c *call, in *contract.GenerateShortScriptInput) (any, error) {
			return job(ctx, c, "generateShortScript", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateDescription": typed(func(ctx context.Context, c *call, in *contract.GenerateDescriptionInput) (any, error) {
			return job(ctx, c, "generateDescription", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateThumbnail": typed(func(ctx context.Context, c *call, in *contract.GenerateThumbnailInput) (any, error) {
			return job(ctx, c, "generateThumbnail", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateHooks": typed(func(ctx context.Context, c *call, in *contract.GenerateHooksInput) (any, error) {
			return job(ctx, c, "generateHooks", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateCtas": typed(func(ctx context.Context, c *call, in *contract.GenerateCTAsInput) (any, error) {
			return job(ctx, c, "generateCtas", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generatePodcastPrep": typed(func(ctx context.Context, c *call, in *contract.GeneratePodcastPrepInput) (any, error) {
			return job(ctx, c, "generatePodcastPrep", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateNewsletter": typed(func(ctx context.Context, c *call, in *contract.GenerateNewsletterInput) (any, error) {
			return job(ctx, c, "generateNewsletter", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateClips": typed(func(ctx context.Context, c *call, in *contract.GenerateClipsInput) (any, error) {
			return job(ctx, c, "generateClips", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateCommunityPosts": typed(func(ctx context.Context, c *call, in *contract.GenerateCommunityPostsInput) (any, error) {
			return job(ctx, c, "generateCommunityPosts", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateChannelOptimize": typed(func(ctx context.Context, c *call, in *contract.GenerateChannelOptimizeInput) (any, error) {
			return job(ctx, c, "generateChannelOptimize", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateReoptimize": typed(func(ctx context.Context, c *call, in *contract.GenerateReoptimizeInput) (any, error) {
			return job(ctx, c, "generateReoptimize", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"generateIdeas": typed(func(ctx context.Context, c *call, in *contract.GenerateIdeasInput) (any, error) {
			return job(ctx, c, "generateIdeas", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"scoreNiche": typed(func(ctx context.Context, c *call, in *contract.ScoreNicheInput) (any, error) {
			return job(ctx, c, "scoreNiche", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
		"refine": typed(func(ctx context.Context, c *call, in *contract.RefineInput) (any, error) {
			return job(ctx, c, "refine", &in.Body, in.IdempotencyKey, in.Prefer)
		}),
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

// legacyTools maps the unversioned `tool` to the versioned operation and its body schema (decision 26).
var legacyTools = map[string]struct {
	op, body string
	decode   func(json.RawMessage) (any, error)
}{
	"titles":           {"generateTitles", "TitlesRequest", decodeAs[contract.TitlesRequest]},
	"long_script":      {"generateLongScript", "LongScriptRequest", decodeAs[contract.LongScriptRequest]},
	"short_script":     {"generateShortScript", "ShortScriptRequest", decodeAs[contract.ShortScriptRequest]},
	"description":      {"generateDescription", "DescriptionRequest", decodeAs[contract.DescriptionRequest]},
	"thumbnail":        {"generateThumbnail", "ThumbnailRequest", decodeAs[contract.ThumbnailRequest]},
	"hooks":            {"generateHooks", "HooksRequest", decodeAs[contract.HooksRequest]},
	"ctas":             {"generateCtas", "CtasRequest", decodeAs[contract.CTAsRequest]},
	"podcast_prep":     {"generatePodcastPrep", "PodcastPrepRequest", decodeAs[contract.PodcastPrepRequest]},
	"newsletter":       {"generateNewsletter", "NewsletterRequest", decodeAs[contract.NewsletterRequest]},
	"clips":            {"generateClips", "ClipsRequest", decodeAs[contract.ClipsRequest]},
	"community_posts":  {"generateCommunityPosts", "CommunityPostsRequest", decodeAs[contract.CommunityPostsRequest]},
	"channel_optimize": {"generateChannelOptimize", "ChannelOptimizeRequest", decodeAs[contract.ChannelOptimizeRequest]},
	"reoptimize":       {"generateReoptimize", "ReoptimizeRequest", decodeAs[contract.ReoptimizeRequest]},
}

// decodeAs reads a body the contract's validator accepted into its typed value.
func decodeAs[T any](raw json.RawMessage) (any, error) {
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	return v, nil
}

// legacyBody maps an unversioned request to its versioned operation and validated body: videoTitle
// becomes title, titleType becomes type, the rest passes through.
func legacyBody(in contract.LegacyGenerateRequest) (string, any, error) {
	t, ok := legacyTools[string(in.Tool)]
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
	value, err := contract.ValidateJSON(t.body, mapped)
	if err != nil {
		return "", nil, err
	}
	if mapped, err = json.Marshal(value); err != nil { // defaults applied
		return "", nil, err
	}
	body, err := t.decode(mapped)
	if err != nil {
		return "", nil, err
	}
	return t.op, body, nil
}
