package apidocs_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/creatorstrategy/css/shared/apidocs"
)

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPageWithRenderer(t *testing.T) {
	script := []byte{0x1f, 0x8b, 1, 2, 3} // served as it is: never decoded here
	d := apidocs.FromFS(fstest.MapFS{"bundle/redoc.standalone.js.gz": {Data: script}})
	if got, ok := d.Script(); !ok || !bytes.Equal(got, script) || !d.HasRenderer() {
		t.Fatalf("Script() = %v, %v", got, ok)
	}
	page := string(d.Page())
	for _, want := range []string{`<redoc spec-url="openapi.json"></redoc>`, `<script src="` + apidocs.ScriptPath + `"></script>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if !bytes.Equal(gunzip(t, d.PageGzip()), d.Page()) {
		t.Error("PageGzip is not Page compressed")
	}
}

func TestPageWithoutRenderer(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no file":    {},
		"empty file": {"bundle/redoc.standalone.js.gz": {Data: nil}},
	} {
		d := apidocs.FromFS(fsys)
		if _, ok := d.Script(); ok || d.HasRenderer() {
			t.Errorf("%s: a renderer", name)
		}
		page := string(d.Page())
		if strings.Contains(page, "<script") || !strings.Contains(page, `<a href="openapi.json">`) {
			t.Errorf("%s: page\n%s", name, page)
		}
		if !bytes.Equal(gunzip(t, d.PageGzip()), d.Page()) {
			t.Errorf("%s: PageGzip is not Page compressed", name)
		}
	}
}

// TestPolicy: the page may load its own script and the document, nothing from another origin, and may
// not be framed.
func TestPolicy(t *testing.T) {
	csp := apidocs.New().ContentSecurityPolicy()
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the policy lacks %q: %s", want, csp)
		}
	}
	for _, banned := range []string{"http:", "https:", "*", "'unsafe-eval'", "script-src 'self' 'unsafe-inline'"} {
		if strings.Contains(csp, banned) {
			t.Errorf("the policy allows %q: %s", banned, csp)
		}
	}
}
