package rest

// The YouTube connection's operations (decision 42). The callback is the one operation that answers a
// page (or a redirect) instead of JSON: the owner's browser lands on it.

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/contract"
)

// Connections is the YouTube connection the operations use (*connection.Service).
type Connections interface {
	Start(ctx context.Context, channelID string) (string, time.Time, error)
	Complete(ctx context.Context, cb connection.Callback) (connection.Connection, error)
	Get(ctx context.Context, channelID string) (connection.Connection, error)
	Disconnect(ctx context.Context, channelID string) error
}

func (s *Server) youtubeHandlers() map[string]handler {
	conns := s.opts.Services.Connections
	if conns == nil {
		conns = connection.New(connection.Config{})
	}
	return map[string]handler{
		"startYouTubeConnection": typed(func(ctx context.Context, c *call, _ *contract.StartYouTubeConnectionInput) (any, error) {
			u, exp, err := conns.Start(ctx, c.principal.ChannelID)
			if err != nil {
				return nil, err
			}
			return contract.StartYouTubeConnectionOutput{AuthorizationURL: u, ExpiresAt: exp.UTC().Format(time.RFC3339)}, nil
		}),
		"getYouTubeConnection": typed(func(ctx context.Context, c *call, _ *contract.GetYouTubeConnectionInput) (any, error) {
			conn, err := conns.Get(ctx, c.principal.ChannelID)
			if err != nil {
				return nil, err
			}
			return connectionView(conn), nil
		}),
		"deleteYouTubeConnection": typed(func(ctx context.Context, c *call, _ *contract.DeleteYouTubeConnectionInput) (any, error) {
			return noContent, conns.Disconnect(ctx, c.principal.ChannelID)
		}),
		"completeYouTubeConnection": typed(func(ctx context.Context, c *call, in *contract.CompleteYouTubeConnectionInput) (any, error) {
			cb := connection.Callback{}
			for dst, src := range map[*string]*string{&cb.State: in.State, &cb.Code: in.Code, &cb.Error: in.Error} {
				if src != nil {
					*dst = *src
				}
			}
			conn, err := conns.Complete(ctx, cb)
			var refused *connection.RefusedError
			if errors.As(err, &refused) {
				s.log.InfoContext(ctx, "youtube connection refused", "request_id", RequestID(ctx), "reason", refused.Error())
				return page(http.StatusBadRequest, "YouTube channel not connected", refused.Message), nil
			}
			if err != nil {
				if apperr.CodeOf(err) == apperr.Unavailable {
					return nil, err
				}
				s.log.ErrorContext(ctx, "youtube connection failed", "request_id", RequestID(ctx), "error", err.Error())
				return page(http.StatusInternalServerError, "YouTube channel not connected",
					"Something went wrong on our side and nothing was connected. Start the connection again from the app."), nil
			}
			if back := s.opts.ConnectedURL; back != "" {
				u, err := url.Parse(back)
				if err == nil {
					q := u.Query()
					q.Set("youtube", "connected")
					u.RawQuery = q.Encode()
					return reply{status: http.StatusSeeOther, header: pageHeaders(http.Header{"Location": {u.String()}})}, nil
				}
			}
			return page(http.StatusOK, "YouTube channel connected",
				"Connected “"+conn.YouTubeChannelTitle+"” ("+conn.YouTubeChannelID+"). You can close this page."), nil
		}),
	}
}

func connectionView(c connection.Connection) contract.YouTubeConnection {
	out := contract.YouTubeConnection{Status: contract.YouTubeConnectionStatus(c.Status), Scopes: []string{}}
	if c.Status == connection.NotConnected {
		return out
	}
	id, title := c.YouTubeChannelID, c.YouTubeChannelTitle
	at := c.ConnectedAt.UTC().Format(time.RFC3339Nano)
	out.YoutubeChannelID, out.YoutubeChannelTitle, out.ConnectedAt = &id, &title, &at
	if c.Scopes != nil {
		out.Scopes = c.Scopes
	}
	if c.LastSyncAt != nil {
		s := c.LastSyncAt.UTC().Format(time.RFC3339Nano)
		out.LastSyncAt = &s
	}
	return out
}

// htmlPage is a body sent as text/html (the callback's pages).
type htmlPage []byte

// page renders the callback's page. The title and message are only ever text content, so escaping the five
// HTML-special characters is all they need; html/template would do the same and cost every API function's
// cold start its package initialisation (about 0.1 ms: issue 21).
func page(status int, title, message string) reply {
	title, message = html.EscapeString(title), html.EscapeString(message)
	body := `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + title + `</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style>
</head><body><h1>` + title + `</h1><p>` + message + `</p></body></html>
`
	return reply{status: status, header: pageHeaders(http.Header{}), body: htmlPage(body)}
}

// pageHeaders: nothing on the page may load or run anything, it is never cached, and its URL (code and
// state) is never sent on as a referrer.
func pageHeaders(h http.Header) http.Header {
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	return h
}
