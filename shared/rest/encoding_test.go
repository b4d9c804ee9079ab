package rest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
)

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header []string // Accept-Encoding lines; nil sends none
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"identity"}, false},
		{[]string{"gzip"}, true},
		{[]string{"GZIP"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"*"}, true},
		{[]string{"br"}, false},
		{[]string{"br, zstd, deflate"}, false},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.000"}, false},
		{[]string{"gzip;Q=0"}, false},
		{[]string{"gzip;q=0.001"}, true},
		{[]string{"gzip;q=1.000"}, true},
		{[]string{"gzip;q=0.5"}, true}, // identity not named: gzip is what was asked for
		{[]string{"*;q=0"}, false},
		{[]string{"*;q=0, identity"}, false},
		{[]string{"*;q=0, gzip"}, true},
		{[]string{"gzip;q=0, *"}, false}, // the named coding outranks *
		{[]string{"br, *;q=0.1"}, true},
		{[]string{"gzip;q=0.5, identity;q=0.8"}, false},
		{[]string{"gzip;q=0.8, identity;q=0.5"}, true},
		{[]string{"gzip;q=0.5, *;q=0.8"}, false}, // * ranks identity above gzip
		{[]string{"identity;q=0, gzip;q=0.2"}, true},
		// What real clients send.
		{[]string{"gzip, deflate, br, zstd"}, true}, // browsers
		{[]string{"deflate, gzip, br, zstd"}, true}, // curl --compressed
		{[]string{"gzip, deflate"}, true},           // Python requests
		// Several lines, as the Lambda adapter makes of a comma-separated value.
		{[]string{"br", "gzip"}, true},
		{[]string{"gzip;q=0", "br"}, false},
		// Unreadable elements are skipped; readable ones still count.
		{[]string{"gzip;q=2"}, false},
		{[]string{"gzip;q=1.5"}, false},
		{[]string{"gzip;q=0.1234"}, false},
		{[]string{"gzip;q="}, false},
		{[]string{"gzip;level=9"}, false},
		{[]string{"gzip;q=abc, *"}, true},
		{[]string{", ,gzip,"}, true},
		{[]string{"g zip"}, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.header {
			h.Add("Accept-Encoding", v)
		}
		if got := acceptsGzip(h); got != tt.want {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tt.header, got, tt.want)
		}
	}
}

// TestOpenAPIDocumentEncoding serves the document over a real net/http server, as the local stack does,
// and reads the bytes as sent (no transparent decompression).
func TestOpenAPIDocumentEncoding(t *testing.T) {
	c, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Contract: c, Auth: nobody{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	doc := contract.Document()

	tests := []struct {
		method         string
		acceptEncoding string // "" sends none
		gzip           bool
	}{
		{"GET", "", false},
		{"GET", "identity", false},
		{"GET", "gzip;q=0", false},
		{"GET", "br", false},
		{"GET", "gzip", true},
		{"GET", "GZIP", true},
		{"GET", "*", true},
		{"GET", "gzip, deflate, br, zstd", true},
		{"HEAD", "", false},
		{"HEAD", "gzip", true},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, srv.URL+"/api/v1/openapi.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", tt.acceptEncoding)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		name := tt.method + " Accept-Encoding " + strconv.Quote(tt.acceptEncoding)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", name, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("%s: Content-Type %q", name, got)
		}
		if got := resp.Header.Values("Vary"); len(got) != 1 || got[0] != "Accept-Encoding" {
			t.Errorf("%s: Vary %q, want Accept-Encoding", name, got)
		}
		wantLen := len(doc)
		if tt.gzip {
			wantLen = len(contract.DocumentGzip())
		}
		if resp.ContentLength != int64(wantLen) {
			t.Errorf("%s: Content-Length %d, want %d", name, resp.ContentLength, wantLen)
		}
		wantEncoding := ""
		if tt.gzip {
			wantEncoding = "gzip"
		}
		if got := resp.Header.Get("Content-Encoding"); got != wantEncoding {
			t.Errorf("%s: Content-Encoding %q, want %q", name, got, wantEncoding)
		}
		if tt.method == "HEAD" {
			if len(body) != 0 {
				t.Errorf("%s: %d bytes of body", name, len(body))
			}
			continue
		}
		if tt.gzip {
			body = gunzip(t, body)
		}
		if !bytes.Equal(body, doc) {
			t.Errorf("%s: the body (%d bytes) is not openapi.json (%d bytes)", name, len(body), len(doc))
		}
	}

	// A default Go client asks for gzip and decompresses on its own.
	resp, err := http.Get(srv.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !resp.Uncompressed || !bytes.Equal(body, doc) {
		t.Errorf("net/http client: uncompressed %v, document intact %v", resp.Uncompressed, bytes.Equal(body, doc))
	}
}

func TestGzipJSONNestsAsItsJSON(t *testing.T) {
	b, err := json.Marshal(map[string]any{"doc": gzipJSON(contract.DocumentGzip())})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Doc map[string]any }
	if err := json.Unmarshal(b, &v); err != nil || v.Doc["openapi"] != "3.0.3" {
		t.Fatalf("nested: %v %.80s", err, b)
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip stream: %v", err)
	}
	return out
}
