package oauth

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/ory/fosite"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/auth"
	"github.com/creatorstrategy/css/shared/mcpgrant"
)

// The consent page's own fields, taken out of the form before the library reads (and stores) it.
const (
	fieldKey  = "css_api_key"
	fieldStep = "css_step"
)

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Sign in: Creator Strategy Service</title></head>
<body style="font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem">
<h1>Connect {{.Client}}</h1>
{{if .Error}}<p role="alert" style="color:#b00020">{{.Error}}</p>{{end}}
<form method="post" action="{{.Action}}">
{{range $k, $vs := .Params}}{{range $vs}}<input type="hidden" name="{{$k}}" value="{{.}}">{{end}}{{end}}
{{if .Channel}}
<p><strong>{{.Client}}</strong> asks to act for the channel <strong>{{.Channel}}</strong>, with the scope
<code>{{.Scope}}</code>: to use the MCP tools, reading and changing the channel's plans, videos and notes as its
API key may, under the key's rate limits, until you revoke it.</p>
<p>It will reach <code>{{.Resource}}</code> only. It never sees your key.</p>
<input type="hidden" name="css_api_key" value="{{.Key}}">
<button type="submit" name="css_step" value="allow">Allow</button>
<button type="submit" name="css_step" value="deny">Deny</button>
{{else}}
<p><strong>{{.Client}}</strong> asks to use the MCP tools of one of your channels (scope <code>{{.Scope}}</code>).
Enter that channel's API key to see what it asks and decide.</p>
<label>API key <input name="css_api_key" type="password" autocomplete="off" required></label>
<button type="submit" name="css_step" value="login">Continue</button>
{{end}}
</form></body></html>
`))

type consentView struct {
	Client, Channel, Scope, Resource, Key, Error, Action string
	Params                                               url.Values
}

// authorize is the authorization endpoint with its consent page: a GET shows it; its form posts the key
// (login), then the decision (allow, deny). The API key is the login: the client never sees it, and only
// the grant (which key, which channel) is kept.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, err := p.provider(ctx)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	// The page must not be framed (clickjacking) nor kept by a cache.
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "GET or POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxMetadataBytes)
	if err := p.resourceAsAudience(r); err != nil {
		f.WriteAuthorizeError(ctx, w, &fosite.AuthorizeRequest{}, err)
		return
	}
	key, step := r.PostForm.Get(fieldKey), r.PostForm.Get(fieldStep)
	for _, form := range []url.Values{r.Form, r.PostForm} {
		delete(form, fieldKey)
		delete(form, fieldStep)
	}
	ar, err := f.NewAuthorizeRequest(ctx, r)
	if err != nil {
		p.logRefusal(ctx, "authorize", err)
		f.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	name := ar.GetClient().GetID()
	if c, ok := ar.GetClient().(*Client); ok && c.Name != "" {
		name = c.Name
	}
	view := consentView{Client: name, Scope: mcpgrant.Scope, Resource: p.resource, Action: PathAuthorize, Params: r.Form}
	if r.Method == http.MethodGet || step == "" {
		p.page(w, http.StatusOK, view)
		return
	}
	if step == "deny" {
		f.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The user denied the request."))
		return
	}
	id, principal, err := p.login(ctx, key)
	if err != nil {
		if apperr.CodeOf(err) == apperr.Internal {
			p.fail(w, r, err)
			return
		}
		view.Error = err.Error()
		p.page(w, http.StatusUnauthorized, view)
		return
	}
	if step != "allow" {
		ch, err := p.rec.GetChannel(ctx, principal.ChannelID)
		if err != nil {
			p.fail(w, r, err)
			return
		}
		view.Channel, view.Key = ch.Name, key
		p.page(w, http.StatusOK, view)
		return
	}
	ar.GrantScope(mcpgrant.Scope)
	ar.GrantAudience(p.resource)
	sess := &Session{AccountID: id.AccountID, ChannelID: principal.ChannelID, KeyID: id.KeyID, KeyHash: id.KeyHash, ClientName: name}
	resp, err := f.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		p.logRefusal(ctx, "consent", err)
		f.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	p.log.InfoContext(ctx, "oauth grant made", "grant", ar.GetID(), "channel", principal.ChannelID, "key", id.KeyID)
	f.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// login checks the key entered on the consent page: a live API key of an account whose access lasts.
func (p *Provider) login(ctx context.Context, key string) (auth.Identity, auth.Principal, error) {
	key = strings.TrimSpace(key)
	if !strings.HasPrefix(key, auth.KeyPrefixLiteral) {
		return auth.Identity{}, auth.Principal{}, apperr.New(apperr.Unauthorized, "enter one of your channel's API keys (%s…)", auth.KeyPrefixLiteral)
	}
	id, err := p.keys.Resolve(ctx, "Bearer "+key)
	if err != nil {
		return auth.Identity{}, auth.Principal{}, err
	}
	pr, err := id.Principal("", p.now())
	return id, pr, err
}

func (p *Provider) page(w http.ResponseWriter, status int, v consentView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = consentPage.Execute(w, v)
}
