package rest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/health"
	"github.com/creatorstrategy/css/shared/mcpgrant"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/performance"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
	"github.com/creatorstrategy/css/shared/webhooks"
)

// Services are the domain services the handlers call.
type Services struct {
	Profile  *profile.Service
	Research *research.Service
	History  *generation.History
	Videos   *videos.Service
	Schedule *planning.Schedule
	Series   *planning.SeriesService
	Notes    *notes.Service
	// Performance builds GET /performance.
	Performance *performance.Service
	// Generation runs the generation operations (nil: they answer 501).
	Generation Generator
	// Usage reads the account's generations and billed tokens of a month for GET /me (nil: not shown),
	// against MonthlyQuota (decision 7).
	Usage        UsageReader
	MonthlyQuota int
	Clock        func() time.Time // the month GET /me reports (nil: time.Now)
	Keys         KeyManager
	// Grants are the channel's sign-ins to /mcp (decision 55).
	Grants   GrantManager
	Accounts CredentialReader
	Health   HealthReporter
	Webhooks *webhooks.Service
	// Connections is the YouTube connection (nil: its operations answer 503, not configured).
	Connections Connections
	// Links links pipeline videos to their uploads by hand (PATCH /my-videos/{id}; *ownperf.Service).
	Links VideoLinker
	// Docs is the API reference page and its renderer (nil: GET /api/v1/docs and its script answer 404;
	// only the utility function and the local stack link the page, shared/apidocs).
	Docs Docs
}

// Generator runs the generation operations (*generation.Generator). An interface, so that a function
// serving none of them does not link Submit and what it reaches (the budget check, the idempotency claim,
// the job queue).
type Generator interface {
	Submit(ctx context.Context, s generation.Submission) (generation.Outcome, error)
	Run(ctx context.Context, channelID, id string) (generation.ToolRun, error)
}

// Docs is the API reference page (*apidocs.Docs): its HTML, plain and gzip-compressed, its
// Content-Security-Policy, and the renderer's script as a gzip stream (ok false when the build has none).
type Docs interface {
	Page() []byte
	PageGzip() []byte
	ContentSecurityPolicy() string
	Script() (gz []byte, ok bool)
}

// VideoLinker sets or clears a video's youtubeVideoId (decision 44).
type VideoLinker interface {
	Link(ctx context.Context, channelID string, in contract.UpdateMyVideoInput) (videos.Video, error)
}

// UsageReader reads an account's generation usage of a month (*store.Store).
type UsageReader interface {
	GenerationUsage(ctx context.Context, accountID, month string) (generations, inputTokens, outputTokens int64, err error)
}

// CredentialReader reads what GET /me reports of a credential (*accounts.Service).
type CredentialReader interface {
	Credential(ctx context.Context, accountID, keyID string) (accounts.Account, *accounts.APIKey, error)
}

// KeyManager is the key management the Keys operations need (decision 4).
type KeyManager interface {
	CreateKey(ctx context.Context, accountID, channelID, name string) (accounts.CreatedKey, error)
	ListKeys(ctx context.Context, accountID string) ([]accounts.APIKey, error)
	RevokeKey(ctx context.Context, accountID, keyID string) error
}

// GrantManager lists and revokes a channel's sign-ins to /mcp (*mcpgrant.Service).
type GrantManager interface {
	List(ctx context.Context, channelID string) ([]mcpgrant.View, error)
	Revoke(ctx context.Context, channelID, id string) error
}

// HealthReporter reports the service's health.
type HealthReporter interface {
	Report(ctx context.Context) health.Status
}

// handlers binds every operation of the contract to its handler: the service calls below, and
// generationHandlers (every generation job the registry declares, through one path, and the two
// generation reads). TestEveryOperationHasOneHandler proves the two sets are disjoint and together the
// contract's operations.
func (s *Server) handlers() map[string]handler {
	hs := s.serviceHandlers()
	maps.Copy(hs, generationHandlers(s.opts.Services))
	return hs
}

// serviceHandlers are the operations served by one call of a domain service.
func (s *Server) serviceHandlers() map[string]handler {
	sv := s.opts.Services
	hs := map[string]handler{
		"getOpenAPI": typed(func(_ context.Context, c *call, _ *contract.GetOpenAPIInput) (any, error) {
			return getOpenAPI(c), nil
		}),
		"getDocs": typed(func(_ context.Context, c *call, _ *contract.GetDocsInput) (any, error) {
			return getDocs(c, sv.Docs)
		}),
		"getDocsScript": typed(func(_ context.Context, c *call, _ *contract.GetDocsScriptInput) (any, error) {
			return getDocsScript(c, sv.Docs)
		}),
		"getHealth": typed(func(ctx context.Context, _ *call, _ *contract.GetHealthInput) (any, error) {
			return sv.Health.Report(ctx), nil
		}),

		// Context
		"getNicheProfile": typed(func(ctx context.Context, c *call, _ *contract.GetNicheProfileInput) (any, error) {
			return sv.Profile.Get(ctx, c.principal.ChannelID)
		}),
		"putNicheProfile": typed(func(ctx context.Context, c *call, in *contract.PutNicheProfileInput) (any, error) {
			return sv.Profile.Put(ctx, c.principal.ChannelID, in.Body)
		}),
		"getResearchInsights": typed(func(ctx context.Context, c *call, _ *contract.GetResearchInsightsInput) (any, error) {
			return sv.Research.InsightsView(ctx, c.principal.ChannelID)
		}),
		"listHistory": typed(func(ctx context.Context, c *call, in *contract.ListHistoryInput) (any, error) {
			runs, total, err := sv.History.List(ctx, c.principal.ChannelID, generation.HistoryQuery{
				Tool: string(in.Tool), Search: contract.Value(in.Search), Limit: in.Limit, Offset: in.Offset,
			})
			if err != nil {
				return nil, err
			}
			return list{field: "history", items: runs, total: total}, nil
		}),

		// Videos
		"listMyVideos": typed(func(ctx context.Context, c *call, in *contract.ListMyVideosInput) (any, error) {
			f := videos.Filter{Status: videos.Status(contract.Value(in.Status)), ContentType: string(contract.Value(in.ContentType))}
			if in.Limit != nil || in.Offset > 0 { // a page, read as one in the store
				limit := contract.Value(in.Limit)
				if in.Limit == nil {
					limit = videos.DefaultMaxVideos
				}
				vs, total, err := sv.Videos.Page(ctx, c.principal.ChannelID, f, limit, in.Offset)
				if err != nil {
					return nil, err
				}
				l := listOf("videos", vs)
				l.total = total
				return l, nil
			}
			vs, err := sv.Videos.List(ctx, c.principal.ChannelID, f)
			if err != nil {
				return nil, err
			}
			return listOf("videos", vs), nil
		}),
		"commitVideo": typed(func(ctx context.Context, c *call, in *contract.CommitVideoInput) (any, error) {
			return sv.Videos.CommitVideo(ctx, c.principal.ChannelID, in.Body)
		}),
		"updateVideoStatus": typed(func(ctx context.Context, c *call, in *contract.UpdateVideoStatusInput) (any, error) {
			v, _, err := sv.Videos.SetStatus(ctx, c.principal.ChannelID, in.Body)
			return v, err
		}),
		"updateMyVideo": typed(func(ctx context.Context, c *call, in *contract.UpdateMyVideoInput) (any, error) {
			return sv.Links.Link(ctx, c.principal.ChannelID, *in)
		}),
		"listVideoIdeas": typed(func(ctx context.Context, c *call, in *contract.ListVideoIdeasInput) (any, error) {
			ideas, total, err := sv.Videos.ListIdeas(ctx, c.principal.ChannelID, string(contract.Value(in.ContentType)),
				in.Limit, in.Offset)
			return withTotal("ideas", ideas, total, err)
		}),
		"deleteVideoIdea": typed(func(ctx context.Context, c *call, in *contract.DeleteVideoIdeaInput) (any, error) {
			return noContent, sv.Videos.DeleteIdea(ctx, c.principal.ChannelID, in.ID)
		}),

		// Planning
		"getSchedule": typed(func(ctx context.Context, c *call, in *contract.GetScheduleInput) (any, error) {
			return sv.Schedule.Get(ctx, c.principal.ChannelID, contract.Value(in.WeekStart))
		}),
		"upsertScheduleSlot": typed(func(ctx context.Context, c *call, in *contract.UpsertScheduleSlotInput) (any, error) {
			return sv.Schedule.Upsert(ctx, c.principal.ChannelID, in.Body)
		}),
		"deleteScheduleSlot": typed(func(ctx context.Context, c *call, in *contract.DeleteScheduleSlotInput) (any, error) {
			err := sv.Schedule.Delete(ctx, c.principal.ChannelID, in.DayOfWeek, planning.SlotType(in.SlotType), in.PublishTime)
			return noContent, err
		}),
		"listSeries": typed(func(ctx context.Context, c *call, _ *contract.ListSeriesInput) (any, error) {
			list, err := sv.Series.List(ctx, c.principal.ChannelID)
			return withTotal("series", list, len(list), err)
		}),
		"createSeries": typed(func(ctx context.Context, c *call, in *contract.CreateSeriesInput) (any, error) {
			return sv.Series.Create(ctx, c.principal.ChannelID, in.Body)
		}),
		"updateSeries": typed(func(ctx context.Context, c *call, in *contract.UpdateSeriesInput) (any, error) {
			return sv.Series.Update(ctx, c.principal.ChannelID, in.ID, in.Body)
		}),
		"deleteSeries": typed(func(ctx context.Context, c *call, in *contract.DeleteSeriesInput) (any, error) {
			return noContent, sv.Series.Delete(ctx, c.principal.ChannelID, in.ID)
		}),

		// Memory
		"listNotes": typed(func(ctx context.Context, c *call, in *contract.ListNotesInput) (any, error) {
			list, err := sv.Notes.List(ctx, c.principal.ChannelID, string(contract.Value(in.Category)))
			return withTotal("notes", list, len(list), err)
		}),
		"createNote": typed(func(ctx context.Context, c *call, in *contract.CreateNoteInput) (any, error) {
			source := notes.FromApp
			if c.viaMCP {
				source = notes.FromMCP
			}
			return sv.Notes.Create(ctx, c.principal.ChannelID, in.Body, source)
		}),
		"deleteNote": typed(func(ctx context.Context, c *call, in *contract.DeleteNoteInput) (any, error) {
			return noContent, sv.Notes.Delete(ctx, c.principal.ChannelID, in.ID)
		}),

		// Intelligence
		"getPerformance": typed(func(ctx context.Context, c *call, _ *contract.GetPerformanceInput) (any, error) {
			return sv.Performance.Overview(ctx, c.principal.AccountID, c.principal.ChannelID)
		}),
		"startResearch": typed(func(ctx context.Context, c *call, _ *contract.StartResearchInput) (any, error) {
			run, err := sv.Research.Start(ctx, c.principal.ChannelID, research.TriggerAPI)
			if err != nil {
				return nil, err
			}
			return sv.Research.View(run), nil
		}),
		"getResearchRun": typed(func(ctx context.Context, c *call, in *contract.GetResearchRunInput) (any, error) {
			run, err := sv.Research.Run(ctx, c.principal.ChannelID, in.ID)
			if err != nil {
				return nil, err
			}
			return sv.Research.View(run), nil
		}),
		"listResearchVideos": typed(func(ctx context.Context, c *call, in *contract.ListResearchVideosInput) (any, error) {
			vs, total, err := sv.Research.Videos(ctx, c.principal.ChannelID, research.VideoQuery{
				ContentType: string(contract.Value(in.ContentType)), Sort: string(contract.Value(in.Sort)), Limit: in.Limit, Offset: in.Offset,
			})
			if err != nil {
				return nil, err
			}
			return map[string]any{"videos": vs, "total": total, "derivedMetrics": sv.Research.DerivedMetrics()}, nil
		}),

		"getMe": typed(func(ctx context.Context, c *call, _ *contract.GetMeInput) (any, error) { return s.getMe(ctx, c) }),

		// Keys (session tokens only)
		"listKeys": typed(func(ctx context.Context, c *call, _ *contract.ListKeysInput) (any, error) {
			keys, err := sv.Keys.ListKeys(ctx, c.principal.AccountID)
			return withTotal("keys", keys, len(keys), err)
		}),
		"createKey": typed(func(ctx context.Context, c *call, in *contract.CreateKeyInput) (any, error) {
			return sv.Keys.CreateKey(ctx, c.principal.AccountID, in.Body.ChannelID, contract.Value(in.Body.Name))
		}),
		"revokeKey": typed(func(ctx context.Context, c *call, in *contract.RevokeKeyInput) (any, error) {
			return noContent, sv.Keys.RevokeKey(ctx, c.principal.AccountID, in.ID)
		}),

		// Assistants' sign-ins (decision 55)
		"listMcpGrants": typed(func(ctx context.Context, c *call, _ *contract.ListMcpGrantsInput) (any, error) {
			gs, err := sv.Grants.List(ctx, c.principal.ChannelID)
			return withTotal("grants", gs, len(gs), err)
		}),
		"revokeMcpGrant": typed(func(ctx context.Context, c *call, in *contract.RevokeMcpGrantInput) (any, error) {
			return noContent, sv.Grants.Revoke(ctx, c.principal.ChannelID, in.ID)
		}),

		// Webhooks (decisions 22 to 25)
		"createWebhook": typed(func(ctx context.Context, c *call, in *contract.CreateWebhookInput) (any, error) {
			return sv.Webhooks.Create(ctx, c.principal.ChannelID, in.Body)
		}),
		"listWebhooks": typed(func(ctx context.Context, c *call, _ *contract.ListWebhooksInput) (any, error) {
			list, err := sv.Webhooks.List(ctx, c.principal.ChannelID)
			return withTotal("webhooks", list, len(list), err)
		}),
		"getWebhook": typed(func(ctx context.Context, c *call, in *contract.GetWebhookInput) (any, error) {
			return sv.Webhooks.Get(ctx, c.principal.ChannelID, in.ID)
		}),
		"updateWebhook": typed(func(ctx context.Context, c *call, in *contract.UpdateWebhookInput) (any, error) {
			return sv.Webhooks.Update(ctx, c.principal.ChannelID, in.ID, in.Body)
		}),
		"deleteWebhook": typed(func(ctx context.Context, c *call, in *contract.DeleteWebhookInput) (any, error) {
			return noContent, sv.Webhooks.Delete(ctx, c.principal.ChannelID, in.ID)
		}),
		"rotateWebhookSecret": typed(func(ctx context.Context, c *call, in *contract.RotateWebhookSecretInput) (any, error) {
			return sv.Webhooks.RotateSecret(ctx, c.principal.ChannelID, in.ID)
		}),
		"testWebhook": typed(func(ctx context.Context, c *call, in *contract.TestWebhookInput) (any, error) {
			id, err := sv.Webhooks.Test(ctx, c.principal.ChannelID, in.ID)
			if err != nil {
				return nil, err
			}
			return contract.TestWebhookOutput{DeliveryID: id}, nil
		}),
		"listWebhookDeliveries": typed(func(ctx context.Context, c *call, in *contract.ListWebhookDeliveriesInput) (any, error) {
			list, total, err := sv.Webhooks.Deliveries(ctx, c.principal.ChannelID, in.ID, in.Limit, in.Offset)
			return withTotal("deliveries", list, total, err)
		}),
		"redeliverWebhookDelivery": typed(func(ctx context.Context, c *call, in *contract.RedeliverWebhookDeliveryInput) (any, error) {
			id, err := sv.Webhooks.Redeliver(ctx, c.principal.ChannelID, in.ID, in.DeliveryID)
			if err != nil {
				return nil, err
			}
			return contract.RedeliverWebhookDeliveryOutput{DeliveryID: id}, nil
		}),

		// Integrations (decision 26)
		"listMyVideosLegacy": typed(func(ctx context.Context, c *call, in *contract.ListMyVideosLegacyInput) (any, error) {
			if in.ProjectID != c.principal.ChannelID {
				return nil, apperr.NotFoundf("project not found")
			}
			vs, err := sv.Videos.List(ctx, c.principal.ChannelID, videos.Filter{})
			if err != nil {
				return nil, err
			}
			out := contract.ListMyVideosLegacyOutput{Videos: make([]contract.LegacyVideo, 0, len(vs))}
			for _, stored := range vs {
				var v videos.Video
				if err := json.Unmarshal(stored, &v); err != nil {
					return nil, fmt.Errorf("decode video: %w", err)
				}
				out.Videos = append(out.Videos, contract.LegacyVideo{ID: v.ID, Title: v.Title,
					VideoType: contract.ContentType(v.ContentType), FormulaType: v.FormulaType,
					Status: contract.VideoStatus(v.Status), CreatedAt: v.CreatedAt.Format(time.RFC3339Nano)})
			}
			return out, nil
		}),
	}
	maps.Copy(hs, s.youtubeHandlers())
	return hs
}

// withTotal is the body {"<field>": items, "total": total} of a list, or err.
func withTotal[T any](field string, items []T, total int, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{field: items, "total": total}, nil
}

// getOpenAPI serves the embedded document: gzip-compressed (compressed by `go generate`, not here) when the
// request's Accept-Encoding accepts gzip, as it is otherwise. Either way the answer varies with the header.
func getOpenAPI(c *call) reply {
	var body any
	if acceptsGzip(c.r.Header) {
		body = gzipJSON(contract.DocumentGzip())
	} else {
		body = rawJSON(contract.Document())
	}
	return reply{status: http.StatusOK, header: http.Header{"Vary": {"Accept-Encoding"}}, body: body}
}

// noDocs answers the reference page's operations in a function that does not serve them.
var noDocs = &apperr.Error{Code: apperr.NotFound, Message: "no API reference page here"}

// getDocs serves the API reference page (shared/apidocs) with its Content-Security-Policy.
func getDocs(c *call, docs Docs) (reply, error) {
	if docs == nil {
		return reply{}, noDocs
	}
	h := http.Header{
		"Content-Security-Policy": {docs.ContentSecurityPolicy()},
		"X-Content-Type-Options":  {"nosniff"},
		"Referrer-Policy":         {"no-referrer"},
		"Cache-Control":           {"public, max-age=300"},
		"Vary":                    {"Accept-Encoding"},
	}
	body := asset{contentType: "text/html; charset=utf-8", data: docs.Page()}
	if acceptsGzip(c.r.Header) {
		body = asset{contentType: body.contentType, data: docs.PageGzip(), gzip: true}
	}
	return reply{status: http.StatusOK, header: h, body: body}, nil
}

// getDocsScript serves the page's renderer, compressed ahead of time (install-redoc); a client that does
// not accept gzip gets it decompressed here. A build without it answers 404.
func getDocsScript(c *call, docs Docs) (reply, error) {
	if docs == nil {
		return reply{}, noDocs
	}
	gz, ok := docs.Script()
	if !ok {
		return reply{}, &apperr.Error{Code: apperr.NotFound, Message: "this build has no reference renderer"}
	}
	h := http.Header{
		"X-Content-Type-Options": {"nosniff"},
		"Cache-Control":          {"public, max-age=86400"},
		"Vary":                   {"Accept-Encoding"},
	}
	body := asset{contentType: "text/javascript; charset=utf-8", data: gz, gzip: true}
	if !acceptsGzip(c.r.Header) {
		plain, err := gunzipBytes(gz)
		if err != nil {
			return reply{}, fmt.Errorf("reference renderer: %w", err)
		}
		body = asset{contentType: body.contentType, data: plain}
	}
	return reply{status: http.StatusOK, header: h, body: body}, nil
}

func gunzipBytes(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// asset is a body that is not JSON (the reference page and its script): writeJSON sends data as it is,
// with contentType, and Content-Encoding: gzip when data is a gzip stream. (MarshalJSON, for callers of
// Invoke, gives the text as a JSON string.)
type asset struct {
	contentType string
	data        []byte
	gzip        bool
}

func (a asset) MarshalJSON() ([]byte, error) {
	text := a.data
	if a.gzip {
		var err error
		if text, err = gunzipBytes(a.data); err != nil {
			return nil, err
		}
	}
	return json.Marshal(string(text))
}

// rawJSON is a body that is JSON already; writeJSON sends it as it is. (MarshalJSON keeps it right should
// it ever be nested in another value.)
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// gzipJSON is a JSON body compressed ahead of time as a gzip stream; writeJSON sends it as it is, with
// Content-Encoding: gzip. (MarshalJSON decompresses it should it ever be nested in another value.)
type gzipJSON []byte

func (g gzipJSON) MarshalJSON() ([]byte, error) { return gunzipBytes(g) }

// list is the body {"<field>":[items...],"total":len(items)} of items that are JSON already; writeJSON
// assembles it in a pooled buffer, so serving a long list allocates nothing per item.
type list struct {
	field string
	items []json.RawMessage
	total int // of a page: the matching items before paging
}

// listOf lists every item: the total is their number.
func listOf(field string, items []json.RawMessage) list {
	return list{field: field, items: items, total: len(items)}
}

func (l list) MarshalJSON() ([]byte, error) { return l.appendTo(nil), nil }

// size is the length of the list's JSON, give or take the digits of total.
func (l list) size() int {
	n := len(l.field) + len(l.items) + 32
	for _, it := range l.items {
		n += len(it)
	}
	return n
}

func (l list) appendTo(b []byte) []byte {
	b = append(b, `{"`...)
	b = append(b, l.field...)
	b = append(b, `":[`...)
	for i, it := range l.items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(l.total), 10)
	return append(b, '}')
}
