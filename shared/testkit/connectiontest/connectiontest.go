// Package connectiontest stands up Google's side of a YouTube connection for tests: mock-oauth2-server
// (a real OAuth 2.0 server, from infra/emulators) for consent, code exchange with PKCE and refresh, and a
// youtubetest server for the owner's Data API calls, revocation, and the invalid_grant Google answers
// for a revoked refresh token. Open and Consent act as the owner's browser.
package connectiontest

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/creatorstrategy/css/shared/accounts"
	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/connection"
	"github.com/creatorstrategy/css/shared/testkit/emulatortest"
	"github.com/creatorstrategy/css/shared/testkit/offline/youtubesample"
	"github.com/creatorstrategy/css/shared/testkit/youtubetest"
)

// Google is the stand-in for Google's OAuth and the owner's Data API.
type Google struct {
	// Issuer is mock-oauth2-server's issuer URL (<endpoint>/google).
	Issuer string
	// YouTube serves the Data API, /revoke and /token (forwarding to Issuer's token endpoint).
	YouTube *youtubetest.Server
}

// APIKey is the Data API key the YouTube server accepts.
const APIKey = "test-api-key"

// Start returns the stand-in; the YouTube server stops when the test ends.
func Start(t testing.TB) *Google {
	t.Helper()
	return StartWith(t, &youtubesample.Catalog{})
}

// StartWith is Start with the Data API serving catalog (e.g. the connected channel's own uploads, which
// the daily sync reads).
func StartWith(t testing.TB, catalog *youtubesample.Catalog) *Google {
	t.Helper()
	issuer := strings.TrimSuffix(emulatortest.OAuth2(t), "/") + "/google"
	yt := youtubetest.Start(APIKey, catalog)
	t.Cleanup(yt.Close)
	yt.SetTokenUpstream(issuer + "/token")
	return &Google{Issuer: issuer, YouTube: yt}
}

// AuthURL, TokenURL and RevokeURL are the endpoints to configure (CSS_GOOGLE_*_ENDPOINT).
func (g *Google) AuthURL() string   { return g.Issuer + "/authorize" }
func (g *Google) TokenURL() string  { return g.YouTube.TokenURL() }
func (g *Google) RevokeURL() string { return g.YouTube.RevokeURL() }

// OAuthConfig is the client configuration the service would build for these endpoints.
func (g *Google) OAuthConfig(redirectURL string) *oauth2.Config {
	return connection.OAuthConfig(connection.OAuthSettings{ClientID: "css-test-client", ClientSecret: "css-test-secret",
		AuthURL: g.AuthURL(), TokenURL: g.TokenURL(), RedirectURL: redirectURL})
}

// Owns makes subject the owner of the YouTube channel ytChannelID.
func (g *Google) Owns(subject, ytChannelID, title, language string) {
	g.YouTube.AddOwner(subject, youtubetest.Owner{ChannelID: ytChannelID, Title: title, Language: language})
}

// Consent acts as the owner's browser on authorizationURL: it opens the consent (login) page, signs in as
// subject, and returns the URL Google redirects back to (the callback with code and state), unfollowed.
func Consent(t testing.TB, authorizationURL, subject string) *url.URL {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := client.Get(authorizationURL)
	if err != nil {
		t.Fatalf("consent page: %v", err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.Contains(string(body), `name="username"`) {
		t.Fatalf("consent page: %d %s", page.StatusCode, body)
	}
	res, err := client.PostForm(authorizationURL, url.Values{"username": {subject}})
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	res.Body.Close()
	loc, err := res.Location()
	if err != nil {
		t.Fatalf("sign in answered %d without a redirect: %v", res.StatusCode, err)
	}
	return loc
}

// Open acts as the owner's browser on the service's start link: it opens it and returns the link on to
// Google's consent page and the cookie the start step set ("name=value"), which the browser sends back with
// Google's redirect.
func Open(t testing.TB, startURL string) (authorizationURL, cookie string) {
	t.Helper()
	res, err := http.Get(startURL)
	if err != nil {
		t.Fatalf("start link: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return StartPage(t, res.StatusCode, string(body), res.Header.Values("Set-Cookie"))
}

// StartPage reads the start step's answer as a browser does: the page's link on to Google, and the cookie
// its Set-Cookie headers set.
func StartPage(t testing.TB, status int, body string, setCookies []string) (authorizationURL, cookie string) {
	t.Helper()
	_, rest, ok := strings.Cut(body, `<a href="`)
	link, _, ok2 := strings.Cut(rest, `"`)
	if status != http.StatusOK || !ok || !ok2 || len(setCookies) != 1 {
		t.Fatalf("start page: %d %v %s", status, setCookies, body)
	}
	c, err := http.ParseSetCookie(setCookies[0])
	if err != nil || c.Value == "" {
		t.Fatalf("start page's cookie %q: %v", setCookies[0], err)
	}
	return html.UnescapeString(link), c.Name + "=" + c.Value
}

// Channels are service channels by id (connection.Channels).
type Channels map[string]accounts.Channel

func (c Channels) GetChannel(_ context.Context, id string) (accounts.Channel, error) {
	if ch, ok := c[id]; ok {
		return ch, nil
	}
	return accounts.Channel{}, apperr.NotFoundf("channel not found")
}

// Connect runs the whole connection of channelID as the owner subject through conns, in one browser: the
// start link opened (Begin), consent given, the callback completed with that browser's binding.
func Connect(t testing.TB, conns *connection.Service, channelID, subject string) connection.Completed {
	t.Helper()
	link, _, err := conns.Start(t.Context(), channelID)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	begun, err := conns.Begin(t.Context(), u.Query().Get("state"))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	q := Consent(t, begun.AuthorizationURL, subject).Query()
	done, err := conns.Complete(t.Context(), connection.Callback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), Browser: begun.Browser})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	return done
}
