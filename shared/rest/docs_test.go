package rest_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/creatorstrategy/css/shared/apidocs"
	"github.com/creatorstrategy/css/shared/wire"
)

// testScript stands in for Redoc's script: the handlers serve whatever bundle they are given.
const testScript = "/* a renderer */ console.log('renderer');\n"

// The reference page and its script are text the document declares as strings: checkContract reads them so.
func init() {
	text := func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(body)
		return string(b), err
	}
	openapi3filter.RegisterBodyDecoder("text/html", text)
	openapi3filter.RegisterBodyDecoder("text/javascript", text)
}

var testRenderer = fstest.MapFS{"bundle/redoc.standalone.js.gz": {Data: gzipped(testScript)}}

func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.Bytes()
}

func gunzipped(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a gzip stream: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestDocsPage: GET /api/v1/docs needs no credential, answers the page that loads the contract and the
// renderer by relative URLs, with the policy, compressed when the request accepts gzip.
func TestDocsPage(t *testing.T) {
	e := newEnv(t)
	for _, ae := range []string{"", "gzip, deflate, br", "identity", "gzip;q=0"} {
		r := e.do(req{method: "GET", path: v1 + "/docs", header: map[string]string{"Accept-Encoding": ae}})
		r.must(t, http.StatusOK)
		if got := r.header.Get("Content-Type"); got != "text/html; charset=utf-8" {
			t.Errorf("Accept-Encoding %q: Content-Type %q", ae, got)
		}
		if got := r.header.Get("Content-Security-Policy"); got != apidocs.ContentSecurityPolicy {
			t.Errorf("Accept-Encoding %q: Content-Security-Policy %q", ae, got)
		}
		if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: headers %v", ae, r.header)
		}
		body := string(r.raw)
		if gz := ae == "gzip, deflate, br"; gz != (r.header.Get("Content-Encoding") == "gzip") {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", ae, r.header.Get("Content-Encoding"))
		} else if gz {
			body = gunzipped(t, r.raw)
		}
		for _, want := range []string{`<redoc spec-url="openapi.json">`, `<script src="docs/redoc.standalone.js">`} {
			if !strings.Contains(body, want) {
				t.Errorf("Accept-Encoding %q: the page lacks %s:\n%s", ae, want, body)
			}
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("Accept-Encoding %q: the page names another origin:\n%s", ae, body)
		}
	}
}

// TestDocsScript: the renderer is served as the bundle holds it (gzip), or decompressed for a client that
// does not accept gzip.
func TestDocsScript(t *testing.T) {
	e := newEnv(t)
	path := v1 + "/" + apidocs.ScriptPath
	r := e.do(req{method: "GET", path: path, header: map[string]string{"Accept-Encoding": "gzip"}})
	r.must(t, http.StatusOK)
	if r.header.Get("Content-Encoding") != "gzip" || gunzipped(t, r.raw) != testScript {
		t.Errorf("gzip: Content-Encoding %q, body %q", r.header.Get("Content-Encoding"), r.raw)
	}
	if got := r.header.Get("Content-Type"); got != "text/javascript; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
	r = e.do(req{method: "GET", path: path})
	r.must(t, http.StatusOK)
	if r.header.Get("Content-Encoding") != "" || string(r.raw) != testScript {
		t.Errorf("plain: Content-Encoding %q, body %q", r.header.Get("Content-Encoding"), r.raw)
	}
	if got := r.header.Get("Content-Length"); got != strconv.Itoa(len(testScript)) {
		t.Errorf("plain: Content-Length %q, want the script's length", got)
	}
}

// TestDocsWithoutRenderer: a build without the script serves a page that links the document, and 404
// for the script; a function given no page answers 404 for both.
func TestDocsWithoutRenderer(t *testing.T) {
	e := newEnv(t, func(_ *env, c *wire.APIConfig) { c.Docs = apidocs.FromFS(fstest.MapFS{}) })
	r := e.do(req{method: "GET", path: v1 + "/docs"})
	r.must(t, http.StatusOK)
	if body := string(r.raw); !strings.Contains(body, `href="openapi.json"`) || strings.Contains(body, "<script") {
		t.Errorf("page without the renderer:\n%s", body)
	}
	e.do(req{method: "GET", path: v1 + "/" + apidocs.ScriptPath}).must(t, http.StatusNotFound, "NOT_FOUND")

	e = newEnv(t, func(_ *env, c *wire.APIConfig) { c.Docs = nil })
	e.do(req{method: "GET", path: v1 + "/docs"}).must(t, http.StatusNotFound, "NOT_FOUND")
	e.do(req{method: "GET", path: v1 + "/" + apidocs.ScriptPath}).must(t, http.StatusNotFound, "NOT_FOUND")
}
