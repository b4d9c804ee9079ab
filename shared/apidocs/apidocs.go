// Package apidocs is the API reference page served at GET /api/v1/docs: a small HTML page that renders
// the served contract (openapi.json) with Redoc's standalone script, and that script, served by the same
// function (GET /api/v1/docs/redoc.standalone.js), so that the page loads nothing from elsewhere.
//
// The script is not committed: infra/tools/install-redoc installs the version infra/tools/redoc pins (npm
// checks the package against its lockfile's integrity hash), checks the script against redoc.sha256, and
// writes it gzip-compressed into bundle/, which this package embeds. `make build`, `make run` and
// `make test` run it first; a plain `go build` of a clean clone still works and serves a page that says the
// renderer is missing and links the document (HasRenderer reports which). Only the utility function and the
// local stack link this package (they hand it to shared/rest as rest.Docs), so no other binary carries the
// script.
package apidocs

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io/fs"
	"sync"
)

// ScriptPath is the script's path relative to the page's directory (/api/v1/): the page names it so, and
// the contract serves it at /api/v1/ + ScriptPath.
const ScriptPath = "docs/redoc.standalone.js"

// ContentSecurityPolicy is the page's policy: its own script, the document, Redoc's styles (styled-
// components writes them into <style> elements at run time, so they cannot carry a hash or a nonce), the
// search worker Redoc starts from a blob: URL, and data: images (Redoc's icons); nothing else, no
// framing, no forms, no base URL.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'none'"

//go:embed all:bundle
var embedded embed.FS

// bundleFile is the gzip-compressed script install-redoc writes.
const bundleFile = "bundle/redoc.standalone.js.gz"

// page renders openapi.json (a sibling of /api/v1/docs) with the script; relative URLs keep it working
// under any prefix the API is mounted at.
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Creator Strategy Service API reference</title>
</head>
<body>
<redoc spec-url="openapi.json"></redoc>
<script src="` + ScriptPath + `"></script>
</body>
</html>
`

// missingPage is served by a build without the renderer.
const missingPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>Creator Strategy Service API reference</title>
</head>
<body>
<p>This build has no reference renderer (run <code>infra/tools/install-redoc</code>, or build with
<code>make build</code>). The API description: <a href="openapi.json">openapi.json</a>.</p>
</body>
</html>
`

// Docs is the page and its script, as the utility function serves them (rest.Docs); make one with New or
// FromFS.
type Docs struct {
	bundle fs.FS // holds bundleFile, or not
	pages  func() pages
}

// New returns the page of the build's embedded script.
func New() *Docs { return FromFS(embedded) }

// FromFS returns the page of the script at bundle/redoc.standalone.js.gz in fsys (a gzip stream), or of no
// script when fsys has none: for tests, which need not depend on the installed renderer.
func FromFS(fsys fs.FS) *Docs {
	d := &Docs{bundle: fsys}
	// Made on first use, not at start: most cold starts serve other paths.
	d.pages = sync.OnceValue(d.render)
	return d
}

// Script returns Redoc's standalone script as a gzip stream; ok is false in a build without it. The
// caller must not change the slice.
func (d *Docs) Script() (gz []byte, ok bool) {
	b, err := fs.ReadFile(d.bundle, bundleFile)
	if err != nil || len(b) == 0 {
		return nil, false
	}
	return b, true
}

// HasRenderer reports whether the build embeds the script.
func (d *Docs) HasRenderer() bool {
	_, ok := d.Script()
	return ok
}

// ContentSecurityPolicy returns the page's policy (the constant of the same name).
func (d *Docs) ContentSecurityPolicy() string { return ContentSecurityPolicy }

// Page returns the reference page's HTML (the missing-renderer page in a build without the script). The
// caller must not change the slice.
func (d *Docs) Page() []byte { return d.pages().plain }

// PageGzip returns Page gzip-compressed. The caller must not change the slice.
func (d *Docs) PageGzip() []byte { return d.pages().gz }

type pages struct{ plain, gz []byte }

func (d *Docs) render() pages {
	plain := []byte(missingPage)
	if d.HasRenderer() {
		plain = []byte(page)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
	_, _ = zw.Write(plain)                                   // a bytes.Buffer does not fail
	_ = zw.Close()
	return pages{plain: plain, gz: buf.Bytes()}
}
