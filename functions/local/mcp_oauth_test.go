package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/testkit/inspector"
)

// devKeyB is a second development key: its own channel, for what another channel's token must not reach.
const devKeyB = "sk-css-fedcba9876543210fedcba9876543210"

// rpc posts one JSON-RPC message to /mcp with credential and returns the status and the body.
func rpc(t *testing.T, base, credential, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if credential != "" {
		req.Header.Set("Authorization", "Bearer "+credential)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func toolCall(name, args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// otherRemaining is what GET /me says is left of the key's budget of reads ("other").
func otherRemaining(t *testing.T, base, key string) int64 {
	t.Helper()
	status, body := call(t, http.MethodGet, base+"/api/v1/me", key, "")
	var me struct {
		RateLimits map[string]struct{ Remaining int64 } `json:"rateLimits"`
	}
	if err := json.Unmarshal([]byte(body), &me); status != http.StatusOK || err != nil {
		t.Fatalf("GET /me: %d %s", status, body)
	}
	return me.RateLimits["other"].Remaining
}

// TestMCPSignInWithPythonSDK signs in to the local stack's /mcp with the official MCP Python SDK's OAuth
// client (infra/tools/clients/mcp_oauth.py, mcp pinned by requirements-mcp.txt): from the 401's
// WWW-Authenticate through the protected-resource and authorization-server metadata, Dynamic Client
// Registration, the consent page (the key entered once, then the page naming the channel) and the code
// exchange with PKCE, to tools/list and a tool call with the access token. Then, with that token: it acts
// as the key (the same rate budget, counted once per call), reaches nothing of another channel, is listed
// as the channel's grant (and not another's), and stops at once when the owner revokes the grant.
func TestMCPSignInWithPythonSDK(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	python := clientTool(t, root, ".tools/mcp-venv/bin/python")
	base, _, stop := start(t, map[string]string{
		"CSS_DATA_DIR":                t.TempDir(),
		"CSS_DEV_API_KEYS":            devKey + "," + devKeyB,
		"CSS_RESEARCH_SCHEDULE_EVERY": "24h",
	})
	defer stop()

	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wantChallenge := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(got, wantChallenge) {
		t.Fatalf("401 without credential: %d, WWW-Authenticate %q; want %s", resp.StatusCode, got, wantChallenge)
	}

	env := append(os.Environ(), "CSS_BASE="+base, "CSS_KEY="+devKey)
	out := runCommand(t, filepath.Join(root, "infra", "tools", "clients"), env, python, "mcp_oauth.py")
	var seen struct {
		Steps []struct {
			Status   int
			Text     string
			Redirect string
		}
		AuthorizeParams map[string]string
		Tools           int
		CallError       bool
		CallStructured  map[string]any
		TokenType       string
		AccessToken     string
	}
	if err := json.Unmarshal([]byte(out), &seen); err != nil {
		t.Fatalf("mcp_oauth.py printed %q: %v", out, err)
	}
	if len(seen.Steps) != 3 {
		t.Fatalf("browser steps %+v, want the consent page, the page naming the channel, the redirect", seen.Steps)
	}
	if s := seen.Steps[0]; s.Status != http.StatusOK || !strings.Contains(s.Text, "MCP Python SDK test") || !strings.Contains(s.Text, "API key") {
		t.Errorf("consent page: %d %q", s.Status, s.Text)
	}
	if s := seen.Steps[1]; s.Status != http.StatusOK || !strings.Contains(s.Text, "Development channel") ||
		!strings.Contains(s.Text, "scope mcp") || !strings.Contains(s.Text, base+"/mcp") || strings.Contains(s.Text, devKey) {
		t.Errorf("the page naming the channel: %d %q", s.Status, s.Text)
	}
	if s := seen.Steps[2]; s.Status != http.StatusSeeOther || s.Redirect != "http://127.0.0.1:9/callback" {
		t.Errorf("after allow: %d to %q, want 303 to the client's redirect URI", s.Status, s.Redirect)
	}
	if p := seen.AuthorizeParams; p["code_challenge_method"] != "S256" || p["resource"] != base+"/mcp" || p["response_type"] != "code" {
		t.Errorf("the SDK's authorization request: %v", p)
	}
	if seen.Tools != 39 || seen.CallError || seen.CallStructured["videos"] == nil || !strings.EqualFold(seen.TokenType, "bearer") {
		t.Fatalf("with the token: %d tools, call error %v, %v, token type %q", seen.Tools, seen.CallError, seen.CallStructured, seen.TokenType)
	}
	token := seen.AccessToken

	// The token's calls are the key's: each takes one from the key's budget.
	before := otherRemaining(t, base, devKey)
	for range 3 {
		if status, body := rpc(t, base, token, toolCall("get_notes", `{}`)); status != http.StatusOK || strings.Contains(body, `"isError":true`) {
			t.Fatalf("get_notes with the token: %d %s", status, body)
		}
	}
	if after := otherRemaining(t, base, devKey); before-after != 4 { // 3 calls with the token, GET /me with the key
		t.Errorf("the key's reads left: %d, then %d after 3 calls with its token; want 4 fewer", before, after)
	}

	// Another channel's note is out of the token's reach.
	status, body := call(t, http.MethodPost, base+"/api/v1/notes", devKeyB, `{"category":"general","content":"channel B's"}`)
	var note struct{ ID string }
	if err := json.Unmarshal([]byte(body), &note); status != http.StatusCreated || err != nil {
		t.Fatalf("note of channel B: %d %s", status, body)
	}
	if _, body := rpc(t, base, token, toolCall("delete_note", `{"id":"`+note.ID+`"}`)); !strings.Contains(body, "NOT_FOUND") {
		t.Errorf("delete_note of channel B's note with channel A's token: %s", body)
	}
	if _, body := call(t, http.MethodGet, base+"/api/v1/notes", devKeyB, ""); !strings.Contains(body, note.ID) {
		t.Errorf("channel B's note is gone: %s", body)
	}

	// The owner lists and revokes the grant; another channel neither sees nor revokes it.
	status, body = call(t, http.MethodGet, base+"/api/v1/mcp/grants", devKey, "")
	var grants struct {
		Grants []struct{ ID, ClientName, Resource string }
		Total  int
	}
	if err := json.Unmarshal([]byte(body), &grants); status != http.StatusOK || err != nil || grants.Total != 1 ||
		grants.Grants[0].ClientName != "MCP Python SDK test" || grants.Grants[0].Resource != base+"/mcp" {
		t.Fatalf("GET /mcp/grants: %d %s", status, body)
	}
	id := grants.Grants[0].ID
	if _, body := call(t, http.MethodGet, base+"/api/v1/mcp/grants", devKeyB, ""); !strings.Contains(body, `"total":0`) {
		t.Errorf("channel B's grants: %s", body)
	}
	if status, body := call(t, http.MethodDelete, base+"/api/v1/mcp/grants/"+id, devKeyB, ""); status != http.StatusNotFound {
		t.Errorf("channel B revoking channel A's grant: %d %s", status, body)
	}
	if status, body := call(t, http.MethodDelete, base+"/api/v1/mcp/grants/"+id, devKey, ""); status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", status, body)
	}
	if status, body := rpc(t, base, token, toolCall("get_notes", `{}`)); status != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHORIZED") {
		t.Errorf("the revoked grant's token: %d %s", status, body)
	}
}

// hiddenInput is one hidden field of the consent page, as html/template writes it.
var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// TestMCPSignInWithInspector signs in with the pinned MCP Inspector's CLI, which runs the OAuth flow
// itself (discovery, registration, PKCE, its loopback callback listener) and, told it may open a browser
// (MCP_AUTO_OPEN_ENABLED; there is none here), prints the authorization URL: the test is the browser. It
// allows on the consent page with the key, follows the redirect to the CLI's callback, and the CLI lists
// the 39 tools with its token.
func TestMCPSignInWithInspector(t *testing.T) {
	path, err := inspector.Path()
	if err != nil {
		t.Fatal(err)
	}
	base, _, stop := start(t, map[string]string{"CSS_DATA_DIR": t.TempDir(), "CSS_DEV_API_KEYS": devKey,
		"CSS_RESEARCH_SCHEDULE_EVERY": "24h"})
	defer stop()
	callback := "http://127.0.0.1:" + freePort(t) + "/oauth/callback"
	ctx, cancel := context.WithTimeout(t.Context(), inspector.Timeout)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, path, "--cli", base+"/mcp", "--transport", "http", "--callback-url", callback,
		"--method", "tools/list", "--format", "json")
	cmd.Env = append(os.Environ(), "HOME="+home, "MCP_STORAGE_DIR="+filepath.Join(home, "storage"),
		"MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "NO_COLOR=1", "BROWSER=true",
		"MCP_AUTO_OPEN_ENABLED=true", "MCP_INSPECTOR_SECRET_STORE=memory")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	authURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if u, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Please navigate to: "); ok {
				authURL <- u
			}
		}
		close(authURL)
	}()
	u, ok := <-authURL
	if !ok || !strings.HasPrefix(u, base+"/oauth/authorize?") {
		_ = cmd.Wait()
		t.Fatalf("the Inspector printed no authorization URL of the stack: %q\nstderr: %s", u, stderr.String())
	}
	q, _ := url.Parse(u)
	if p := q.Query(); p.Get("code_challenge_method") != "S256" || p.Get("resource") != base+"/mcp" {
		t.Errorf("the Inspector's authorization request: %v", p)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	form := url.Values{"css_api_key": {devKey}, "css_step": {"allow"}}
	for _, m := range hiddenInput.FindAllStringSubmatch(string(page), -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.PostForm(base+"/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, callback+"?code=") {
		t.Fatalf("allow: %d to %q, want 303 to the Inspector's callback", resp.StatusCode, loc)
	}
	if resp, err = http.Get(loc); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for range authURL { // the rest of stderr, to its end (the CLI's exit), before Wait closes the pipe
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the Inspector: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.String())
	}
	var v struct {
		Result struct{ Tools []struct{ Name string } } `json:"result"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil || len(v.Result.Tools) != 39 {
		t.Fatalf("tools/list after signing in: %v %s", err, stdout.Bytes())
	}
}
