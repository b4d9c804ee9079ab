package rest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/generation"
	"github.com/creatorstrategy/css/shared/health"
	"github.com/creatorstrategy/css/shared/notes"
	"github.com/creatorstrategy/css/shared/planning"
	"github.com/creatorstrategy/css/shared/profile"
	"github.com/creatorstrategy/css/shared/research"
	"github.com/creatorstrategy/css/shared/videos"
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
	Keys     KeyManager
	Accounts CredentialReader
	Health   HealthReporter
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

// HealthReporter reports the service's health.
type HealthReporter interface {
	Report(ctx context.Context) health.Status
}

func (s *server) handlers() map[string]handler {
	sv := s.opts.Services
	return map[string]handler{
		"getOpenAPI": getOpenAPI,
		"getHealth": func(ctx context.Context, _ *call) (any, error) {
			return sv.Health.Report(ctx), nil
		},

		// Context
		"getNicheProfile": func(ctx context.Context, c *call) (any, error) {
			return sv.Profile.Get(ctx, c.principal.ChannelID)
		},
		"putNicheProfile": func(ctx context.Context, c *call) (any, error) {
			var p profile.NicheProfile
			if err := c.decode(&p); err != nil {
				return nil, err
			}
			return sv.Profile.Put(ctx, c.principal.ChannelID, p)
		},
		"getResearchInsights": func(ctx context.Context, c *call) (any, error) {
			return sv.Research.Insights(ctx, c.principal.ChannelID)
		},
		"listHistory": func(ctx context.Context, c *call) (any, error) {
			runs, total, err := sv.History.List(ctx, c.principal.ChannelID, generation.HistoryQuery{
				Tool: c.params.String("tool"), Search: c.params.String("search"),
				Limit: int(c.params.Int("limit")), Offset: int(c.params.Int("offset")),
			})
			if err != nil {
				return nil, err
			}
			return map[string]any{"history": runs, "total": total}, nil
		},

		// Videos
		"listMyVideos": func(ctx context.Context, c *call) (any, error) {
			vs, err := sv.Videos.List(ctx, c.principal.ChannelID, videos.Filter{
				Status: videos.Status(c.params.String("status")), ContentType: c.params.String("contentType"),
			})
			if err != nil {
				return nil, err
			}
			return listOf("videos", vs), nil
		},
		"commitVideo": func(ctx context.Context, c *call) (any, error) {
			var in videos.Commit
			if err := c.decode(&in); err != nil {
				return nil, err
			}
			return sv.Videos.CommitVideo(ctx, c.principal.ChannelID, in)
		},
		"updateVideoStatus": func(ctx context.Context, c *call) (any, error) {
			var in struct {
				VideoID string        `json:"videoId"`
				Status  videos.Status `json:"status"`
			}
			if err := c.decode(&in); err != nil {
				return nil, err
			}
			v, _, err := sv.Videos.SetStatus(ctx, c.principal.ChannelID, in.VideoID, in.Status)
			return v, err
		},
		"listVideoIdeas": func(ctx context.Context, c *call) (any, error) {
			ideas, total, err := sv.Videos.ListIdeas(ctx, c.principal.ChannelID, c.params.String("contentType"),
				int(c.params.Int("limit")), int(c.params.Int("offset")))
			if err != nil {
				return nil, err
			}
			return map[string]any{"ideas": ideas, "total": total}, nil
		},
		"deleteVideoIdea": func(ctx context.Context, c *call) (any, error) {
			return noContent, sv.Videos.DeleteIdea(ctx, c.principal.ChannelID, c.params.String("id"))
		},

		// Planning
		"getSchedule": func(ctx context.Context, c *call) (any, error) {
			return sv.Schedule.Get(ctx, c.principal.ChannelID, c.params.String("weekStart"))
		},
		"upsertScheduleSlot": func(ctx context.Context, c *call) (any, error) {
			var in planning.SlotInput
			if err := c.decode(&in); err != nil {
				return nil, err
			}
			return sv.Schedule.Upsert(ctx, c.principal.ChannelID, in)
		},
		"deleteScheduleSlot": func(ctx context.Context, c *call) (any, error) {
			var publishTime *string
			if c.params.Has("publishTime") {
				t := c.params.String("publishTime")
				publishTime = &t
			}
			err := sv.Schedule.Delete(ctx, c.principal.ChannelID, int(c.params.Int("dayOfWeek")),
				planning.SlotType(c.params.String("slotType")), publishTime)
			return noContent, err
		},
		"listSeries": func(ctx context.Context, c *call) (any, error) {
			list, err := sv.Series.List(ctx, c.principal.ChannelID)
			if err != nil {
				return nil, err
			}
			return map[string]any{"series": list, "total": len(list)}, nil
		},
		"createSeries": func(ctx context.Context, c *call) (any, error) {
			var in planning.NewSeries
			if err := c.decode(&in); err != nil {
				return nil, err
			}
			return sv.Series.Create(ctx, c.principal.ChannelID, in)
		},
		"updateSeries": func(ctx context.Context, c *call) (any, error) {
			var in planning.SeriesPatch
			if err := c.decode(&in); err != nil {
				return nil, err
			}
			return sv.Series.Update(ctx, c.principal.ChannelID, c.params.String("id"), in)
		},
		"deleteSeries": func(ctx context.Context, c *call) (any, error) {
			return noContent, sv.Series.Delete(ctx, c.principal.ChannelID, c.params.String("id"))
		},

		// Memory
		"listNotes": func(ctx context.Context, c *call) (any, error) {
			notes, err := sv.Notes.List(ctx, c.principal.ChannelID, c.params.String("category"))
			if err != nil {
				return nil, err
			}
			return map[string]any{"notes": notes, "total": len(notes)}, nil
		},
		"createNote": func(ctx context.Context, c *call) (any, error) {
			var in notes.NewNote
			if err := c.decode(&in); err != nil {
				return nil, err
			}
			return sv.Notes.Create(ctx, c.principal.ChannelID, in, notes.FromApp)
		},
		"deleteNote": func(ctx context.Context, c *call) (any, error) {
			return noContent, sv.Notes.Delete(ctx, c.principal.ChannelID, c.params.String("id"))
		},

		"getMe": s.getMe,

		// Keys (session tokens only)
		"listKeys": func(ctx context.Context, c *call) (any, error) {
			keys, err := sv.Keys.ListKeys(ctx, c.principal.AccountID)
			if err != nil {
				return nil, err
			}
			return map[string]any{"keys": keys, "total": len(keys)}, nil
		},
		"createKey": func(ctx context.Context, c *call) (any, error) {
			var in struct {
				ChannelID string `json:"channelId"`
				Name      string `json:"name"`
			}
			if err := c.decode(&in); err != nil {
				return nil, err
			}
			return sv.Keys.CreateKey(ctx, c.principal.AccountID, in.ChannelID, in.Name)
		},
		"revokeKey": func(ctx context.Context, c *call) (any, error) {
			return noContent, sv.Keys.RevokeKey(ctx, c.principal.AccountID, c.params.String("id"))
		},

		// Integrations (decision 26)
		"listMyVideosLegacy": func(ctx context.Context, c *call) (any, error) {
			if c.params.String("projectId") != c.principal.ChannelID {
				return nil, apperr.NotFoundf("project not found")
			}
			vs, err := sv.Videos.List(ctx, c.principal.ChannelID, videos.Filter{})
			if err != nil {
				return nil, err
			}
			out := make([]legacyVideo, 0, len(vs))
			for _, stored := range vs {
				var v videos.Video
				if err := json.Unmarshal(stored, &v); err != nil {
					return nil, fmt.Errorf("decode video: %w", err)
				}
				out = append(out, legacyVideo{ID: v.ID, Title: v.Title, VideoType: v.ContentType,
					FormulaType: v.FormulaType, Status: string(v.Status), CreatedAt: v.CreatedAt})
			}
			return map[string]any{"videos": out}, nil
		},
	}
}

// getOpenAPI serves the embedded document: gzip-compressed (compressed by `go generate`, not here) when the
// request's Accept-Encoding accepts gzip, as it is otherwise. Either way the answer varies with the header.
func getOpenAPI(_ context.Context, c *call) (any, error) {
	var body any
	if acceptsGzip(c.r.Header) {
		body = gzipJSON(contract.DocumentGzip())
	} else {
		body = rawJSON(contract.Document())
	}
	return reply{status: http.StatusOK, header: http.Header{"Vary": {"Accept-Encoding"}}, body: body}, nil
}

// legacyVideo is a video in the snake_case shape of the unversioned integration path.
type legacyVideo struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	VideoType   string    `json:"video_type"`
	FormulaType string    `json:"formula_type"`
	Status      string    `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
}

// rawJSON is a body that is JSON already; writeJSON sends it as it is. (MarshalJSON keeps it right should
// it ever be nested in another value.)
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// gzipJSON is a JSON body compressed ahead of time as a gzip stream; writeJSON sends it as it is, with
// Content-Encoding: gzip. (MarshalJSON decompresses it should it ever be nested in another value.)
type gzipJSON []byte

func (g gzipJSON) MarshalJSON() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(g))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// list is the body {"<field>":[items...],"total":len(items)} of items that are JSON already; writeJSON
// assembles it in a pooled buffer, so serving a long list allocates nothing per item.
type list struct {
	field string
	items []json.RawMessage
}

func listOf(field string, items []json.RawMessage) list { return list{field: field, items: items} }

func (l list) MarshalJSON() ([]byte, error) { return l.appendTo(nil), nil }

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
	b = strconv.AppendInt(b, int64(len(l.items)), 10)
	return append(b, '}')
}
