package rest

// The YouTube connection's operations (decision 42). The start step and the callback answer a page (or a
// redirect) instead of JSON: the owner's browser lands on them. The start step binds the connection to
// that browser with a cookie the callback requires (decision 50).

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/contract"
)

// Connections is the YouTube connection the operations use (*connection.Service).
type Connections interface {
	Start(ctx context.Context, channelID string) (string, time.Time, error)
	Begin(ctx context.Context, state string) (connection.Begun, error)
	Complete(ctx context.Context, cb connection.Callback) (connection.Completed, error)
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
		"beginYouTubeConnection": typed(func(ctx context.Context, c *call, in *contract.BeginYouTubeConnectionInput) (any, error) {
			begun, err := conns.Begin(ctx, contract.Value(in.State))
			if refused, ok := errors.AsType[*connection.RefusedError](err); ok {
				s.log.InfoContext(ctx, "youtube connection start refused", "request_id", RequestID(ctx), "reason", refused.Error())
				return page(http.StatusBadRequest, "YouTube channel not connected", refused.Message), nil
			}
			if err != nil {
				return s.connectFailed(ctx, err)
			}
			// A page, not a redirect: it names the service channel the YouTube channel would be connected to,
			// so an owner who was sent someone else's link sees whose it is before going on (decision 50).
			r := linkPage(http.StatusOK, "Connect your YouTube channel",
				"You are connecting a YouTube channel to the channel “"+begun.ChannelName+"” on Creator Strategy Service. Continue only if that channel is yours.",
				"Continue to Google", begun.AuthorizationURL)
			r.header.Add("Set-Cookie", s.browserCookie(begun.Browser, int(connection.StateTTL/time.Second)).String())
			return r, nil
		}),
		"completeYouTubeConnection": typed(func(ctx context.Context, c *call, in *contract.CompleteYouTubeConnectionInput) (any, error) {
			cb := connection.Callback{State: contract.Value(in.State), Code: contract.Value(in.Code), Error: contract.Value(in.Error)}
			if ck, err := c.r.Cookie(s.browserCookieName()); err == nil {
				cb.Browser = ck.Value
			}
			done, err := conns.Complete(ctx, cb)
			r, err := s.completed(ctx, done, err)
			if err != nil {
				return nil, err
			}
			// The binding is spent whatever happened.
			r.header.Add("Set-Cookie", s.browserCookie("", -1).String())
			return r, nil
		}),
	}
}

// completed is the callback's answer to Complete's result.
func (s *Server) completed(ctx context.Context, done connection.Completed, err error) (reply, error) {
	if refused, ok := errors.AsType[*connection.RefusedError](err); ok {
		s.log.InfoContext(ctx, "youtube connection refused", "request_id", RequestID(ctx), "reason", refused.Error())
		if refused.Conflict {
			return page(http.StatusConflict, "YouTube channel not connected", refused.Message), nil
		}
		return page(http.StatusBadRequest, "YouTube channel not connected", refused.Message), nil
	}
	if err != nil {
		return s.connectFailed(ctx, err)
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
		"Connected “"+done.YouTubeChannelTitle+"” ("+done.YouTubeChannelID+") to your channel “"+done.ChannelName+"”. You can close this page."), nil
}

// connectFailed answers an unexpected error of the start step or the callback: a page, unless the
// connection is not configured (503 in the error shape).
func (s *Server) connectFailed(ctx context.Context, err error) (reply, error) {
	if apperr.CodeOf(err) == apperr.Unavailable {
		return reply{}, err
	}
	s.log.ErrorContext(ctx, "youtube connection failed", "request_id", RequestID(ctx), "error", err.Error())
	return page(http.StatusInternalServerError, "YouTube channel not connected",
		"Something went wrong on our side and nothing was connected. Start the connection again from the app."), nil
}

// browserCookieName is the start step's cookie: __Host- prefixed and Secure on https; on a plain-http public
// URL (the local stack on loopback) neither, since a browser that does not count http://127.0.0.1 as secure
// refuses both there (Chromium does count it; decision 50).
func (s *Server) browserCookieName() string {
	if s.plainHTTP() {
		return "css-youtube-connect"
	}
	return "__Host-css-youtube-connect"
}

func (s *Server) plainHTTP() bool { return strings.HasPrefix(s.opts.PublicURL, "http://") }

// browserCookie carries the browser's binding from the start step to the callback: HttpOnly, for the whole
// origin, and Lax, which Google's redirect back (a top-level GET) still carries. maxAge < 0 clears it.
func (s *Server) browserCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: s.browserCookieName(), Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: !s.plainHTTP(), SameSite: http.SameSiteLaxMode}
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

// page renders the start step's and the callback's pages. The title and message are only ever text
// content, so escaping the five HTML-special characters is all they need; html/template would do the same
// and cost every API function's cold start its package initialisation (about 0.1 ms: issue 21).
func page(status int, title, message string) reply { return linkPage(status, title, message, "", "") }

// linkPage is page with a link after the message (none when href is ""). href is an http(s) URL the
// service built, so escaping it as an attribute value is all it needs.
func linkPage(status int, title, message, linkText, href string) reply {
	title, message = html.EscapeString(title), html.EscapeString(message)
	link := ""
	if href != "" {
		link = `<p><a href="` + html.EscapeString(href) + `">` + html.EscapeString(linkText) + `</a></p>`
	}
	body := `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + title + `</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style>
</head><body><h1>` + title + `</h1><p>` + message + `</p>` + link + `</body></html>
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
